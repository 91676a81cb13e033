"""The error answers written outside this middleware's tool-call hook, found before the model.

A call can be answered without ever reaching the tools: a middleware's hook after the model
answers it in place of running it (`ToolCallLimitMiddleware` blocking it, a person rejecting
it in `HumanInTheLoopMiddleware`'s batched review). The model reads such an answer as it
reads any other, so it is a failure like the rest, of the kind `"inner_middleware"`.

The run's state keeps the calls whose error answers a middleware of this package wrote or
saw in its tool-call hook, and those each middleware settled before the model. Before each
model call, `answered_elsewhere` gives the error answers to the model's last reply that are
in neither: those were written elsewhere, and go through the same stages as any other
failure. Each mark names its step (the reply's message id) with the call's id: a model may
give the calls of every reply the same ids ("call_0" each time, as some OpenAI-compatible
servers do), and a mark of an earlier step must not hide a later answer.

The same marks name the malformed calls each middleware met once the model answered: a
reply it never met there (a middleware outside it gave another, or a hook after the model
sent the run back past the node of an "interrupt" budget) is met as the next model call
starts instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime

from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.failures import InnerMiddlewareError
from _langchain_tool_errors.state import SETTLED_KEY, met, step_id
from _langchain_tool_errors.stopping import running_config


def answered_elsewhere(
    state: Mapping[str, Any], runtime: Runtime[Any], name: str
) -> Iterator[tuple[InnerMiddlewareError, ToolCallRequest, ToolMessage]]:
    """The error answers to the model's last reply that the middleware `name` did not settle.

    Each with the failure it is, a request standing for its call (no tool; the state and
    runtime of the hook), and the message, whose id an answer that replaces it must keep.
    """
    reply, answered = last_reply(state)
    if reply is None or not answered:
        return
    marks: Mapping[str, int] = state.get(SETTLED_KEY) or {}
    step = step_id(reply)
    calls: dict[str, ToolCall] = {str(call["id"]): call for call in reply.tool_calls}
    answers: list[ToolMessage] = []
    for message in reversed(state["messages"]):
        if not isinstance(message, ToolMessage):
            break  # the reply: `last_reply` found only answers after it
        answers.append(message)
    for message in reversed(answers):
        if message.status != "error":
            continue
        call_id = message.tool_call_id
        call = calls.get(call_id)
        if call is None or met(marks, name, step, call_id):
            continue
        args: Mapping[str, object] = call.get("args") or {}
        failure = InnerMiddlewareError(tool=call["name"], args=args, text=message.text)
        tool_runtime: ToolRuntime[Any, Any] = ToolRuntime(
            state=state,
            context=runtime.context,
            config=running_config(),
            stream_writer=runtime.stream_writer,
            tool_call_id=message.tool_call_id,
            store=runtime.store,
        )
        request = ToolCallRequest(tool_call=call, tool=None, state=state, runtime=tool_runtime)
        yield failure, request, message
