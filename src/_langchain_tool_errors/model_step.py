"""What a watching middleware does as a model call starts, inside the model call's own step.

A middleware that counts, records or listens settles the step the model is about to read:
a stop saved by the step before is raised, the step's failures in a row are put in call
order, and the error answers another middleware wrote are met (`lifecycle.before_model`).
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
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.types import Command, Overwrite

from _langchain_tool_errors.budget import ToolErrorBudgetExceeded
from _langchain_tool_errors.effects import Life
from _langchain_tool_errors.lifecycle import before_model
from _langchain_tool_errors.plan import Plan
from _langchain_tool_errors.state import COUNTS_KEY, STOPS_KEY, BudgetStop, rewritten
from _langchain_tool_errors.stopping import as_signal, raised, running_config


def started(
    plan: Plan, request: ModelRequest[Any]
) -> Life[tuple[ModelRequest[Any], dict[str, Any] | None]]:
    """The request as the model reads it, and what this step writes before the reply.

    Raises:
        StopBeforeTheModel: A "stop" budget of this middleware was spent, in the step
            before or by an answer met here.
    """
    state: Mapping[str, Any] = request.state
    try:
        update = yield from before_model(plan, state, request.runtime)
    except ToolErrorBudgetExceeded as saved:  # saved by the step before
        raise as_signal(saved) from saved.__cause__
    if update is None:
        return request, None
    stops: dict[str, BudgetStop] | None = update.get(STOPS_KEY)
    if stops:  # an answer met here spent the budget: this step writes nothing
        found = raised(plan.name, stops[plan.name], running_config())
        raise as_signal(found) from found.__cause__
    counts = update.get(COUNTS_KEY)
    # The whole counts, in call order: other middleware of ours may write them in this step.
    if isinstance(counts, Overwrite):
        ordered: dict[str, int] = counts.value
        current: dict[str, int] = state.get(COUNTS_KEY) or {}
        update[COUNTS_KEY] = rewritten(current, ordered)
    answers: list[ToolMessage] = update.get("messages") or []
    if answers:
        request = request.override(messages=_replacing(request.messages, answers))
    return request, update


def with_update(
    answer: ModelResponse[Any] | ExtendedModelResponse[Any], update: dict[str, Any]
) -> ExtendedModelResponse[Any]:
    """The model's answer, carrying `update` too: the step writes both.

    A repair's update (its records) comes after `update`'s.
    """
    if isinstance(answer, ModelResponse):
        return ExtendedModelResponse(model_response=answer, command=Command(update=update))
    extra: dict[str, Any] = {} if answer.command is None else dict(answer.command.update or {})
    written = dict(update)
    for key, value in extra.items():  # only the records can be in both
        written[key] = [*written[key], *value] if key in written else value
    return ExtendedModelResponse(model_response=answer.model_response, command=Command(update=written))


def _replacing(messages: list[AnyMessage], answers: list[ToolMessage]) -> list[AnyMessage]:
    """`messages` with each of `answers` in place of the message with its id."""
    by_id = {answer.id: answer for answer in answers}
    return [by_id.get(message.id, message) if message.id else message for message in messages]
