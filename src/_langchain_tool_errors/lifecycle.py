"""A failure's life, written once: classify, route, handle, count, record, tell.

Each function here is one way a failure is met, written as a generator (a `Life`) that
yields an effect where it needs a handler's answer or the listeners told, and returns what
the hook returns. The sync and async hooks drive the same life (`effects.run`,
`effects.arun`); nothing here waits. The stages, in order:

1. classify: an exception is its own kind; an error message or an answer written
   elsewhere is classified (`classifying.py`);
2. route: the first route that matches, as an `except` clause would (`route_table.py`);
3. handle: the route's handler gives the content (`Ask`, then `handling.py`). An exception
   no route takes, or whose handler declines, goes on up and is told so; a handler that
   fails goes on up too. A failure that is not an exception keeps its own message;
4. count and record (`settling.py`), then tell the listeners (`Tell`).

A model call's step has two lives: `before_the_model` (a saved stop raised, the answers
other middleware wrote met) and `after_the_model` (the reply repaired, its malformed calls
met). Together they do, in the model call's own step, what would otherwise take a graph
node before and after every model call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from _langchain_tool_errors.answered_elsewhere import answered_elsewhere
from _langchain_tool_errors.asked_by import note_replies
from _langchain_tool_errors.classifying import (
    answer_to,
    classify,
    last_reply,
    malformed,
    malformed_calls,
    standing_request,
)
from _langchain_tool_errors.control_flow import GraphBubbleUp, is_invalid_resume
from _langchain_tool_errors.effects import Life, Tell
from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.handling import fresh, replaced, replacing, sendable
from _langchain_tool_errors.inner_commands import answered_inside, put_back
from _langchain_tool_errors.marking import sent
from _langchain_tool_errors.pausing import (
    Release,
    answered_by_person,
    asked_of,
    stopped_by_person,
)
from _langchain_tool_errors.plan import Plan
from _langchain_tool_errors.providers import Provider
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.repair import repaired
from _langchain_tool_errors.repeats import Rerun
from _langchain_tool_errors.route_table import RouteHandlers
from _langchain_tool_errors.settling import (
    Settled,
    conclude,
    is_closed,
    settle,
    settled_closed,
    stopped,
)
from _langchain_tool_errors.state import (
    COUNTS_KEY,
    SETTLED_KEY,
    STOPS_KEY,
    BudgetStop,
    applied,
    merged,
    met,
    pending_key,
    rewritten,
    step_of,
)
from _langchain_tool_errors.stopping import raise_stop, stopped_answer
from _langchain_tool_errors.tool_calls import id_of, tool_name


def after_exception(
    plan: Plan, exc: Exception, request: ToolCallRequest
) -> Life[ToolMessage | Command[Any] | None]:
    """A tool's exception through the stages: its answer, or `None` to let it go on up.

    Driven while the exception is handled, so whatever a handler raises is chained to it.
    """
    route = plan.table.route(exc, request)  # an exception is its own kind
    message = None
    if route is not None:
        message = yield from _answered(plan, route, exc, request)
    if route is None or message is None:  # no route took it, or it declined
        yield from _propagated(plan, exc, request, route)
        return None
    return (yield from _finish(plan, message, exc, request, route))


def after_result(
    plan: Plan, result: ToolMessage | Command[Any], request: ToolCallRequest
) -> Life[ToolMessage | Command[Any]]:
    """A result that is not a plain success, through the stages.

    An error message is classified, routed and counted, and so is one an inner
    middleware's `Command` answers with; any other result is a success.
    """
    if not isinstance(result, ToolMessage):
        inner = answered_inside(result, request)
        if inner is None:
            return result
        error, rest = inner
    elif result.status != "error":
        return result
    else:
        error, rest = result, None
    if plan.ignores(request):
        return result
    failure = classify(error, request)
    route = plan.table.route(failure, request)
    if route is not None:
        answer = yield from _answered(plan, route, failure, request, error)
        error = error if answer is None else answer
    answered = yield from _finish(plan, error, failure, request, route)
    return answered if rest is None else put_back(rest, answered)


def before_running(
    plan: Plan, request: ToolCallRequest
) -> Life[ToolMessage | Command[Any] | Release | Rerun | None]:
    """The answer to a call that must not run as it is; a `Release` or a `Rerun`; or `None`.

    A call to a tool a "tell" budget closed is answered as closed; one to a tool an
    "interrupt" budget holds pauses the run for a person, whose "go on" releases the tool
    (the hook runs the call again, released); a repeat of a call that failed is answered
    by its route without running the tool, or, where no route answers it, runs as a
    `Rerun` (a success forgets its failures). `None`: the call runs as it is.
    """
    stops: Mapping[str, BudgetStop] | None = request.state.get(STOPS_KEY)
    kept = None if not stops else stops.get(plan.name)
    if kept is not None:  # the step before stopped the run: no call of its reply runs
        return settled_closed(stopped_answer(kept, id_of(request), tool_name(request)), request)
    closing = plan.closing
    if closing is not None and closing.closing_key in (request.state.get(COUNTS_KEY) or ()):
        closed = closing.answer_closed(request)  # a closed tool's call never runs
        if closed is not None:
            return settled_closed(closed, request)
    holding = plan.holding
    held = None if holding is None else holding.held(request)
    if held is not None:
        decision = asked_of(held[1], request)
        if decision["type"] == "go_on":
            return Release.of(held, request)
        if decision["type"] == "answer":
            return answered_by_person(decision["text"], request)
        answer, record = stopped(plan, stopped_by_person(held[1]), request, by_person=True)
        if record is not None:
            yield from _told(plan, [record])
        return answer
    repeats = plan.repeats
    if repeats is None:
        return None
    repeated = repeats.repeated(request)
    if repeated is None:  # no call of this tool with these arguments failed in the run
        return None
    route = plan.table.route(repeated, request)
    made = None if route is None else (yield from _answered(plan, route, repeated, request))
    if made is None:  # no route answers it, or its handler declined: the tool runs again
        return repeats.rerun(request)
    return (yield from _finish(plan, made, repeated, request, route))


class BeforeTheModel(NamedTuple):
    """What the part before a model call hands the model, and the part after it."""

    request: ModelRequest[Any]
    """The request as the model reads it: answers replaced or added, errors marked."""
    messages: list[ToolMessage]
    """This middleware's answers written before the reply, in order."""
    update: dict[str, Any]
    """The rest of what the part before writes: counts, marks, holds, records."""
    records: list[ToolFailure]
    """Its failures' records, told once the model has answered."""


