"""An inner middleware's error message carried in a `Command`, and the answer put back in it.

A middleware inside this one may answer a failure with a `Command` rather than a bare
message: one with a budget or a record does, to write the agent state beside its message.
Such a `Command` still brings the model an error message for the call, so the watching
hooks take the message out, send it through the stages like any other, and put what they
answer back beside the rest of the inner middleware's update.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from typing_extensions import TypeIs

from _langchain_tool_errors.state import FAILURES_KEY, SETTLED_KEY, own_key, step_of


def answered_inside(
    result: object, request: ToolCallRequest
) -> tuple[ToolMessage, dict[str, Any]] | None:
    """The error message a `Command` answers this call with, and the rest of its update.

    `None` unless `result` is a `Command` that only updates the state (no `goto`, no
    `resume`, no parent graph), as a dict, and whose messages are one error `ToolMessage`
    for this call, not marked as an answer of this package's own (a closed tool's, a
    stop's): any other `Command` passes untouched, as a tool's own would.
    """
    if (
        not _is_command(result)
        or result.graph is not None
        or result.goto
        or result.resume is not None
    ):
        return None
    update: object = result.update
    if not is_state_update(update):
        return None
    fields = dict(update)
    messages: object = fields.pop("messages", None)
    if not is_list(messages) or len(messages) != 1:
        return None
    message = messages[0]
    if (
        not isinstance(message, ToolMessage)
        or message.status != "error"
        or message.tool_call_id != request.tool_call.get("id")
    ):
        return None
    marks: object = fields.get(SETTLED_KEY)
    if is_state_update(marks) and own_key(step_of(request.state), message.tool_call_id) in marks:
        return None  # a closed tool's answer or a stop's, from a middleware of ours
    return message, fields


def put_back(rest: dict[str, Any], answer: ToolMessage | Command[Any]) -> Command[Any]:
    """The inner middleware's update with this middleware's answer in place of its message.

    The state keys both write are joined: the ones that map keys to values (the budgets'
    counts and holds, the settled marks: each middleware's keys start with its own name,
    or name the same call) and the record (the inner one's first).
    """
    update = dict(rest)
    if isinstance(answer, ToolMessage):
        update["messages"] = [answer]
        return Command(update=update)
    ours: object = answer.update
    if not is_state_update(ours):  # never so: this middleware's answers update a dict
        return answer
    for key, value in ours.items():
        theirs: object = update.get(key)
        if is_state_update(theirs) and is_state_update(value):
            update[key] = {**theirs, **value}
        elif key == FAILURES_KEY and key in update:
            update[key] = [*update[key], *value]
        else:
            update[key] = value
    return Command(update=update)


def _is_command(value: object) -> TypeIs[Command[Any]]:
    return isinstance(value, Command)


def is_state_update(value: object) -> TypeIs[dict[str, Any]]:
    """Whether a `Command`'s update is a dict of state keys (it may also be a list of pairs)."""
    return isinstance(value, dict)


def is_list(value: object) -> TypeIs[list[object]]:
    """Whether a value read from a `Command` is a list (its items still unchecked)."""
    return isinstance(value, list)
