"""The handling stage: ask a failure's route for content, and make the error `ToolMessage`.

An exception's route answers with the content of a new error message, or `None` to re-raise
it. A failure that is not an exception already has its error message: the route's content
replaces that message's text, or `None` leaves it as it was.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.asked_by import asked_by
from _langchain_tool_errors.checks import (
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


def _ask(
    route: RouteHandlers, failure: Exception | ReportedFailure, request: ToolCallRequest
) -> object:
    """The route's sync handler's content for a failure.

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
    return on_error(failure, request)


async def _aask(
    route: RouteHandlers, failure: Exception | ReportedFailure, request: ToolCallRequest
) -> tuple[str, object]:
    """The handler that answers on the async path (`aon_error`, else `on_error`), and its content.

    A refusal of what `aon_error` returned is chained to the failure when it is an exception.
    """
    on_error, aon_error, _ = route
    if aon_error is not None:
        cause = failure if isinstance(failure, Exception) else None
        return "aon_error", await require_awaitable(aon_error(failure, request), cause)
    # Every route has a handler: with no `aon_error` there is an `on_error`.
    return "on_error", None if on_error is None else on_error(failure, request)


def handle(route: RouteHandlers, exc: Exception, request: ToolCallRequest) -> ToolMessage | None:
    """The error message for a failure on the sync path, or `None` to re-raise it.

    A content block the provider of the model that asked for the call cannot send is
    refused here where that provider is known (see `asked_by`), chained to the exception.
    """
    content = _ask(route, exc, request)
    return None if content is None else _sendable("on_error", content, exc, request)


async def ahandle(
    route: RouteHandlers, exc: Exception, request: ToolCallRequest
) -> ToolMessage | None:
    """The error message for a failure on the async path, or `None` to re-raise it."""
    argument, content = await _aask(route, exc, request)
    return None if content is None else _sendable(argument, content, exc, request)


def _sendable(
    argument: str, content: object, exc: Exception, request: ToolCallRequest
) -> ToolMessage:
    """The error message, its blocks checked against the provider where it is known."""
    message = error_message(argument, content, exc, request)
    checked = message.content
    if not isinstance(checked, str):
        provider = asked_by(request)
        if provider is not None:
            provider.require_taken(checked, message, exc)
    return message


def _replaced(message: ToolMessage, argument: str, content: object) -> ToolMessage:
    """`message` with the handler's content as its text; still an error, for the same call."""
    return message.model_copy(update={"content": require_content(argument, content, None)})


def replace(
    route: RouteHandlers, failure: ReportedFailure, message: ToolMessage, request: ToolCallRequest
) -> ToolMessage:
    """The message the model reads for a failure that is not an exception (sync path)."""
    content = _ask(route, failure, request)
    return message if content is None else _replaced(message, "on_error", content)


async def areplace(
    route: RouteHandlers, failure: ReportedFailure, message: ToolMessage, request: ToolCallRequest
) -> ToolMessage:
    """The message the model reads for a failure that is not an exception (async path)."""
    argument, content = await _aask(route, failure, request)
    return message if content is None else _replaced(message, argument, content)


def reply_to(
    route: RouteHandlers, failure: ReportedFailure, request: ToolCallRequest
) -> ToolMessage | None:
    """A route's answer to a failure no message answers yet (a malformed call), or `None`."""
    content = _ask(route, failure, request)
    return None if content is None else error_message("on_error", content, None, request)


async def areply_to(
    route: RouteHandlers, failure: ReportedFailure, request: ToolCallRequest
) -> ToolMessage | None:
    """A route's answer to a failure no message answers yet, on the async path."""
    argument, content = await _aask(route, failure, request)
    return None if content is None else error_message(argument, content, None, request)