def before_the_model(
    plan: Plan, request: ModelRequest[Any], provider: Provider
) -> Life[BeforeTheModel]:
    """Raise a saved stop; settle the step the model will read; mark what it is sent.

    A stop saved by the step before (a tool call spent a "stop" budget) is raised now that
    the step is saved. A watching middleware then puts the step's failures in a row in
    call order (`Accounts.in_call_order`) and meets the error answers to the model's last
    reply that it did not settle: those another middleware wrote (a limit, a person's
    review, one that answers a call itself), each a failure of the kind
    `"inner_middleware"`, and a malformed call of a tool it holds, which pauses the run
    here, before the model reads the answer it was given. A budget they spend stops the
    run at once: a failed step writes nothing, and running the thread again meets the same
    answers and the same stop.

    Raises:
        ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
    """
    state: Mapping[str, Any] = request.state
    messages: list[ToolMessage] = []
    update: dict[str, Any] = {}
    records: list[ToolFailure] = []
    if plan.watches:
        raise_stop(plan.name, state)
        runtime = request.runtime
        accounts = plan.accounts
        ordered = None if accounts is None else accounts.in_call_order(state)
        found = yield from _pending_malformed(plan, state, runtime)
        for failure, call, message in answered_elsewhere(state, runtime, plan.name):
            if plan.ignores(call) or is_closed(plan, call, state):
                continue
            route = plan.table.route(failure, call)
            # Only a route's new text replaces the answer; else it stays as it was written.
            answer = None
            if route is not None:
                answer = yield from _answered(plan, route, failure, call, message)
            found.append(Settled(failure, call, answer, _position(route), message.id))
        if found:
            settled_now, records = settle(plan, state, found, ordered)
            update = settled_now or {}
            if STOPS_KEY in update:
                yield from _told(plan, records)
                raise_stop(plan.name, update)
            messages = update.pop("messages", [])
        elif ordered is not None:
            update = {COUNTS_KEY: rewritten(state.get(COUNTS_KEY) or {}, ordered)}
    read = replacing(request.messages, messages)
    marked = sent(read, provider, plan.error_prefix)
    read = read if marked is None else marked
    if read is not request.messages:
        request = request.override(messages=read)
    return BeforeTheModel(request, messages, update, records)


