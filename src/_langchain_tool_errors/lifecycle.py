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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from _langchain_tool_errors.answered_elsewhere import answered_elsewhere
from _langchain_tool_errors.asked_by import note_replies
from _langchain_tool_errors.classifying import classify, malformed_calls
from _langchain_tool_errors.control_flow import GraphBubbleUp, is_invalid_resume
from _langchain_tool_errors.effects import Life, Tell
from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.handling import fresh, replaced, sendable
from _langchain_tool_errors.inner_commands import answered_inside, put_back
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
    back_to_the_model,
    conclude,
    is_closed,
    sent_back,
    settle,
    settled_closed,
    stopped,
)
from _langchain_tool_errors.state import COUNTS_KEY, SETTLED_KEY, met, rewritten, step_of
from _langchain_tool_errors.stopping import raise_stop
from _langchain_tool_errors.tool_calls import id_of


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
            yield from told(plan, [record])
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


def before_model(
    plan: Plan, state: Mapping[str, Any], runtime: Runtime[Any]
) -> Life[dict[str, Any] | None]:
    """The hook before the model of an "interrupt" budget's middleware: see `settled_step`.

    A stop found here ends the run, once this step is saved (`after_agent` raises it).

    Raises:
        ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent before.
    """
    raise_stop(plan.name, state)
    update, records = yield from settled_step(plan, state, runtime)
    yield from told(plan, records)
    return update


def settled_step(
    plan: Plan,
    state: Mapping[str, Any],
    runtime: Runtime[Any],
    answered_by_langchain: frozenset[str] = frozenset(),
) -> Life[tuple[dict[str, Any] | None, list[ToolFailure]]]:
    """Settle the step the model will read; the caller has raised a stop saved before.

    Returns the update and the records the listeners are to be told of. In the model
    call's own step, they are told once the model has answered, so that a model call
    another middleware retries tells them once.

    The step's failures in a row are put in call order with its successes
    (`Accounts.in_call_order`). A middleware that watches replies first meets the
    malformed calls of the model's last reply it never met once the model answered (see
    `unmet_malformed`). Those that langchain answered itself as this model call started
    (`answered_by_langchain`) keep that answer: no route is asked for another. The error
    answers to that reply that this middleware did not settle were written by another
    middleware (a limit, a person's review, one that answers a call itself): each goes
    through the stages as a failure of the kind `"inner_middleware"`.

    A "stop" budget spent here is in the update (`STOPS_KEY`), with its answers.
    """
    accounts = plan.accounts
    ordered = None if accounts is None else accounts.in_call_order(state)
    found = yield from unmet_malformed(plan, state, runtime, answered_by_langchain)
    for failure, request, message in answered_elsewhere(state, runtime, plan.name):
        if plan.ignores(request) or is_closed(plan, request, state):
            continue
        route = plan.table.route(failure, request)
        # Only a route's new text replaces the answer; else it stays as it was written.
        answer = None
        if route is not None:
            answer = yield from _answered(plan, route, failure, request, message)
        found.append(Settled(failure, request, answer, _position(route), message.id))
    if not found:
        if ordered is None:
            return None, []
        current: Mapping[str, int] = state.get(COUNTS_KEY) or {}
        return {COUNTS_KEY: rewritten(current, ordered)}, []
    return settle(plan, state, found, ordered)


def after_model(
    plan: Plan, state: Mapping[str, Any], runtime: Runtime[Any]
) -> Life[dict[str, Any] | None]:
    """Count, record and answer the model's malformed calls.

    A reply with no call but malformed ones goes back to the model in the same run:
    `create_agent` would otherwise end the run with it, an empty answer.
    """
    found = yield from unmet_malformed(plan, state, runtime)
    if not found:  # met in the model call's step, where a jump is lost to this node
        return sent_back(plan.name, state)
    update, records = settle(plan, state, found)
    yield from told(plan, records)
    return back_to_the_model(state, found, update)


def repaired_reply(
    plan: Plan, response: ModelResponse[Any], request: ModelRequest[Any], provider: Provider
) -> Life[ModelResponse[Any] | ExtendedModelResponse[Any]]:
    """The model's response, its wrong calls repaired where `repair=` corrects them."""
    note_replies(response, provider)  # a failure of its calls is checked against it
    repair = plan.repair
    if repair is None:
        return response
    fixed = repaired(repair, plan.recorder, plan.tool_names, response, request)
    if fixed is None:
        return response
    result, records = fixed
    yield from told(plan, records)
    return result


def unmet_malformed(
    plan: Plan,
    state: Mapping[str, Any],
    runtime: Runtime[Any],
    answered_by_langchain: frozenset[str] = frozenset(),
    left: frozenset[str] = frozenset(),
) -> Life[list[Settled]]:
    """The last reply's malformed calls this middleware takes and has not met, each routed.

    Met once the model has answered, in the model call's step (`model_step.finished`), or
    in the node after the model of an "interrupt" budget. Else as the next model call
    starts: a middleware outside this one gave a reply this one never met, or a hook after
    the model sent the run back past this one's node. A call in `answered_by_langchain` is
    met with no route: it keeps the answer langchain gave it as that call started. A call
    in `left` is left to the node of an "interrupt" budget that holds its tool. None for a
    middleware that does not meet replies.
    """
    found: list[Settled] = []
    if not plan.replies:
        return found
    marks: Mapping[str, int] | None = None  # read at the first call: this runs before
    step = ""  # every model call, and most replies have no malformed call
    for failure, request in malformed_calls(state, runtime):
        if plan.ignores(request) or id_of(request) in left:
            continue
        if marks is None:
            kept: Mapping[str, int] = state.get(SETTLED_KEY) or {}
            marks, step = kept, step_of(state)
        call_id = id_of(request)
        if met(marks, plan.name, step, call_id):
            continue
        route = None if call_id in answered_by_langchain else plan.table.route(failure, request)
        answer = None
        if route is not None:
            answer = yield from _answered(plan, route, failure, request)
        found.append(Settled(failure, request, answer, _position(route), None))
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
        yield from told(plan, [record])
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


def told(plan: Plan, records: list[ToolFailure]) -> Life[None]:
    """Tell the listeners of each record, in order."""
    recorder = plan.recorder
    if recorder is not None:
        for record in records:
            yield Tell(recorder, record)


def _position(route: RouteHandlers | None) -> int | None:
    """A route's position in the routes, or `None` for no route."""
    return None if route is None else route[2]
