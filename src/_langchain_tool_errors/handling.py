"""The handling stage: ask a failure's route for content, and make the error `ToolMessage`.

A route's handler answers a failure with content, or `None` to decline. For an exception,
the content makes a new error message (`sendable`), and declining re-raises it. A failure
that is not an exception already has its error message: the content replaces its text
(`replaced`), and declining leaves it as it was. A malformed call or a repeat has no
message yet: the content makes one (`fresh`).
"""

from __future__ import annotations

from typing import TypeAlias

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.asked_by import asked_by
from _langchain_tool_errors.call_checks import (
    require_awaitable,
    require_content,
    require_tool_call_id,
    require_tool_name,
)
from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.route_table import RouteHandlers
from _langchain_tool_errors.tool_calls import tool_name


def error_message(
    argument: str, content: object, exc: Exception | None, request: ToolCallRequest
) -> ToolMessage:
    """The error `ToolMessage` carrying a handler's content, every field checked first.

    The checks come before the message is made, so that what is wrong is said in terms of
    the handler and the call, with the failure chained; the message itself is made by its
    own constructor, as any other.
    """
    name = tool_name(request)
    return ToolMessage(
        content=require_content(argument, content, exc),
        tool_call_id=require_tool_call_id(request, name, exc),
        name=require_tool_name(name, exc),
        status="error",
    )


Answer: TypeAlias = tuple[str, object]
"""A handler's answer: the argument it was given as (`"on_error"`, `"aon_error"`), and the
content it returned (never `None`, which declines), unchecked."""


def answer_of(
    route: RouteHandlers, failure: Exception | ReportedFailure, request: ToolCallRequest
) -> Answer | None:
    """The route's sync handler's answer to a failure, or `None` when it declines.

    Raises:
        NotImplementedError: The route has only an async handler. Its middleware is
            `AsyncOnly`, whose tool-call hook refuses the sync path before any tool runs;
            this is a failure met in a model hook (a reply of only malformed calls, an
            answer another middleware wrote), which would otherwise go unanswered by it.
    """
    on_error, _, position = route
    if on_error is None:
        msg = (
            f"The route at position {position} of this middleware has only an async handler "
            f"(`aon_error`), and the agent is running on the sync path (invoke/stream), so "
            f"it cannot answer this failure of `{tool_name(request)}`. Run the agent with "
            f"`ainvoke`/`astream`, or give the route a sync `on_error` too."
        )
        cause = failure if isinstance(failure, Exception) else None
        raise NotImplementedError(msg) from cause
    content = on_error(failure, request)
    return None if content is None else ("on_error", content)


async def aanswer_of(
    route: RouteHandlers, failure: Exception | ReportedFailure, request: ToolCallRequest
) -> Answer | None:
    """The answer on the async path (`aon_error`, else `on_error`), or `None` when it declines.

    A refusal of what `aon_error` returned is chained to the failure when it is an exception.
    """
    on_error, aon_error, _ = route
    if aon_error is not None:
        cause = failure if isinstance(failure, Exception) else None
        content = await require_awaitable(aon_error(failure, request), cause)
        return None if content is None else ("aon_error", content)
    # Every route has a handler: with no `aon_error` there is an `on_error`.
    content = None if on_error is None else on_error(failure, request)
    return None if content is None else ("on_error", content)


def sendable(exc: Exception, request: ToolCallRequest, answer: Answer) -> ToolMessage:
    """The error message answering a tool's exception, its blocks checked for the provider.

    A content block the provider of the model that asked for the call cannot send is
    refused here where that provider is known (see `asked_by`), chained to the exception.
    """
    message = error_message(*answer, exc, request)
    checked = message.content
    if not isinstance(checked, str):
        provider = asked_by(request)
        if provider is not None:
            provider.require_taken(checked, message, exc)
    return message


def fresh(request: ToolCallRequest, answer: Answer) -> ToolMessage:
    """The error message answering a failure that has none yet: a malformed call, a repeat."""
    return error_message(*answer, None, request)


def replaced(message: ToolMessage, answer: Answer) -> ToolMessage:
    """`message` with the answer's content as its text; still an error, for the same call.

    For a failure that is not an exception: it has its error message already.
    """
    argument, content = answer
    return message.model_copy(update={"content": require_content(argument, content, None)})
