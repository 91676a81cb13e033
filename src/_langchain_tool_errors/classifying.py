"""The classifying stage: what kind of failure an error message answers.

A tool call that comes back as an error `ToolMessage` instead of an exception is classed by
what can be checked, not by its wording: a call to no tool is an unknown tool; arguments
the tool's schema refuses are invalid arguments (whoever answered them); a tool that
handles its own errors reported it; any other error came from a middleware inside this one.
A malformed call never reaches the tools, so `malformed` classes it from the model's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from _langchain_tool_errors.failures import (
    FieldError,
    InnerMiddlewareError,
    InvalidArguments,
    MalformedToolCall,
    ReportedFailure,
    ToolReportedError,
    UnknownTool,
)
from _langchain_tool_errors.json_schema import json_schema_refusals

_KNOWN_TOOLS = re.compile(r"try one of \[(?P<names>[^\]]*)\]")
"""Where `ToolNode`'s answer to an unknown tool lists the agent's tools."""


def classify(message: ToolMessage, request: ToolCallRequest) -> ReportedFailure:
    """The failure an error message answers, with what is known about it."""
    call = request.tool_call
    name = call["name"]
    args: Mapping[str, object] = call.get("args") or {}
    text = message.text
    tool = request.tool
    if tool is None:
        listed = _KNOWN_TOOLS.search(text)
        known = () if listed is None else tuple(filter(None, listed["names"].split(", ")))
        return UnknownTool(tool=name, args=args, text=text, known_tools=known)
    errors = field_errors(tool, args)
    if errors:
        return InvalidArguments(tool=name, args=args, text=text, errors=errors)
    if tool.handle_tool_error or tool.handle_validation_error:
        return ToolReportedError(tool=name, args=args, text=text)
    return InnerMiddlewareError(tool=name, args=args, text=text)


def field_errors(tool: BaseTool, args: Mapping[str, object]) -> tuple[FieldError, ...]:
    """The arguments the tool's schema refuses, each with what it expects; never the values.

    A pydantic schema is checked by pydantic. A JSON-schema dict (MCP tools have one, and so
    does a tool built with `args_schema=<dict>`) is checked by `json_schema_refusals`, for
    the keywords it knows. Called only once a call has failed, never on a success.
    """
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return tuple(
            FieldError(".".join(path) or "(arguments)", expected)
            for path, expected in json_schema_refusals(schema, args)
        )
    if not issubclass(schema, BaseModel):  # a pydantic v1 model is not checked
        return ()
    try:
        schema.model_validate(dict(args))
    except ValidationError as exc:
        return tuple(
            FieldError(".".join(str(part) for part in error["loc"]) or "(arguments)", error["msg"])
            for error in exc.errors(include_url=False, include_input=False, include_context=False)
        )
    return ()


def malformed_calls(
    state: Mapping[str, Any], runtime: Runtime[Any]
) -> Iterator[tuple[MalformedToolCall, ToolCallRequest]]:
    """The model's last calls that could not be parsed, each with a request standing for it.

    Only calls with an id (an answer must name it) that nothing has answered yet (another
    middleware's hook may have answered some before this one runs). The request has no
    tool, empty arguments, and the agent's state and runtime.
    """
    reply, answered = last_reply(state)
    if reply is None:
        return
    for call in reply.invalid_tool_calls:
        call_id = call.get("id")
        if not call_id or call_id in answered:
            continue
        failure = malformed(call)
        yield failure, standing_request(failure.tool, call_id, state, runtime)


def malformed(call: InvalidToolCall) -> MalformedToolCall:
    """The failure of a call whose arguments could not be parsed, as the model wrote it."""
    name = call.get("name") or ""
    return MalformedToolCall(
        tool=name,
        args={},
        text=MALFORMED_TEXT.format(tool=name or "(no name)"),
        raw_arguments=call.get("args"),
        error=call.get("error"),
    )


def standing_request(
    name: str, call_id: str, state: Mapping[str, Any], runtime: Runtime[Any]
) -> ToolCallRequest:
    """A request standing for a call no tool ran, for a route's handler and the record.

    It has no tool, empty arguments, and the agent's state and runtime.
    """
    tool_call = ToolCall(name=name, args={}, id=call_id, type="tool_call")
    tool_runtime: ToolRuntime[Any, Any] = ToolRuntime(
        state=state,
        context=runtime.context,
        config=get_config(),
        stream_writer=runtime.stream_writer,
        tool_call_id=call_id,
        store=runtime.store,
    )
    return ToolCallRequest(tool_call=tool_call, tool=None, state=state, runtime=tool_runtime)


def last_reply(state: Mapping[str, Any]) -> tuple[AIMessage | None, frozenset[str]]:
    """The model's last reply, if nothing but answers to its calls follows it, and those ids.

    The hooks that run after a model call (this middleware's and others') each add their
    answers after the reply; a message of any other kind after it means the reply is not
    the one being answered.
    """
    messages: Sequence[object] = state.get("messages") or ()
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message, frozenset(answered)
        if not isinstance(message, ToolMessage):
            break
        answered.add(message.tool_call_id)
    return None, frozenset()


MALFORMED_TEXT = (
    "The call to `{tool}` could not be run: its arguments were malformed or cut short. "
    "Send the call again with complete JSON arguments."
)
"""What `MalformedToolCall.text` says (`create_agent` words its own answer differently)."""
