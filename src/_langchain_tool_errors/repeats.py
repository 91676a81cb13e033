"""The repeating stage: a call the same as one that already failed in this run.

Only where a route names `RepeatedCall`, and only for the tools that route selects. Each
failure of such a call leaves its fingerprint (the tool and its arguments as canonical
JSON, hashed) among the run's counts, which a new run starts from zero; each such call
looks its own fingerprint up before it runs. Until a call of the same tool has failed in
the run, one key of the counts says so and nothing is hashed: the success path of every
other call reads two state keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.budget import times
from _langchain_tool_errors.failures import REPEATED_TEXT, RepeatedCall
from _langchain_tool_errors.routes import Route
from _langchain_tool_errors.state import COUNTS_KEY
from _langchain_tool_errors.tool_calls import tool_name


def _selected(routes: tuple[Route[Any], ...]) -> tuple[bool, frozenset[str] | None]:
    """Whether a route names `RepeatedCall`, and the tools those routes select (`None`: all)."""
    named = [
        route
        for route in routes
        if any(issubclass(taken, RepeatedCall) for taken in route.exceptions)
    ]
    if not named:
        return False, None
    tools: set[str] = set()
    for route in named:
        selected = route.selected_tools
        if selected is None:
            return True, None
        tools |= selected
    return True, frozenset(tools)


_JSON = json.JSONEncoder(sort_keys=True)
"""One encoder for every call: `json.dumps` with any option builds a new one each time."""


def canonical(args: object) -> str | None:
    """The arguments as JSON with sorted keys, or `None` for values JSON cannot hold."""
    try:
        return _JSON.encode(args)
    except (TypeError, ValueError):  # not JSON (a model's arguments always are): never equal
        return None


class Repeats:
    """Which failed calls a middleware remembers for the run, and how it finds them again."""

    __slots__ = ("_failed", "_prefix", "_tools")

    def __init__(self, name: str, tools: frozenset[str] | None) -> None:
        self._prefix = f"{name}\x00\x00call\x00"
        # With a tool's name, counted with each of its remembered failures: until it is in
        # the counts, no call of that tool is hashed.
        self._failed = f"{name}\x00\x00failed\x00"
        self._tools = tools

    @classmethod
    def of(cls, name: str, routes: tuple[Route[Any], ...]) -> Repeats | None:
        """The repeats of a middleware whose routes name `RepeatedCall`, else `None`."""
        named, tools = _selected(routes)
        return cls(name, tools) if named else None

    def _key(self, request: ToolCallRequest) -> str | None:
        """The call's fingerprint key, or `None` where repeats are not looked for."""
        tool = tool_name(request)
        if self._tools is not None and tool not in self._tools:
            return None
        args = canonical(request.tool_call.get("args") or {})
        if args is None:
            return None
        digest = hashlib.blake2b(f"{tool}\x00{args}".encode(), digest_size=16).hexdigest()
        return f"{self._prefix}{digest}"

    def remember(self, request: ToolCallRequest) -> dict[str, int] | None:
        """The increments that remember a failed call for the rest of the run."""
        key = self._key(request)
        return None if key is None else {key: 1, f"{self._failed}{tool_name(request)}": 1}

    def repeated(self, request: ToolCallRequest) -> RepeatedCall | None:
        """The failure of a call that already failed in this run, before it runs; else `None`.

        A call without an id is never one: an answer must name the call it answers.
        """
        counts: Mapping[str, int] | None = request.state.get(COUNTS_KEY)
        if not counts or f"{self._failed}{tool_name(request)}" not in counts:
            return None  # no call of this tool has failed in this run
        call = request.tool_call
        if call.get("id") is None:
            return None
        key = self._key(request)
        failures = 0 if key is None else counts.get(key, 0)
        if failures < 1:
            return None
        tool = tool_name(request)
        text = REPEATED_TEXT.format(tool=tool, times=times(failures))
        return RepeatedCall(tool=tool, args=call.get("args") or {}, text=text, failures=failures)
