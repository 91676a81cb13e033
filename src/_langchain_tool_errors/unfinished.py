"""Calls left without an answer: each is sent to the model with one, so no request is refused.

A run cancelled in the middle of its tools step (a client that hung up, a task cancelled, a
worker stopped) leaves that step unsaved: LangGraph drops what its calls did when the
thread's next input arrives, so the model's reply keeps calls that no `ToolMessage`
answers. OpenAI's and Anthropic's APIs refuse such a conversation, so every later request
on the thread would fail. The model-call hook sends each such call an error answer of its
own, right after the answers its reply did get, in what is sent only (the agent's state is
left as it is, as marking leaves it).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage

UNFINISHED_TEXT = (
    "The call to `{tool}` did not finish: its run ended before the tool returned (it was "
    "cancelled or stopped). Nothing is known of its result; call it again if you still "
    "need it."
)
"""What the model reads for a call that has no answer."""


def _unfinished(call: ToolCall) -> ToolMessage:
    call_id = call["id"]
    return ToolMessage(
        content=UNFINISHED_TEXT.format(tool=call["name"]),
        tool_call_id="" if call_id is None else call_id,
        name=call["name"],
        status="error",
    )


def with_every_call_answered(messages: Sequence[AnyMessage]) -> list[AnyMessage] | None:
    """The messages with an error answer after each call no `ToolMessage` answers.

    Returns `None` when every call has its answer (the usual case: nothing is copied). A
    reply's answers are the `ToolMessage`s right after it; a call without an id cannot be
    answered, and is left to the model's provider, as it would be.
    """
    answered: list[AnyMessage] | None = None
    waiting: list[ToolCall] = []  # the calls of the last reply that no answer has met yet
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if waiting:
                waiting = [call for call in waiting if call["id"] != message.tool_call_id]
        else:
            if waiting:
                answered = list(messages[:index]) if answered is None else answered
                answered += [_unfinished(call) for call in waiting]
                waiting = []
            if isinstance(message, AIMessage) and message.tool_calls:
                waiting = [call for call in message.tool_calls if call["id"] is not None]
        if answered is not None:
            answered.append(message)
    if waiting:
        answered = list(messages) if answered is None else answered
        answered += [_unfinished(call) for call in waiting]
    return answered
