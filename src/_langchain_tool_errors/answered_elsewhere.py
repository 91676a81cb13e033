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

The same marks name the malformed calls each middleware met in its hook after the model:
when a hook listed inside it sends the run straight back to the model, LangGraph skips the
rest, and the middleware meets the calls it missed before the next model call instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime

from _langchain_tool_errors.budget import add_counts
from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.failures import InnerMiddlewareError
from _langchain_tool_errors.stopping import StopState, running_config

SETTLED_KEY = "tool_error_settled"
"""The state key holding the run's calls a middleware settled: error answers, malformed calls."""


class SettledState(StopState):
    """The agent state a watching middleware adds: counts, stop, and the calls it settled."""

    tool_error_settled: NotRequired[Annotated[dict[str, int], PrivateStateAttr, add_counts]]


def step_of(state: Mapping[str, Any]) -> str:
    """The step whose calls are being answered: the id of the model's last reply.

    The reply `last_reply` finds (only answers after it), without gathering their ids: this
    runs for each failure. `""` when there is no such reply or it has no id; the marks
    then name the call alone.
    """
    messages: Sequence[object] = state.get("messages") or ()
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return _step(message)
        if not isinstance(message, ToolMessage):
            break
    return ""


def _step(reply: AIMessage | None) -> str:
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
    step = _step(reply)
    marks = {_mark(step, call_id): 1 for call_id in answered}
    for call in () if reply is None else reply.invalid_tool_calls:
        call_id = call.get("id")
        if call_id:
            marks[_mark(step, call_id)] = 1
    return marks


def met(marks: Mapping[str, int], name: str, step: str, call_id: str) -> bool:
    """Whether the middleware `name` met the call in this run, or the run was given it."""
    return settled_key(name, step, call_id) in marks or _mark(step, call_id) in marks


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
    step = _step(reply)
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
        if (
            call is None
            or _mark(step, call_id) in marks
            or settled_key(name, step, call_id) in marks
        ):
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
