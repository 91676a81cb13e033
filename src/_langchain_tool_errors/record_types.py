"""The record of a failure and the listeners told of it: the types users annotate with."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Literal, TypeAlias

from typing_extensions import Protocol, TypedDict

from _langchain_tool_errors.failures import FailureKind

FailureOutcome: TypeAlias = Literal["answered", "told", "held", "stopped", "propagated", "repaired"]
"""What became of a failure the middleware saw.

- `"answered"`: the call has an error message for the model to read (a route's, or the one
  the failure came with), or, where the failure met a budget's pause, a person's answer in
  its place.
- `"told"`: an `ErrorBudget(when_spent="tell")` was spent by this failure; the model read
  that the tool is unavailable for the rest of the run.
- `"held"`: an `ErrorBudget(when_spent="interrupt")` was spent by this failure; the model
  read the failure as usual, and the tool's next call pauses the run for a person.
- `"stopped"`: an `ErrorBudget` was spent by this failure and stopped the run with
  `ToolErrorBudgetExceeded`. Where a person stopped the run at an "interrupt" budget's
  pause, the failure that spent it has this entry after its `"held"` one.
- `"propagated"`: the exception went on up, as no route took it or its route's handler
  returned `None` or failed.
- `"repaired"`: the call was corrected by `repair=` before any tool ran, and the corrected
  call ran in its place (its own failure, if any, is a record of its own).

Example:
    ```python
    from langchain_tool_errors import FailureOutcome, ToolFailure

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
        from typing import Any

        from langchain_tool_errors import ToolFailure

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
    `langchain_tool_errors.handlers.LOGGER` and never changes the run. Parallel tool calls
    call it from their own threads (on the sync path) or concurrently (async): keep it
    thread-safe.

    Example:
        ```python
        import threading
        from collections import Counter

        from langchain_tool_errors import FailureListener, ToolErrorMiddleware, ToolFailure
        from langchain_tool_errors.handlers import report_type_only

        failures_by_tool: Counter[str] = Counter()
        counting = threading.Lock()

        def count(failure: ToolFailure) -> None:
            with counting:  # parallel tool calls tell it from their own threads
                failures_by_tool[failure["tool"]] += 1

        listener: FailureListener = count
        middleware = ToolErrorMiddleware(report_type_only, listeners=[count])
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
        import asyncio

        from langchain_tool_errors import AFailureListener, ToolErrorMiddleware, ToolFailure
        from langchain_tool_errors.handlers import report_type_only

        async def alert(failure: ToolFailure) -> None:
            if failure["outcome"] == "stopped":
                await asyncio.sleep(0)  # send the alert

        listener: AFailureListener = alert
        middleware = ToolErrorMiddleware(report_type_only, listeners=[alert])
        ```
    """

    def __call__(self, failure: ToolFailure, /) -> Awaitable[None]:
        """Take note of the failure; awaited before the run goes on."""
        ...


Listener: TypeAlias = FailureListener | AFailureListener
