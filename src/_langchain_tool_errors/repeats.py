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
from typing import Any, NamedTuple

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from _langchain_tool_errors.budget import times
from _langchain_tool_errors.failures import REPEATED_TEXT, RepeatedCall, ReportedFailure
from _langchain_tool_errors.inner_commands import is_list, is_state_update
from _langchain_tool_errors.routes import Route
from _langchain_tool_errors.state import COUNTS_KEY, RESET
from _langchain_tool_errors.tool_calls import tool_name

_Rule = tuple[frozenset[str] | None, tuple[type[Exception | ReportedFailure], ...]]
"""A route for `RepeatedCall`: the tools it selects (`None`: all) and its `retryable`."""


def _rules(routes: tuple[Route[Any], ...]) -> tuple[_Rule, ...]:
    """The routes that name `RepeatedCall`, in order: what each selects, what it retries."""
    return tuple(
        (route.selected_tools, route.retryable)
        for route in routes
        if any(issubclass(taken, RepeatedCall) for taken in route.exceptions)
    )


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

    __slots__ = ("_failed", "_prefix", "_retryable", "_retryable_elsewhere", "_tools")

    def __init__(self, name: str, rules: tuple[_Rule, ...]) -> None:
        self._prefix = f"{name}\x00\x00call\x00"
        # With a tool's name, counted with each of its remembered failures: until it is in
        # the counts, no call of that tool is hashed.
        self._failed = f"{name}\x00\x00failed\x00"
        # Each tool's `retryable`, from the first route that selects it; `None` for the tools
        # no route selects (then `_retryable_elsewhere` is `None` too).
        self._retryable: dict[str, tuple[type[Exception | ReportedFailure], ...]] = {}
        self._retryable_elsewhere: tuple[type[Exception | ReportedFailure], ...] | None = None
        for selected, retryable in rules:
            if selected is None:
                self._retryable_elsewhere = retryable
                break
            for tool in selected:
                self._retryable.setdefault(tool, retryable)
        self._tools = None if self._retryable_elsewhere is not None else frozenset(self._retryable)

    @classmethod
    def of(cls, name: str, routes: tuple[Route[Any], ...]) -> Repeats | None:
        """The repeats of a middleware whose routes name `RepeatedCall`, else `None`."""
        rules = _rules(routes)
        return cls(name, rules) if rules else None

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

    def remember(
        self, failure: Exception | ReportedFailure, request: ToolCallRequest
    ) -> dict[str, int] | None:
        """The increments that remember a failed call for the rest of the run.

        None for a failure the first route for `RepeatedCall` that selects the tool
        retries (`Route.retryable`): the same call after it runs.
        """
        key = self._key(request)
        if key is None:
            return None
        tool = tool_name(request)
        retryable = self._retryable.get(tool, self._retryable_elsewhere)
        if retryable is not None and isinstance(failure, retryable):
            return None
        return {key: 1, f"{self._failed}{tool}": 1}

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

    def rerun(self, request: ToolCallRequest) -> Rerun:
        """A repeat that runs after all (its route declined): see `Rerun`."""
        key = str(self._key(request))  # found by `repeated`, so not None
        counts: Mapping[str, int] = request.state.get(COUNTS_KEY) or {}
        forgotten = {name: count for name, count in counts.items() if name != key}
        return Rerun(key, request.override(state={**request.state, COUNTS_KEY: forgotten}))


class Rerun(NamedTuple):
    """A repeated call that runs: no route answered it, or its handler returned `None`.

    The hook runs the call as `request`, in whose state it has not failed, so it is not
    met as a repeat again. A success forgets its failures: the same call is not a repeat
    until it fails again, and then its `failures` count from that success. Another
    failure adds to the failures before it.
    """

    key: str
    """The call's fingerprint key among the counts."""
    request: ToolCallRequest
    """The call as it runs."""

    def applied(self, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        """The call's result; a success also sets the call's failures back to zero."""
        if isinstance(result, ToolMessage):
            if result.status == "error":
                return result
            return Command(update={"messages": [result], COUNTS_KEY: {self.key: RESET}})
        update: object = result.update
        if result.graph is not None or result.goto or result.resume is not None:
            return result  # not only this graph's state: as it is
        if not is_state_update(update):
            return result
        messages: object = update.get("messages")
        answers = messages if is_list(messages) else [messages]
        if any(isinstance(m, ToolMessage) and m.status == "error" for m in answers):
            return result  # a failure, counted with those before it
        counts: object = update.get(COUNTS_KEY)
        if counts is not None and not is_state_update(counts):
            return result
        return Command(update={**update, COUNTS_KEY: {**(counts or {}), self.key: RESET}})
