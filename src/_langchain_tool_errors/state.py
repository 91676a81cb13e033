"""The run's state: every key this package writes, its reducer, and the agent state schemas.

A middleware instance serves every run of every agent it is listed in, so whatever a run
learns lives in that run's graph state, here: the failures counted against budgets, a
budget's stop, the calls settled in each step (the ledger that gives every call one
answer), the tools an "interrupt" budget holds, and the record. Each key has a reducer
that adds an update to what the state holds, so that the parallel calls of one step all
count; a new run starts each from empty with LangGraph's `Overwrite`, which bypasses the
reducer. The stages import what they read and write from here; none defines a key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import AgentState, OmitFromInput, PrivateStateAttr
from langchain_core.messages import AIMessage, ToolMessage

# pydantic reads `HeldTool` inside `BudgetPause`, and takes only typing_extensions'
# TypedDict on Python 3.11.
from langgraph.types import Overwrite
from typing_extensions import TypedDict

# The base of the stages: neither `budget` nor `classifying` may import this module.
from _langchain_tool_errors.budget import BudgetScope
from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.failures import FailureKind
from _langchain_tool_errors.record_types import ToolFailure

# The counts of failures, kept against the budgets.

COUNTS_KEY = "tool_error_budget_counts"
"""The state key holding the counts of handled failures of the current run."""


RESET = -1
"""The value that sets a count back to zero: a person's "go on" starts a held tool's again.

Any negative value sets a count: `-1` to zero, `set_to(n)` to `n`."""


def set_to(count: int) -> int:
    """The value that sets a count to `count` (a reset, then `count` failures)."""
    return -count - 1


def add_counts(current: dict[str, int] | None, update: dict[str, int]) -> dict[str, int]:
    """The state reducer: add each key's increments; an empty update changes nothing.

    Each failing call sends `{key: 1, ...}`; LangGraph applies every update of a step
    through this reducer, in call order, so parallel failures in one step all count, and
    a person's `RESET` of a held tool's counts comes between the failures before it and
    those after it. A new run starts from zero, and a step's failures in a row are put in
    call order, with LangGraph's `Overwrite`, which bypasses the reducer: no other writer
    (a sub-agent handing its state back, say) can reset the counts by accident.
    """
    if not update:
        return current or {}
    merged = dict(current or {})
    for key, value in update.items():
        if value == REMOVED:
            merged.pop(key, None)
        else:
            merged[key] = -value - 1 if value < 0 else merged.get(key, 0) + value
    return merged


REMOVED = -(2**62)
"""The value that removes a count (see `rewritten`)."""


def rewritten(current: Mapping[str, int], wanted: Mapping[str, int]) -> dict[str, int]:
    """The update that turns the counts `current` into `wanted`, through the reducer.

    A model call's step writes its counts this way, each key set or removed: every
    middleware of this package that settles in that step writes there, and LangGraph
    takes only one `Overwrite` of a key a step.
    """
    update = dict.fromkeys((key for key in current if key not in wanted), REMOVED)
    for key, value in wanted.items():
        if current.get(key) != value:
            update[key] = set_to(value)
    return update


# A budget's stop, kept until it is raised (see `stopping.py`).

STOPS_KEY = "tool_error_budget_stops"
"""The state key holding, by middleware name, the budget stop of the current run."""


class BudgetStop(TypedDict):
    """What the state keeps of a budget's stop: enough to raise it again, in any process."""

    tool: str
    count: int
    limit: int
    scope: BudgetScope
    route: int | None
    kind: FailureKind
    call_id: str
    failure: NotRequired[ToolFailure]
    """The stopping failure as the record keeps it (absent in stops an older release kept)."""


