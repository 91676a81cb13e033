"""The recording stage: each failure the middleware settles, as a record and as news.

Once a failure's outcome is known (answered, told that its tool is closed, run stopped, or
propagated), a middleware with `record_failures=True` adds a `ToolFailure` to the run's
record (the agent state's `tool_failures`, so it is part of the output), and one with
`listeners=` tells each listener. The record holds names and types only: never an
exception's message, the call's arguments or anything from the state.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeAlias, TypedDict

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import Protocol, TypeIs

from _langchain_tool_errors.budget import BudgetState
from _langchain_tool_errors.failures import FailureKind, ReportedFailure, kind_of
from _langchain_tool_errors.handlers import LOGGER
from _langchain_tool_errors.tool_calls import tool_name

FailureOutcome: TypeAlias = Literal["answered", "told", "stopped", "propagated"]
"""What became of a failure the middleware saw.

- `"answered"`: the model read an error message for the call (a route's, or the one the
  failure came with).
- `"told"`: an `ErrorBudget(when_spent="tell")` was spent by this failure; the model read
  that the tool is unavailable for the rest of the run.
- `"stopped"`: an `ErrorBudget` was spent by this failure and stopped the run with
  `ToolErrorBudgetExceeded`.
- `"propagated"`: the exception went on up, as no route took it or its handler returned
  `None`.

Example:
    ```python
    def alert(failure: ToolFailure) -> None:
        outcome: FailureOutcome = failure["outcome"]
        if outcome == "stopped":
            print(f"a budget stopped the run at `{failure['tool']}`")
    ```
"""


class ToolFailure(TypedDict):
    """One failure the middleware saw: what failed, how, and what became of it.

    A plain dict, so the same record comes back from `invoke`/`ainvoke` (the list under
    `"tool_failures"`), from a checkpoint, from the LangGraph server's thread state over
    HTTP, and to each listener. It holds names and types only: never the exception's
    message, the call's arguments or anything else from the request.

    Attributes:
        middleware: The name of the middleware that saw it.
        tool: The tool's name, as the model called it.
        call_id: The tool call's id (`None` when the model gave none).
        kind: How the call failed (see `FailureKind`).
        error_type: The exception's type, qualified by its module (`"KeyError"` for a
            builtin, `"httpx.ConnectError"`); for a failure that is not an exception, its
            class here (`"langchain_tool_errors.InvalidArguments"`).
        route: The position in the middleware's `routes` of the route that took it, or
            `None` when no route did.
        outcome: What became of it (see `FailureOutcome`).

    Example:
        ```python
        def summarize(result: dict[str, Any]) -> list[str]:
            # `result` is what `agent.invoke(...)` returned: one line per failure of the run.
            failures: list[ToolFailure] = result["tool_failures"]
            return [f"{f['tool']}: {f['kind']}, {f['outcome']}" for f in failures]

        failure: ToolFailure = {
            "middleware": "ToolErrorMiddleware",
            "tool": "search",
            "call_id": "call-1",
            "kind": "exception",
            "error_type": "KeyError",
            "route": 0,
            "outcome": "answered",
        }
        assert summarize({"messages": [], "tool_failures": [failure]}) == [
            "search: exception, answered"
        ]
        ```
    """

    middleware: str
    tool: str
    call_id: str | None
    kind: FailureKind
    error_type: str
    route: int | None
    outcome: FailureOutcome


class FailureListener(Protocol):
    """A sync listener: told of each failure as the middleware settles it.

    Called on both paths with the failure's `ToolFailure`, once its outcome is known; for a
    stopped run, before `ToolErrorBudgetExceeded` is raised; for a propagated exception,
    before it goes on up. What it returns is ignored, and what it raises is logged to
    `langchain_tool_errors.handlers.LOGGER` and never changes the run.

    Example:
        ```python
        from collections import Counter

        failures_by_tool: Counter[str] = Counter()

        def count(failure: ToolFailure) -> None:
            failures_by_tool[failure["tool"]] += 1

        listener: FailureListener = count
        middleware = ToolErrorMiddleware(explain, listeners=[count])
        ```
    """

    def __call__(self, failure: ToolFailure, /) -> None:
        """Take note of the failure."""
        ...


class AFailureListener(Protocol):
    """An async listener: awaited with each failure, on the async path only.

    On the sync path (`invoke`, `stream`) there is no event loop to await it in: it is not
    run, and each failure logs an error naming it instead. Give a sync listener for agents
    run with `invoke`.

    Example:
        ```python
        async def alert(failure: ToolFailure) -> None:
            if failure["outcome"] == "stopped":
                await asyncio.sleep(0)  # send the alert

        listener: AFailureListener = alert
        middleware = ToolErrorMiddleware(explain, listeners=[alert])
        ```
    """

    def __call__(self, failure: ToolFailure, /) -> Awaitable[None]:
        """Take note of the failure; awaited before the run goes on."""
        ...


Listener: TypeAlias = FailureListener | AFailureListener

FAILURES_KEY = "tool_failures"
"""The state key of the run's record, part of the agent's output."""

_RESET = "\x00reset"

RESET_FAILURES: list[Any] = [_RESET]
"""The update `before_agent` sends at the start of each run: the record starts empty."""


def add_failures(current: list[ToolFailure] | None, update: list[Any]) -> list[ToolFailure]:
    """The state reducer: each update's records follow those already kept.

    Every failing call in a step sends its own one-record list, and LangGraph applies each
    of them here, so parallel failures are all kept. The reset marker, alone, empties it.
    """
    if update == RESET_FAILURES:
        return []
    return [*(current or ()), *update]


class FailureState(BudgetState):
    """The agent state a recording middleware adds: the run's record, part of the output."""

    tool_failures: NotRequired[Annotated[list[ToolFailure], add_failures]]