def after_the_model(
    plan: Plan,
    before: BeforeTheModel,
    response: ModelResponse[Any],
    request: ModelRequest[Any],
    provider: Provider,
) -> Life[ModelResponse[Any] | ExtendedModelResponse[Any]]:
    """The model's response, with what this middleware writes in the model call's step.

    The calls of the reply `repair=` corrects are corrected; a watching middleware
    counts, records and answers the reply's malformed calls (a reply of only malformed
    calls goes back to the model from `after_agent`, see `settling.sent_back`). A budget
    they spend answers them with the stop and keeps it in the state: the reply's valid
    calls are answered with it as they come to run, and the stop is raised once the step
    is saved. The answers written before the reply come first in the response.
    """
    note_replies(response, provider)  # a failure of its calls is checked against it
    records = list(before.records)
    update = dict(before.update)
    repair = plan.repair
    fixed = (
        None
        if repair is None
        else repaired(repair, plan.recorder, plan.tool_names, response, request)
    )
    if fixed is not None:
        corrected, repairs = fixed
        records += repairs
        if isinstance(corrected, ExtendedModelResponse):
            update = merged(update, corrected.command.update if corrected.command else None)
            corrected = corrected.model_response
        response = corrected
    answers: list[ToolMessage] = []
    if plan.replies:
        state = applied(request.state, update)
        state["messages"] = [
            *replacing(request.state["messages"], before.messages),
            *(m for m in before.messages if m.id is None),
            *response.result,
        ]
        found, provisional, pending = yield from _malformed_of_reply(plan, state, request.runtime)
        settled_now, more = settle(plan, state, found)
        if pending:
            settled_now = merged(settled_now or {}, {SETTLED_KEY: pending})
        records += more
        if settled_now is not None and COUNTS_KEY in settled_now and COUNTS_KEY in update:
            # One write of the counts for the step: from the state it started from.
            final = applied(state, {COUNTS_KEY: settled_now[COUNTS_KEY]})[COUNTS_KEY]
            begun: Mapping[str, Any] = request.state
            started: Mapping[str, int] = begun.get(COUNTS_KEY) or {}
            settled_now[COUNTS_KEY] = rewritten(started, final)
            del update[COUNTS_KEY]
        update = merged(update, settled_now)
        answers = [*provisional, *update.pop("messages", [])]
    yield from _told(plan, records)
    result = [*before.messages, *response.result, *answers]
    if len(result) == len(response.result) and not update:
        return response
    shown = ModelResponse(result=result, structured_response=response.structured_response)
    if not update:
        return shown
    return ExtendedModelResponse(model_response=shown, command=Command(update=update))


def _malformed_of_reply(
    plan: Plan, state: Mapping[str, Any], runtime: Runtime[Any]
) -> Life[tuple[list[Settled], list[ToolMessage], dict[str, int]]]:
    """The reply's malformed calls this middleware takes and has not met, each routed.

    A call of a tool it holds is the tool's next call: it is answered with its own text
    for now and marked pending, not counted, and the run pauses before the model reads
    that answer (see `_pending_malformed`).
    """
    found: list[Settled] = []
    provisional: list[ToolMessage] = []
    pending: dict[str, int] = {}
    holding = plan.holding
    step = step_of(state)
    for failure, call in malformed_calls(state, runtime):
        if plan.ignores(call):
            continue
        if holding is not None and holding.held(call) is not None:
            call_id = id_of(call)
            text = failure.text
            provisional.append(
                ToolMessage(text, tool_call_id=call_id, name=failure.tool, status="error")
            )
            pending[pending_key(plan.name, step, call_id)] = 1
            continue
        route = plan.table.route(failure, call)
        answer = None
        if route is not None:
            answer = yield from _answered(plan, route, failure, call)
        found.append(Settled(failure, call, answer, _position(route), None))
    return found, provisional, pending


