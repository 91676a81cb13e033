"""What a watching middleware does as a model call starts, inside the model call's own step.

A middleware that counts, records or listens settles the step the model is about to read:
a stop saved by the step before is raised, the step's failures in a row are put in call
order, and the error answers another middleware wrote are met (`lifecycle.settled_step`).
Done in a node of its own, that costs a graph step for every model call; done here, in
`wrap_model_call`, it costs none. What it writes goes out with the model's reply
(`ExtendedModelResponse`), and the model reads the answers it replaced.

A stop is raised from here as a `StopBeforeTheModel`, which model-call wrappers let
through. A stop this step finds writes nothing: a failed step is not saved, so the thread
keeps everything up to the answers that spent the budget, and the exception carries the
failure that spent it. Running the thread again meets the same answers and the same stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.types import Command

from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.effects import Life
from _langchain_tool_errors.lifecycle import repaired_reply, settled_step, told
from _langchain_tool_errors.plan import Plan
from _langchain_tool_errors.providers import Provider
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.state import FAILURES_KEY, STOPS_KEY, BudgetStop
from _langchain_tool_errors.stopping import as_signal, raised, running_config, saved_stop


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


def finished(
    plan: Plan,
    begun: Started,
    response: ModelResponse[Any],
    request: ModelRequest[Any],
    provider: Provider,
) -> Life[ModelResponse[Any] | ExtendedModelResponse[Any]]:
    """The model's answer, repaired, with what the step's start writes: the step writes both.

    The listeners are told of the failures met as the step started, now that the model
    has answered, and then of the repairs. The answers added come before the reply; a
    repair's update (its records) comes after the start's.
    """
    yield from told(plan, begun.records)
    answer = yield from repaired_reply(plan, response, request, provider)
    response = answer if isinstance(answer, ModelResponse) else answer.model_response
    command = None if isinstance(answer, ModelResponse) else answer.command
    if begun.added:
        response = ModelResponse(
            result=[*begun.added, *response.result],
            structured_response=response.structured_response,
        )
    written = dict(begun.update or {})
    extra: dict[str, Any] = {} if command is None else dict(command.update or {})
    for key, value in extra.items():  # the repair's records come after the start's
        written[key] = [*written[key], *value] if key == FAILURES_KEY and key in written else value
    if not written:
        return response
    return ExtendedModelResponse(model_response=response, command=Command(update=written))


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