def type_name(failure: Exception | ReportedFailure) -> str:
    """A failure's type, qualified by its public module (bare for a builtin)."""
    cls = type(failure)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    if module.startswith("_langchain_tool_errors."):
        module = "langchain_tool_errors"
    return f"{module}.{cls.__qualname__}"


class Recorder:
    """What one middleware does with each failure it settles: keep it, tell listeners."""

    __slots__ = ("_listeners", "_name", "keeps")

    keeps: bool
    """Whether the record goes into the agent state (`record_failures=True`)."""

    def __init__(self, name: str, keeps: bool, listeners: tuple[Listener, ...]) -> None:
        self._name = name
        self.keeps = keeps
        self._listeners = listeners

    def failure(
        self,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: int | None,
        outcome: FailureOutcome,
    ) -> ToolFailure:
        """The record of a settled failure."""
        return {
            "middleware": self._name,
            "tool": tool_name(request),
            "call_id": request.tool_call.get("id"),
            "kind": kind_of(failure),
            "error_type": type_name(failure),
            "route": route,
            "outcome": outcome,
        }

    def tell(self, record: ToolFailure) -> None:
        """Tell every listener, on the sync path: an async one is not run, and is logged."""
        for listener in self._listeners:
            try:
                result = listener(record.copy())
            except Exception:  # a listener never changes the run
                _log_raised(listener, record)
                continue
            if inspect.isawaitable(result):
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
        for listener in self._listeners:
            try:
                result = listener(record.copy())
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a listener never changes the run
                _log_raised(listener, record)


def _close(awaitable: Awaitable[object]) -> None:
    """Close a coroutine that will never be awaited, so Python does not warn of it."""
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _log_raised(listener: Listener, record: ToolFailure) -> None:
    LOGGER.error(
        "The failure listener %r raised when told of %s's %s failure (call %s, outcome %s); "
        "the run goes on as if it had not.",
        listener,
        record["tool"],
        record["kind"],
        record["call_id"],
        record["outcome"],
        exc_info=True,
    )


def require_listeners(listeners: object) -> tuple[Listener, ...]:
    """`listeners=` is a list or tuple of callables that each take one positional argument."""
    if isinstance(listeners, str) or not _is_sequence(listeners):
        msg = (
            f"`listeners` must be a list or tuple of callables, but got {listeners!r} "
            f"({type(listeners).__name__}). Write for example listeners=[count_failure]."
        )
        raise TypeError(msg)
    checked: list[Listener] = []
    for index, listener in enumerate(listeners):
        if not _is_listener(listener):
            msg = (
                f"`listeners[{index}]` must be callable, but got {listener!r} "
                f"({type(listener).__name__}). A listener is a function that takes the "
                "failure's ToolFailure, such as `def count(failure: ToolFailure) -> None`."
            )
            raise TypeError(msg)
        try:
            signature = inspect.signature(listener)
        except (TypeError, ValueError):  # a builtin without a signature: trust it
            signature = None
        if signature is not None:
            try:
                signature.bind(None)
            except TypeError as exc:
                msg = (
                    f"`listeners[{index}]` {listener!r} cannot be called with one argument "
                    f"(its signature is {signature}). A listener takes the failure's "
                    "ToolFailure, such as `def count(failure: ToolFailure) -> None`."
                )
                raise TypeError(msg) from exc
        checked.append(listener)
    return tuple(checked)


def _is_sequence(value: object) -> TypeIs[Sequence[object]]:
    return isinstance(value, Sequence)


def _is_listener(value: object) -> TypeIs[Listener]:
    """Whether a listener is callable (its signature is checked next, its result when called)."""
    return callable(value)