def _pending_malformed(
    plan: Plan, state: Mapping[str, Any], runtime: Runtime[Any]
) -> Life[list[Settled]]:
    """The last reply's malformed calls this middleware answered for now (marked pending).

    Each is met before the model reads its answer: if its tool is still held, the run
    pauses there for a person (see `settle`); else it is counted as any malformed call.
    The route's answer, if any, replaces the one it was given.
    """
    found: list[Settled] = []
    marks: Mapping[str, int] = state.get(SETTLED_KEY) or {}
    if plan.holding is None or not marks:
        return found
    reply, _ = last_reply(state)
    if reply is None:
        return found
    step = step_of(state)
    for call in reply.invalid_tool_calls:
        call_id = call.get("id")
        if not call_id or pending_key(plan.name, step, call_id) not in marks:
            continue
        if met(marks, plan.name, step, call_id):
            continue
        failure = malformed(call)
        request = standing_request(failure.tool, call_id, state, runtime)
        given = answer_to(state, call_id)
        route = plan.table.route(failure, request)
        answer = None
        if route is not None:
            answer = yield from _answered(plan, route, failure, request, given)
        replaces = None if given is None else given.id
        found.append(Settled(failure, request, answer, _position(route), replaces))
    return found


def _answered(
    plan: Plan,
    route: RouteHandlers,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    message: ToolMessage | None = None,
) -> Life[ToolMessage | None]:
    """The message the route's answer makes; `None` when its handler declines.

    The answer replaces the text of the failure's `message` where it has one; else it
    makes a new error message, checked for the provider where the failure is a tool's
    exception. What the handler raises, or a refusal of what it gave, is told as gone on
    up and raised.
    """
    try:
        answer = yield (route, failure, request)
        if answer is None:
            return None
        if message is not None:
            return replaced(message, answer)
        if isinstance(failure, Exception):
            return sendable(failure, request, answer)
        return fresh(request, answer)
    except GraphBubbleUp:
        raise
    except Exception:
        yield from _propagated(plan, failure, request, route)
        raise


def _finish(
    plan: Plan,
    message: ToolMessage,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    route: RouteHandlers | None,
) -> Life[ToolMessage | Command[Any]]:
    """Count and record a failure with its message, tell the listeners, then answer."""
    answer, record = conclude(plan, message, failure, request, _position(route))
    if record is not None:
        yield from _told(plan, [record])
    return answer


def _propagated(
    plan: Plan,
    failure: Exception | ReportedFailure,
    request: ToolCallRequest,
    route: RouteHandlers | None,
) -> Life[None]:
    """Tell the listeners of a failure that goes on up.

    No route took it, or its route's handler declined (returned `None`) or failed. A
    resume value its interrupt's schema refused is control flow, not a failure: the
    tool never ran, and no one is told.
    """
    recorder = plan.recorder
    if recorder is None or plan.ignores(request):
        return
    if isinstance(failure, Exception) and is_invalid_resume(failure):
        return
    yield Tell(recorder, recorder.failure(failure, request, _position(route), "propagated"))


def _told(plan: Plan, records: list[ToolFailure]) -> Life[None]:
    """Tell the listeners of each record, in order."""
    recorder = plan.recorder
    if recorder is not None:
        for record in records:
            yield Tell(recorder, record)


def _position(route: RouteHandlers | None) -> int | None:
    """A route's position in the routes, or `None` for no route."""
    return None if route is None else route[2]
