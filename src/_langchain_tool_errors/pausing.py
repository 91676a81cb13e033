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

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from langchain.agents.middleware.types import PrivateStateAttr
from langgraph.types import interrupt
from pydantic import ConfigDict, Field, ValidationError, with_config

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
        refused: Only when the pause is asked again because the last resume value was
            refused (an answer with a blank text): why, naming the decisions there are.

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
    refused: NotRequired[str]


_NO_OTHER_KEYS = ConfigDict(extra="forbid")
"""A decision has only its own keys: pydantic refuses text on a "go on", as a type checker does,
rather than dropping it unread."""


@with_config(_NO_OTHER_KEYS)
class GoOnDecision(TypedDict):
    """A person's "go on": the tool's counts start again, and the waiting call runs.

    The run's count starts again too when the budget's `per_run` limit was the one spent.

    Attributes:
        type: `"go_on"`.

    Example:
        ```python
        from langchain_tool_errors import GoOnDecision

        decision: GoOnDecision = {"type": "go_on"}
        ```
    """

    type: Literal["go_on"]


@with_config(_NO_OTHER_KEYS)
class AnswerDecision(TypedDict):
    """A person's answer: the model reads `text` in place of the tool's result.

    The tool does not run for the waiting call and stays held, so its next call pauses
    again. The answer is a success, not an error. An empty (or blank) text is refused.

    Attributes:
        type: `"answer"`.
        text: What the model reads.

    Example:
        ```python
        from langchain_tool_errors import AnswerDecision

        decision: AnswerDecision = {"type": "answer", "text": "The service is down today."}
        ```
    """

    type: Literal["answer"]
    text: str


@with_config(_NO_OTHER_KEYS)
class StopDecision(TypedDict):
    """A person's stop: the run stops with `ToolErrorBudgetExceeded`.

    The waiting call is answered with the stop, kept in the thread as a "stop" budget's
    stop is, so the thread goes on at its next input.

    Attributes:
        type: `"stop"`.

    Example:
        ```python
        from langchain_tool_errors import StopDecision

        decision: StopDecision = {"type": "stop"}
        ```
    """

    type: Literal["stop"]


BudgetDecision: TypeAlias = GoOnDecision | AnswerDecision | StopDecision
"""A person's decision on a paused run, given as `Command(resume=...)`.

One of `{"type": "go_on"}` (`GoOnDecision`), `{"type": "answer", "text": "..."}`
(`AnswerDecision`) and `{"type": "stop"}` (`StopDecision`). It is also the pause's
`response_schema`, so langgraph refuses any other value before it is kept (one with a key its
type does not have too: text on a "go on"); an answer whose text is blank pauses the run
again (see `BudgetPause`'s `refused`).

Example:
    ```python
    from typing import Any

    from langgraph.types import Command

    from langchain_tool_errors import BudgetDecision, BudgetPause

    def decide(pause: BudgetPause) -> BudgetDecision:
        if pause["count"] > 5:
            return {"type": "stop"}
        return {"type": "answer", "text": f"`{pause['tool']}` is down; answer without it."}

    resume: Command[Any] = Command(resume={"type": "go_on"})
    ```
"""

_DECISION_SCHEMA: Any = Annotated[BudgetDecision, Field(discriminator="type")]
"""The schema langgraph validates a resume value against: the union, told apart by `type`.

With the discriminator, pydantic's error for a wrong value is one line that names the
three types there are (or the field missing from the one given), not one per member of
the union. Typed `Any`: `interrupt()`'s overloads take a class.
"""

DECISIONS = ('{"type": "go_on"}', '{"type": "answer", "text": "..."}', '{"type": "stop"}')


def _is_mapping(value: object) -> TypeIs[Mapping[object, object]]:
    return isinstance(value, Mapping)


def require_decision(value: object, tool: str) -> BudgetDecision:
    """The resume value as a decision, or a `ValueError` naming the three there are."""
    if _is_mapping(value):
        kind = value.get("type")
        text = value.get("text")
        if kind == "go_on":
            return {"type": "go_on"}
        if kind == "stop":
            return {"type": "stop"}
        if kind == "answer" and isinstance(text, str) and text.strip():
            return {"type": "answer", "text": text}
        if kind == "answer":
            msg = (
                f"The run was paused before `{tool}` ran again, and resumed with an answer "
                f"whose text is blank ({value!r}). The text is what the model reads in place of "
                f"`{tool}`'s result: resume with {DECISIONS[1]}, or with {DECISIONS[0]} or "
                f"{DECISIONS[2]}."
            )
            raise ValueError(msg)
    msg = (
        f"The run was paused before `{tool}` ran again, and resumed with {value!r}, which is "
        f"not a decision. Resume with Command(resume=...) and one of {', '.join(DECISIONS)}."
    )
    raise ValueError(msg)


def ask(pause: BudgetPause) -> BudgetDecision:
    """Pause the run with `pause` for a person; on resume, their decision.

    langgraph refuses a value that is not a `BudgetDecision` before saving it (the
    `response_schema`): its `ValidationError` goes up with a note saying which call waits
    and what to resume with, and the pause stays. A value it lets through and this refuses
    (an answer whose text is blank) is already saved as this pause's answer, so raising
    would answer every later resume with it too: the run pauses again instead, with the
    same payload and, under `refused`, why.
    """
    asked = pause
    while True:
        try:
            value: object = interrupt(asked, response_schema=_DECISION_SCHEMA)
        except ValidationError as invalid:  # langgraph's: the pause stays, to be answered again
            invalid.add_note(
                f"The run is paused before `{pause['tool']}` runs again (call "
                f"{pause['call_id']!r}), and stays paused. Resume it with Command(resume=...) "
                f"and one of {', '.join(DECISIONS)}."
            )
            raise
        try:
            return require_decision(value, pause["tool"])
        except ValueError as refused:
            asked = pause.copy()
            asked["refused"] = str(refused)


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
