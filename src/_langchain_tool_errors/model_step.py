"""What a watching middleware does around a model call, inside the model call's own step.

A middleware that counts, records or listens settles the step the model is about to read
as the call starts: a stop saved by the step before is raised, the step's failures in a
row are put in call order, and the error answers another middleware wrote are met
(`lifecycle.settled_step`). Once the model has answered, the reply's malformed calls are
met (`finished`). Done in nodes of their own, these cost two graph steps for every model
call; done here, in `wrap_model_call`, they cost none. What they write goes out with the
model's reply (`ExtendedModelResponse`), and the model reads the answers replaced.

A stop is raised from here as a `StopBeforeTheModel`, which model-call wrappers let
through. A stop this step finds writes nothing: a failed step is not saved, so the thread
keeps everything up to the answers that spent the budget, and the exception carries the
failure that spent it. Running the thread again meets the same answers and the same stop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.types import Command

from _langchain_tool_errors.classifying import last_reply, malformed_calls
from _langchain_tool_errors.effects import Life
from _langchain_tool_errors.lifecycle import repaired_reply, settled_step, told, unmet_malformed
from _langchain_tool_errors.plan import Plan
from _langchain_tool_errors.providers import Provider
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.settling import back_to_the_model, settle
from _langchain_tool_errors.state import (
    COUNTS_KEY,
    FAILURES_KEY,
    PAUSES_KEY,
    STOPS_KEY,
    BudgetStop,
    applied,
    merged,
)
from _langchain_tool_errors.stopping import as_signal, raised, running_config, saved_stop
from _langchain_tool_errors.tool_calls import id_of


class Started(NamedTuple):
    """The model call's step as it starts: what the model reads, and what it writes."""

    request: ModelRequest[Any]
    """The request the model reads, with the answers met here in place."""
    update: dict[str, Any] | None
    """What the step writes besides the model's reply, if anything."""
    added: list[ToolMessage]
    """Answers to calls nothing had answered, which come before the reply."""
    records: list[ToolFailure]
    """The failures met, which the listeners are told of once the model has answered."""


def started(plan: Plan, request: ModelRequest[Any]) -> Life[Started]:
    """The request as the model reads it, and what this step writes before the reply.

    Raises:
        StopBeforeTheModel: A "stop" budget of this middleware was spent, in the step
            before or by an answer met here.
    """
    state: Mapping[str, Any] = request.state
    saved = saved_stop(plan.name, state)
    if saved is not None:  # the step before spent the budget
        raise as_signal(saved) from saved.__cause__
    by_langchain = _answered_by_langchain(request) if plan.replies else frozenset[str]()
    update, records = yield from settled_step(plan, state, request.runtime, by_langchain)
    if update is None:
        return Started(request, None, [], records)
    stops: dict[str, BudgetStop] | None = update.get(STOPS_KEY)
    if stops:  # an answer met here spent the budget: this step writes nothing
        yield from told(plan, records)
        found = raised(plan.name, stops[plan.name], running_config())
        raise as_signal(found) from found.__cause__
    answers: list[ToolMessage] = update.pop("messages", None) or []
    # An answer with an id replaces the message written before; one with none answers a
    # call nothing had answered, unless langchain answered it as this step started.
    replaced = [answer for answer in answers if answer.id]
    added = [a for a in answers if not a.id and a.tool_call_id not in by_langchain]
    if replaced:
        update["messages"] = replaced
    if answers:
        read = [*_replacing(request.messages, replaced), *added]
        request = request.override(messages=read)
    return Started(request, update or None, added, records)


class _Waiting(NamedTuple):
    """A middleware of ours inside the outermost, whose reply is met once every repair ran."""

    plan: Plan
    written: dict[str, Any]
    """What its own part of the step writes, which the state it meets the reply in has."""


@dataclass(slots=True)
class _Around:
    """The middleware of ours around one model call, opened by the outermost of them.

    The reply is met for each of them there, once every repair has run (a repaired call
    is no failure), inner ones first as their hooks after the model would run; and only
    that one sends the run back to the model: LangGraph takes one `jump_to` a step.
    """

    owner: Plan
    runtime: object
    """The runtime of the call: an agent run inside the call has one of its own."""
    waiting: dict[str, _Waiting] = field(default_factory=dict[str, _Waiting])
    replaced: set[str] = field(default_factory=set[str])
    """The ids of the messages one of them replaced as the call started: the innermost's
    answer is the one the model read, and the one the step writes."""


_AROUND: ContextVar[_Around | None] = ContextVar("langchain_tool_errors_around", default=None)


def opened(plan: Plan, request: ModelRequest[Any]) -> Token[_Around | None] | None:
    """Open the model call to the middleware of ours around it, if this one is outermost.

    Only a middleware that settles in the model call's step, meets replies or repairs
    them takes part; `None` when this one does not, or one outside it opened the call
    already. Close with `closed`.
    """
    if plan.repair is None and not plan.settles_in_model_step and not plan.replies:
        return None
    if _around(request) is not None:
        return None
    return _AROUND.set(_Around(plan, request.runtime))


def _around(request: ModelRequest[Any]) -> _Around | None:
    """The middleware of ours around this model call, if one opened it."""
    around = _AROUND.get()
    return around if around is not None and around.runtime is request.runtime else None


def closed(token: Token[_Around | None] | None) -> None:
    """Close the model call `opened` opened; nothing for `None`."""
    if token is not None:
        _AROUND.reset(token)


