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
from typing import Annotated, Any, Literal, NamedTuple, NotRequired, TypeAlias

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from pydantic import ConfigDict, Field, ValidationError, with_config

# pydantic validates a resume value against `BudgetDecision` (`interrupt`'s response
# schema), and takes only typing_extensions' TypedDict on Python 3.11.
from typing_extensions import TypedDict, TypeIs

from _langchain_tool_errors.budget import ToolErrorBudgetExceeded
from _langchain_tool_errors.counting import row_key
from _langchain_tool_errors.failures import FailureKind
from _langchain_tool_errors.inner_commands import is_state_update
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.state import (
    COUNTS_KEY,
    FAILURES_KEY,
    PAUSES_KEY,
    RESET,
    SETTLED_KEY,
    HeldTool,
    own,
    set_to,
    step_of,
)
from _langchain_tool_errors.stopping import exceeded
from _langchain_tool_errors.tool_calls import id_of, tool_name


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


def asked_of(held: HeldTool, request: ToolCallRequest) -> BudgetDecision:
    """Pause the run for a person's decision about this call to the held tool."""
    call = request.tool_call
    failures: Sequence[ToolFailure] = request.state.get(FAILURES_KEY) or ()
    pause: BudgetPause = {
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
    return ask(pause)


def person_s_answer(text: str, request: ToolCallRequest) -> ToolMessage:
    """The answer a person gave in place of running the held tool, as the model reads it."""
    return ToolMessage(content=text, tool_call_id=id_of(request), name=tool_name(request))


def answered_by_person(text: str, request: ToolCallRequest) -> Command[Any]:
    """The call's answer for a person's "answer": the tool does not run, and stays held."""
    mark = own(step_of(request.state), id_of(request))
    return Command(update={"messages": [person_s_answer(text, request)], SETTLED_KEY: mark})


def stopped_by_person(held: HeldTool) -> ToolErrorBudgetExceeded:
    """The budget's stop for a person's "stop": as the budget would have stopped the run.

    Its `failure` is the one that spent the budget, the failure the record holds as
    "held", now with `outcome="stopped"`: the call waiting at the pause never ran.
    """
    failure: ToolFailure = {
        "middleware": held["middleware"],
        "tool": held["tool"],
        "call_id": held["call_id"],
        "kind": held["kind"],
        "error_type": held["error_type"],
        "route": held["failure_route"],
        "outcome": "stopped",
    }
    return exceeded(held, failure)


def released(key: str, held: HeldTool) -> dict[str, int]:
    """The counts a person's "go on" starts again: the tool's, and the run's if spent."""
    prefix = key.removesuffix(held["tool"])
    keys = [key, row_key(key)]
    if held["scope"] == "run":
        keys.append(prefix)
    return dict.fromkeys(keys, RESET)


class Release(NamedTuple):
    """A person's "go on": the call runs again as `request`, its tool released."""

    key: str
    """The held tool's key in the state."""
    counts: dict[str, int]
    """The counts that start again."""
    request: ToolCallRequest
    """The call as it runs now: the tool no longer held, its counts zero."""

    @classmethod
    def of(cls, held: tuple[str, HeldTool], request: ToolCallRequest) -> Release:
        """The release of the held tool for this call."""
        key = held[0]
        counts = released(*held)
        state = request.state
        holding: dict[str, HeldTool] = dict(state.get(PAUSES_KEY) or {})
        holding.pop(key, None)
        zeroed: dict[str, int] = {**(state.get(COUNTS_KEY) or {}), **dict.fromkeys(counts, 0)}
        return cls(
            key, counts, request.override(state={**state, PAUSES_KEY: holding, COUNTS_KEY: zeroed})
        )

    def applied(self, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        """The call's result, with the release of its tool and the counts started again.

        The counts the call's own failure adds, if it failed, come after the reset (a
        negative value sets a count, see `add_counts`), and so does a hold that failure
        makes (a budget it spends at once, its `per_run` say). A `Command` that does more
        than update this graph's state goes back as it is, and the tool stays held.
        """
        release: dict[str, HeldTool | None] = {self.key: None}
        if isinstance(result, ToolMessage):
            return Command(
                update={"messages": [result], COUNTS_KEY: self.counts, PAUSES_KEY: release}
            )
        update: object = result.update
        if result.graph is not None or result.goto or result.resume is not None:
            return result
        if not is_state_update(update):
            return result
        inner: object = update.get(COUNTS_KEY)
        if inner is not None and not is_state_update(inner):
            return result
        holds: object = update.get(PAUSES_KEY)
        if holds is not None and not is_state_update(holds):
            return result
        counts: dict[str, int] = dict(inner or {})
        for name in self.counts:
            added = counts.get(name, 0)
            counts[name] = added if added < 0 else set_to(added)
        release.update(holds or {})
        return Command(update={**update, COUNTS_KEY: counts, PAUSES_KEY: release})
