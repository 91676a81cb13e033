"""The recording stage: each failure the middleware settles, kept and told.

Once a failure's outcome is known (answered, told that its tool is closed, run stopped, or
propagated), a middleware with `record_failures=True` adds a `ToolFailure` to the run's
record (the agent state's `tool_failures`, so it is part of the output), and one with
`listeners=` tells each listener. The record holds names and types only: never an
exception's message, the call's arguments or anything from the state.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.failures import ReportedFailure, kind_of
from _langchain_tool_errors.handlers import LOGGER
from _langchain_tool_errors.naming import public_module
from _langchain_tool_errors.record_types import FailureOutcome, Listener, ToolFailure
from _langchain_tool_errors.tool_calls import tool_name

_TYPE_NAMES: dict[type[object], str] = {}
"""The names `type_name` gave, by type: a failure path names the same few types again."""


def type_name(failure: Exception | ReportedFailure) -> str:
    """A failure's type, qualified by its public module (bare for a builtin)."""
    cls = type(failure)
    name = _TYPE_NAMES.get(cls)
    if name is None:
        module = public_module(cls.__module__)
        name = cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
        _TYPE_NAMES[cls] = name
    return name


def failure_record(
    name: str,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    route: int | None,
    outcome: FailureOutcome,
) -> ToolFailure:
    """The record of a failure that middleware `name` settled as `outcome`.

    A stop carries its failure's record even where nothing is recorded (see
    `ToolErrorBudgetExceeded.failure`).
    """
    # The error path runs this for every failure: the cached name is read inline.
    return {
        "middleware": name,
        "tool": tool_name(request),
        "call_id": request.tool_call.get("id"),
        "kind": kind_of(failure),
        "error_type": _TYPE_NAMES.get(type(failure)) or type_name(failure),
        "route": route,
        "outcome": outcome,
    }


class Recorder:
    """What one middleware does with each failure it settles: keep it, tell listeners."""

    __slots__ = ("_name", "keeps", "listeners")

    keeps: bool
    """Whether the record goes into the agent state (`record_failures=True`)."""

    listeners: tuple[Listener, ...]
    """Those told of each failure, in order."""

    def __init__(self, name: str, keeps: bool, listeners: tuple[Listener, ...]) -> None:
        self._name = name
        self.keeps = keeps
        self.listeners = listeners

    def failure(
        self,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: int | None,
        outcome: FailureOutcome,
    ) -> ToolFailure:
        """The record of a settled failure."""
        return failure_record(self._name, failure, request, route, outcome)

    def tell(self, record: ToolFailure) -> None:
        """Tell every listener, on the sync path: an async one is not run, and is logged."""
        for listener in self.listeners:
            try:
                result = listener(record.copy())
            except Exception as error:  # a listener never changes the run
                _log_raised(listener, record, error)
                continue
            # A sync listener returns None: only another result may be an awaitable.
            if result is not None and inspect.isawaitable(result):
                _close(result)
                LOGGER.error(
                    "The failure listener %r is async, and the agent runs on the sync path "
                    "(invoke/stream), so it was not told of %s's %s failure (call %s). Run "
                    "the agent with ainvoke/astream, or give a sync listener.",
                    listener,
                    record["tool"],
                    record["kind"],
                    record["call_id"],
                )

    async def atell(self, record: ToolFailure) -> None:
        """Tell every listener, on the async path: an async one is awaited in turn."""
        for listener in self.listeners:
            try:
                result = listener(record.copy())
                if result is not None and inspect.isawaitable(result):
                    await result
            except Exception as error:  # a listener never changes the run
                _log_raised(listener, record, error)


def _close(awaitable: Awaitable[object]) -> None:
    """Close a coroutine that will never be awaited, so Python does not warn of it."""
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _log_raised(listener: Listener, record: ToolFailure, error: Exception) -> None:
    """Log what a listener raised, with its traceback but not the tool's exception.

    Listeners are told while the tool's exception is being handled, so Python would show it
    as the context of the listener's; its message may hold what must not be logged.
    """
    error.__suppress_context__ = True
    LOGGER.error(
        "The failure listener %r raised when told of %s's %s failure (call %s, outcome %s); "
        "the run goes on as if it had not.",
        listener,
        record["tool"],
        record["kind"],
        record["call_id"],
        record["outcome"],
        exc_info=(type(error), error, error.__traceback__),
    )
