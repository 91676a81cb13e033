"""The counting and recording stages: a failure with its answer is counted, recorded, settled.

Once a failure has the message the model will read, the budgets count it (`counting.py`),
which may tell the model its tool is closed, hold the tool for a person, or stop the run;
the record keeps it; and the state update marks the call as settled, so that no other
middleware of this package counts it again. `conclude` does this for one call, in the
tool-call hook; `settle` for the failures a model hook meets, all of one step, in order.
Both spend the budgets through `_spent`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, Overwrite

from _langchain_tool_errors.budget import ToolErrorBudgetExceeded
from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.failures import InnerMiddlewareError, MalformedToolCall, ReportedFailure
from _langchain_tool_errors.pausing import asked_of, person_s_answer, released, stopped_by_person
from _langchain_tool_errors.plan import Plan
from _langchain_tool_errors.record_types import FailureOutcome, ToolFailure
from _langchain_tool_errors.recording import failure_record
from _langchain_tool_errors.state import (
    COUNTS_KEY,
    FAILURES_KEY,
    PAUSES_KEY,
    SETTLED_KEY,
    STOPS_KEY,
    BudgetStop,
    HeldTool,
    given,
    own,
    rewritten,
    sent_back_key,
    set_to,
    settled,
    settled_key,
    step_id,
    step_of,
)
from _langchain_tool_errors.stopping import (
    keep_cause,
    running_config,
    stop_of,
    stopped_answer,
    stopped_answers,
)
from _langchain_tool_errors.tool_calls import id_of, tool_name


class Settled(NamedTuple):
    """A failure met in a model hook, after its route."""

    failure: MalformedToolCall | InnerMiddlewareError
    request: ToolCallRequest
    """A request standing for the failed call (no tool; the hook's state and runtime)."""
    reply: ToolMessage | None
    """The route's answer; `None` if it gave none."""
    route: int | None
    """The route's position; `None` if no route took the failure."""
    replaces: str | None
    """The id of the answer written elsewhere (`None` for a malformed call)."""


def _spent(
    plan: Plan,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    counts: Mapping[str, int],
    route: int | None,
    *,
    in_step: bool = False,
) -> tuple[ToolMessage | None, dict[str, int] | None, tuple[str, HeldTool] | None, FailureOutcome]:
    """What the budgets make of a failure: nothing, without a budget that counts it.

    What the model reads instead (a "tell" budget's answer), the increments to the counts,
    the tool an "interrupt" budget holds, and the failure's outcome.

    Raises:
        ToolErrorBudgetExceeded: A "stop" budget was spent (see `Accounts.spend`).
    """
    accounts = plan.accounts
    spent = (
        None
        if accounts is None
        else accounts.spend(failure, request, counts, route, in_step=in_step)
    )
    if spent is None:
        return None, None, None, "answered"
    told, increments, held = spent
    outcome: FailureOutcome = (
        "told" if told is not None else "held" if held is not None else "answered"
    )
    return told, increments, held, outcome


def conclude(
    plan: Plan,
    message: ToolMessage,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    route: int | None,
) -> tuple[ToolMessage | Command[Any], ToolFailure | None]:
    """Count and record a failure met in the tool-call hook, with its message.

    Returns what the hook returns and the failure's record, for the listeners (`None` when
    nothing records or listens). A spent "stop" budget does not raise
    here: the call is answered with the stop, which goes into the state beside the step's
    other results, and the next hook raises it once the step is saved (see `stopping.py`).
    """
    if not plan.watches:  # nothing counts or records: the handler's message goes back
        return settled_answer(message, request), None
    step = step_of(request.state)
    try:
        counts: Mapping[str, int] = request.state.get(COUNTS_KEY) or {}
        told, increments, held, outcome = _spent(
            plan, failure, request, counts, route, in_step=True
        )
    except ToolErrorBudgetExceeded as stop:
        stop.failure = failure_record(plan.name, failure, request, route, "stopped")
        return stopped(plan, stop, request)
    # The call is settled here: no hook before the model meets its answer again.
    update: dict[str, Any] = {
        "messages": [told or message],
        SETTLED_KEY: settled(step, message.tool_call_id),
    }
    remembered = None if plan.repeats is None else plan.repeats.remember(failure, request)
    if increments is not None or remembered is not None:
        update[COUNTS_KEY] = {**(increments or {}), **(remembered or {})}
    if held is not None:
        update[PAUSES_KEY] = dict([held])
    recorder = plan.recorder
    record = None if recorder is None else recorder.failure(failure, request, route, outcome)
    if record is not None and plan.keeps:
        update[FAILURES_KEY] = [record]
    return Command(update=update), record


def stopped(
    plan: Plan, stop: ToolErrorBudgetExceeded, request: ToolCallRequest, *, by_person: bool = False
) -> tuple[Command[Any], ToolFailure | None]:
    """The tool-call hook's answer when its call stops the run, and the stop's record.

    The call's failure spent a "stop" budget, or the call waited at a pause and a person
    stopped the run (`by_person`). Either way the call is answered with the stop, the stop
    goes into the state, and the record ends with `stop.failure`; the next hook raises it
    once the step is saved (see `stopping.py`).
    """
    call_id = id_of(request)
    kept = stop_of(stop, call_id)
    keep_cause(plan.name, stop, call_id, running_config())
    answer = stopped_answer(kept, call_id, tool_name(request), by_person=by_person)
    update: dict[str, Any] = {
        "messages": [answer],
        STOPS_KEY: {plan.name: kept},
        SETTLED_KEY: own(step_of(request.state), call_id),
    }
    record = None if plan.recorder is None else stop.failure
    if record is not None and plan.keeps:
        update[FAILURES_KEY] = [record]
    return Command(update=update), record


def settle(
    plan: Plan,
    state: Mapping[str, Any],
    found: list[Settled],
    ordered: dict[str, int] | None = None,
) -> tuple[dict[str, Any] | None, list[ToolFailure]]:
    """Count and record failures met in a model hook, then answer them.

    Malformed calls (once the model has answered, see `lifecycle.unmet_malformed`) and
    answers written elsewhere (as the next model call starts). A malformed call no route
    answered is left to `create_agent`, which answers it before the next model call,
    unless a "tell" budget it spent answers it; an answer written elsewhere is replaced
    (keeping its id) only by a route's or a budget's. A "stop" budget one of them spends
    answers it, and every call of the reply still unanswered, with the stop, and ends the
    run (`jump_to`), which `after_agent` stops. In the model call's step, the caller keeps
    only the answers to malformed calls and no jump (see `model_step._met`). A failed call
    of a tool an "interrupt" budget holds is that tool's next call: the run pauses for the
    person's decision before the failure is counted.

    Before the model, `ordered` is the run's counts with the last step's failures in a
    row put in call order (`Accounts.in_call_order`), when that changed them: the
    failures are counted after it, and the update sets the whole counts through the
    reducer (`rewritten`): other middleware of this package may write them in the same
    model call's step, and LangGraph takes one `Overwrite` of a key a step.

    Returns:
        The state update and the records for the listeners.
    """
    recorder = plan.recorder
    holding = plan.holding
    messages: list[ToolMessage] = []
    increments: dict[str, int] = {}
    counts: dict[str, int] = dict((state.get(COUNTS_KEY) or {}) if ordered is None else ordered)
    started_again: set[str] = set()
    step = step_of(state)
    marks: dict[str, int] = {}
    holds: dict[str, HeldTool | None] = {}
    records: list[ToolFailure] = []
    update: dict[str, Any] = {}
    by_person = False  # whether a person's "stop" at a pause is what stops the run
    for index, (failure, request, reply, route, replaces) in enumerate(found):
        answer = reply
        outcome: FailureOutcome = "answered"
        try:
            # A call of a held tool that never runs (a limit blocked it, or it was cut
            # short) is the tool's next call: the run pauses here.
            held = None if holding is None else holding.held(request)
            decision = None if held is None else asked_of(held[1], request)
            if held is None or decision is None:
                told, more, hold, outcome = _spent(plan, failure, request, counts, route)
            elif decision["type"] == "answer":  # in place of the answer it had
                answer = person_s_answer(decision["text"], request)
                told, more, hold = None, None, None
            elif decision["type"] == "stop":
                by_person = True
                raise stopped_by_person(held[1])
            else:  # go on: the tool's counts start again, and count this failure
                restarted = released(*held)
                holds[held[0]] = None
                started_again.update(restarted)
                counts.update(dict.fromkeys(restarted, 0))
                told, more, hold, outcome = _spent(plan, failure, request, counts, route)
        except ToolErrorBudgetExceeded as stop:
            if not by_person:  # a person's stop names the failure that spent the budget
                stop.failure = failure_record(plan.name, failure, request, route, "stopped")
            if recorder is not None and stop.failure is not None:
                records.append(stop.failure)
            left = [(r.request, r.replaces) for r in found[index:]]
            stopped = stopped_answers(plan.name, stop, state, left, by_person=by_person)
            messages += stopped
            for answered in stopped:  # this middleware's own answers now
                marks.update(own(step, answered.tool_call_id))
            kept: BudgetStop = stop_of(stop, id_of(request))
            update[STOPS_KEY] = {plan.name: kept}
            update["jump_to"] = "end"
            break
        answer = told or answer
        if hold is not None:
            holds.update([hold])
        for key, value in (more or {}).items():
            increments[key] = increments.get(key, 0) + value
            counts[key] = counts.get(key, 0) + value
        if recorder is not None:
            records.append(recorder.failure(failure, request, route, outcome))
        # Met here: an answer written elsewhere is not met again before the next model
        # call, nor a malformed call (see `lifecycle.unmet_malformed`).
        marks[settled_key(plan.name, step, id_of(request))] = 1
        if answer is not None:
            messages.append(answer if replaces is None else _keeping(answer, replaces))
    if messages:
        update["messages"] = messages
    if ordered is not None:  # the whole counts, releases and this hook's failures in them
        update[COUNTS_KEY] = rewritten(state.get(COUNTS_KEY) or {}, counts)
    else:
        for key in started_again:  # the count a person's "go on" reset, and what came after
            increments[key] = set_to(counts.get(key, 0))
        if increments:
            update[COUNTS_KEY] = increments
    if marks:
        update[SETTLED_KEY] = marks
    if holds:
        update[PAUSES_KEY] = holds
    if plan.keeps and records:
        update[FAILURES_KEY] = records
    return update or None, records


def _keeping(answer: ToolMessage, replaces: str) -> ToolMessage:
    """`answer` with the id of the message it replaces, so it takes that one's place."""
    return answer.model_copy(update={"id": replaces})


def settled_answer(message: ToolMessage, request: ToolCallRequest) -> ToolMessage | Command[Any]:
    """A plain middleware's answer, marked as settled where a watching one keeps such marks.

    Only an agent with a watching middleware in it has the state key: there, the answer
    goes back with the mark, so that one inside this never counts what it declined and
    this answered. Elsewhere the message goes back alone.
    """
    if SETTLED_KEY not in request.state:
        return message
    mark = settled(step_of(request.state), message.tool_call_id)
    return Command(update={"messages": [message], SETTLED_KEY: mark})


def settled_closed(answer: ToolMessage, request: ToolCallRequest) -> Command[Any]:
    """A closed tool's answer, marked as this package's own: no middleware counts it."""
    mark = own(step_of(request.state), answer.tool_call_id)
    return Command(update={"messages": [answer], SETTLED_KEY: mark})


def stopped_call(name: str, request: ToolCallRequest) -> Command[Any] | None:
    """The answer to a call that comes to run after the middleware `name` stopped the run.

    A malformed call met in the model call's step may spend the budget beside calls that
    nothing answered there: they go to the tools, and each is answered here, as this
    package's own, without running. `None` when this middleware has no stop in the run.
    """
    stops: Mapping[str, BudgetStop] | None = request.state.get(STOPS_KEY)
    stop = None if not stops else stops.get(name)
    if stop is None:
        return None
    answer = stopped_answer(stop, id_of(request), tool_name(request))
    mark = own(step_of(request.state), answer.tool_call_id)
    return Command(update={"messages": [answer], SETTLED_KEY: mark})


def is_closed(plan: Plan, request: ToolCallRequest, state: Mapping[str, Any]) -> bool:
    """Whether the call is to a tool a "tell" budget closed: answered, never a failure.

    This middleware answers such a call as it comes to run; another that answers it
    first (a limit, a person) gives its one answer instead, and it is not counted.
    """
    closing = plan.closing
    return closing is not None and closing.closed(tool_name(request), state.get(COUNTS_KEY) or {})


def reset(plan: Plan, state: Mapping[str, Any]) -> dict[str, Any]:
    """The update that empties the run's counts and record: empty values, made anew.

    Each is written as LangGraph's `Overwrite`, which only a deliberate writer sends:
    the reducers take any other empty value as adding nothing. Only the keys this
    middleware writes: nothing else shows in a stream's updates.
    """
    update: dict[str, Any] = {SETTLED_KEY: Overwrite(given(state))}
    if plan.accounts is not None or plan.repeats is not None:
        no_counts: dict[str, int] = {}
        no_stops: dict[str, BudgetStop] = {}
        update[COUNTS_KEY] = Overwrite(no_counts)
        update[STOPS_KEY] = Overwrite(no_stops)
    if plan.holding is not None:
        none_held: dict[str, HeldTool] = {}
        update[PAUSES_KEY] = Overwrite(none_held)
    if plan.keeps:
        no_records: list[ToolFailure] = []
        update[FAILURES_KEY] = Overwrite(no_records)
    return update


def back_to_the_model(
    state: Mapping[str, Any], found: list[Settled], update: dict[str, Any] | None
) -> dict[str, Any] | None:
    """`update`, sending the run back to the model if its reply held only malformed calls.

    Only when this middleware met one of them (a call of a tool it leaves alone is
    langchain's to answer) and no budget stopped the run.
    """
    if not found or (update is not None and "jump_to" in update):
        return update
    reply, _ = last_reply(state)
    if reply is None or reply.tool_calls:
        return update
    return {**(update or {}), "jump_to": "model"}


def sent_back(name: str, state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The update that sends the run back to the model at a reply it never read; or `None`.

    A reply of only malformed calls the middleware `name` met. The model call's step sends
    such a reply back with `jump_to`; another middleware's hook after the model, a node
    between the model and the edge that reads it, drops it, and the run ends there
    instead: the hook after the agent sends it back, once. A run that ends at the same
    reply again was ended on purpose (a hook before the model that ends it, say), and so
    was one a middleware of this package stopped: the stop is raised at the run's end.
    """
    if state.get(STOPS_KEY):
        return None
    reply, _ = last_reply(state)
    if reply is None or reply.tool_calls or not reply.invalid_tool_calls:
        return None
    marks: Mapping[str, int] = state.get(SETTLED_KEY) or {}
    step = step_id(reply)
    once = sent_back_key(name, step)
    if once in marks:
        return None
    for call in reply.invalid_tool_calls:
        if settled_key(name, step, call.get("id") or "") in marks:
            return {"jump_to": "model", SETTLED_KEY: {once: 1}}
    return None