def finished(
    plan: Plan,
    begun: Started | None,
    response: ModelResponse[Any],
    request: ModelRequest[Any],
    provider: Provider,
) -> Life[ModelResponse[Any] | ExtendedModelResponse[Any]]:
    """The model's answer, repaired, with what the step writes around it.

    The listeners are told of the failures met as the step started (`begun`, for a
    middleware that settles there), now that the model has answered, and then of the
    repairs. The answers added come before the reply; a repair's records come after the
    start's. The reply's malformed calls are met by the outermost middleware of ours,
    for each (`_Around`): their answers follow the reply.
    """
    if begun is not None:
        yield from told(plan, begun.records)
    answer = yield from repaired_reply(plan, response, request, provider)
    response = answer if isinstance(answer, ModelResponse) else answer.model_response
    written = dict(begun.update or {}) if begun is not None else {}
    command = None if isinstance(answer, ModelResponse) else answer.command
    extra: Mapping[str, Any] = {} if command is None else command.update or {}
    for key, value in extra.items():  # the repair's records come after the start's
        written[key] = [*written[key], *value] if key == FAILURES_KEY and key in written else value
    around = _around(request)
    meets = plan.replies
    after: list[ToolMessage] = []
    if around is not None and begun is not None:
        _keep_the_innermost(around, written)
    if around is not None and around.owner is not plan:
        if meets:  # met by the outermost, after its repairs
            around.waiting[plan.name] = _Waiting(plan, written)
    elif around is not None:
        waiting = [*around.waiting.values(), *([_Waiting(plan, written)] if meets else [])]
        messages = [*request.messages, *response.result]
        written, after = yield from _met(waiting, request, messages, written)
    added: list[ToolMessage] = [] if begun is None else begun.added
    if added or after:
        response = ModelResponse(
            result=[*added, *response.result, *after],
            structured_response=response.structured_response,
        )
    if not written:
        return response
    return ExtendedModelResponse(model_response=response, command=Command(update=written))


def _keep_the_innermost(around: _Around, written: dict[str, Any]) -> None:
    """Leave out of `written` the answers a middleware inside this one replaced again.

    Each replaces an answer another middleware wrote with its route's as the call starts,
    and passes the request on: the model reads the innermost one's. The step writes each
    middleware's update in turn, inner ones first, so the outer ones leave theirs out.
    """
    answers: list[ToolMessage] | None = written.get("messages")
    if not answers:
        return
    kept = [answer for answer in answers if answer.id not in around.replaced]
    around.replaced.update(answer.id for answer in answers if answer.id)
    if kept:
        written["messages"] = kept
    else:
        del written["messages"]


def _met(
    waiting: list[_Waiting],
    request: ModelRequest[Any],
    messages: Sequence[BaseMessage],
    written: dict[str, Any],
) -> Life[tuple[dict[str, Any], list[ToolMessage]]]:
    """The reply's malformed calls met for each middleware: what the step writes, the answers.

    Each meets the reply in the state its own part of the step leaves, after the answers
    of those before it. A reply of only malformed calls one of them answered goes back to
    the model (`jump_to`; where another middleware's hook after the model drops it, the
    hook after the agent sends it, `sent_back`). A stop one of them finds answers the
    malformed calls, and is kept: the reply's other calls go to the tools, where the
    tool-call hooks answer each that no other middleware did (`settling.stopped_call`),
    and the stop is raised as the next model call starts, or after the agent.
    """
    reply = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if reply is None or not reply.invalid_tool_calls:  # most replies
        return written, []
    state: Mapping[str, Any] = request.state
    calls = {call["id"] for call in reply.tool_calls}
    left = _held_calls(waiting, state, messages, request)
    answers: list[ToolMessage] = []
    back = stopped = False
    for plan, own_part in waiting:
        view = applied(state, own_part)
        view["messages"] = [*messages, *answers]
        found = yield from unmet_malformed(plan, view, request.runtime, left=left)
        if not found:
            continue
        counts: dict[str, int] = dict(view.get(COUNTS_KEY) or {})
        update, records = settle(plan, view, found, counts)
        yield from told(plan, records)
        update = back_to_the_model(view, found, update) or {}
        jump = update.pop("jump_to", None)
        stopped = stopped or jump == "end"
        back = back or jump == "model"
        made: list[ToolMessage] = update.pop("messages", None) or []
        answers += [answer for answer in made if answer.tool_call_id not in calls]
        written = merged(written, update)
    if back and not stopped:
        written["jump_to"] = "model"
    return written, answers


def _held_calls(
    waiting: list[_Waiting],
    state: Mapping[str, Any],
    messages: Sequence[BaseMessage],
    request: ModelRequest[Any],
) -> frozenset[str]:
    """The reply's malformed calls of tools an "interrupt" budget holds: none is met here.

    Such a call is the held tool's next call: the run pauses for a person at it, in that
    budget's node after the model (a model call's step that pauses would call the model
    again on resume), before any middleware of ours meets it.
    """
    holders = [plan for plan, _ in waiting if plan.holding is not None]
    if not holders or not state.get(PAUSES_KEY):
        return frozenset()
    view = {**state, "messages": messages}
    return frozenset(
        id_of(call)
        for _, call in malformed_calls(view, request.runtime)
        for plan in holders
        if plan.holding is not None and not plan.ignores(call) and plan.holding.held(call)
    )


def _answered_by_langchain(request: ModelRequest[Any]) -> frozenset[str]:
    """The calls of the last reply that langchain answered as this model call started.

    `create_agent` answers each malformed call nothing answered in the messages it gives
    the model call, and writes those answers with the step: they are in the request, and
    not yet in the state.
    """
    _, in_state = last_reply(request.state)
    _, in_request = last_reply({"messages": request.messages})
    return in_request - in_state


def _replacing(messages: list[AnyMessage], answers: list[ToolMessage]) -> list[AnyMessage]:
    """`messages` with each of `answers` in place of the message with its id."""
    by_id = {answer.id: answer for answer in answers}
    return [by_id.get(message.id, message) if message.id else message for message in messages]
