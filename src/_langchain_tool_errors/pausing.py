"""The pausing stage: a spent `when_spent="interrupt"` budget hands the decision to a person.

The failure that spends such a budget is answered as usual, and the tool is held: its
counts stay, and the state keeps what spent it (`HeldTool`). The next call to a held tool
pauses the run with LangGraph's `interrupt()` before anything runs, so no tool runs twice
because of the pause: on resume the tool node runs that call's hook again from the start,
and `interrupt()` returns the person's decision there. The decision is one of three:

- `{"type": "go_on"}`: the tool's counts start again and the call runs now;
- `{"type": "answer", "text": ...}`: the call is answered with the text, the tool does
  not run, and it stays held;
- `{"type": "stop"}`: the run stops with `ToolErrorBudgetExceeded`, as a "stop" budget
  would have stopped it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware.types import PrivateStateAttr
from langgraph.types import interrupt

# pydantic validates a resume value against `BudgetDecision` (`interrupt`'s response
# schema), and takes only typing_extensions' TypedDict on Python 3.11.
from typing_extensions import TypedDict, TypeIs

from _langchain_tool_errors.answered_elsewhere import SettledState
from _langchain_tool_errors.budget import BudgetScope
from _langchain_tool_errors.failures import FailureKind
from _langchain_tool_errors.record_types import ToolFailure

PAUSES_KEY = "tool_error_budget_held"
"""The state key holding the tools a spent "interrupt" budget holds in this run."""


class HeldTool(TypedDict):
    """What the state keeps of a tool an "interrupt" budget holds: what spent it."""

    middleware: str
    tool: str
    kind: FailureKind
    error_type: str
    count: int
    limit: int
    scope: BudgetScope
    route: int | None


def hold_or_release(
    current: dict[str, HeldTool] | None, update: Mapping[str, HeldTool | None]
) -> dict[str, HeldTool]:
    """The state reducer: hold each tool given; release each given as `None`.

    An empty update changes nothing; a new run starts with none held (LangGraph's
    `Overwrite`, which bypasses the reducer).
    """
    if not update:
        return current or {}
    merged = dict(current or {})
    for key, held in update.items():
        if held is None:
            merged.pop(key, None)
        else:
            merged[key] = held
    return merged


class PauseState(SettledState):
    """The agent state of a watching middleware whose "interrupt" budget may hold a tool."""

    tool_error_budget_held: NotRequired[
        Annotated[dict[str, HeldTool], PrivateStateAttr, hold_or_release]
    ]


class BudgetPause(TypedDict):
    """What a person reads when an `ErrorBudget(when_spent="interrupt")` pauses the run.

    The value of the `Interrupt` (in `result["__interrupt__"]`, and in the thread's state on
    the LangGraph server), as plain JSON: the call that would have run, and what spent the
    budget.

    Attributes:
        middleware: The name of the middleware whose budget is spent.
        tool: The tool the call would run.
        call_id: The id of that call.
        args: Its arguments, as the model sent them.
        kind: The kind of the failure that spent the budget.
        count: The count that went over the limit.
        limit: The limit.
        scope: Which limit: `"tool"` (`per_tool`), `"run"` (`per_run`) or `"consecutive"`.
        route: The position of the route whose budget it is, or `None` for the
            middleware's own.
        failures: This tool's failures in the run, as the record keeps them (empty unless
            `record_failures=True`).

    Example:
        ```python
        from langchain_tool_errors import BudgetPause

        def describe(pause: BudgetPause) -> str:
            return f"`{pause['tool']}` failed {pause['count']} times (limit {pause['limit']})."
        ```
    """

    middleware: str
    tool: str
    call_id: str
    args: dict[str, Any]
    kind: FailureKind
    count: int
    limit: int
    scope: Literal["tool", "run", "consecutive"]
    route: int | None
    failures: list[ToolFailure]


class BudgetDecision(TypedDict):
    """A person's decision on a paused run, given as `Command(resume=...)`.

    `{"type": "go_on"}` starts the tool's counts again and runs the call;
    `{"type": "answer", "text": "..."}` answers the call with the text in place of running
    the tool (the tool stays held, so its next call pauses again);
    `{"type": "stop"}` stops the run with `ToolErrorBudgetExceeded`.

    Attributes:
        type: `"go_on"`, `"answer"` or `"stop"`.
        text: For `"answer"`, what the model reads.

    Example:
        ```python
        from typing import Any

        from langgraph.types import Command

        from langchain_tool_errors import BudgetDecision

        decision: BudgetDecision = {"type": "answer", "text": "The service is down today."}
        resume: Command[Any] = Command(resume=decision)
        ```
    """

    type: Literal["go_on", "answer", "stop"]
    text: NotRequired[str]


_SCHEMA_TAKEN = "response_schema" in inspect.signature(interrupt).parameters
"""Whether this langgraph's `interrupt()` takes a schema for the resume value (1.2.15+)."""

DECISIONS = ('{"type": "go_on"}', '{"type": "answer", "text": "..."}', '{"type": "stop"}')


def _is_mapping(value: object) -> TypeIs[Mapping[object, object]]:
    return isinstance(value, Mapping)


def require_decision(value: object, tool: str) -> BudgetDecision:
    """The resume value as a decision, or a `ValueError` naming the three there are."""
    if _is_mapping(value):
        kind = value.get("type")
        text = value.get("text")
        if kind in ("go_on", "stop"):
            return {"type": "go_on"} if kind == "go_on" else {"type": "stop"}
        if kind == "answer" and isinstance(text, str) and text:
            return {"type": "answer", "text": text}
    msg = (
        f"The run was paused before `{tool}` ran again, and resumed with {value!r}, which is "
        f"not a decision. Resume with Command(resume=...) and one of {', '.join(DECISIONS)}."
    )
    raise ValueError(msg)


def ask(pause: BudgetPause) -> BudgetDecision:
    """Pause the run with `pause` for a person; on resume, their decision.

    Where langgraph validates resume values (`response_schema`), a value that does not fit
    `BudgetDecision` is refused there, and the interrupt stays pending.
    """
    if _SCHEMA_TAKEN:
        value: object = interrupt(pause, response_schema=BudgetDecision)
    else:  # pragma: no cover - an older langgraph: the value is checked below only
        value = interrupt(pause)
    return require_decision(value, pause["tool"])


def pause_of(
    held: HeldTool, call: Mapping[str, Any], failures: Sequence[ToolFailure]
) -> BudgetPause:
    """What the person reads for the call `call` to the held tool."""
    return {
        "middleware": held["middleware"],
        "tool": held["tool"],
        "call_id": str(call.get("id")),
        "args": dict(call.get("args") or {}),
        "kind": held["kind"],
        "count": held["count"],
        "limit": held["limit"],
        "scope": held["scope"],
        "route": held["route"],
        "failures": [
            f
            for f in failures
            if f["middleware"] == held["middleware"] and f["tool"] == held["tool"]
        ],
    }