def keep_first_stops(
    current: dict[str, BudgetStop] | None, update: dict[str, BudgetStop]
) -> dict[str, BudgetStop]:
    """The state reducer: each middleware's first stop of the run is kept.

    Parallel calls of one step may each spend the budget; LangGraph applies their updates
    in call order, so the stop raised is the first call's. An empty update adds nothing; a
    new run starts from none with LangGraph's `Overwrite`, which bypasses the reducer.
    """
    if not update:
        return current or {}
    return {**update, **(current or {})}


# The ledger of settled calls: which answers of a step a middleware of ours wrote or met.

SETTLED_KEY = "tool_error_settled"
"""The state key holding the run's calls a middleware settled: error answers, malformed calls."""


def step_of(state: Mapping[str, Any]) -> str:
    """The step whose calls are being answered: the id of the model's last reply.

    The reply `last_reply` finds (only answers after it), without gathering their ids: this
    runs for each failure. `""` when there is no such reply or it has no id; the marks
    then name the call alone.
    """
    messages: Sequence[object] = state.get("messages") or ()
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return step_id(message)
        if not isinstance(message, ToolMessage):
            break
    return ""


def step_id(reply: AIMessage | None) -> str:
    """The step a reply stands for: its id, or `""` where there is no reply or id."""
    return "" if reply is None or reply.id is None else reply.id


def _mark(step: str, call_id: str) -> str:
    return f"{step}\x00{call_id}"


def settled_key(name: str, step: str, call_id: str) -> str:
    """The key that marks a failure met in a model hook as settled by the middleware `name`.

    An answer written elsewhere, or a malformed call: neither is met again by that
    middleware before the next model call.
    """
    return f"{name}\x00{_mark(step, call_id)}"


def settled(step: str, call_id: str) -> dict[str, int]:
    """The update that marks the call's answer as written in a tool-call hook of ours.

    Every middleware of this package that could see that answer has seen it on its way
    (the ones outside the writer, in their own tool-call hooks), or declined it (the ones
    inside, which let the failure go on up): none of them meets it again.
    """
    return {_mark(step, call_id): 1}


def own(step: str, call_id: str) -> dict[str, int]:
    """The update that marks the call's answer as this package's own: never a failure.

    A closed tool's answer and a stop's. A middleware of ours outside the one that gave it
    lets it pass, as it lets a successful result pass.
    """
    return {_mark(step, call_id): 1, own_key(step, call_id): 1}


def own_key(step: str, call_id: str) -> str:
    """The key that marks the call's answer as this package's own."""
    return f"{_mark(step, call_id)}\x00own"


def given(state: Mapping[str, Any]) -> dict[str, int]:
    """The marks for what a run's input ends with: given, not met in this run.

    An input may end with a reply and answers to its calls (a client that ran the tools,
    an app that sends the whole history each time): they are the caller's, not failures
    of the run that starts. Nor are that reply's malformed calls: a middleware met them in
    the run that made the reply, if at all, and `create_agent` answers them before the
    next model call.
    """
    reply, answered = last_reply(state)
    step = step_id(reply)
    marks = {_mark(step, call_id): 1 for call_id in answered}
    for call in () if reply is None else reply.invalid_tool_calls:
        call_id = call.get("id")
        if call_id:
            marks[_mark(step, call_id)] = 1
    return marks


def sent_back_key(name: str, step: str) -> str:
    """The key that marks the step's reply as sent back by the hook after the agent.

    That hook of the middleware `name` sends a reply back once.
    """
    return f"{name}\x00{step}\x00sent back"


def met(marks: Mapping[str, int], name: str, step: str, call_id: str) -> bool:
    """Whether the middleware `name` met the call in this run, or the run was given it."""
    return settled_key(name, step, call_id) in marks or _mark(step, call_id) in marks


# The tools an "interrupt" budget holds (see `pausing.py`).

PAUSES_KEY = "tool_error_budget_held"
"""The state key holding the tools a spent "interrupt" budget holds in this run."""


class HeldTool(TypedDict):
    """What the state keeps of a tool an "interrupt" budget holds: what spent it."""

    middleware: str
    tool: str
    call_id: str
    """The call whose failure spent the budget."""
    failure_route: int | None
    """The position of the route that took that failure (`None`: no route); `route` is the
    position of the route whose budget it spent."""
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


# The record (see `recording.py`).

FAILURES_KEY = "tool_failures"
"""The state key of the run's record, part of the agent's output."""


def add_failures(current: list[ToolFailure] | None, update: list[ToolFailure]) -> list[ToolFailure]:
    """The state reducer: each update's records follow those already kept.

    Every failing call in a step sends its own list of one record (a malformed call's
    stage, one for the whole step), and LangGraph applies each of them here, so parallel
    failures are all kept. An empty update adds nothing: a sub-agent or a node that hands
    back an empty record never erases this one. A new run starts it empty with LangGraph's
    `Overwrite`, which bypasses the reducer.
    """
    if not update:
        return current or []
    return [*(current or ()), *update]


# A model call's step writes what comes before the model and what comes after it as one
# update: the part after reads the state as the part before left it.

_REDUCERS: dict[str, Callable[[Any, Any], Any]] = {
    COUNTS_KEY: add_counts,
    STOPS_KEY: keep_first_stops,
    SETTLED_KEY: add_counts,
    PAUSES_KEY: hold_or_release,
    FAILURES_KEY: add_failures,
}


def applied(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`state` with `update` written through the reducers, as LangGraph would write it."""
    result = dict(state)
    for key, value in update.items():
        if isinstance(value, Overwrite):
            result[key] = value.value
            continue
        reducer = _REDUCERS.get(key)
        result[key] = value if reducer is None else reducer(result.get(key), value)
    return result


def merged(first: dict[str, Any], second: Mapping[str, Any] | None) -> dict[str, Any]:
    """One update that writes `first`, then `second`.

    Records and messages follow each other, marks and holds join (`second`'s winning),
    anything else is `second`'s.
    """
    if not second:
        return first
    result = dict(first)
    for key, value in second.items():
        old: Any = result.get(key)
        if old is None or isinstance(value, Overwrite) or key == "jump_to":
            result[key] = value
        elif key in (FAILURES_KEY, "messages"):
            result[key] = [*old, *value]
        elif key == STOPS_KEY:
            result[key] = keep_first_stops(old, value)
        else:
            marks: dict[str, Any] = old
            result[key] = {**marks, **value}
    return result


# The schemas. LangGraph takes the last callable in `Annotated` as the reducer, so it comes
# last. A middleware's schema is picked once, at construction (see `schema_for`).


class SettledState(AgentState[Any]):
    """The agent state a watching middleware adds: counts, stop, and the calls it settled."""

    tool_error_budget_counts: NotRequired[Annotated[dict[str, int], PrivateStateAttr, add_counts]]
    tool_error_budget_stops: NotRequired[
        Annotated[dict[str, BudgetStop], PrivateStateAttr, keep_first_stops]
    ]
    tool_error_settled: NotRequired[Annotated[dict[str, int], PrivateStateAttr, add_counts]]


class PauseState(SettledState):
    """The same, for a middleware whose "interrupt" budget may hold a tool."""

    tool_error_budget_held: NotRequired[
        Annotated[dict[str, HeldTool], PrivateStateAttr, hold_or_release]
    ]


class FailureState(SettledState):
    """The same, for a middleware that keeps the run's record, part of the output.

    Left out of the agent's input schema: a run's record is the middleware's to write.
    """

    tool_failures: NotRequired[Annotated[list[ToolFailure], OmitFromInput, add_failures]]


class PausingFailureState(FailureState, PauseState):
    """The same, for a middleware that keeps the record and may hold a tool."""


def schema_for(keeps: bool, holds: bool) -> type[AgentState[Any]]:
    """The state schema of a watching middleware: whether it keeps the record, holds tools."""
    if keeps:
        return PausingFailureState if holds else FailureState
    return PauseState if holds else SettledState
