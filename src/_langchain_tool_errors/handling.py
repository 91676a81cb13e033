"""The handling stage: ask a failure's route for content, and make the error `ToolMessage`.

An exception's route answers with the content of a new error message, or `None` to re-raise
it. A failure that is not an exception already has its error message: the route's content
replaces that message's text, or `None` leaves it as it was.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.checks import (
    require_awaitable,
    require_content,
    require_tool_call_id,
    require_tool_name,
)
from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.route_table import RouteHandlers
from _langchain_tool_errors.tool_calls import tool_name

_ERROR_TEMPLATE = ToolMessage(content="", tool_call_id="template", status="error")


def error_message(
    argument: str, content: object, exc: Exception | None, request: ToolCallRequest
) -> ToolMessage:
    """The error `ToolMessage` carrying a handler's content, every field checked."""
    name = tool_name(request)
    # Every field is checked here, so the message is copied from a validated template
    # rather than validated again by pydantic (a third of the cost); the dicts are fresh
    # so no two messages share one. tests/test_middleware.py compares the result with a
    # ToolMessage built the ordinary way.
    return _ERROR_TEMPLATE.model_copy(
        update={
            "content": require_content(argument, content, exc),
            "tool_call_id": require_tool_call_id(request, name, exc),
            "name": require_tool_name(name, exc),
            "additional_kwargs": {},
            "response_metadata": {},
        }
    )


def handle(route: RouteHandlers, exc: Exception, request: ToolCallRequest) -> ToolMessage | None:
    """The error message for a failure on the sync path, or `None` to re-raise it."""
    # Every route of a sync-capable middleware has an `on_error`.
    on_error = route[0]
    if on_error is None:
        return None
    content = on_error(exc, request)
    if content is None:
        return None
    return error_message("on_error", content, exc, request)


async def ahandle(
    route: RouteHandlers, exc: Exception, request: ToolCallRequest
) -> ToolMessage | None:
    """The error message for a failure on the async path, or `None` to re-raise it."""
    on_error, aon_error, _ = route
    if aon_error is not None:
        argument = "aon_error"
        content = await require_awaitable(aon_error(exc, request), exc)
    else:
        # Every route has a handler: with no `aon_error` there is an `on_error`.
        argument = "on_error"
        content = on_error(exc, request) if on_error else None
    if content is None:
        return None
    return error_message(argument, content, exc, request)


def _replaced(message: ToolMessage, argument: str, content: object) -> ToolMessage:
    """`message` with the handler's content as its text; still an error, for the same call."""
    return message.model_copy(update={"content": require_content(argument, content, None)})


def replace(
    route: RouteHandlers, failure: ReportedFailure, message: ToolMessage, request: ToolCallRequest
) -> ToolMessage:
    """The message the model reads for a failure that is not an exception (sync path)."""
    # Every route of a sync-capable middleware has an `on_error`.
    on_error = route[0]
    content = on_error(failure, request) if on_error else None
    return message if content is None else _replaced(message, "on_error", content)


async def areplace(
    route: RouteHandlers, failure: ReportedFailure, message: ToolMessage, request: ToolCallRequest
) -> ToolMessage:
    """The message the model reads for a failure that is not an exception (async path)."""
    on_error, aon_error, _ = route
    if aon_error is not None:
        argument = "aon_error"
        content = await require_awaitable(aon_error(failure, request), None)
    else:
        argument = "on_error"
        content = on_error(failure, request) if on_error else None
    return message if content is None else _replaced(message, argument, content)


def reply_to(
    route: RouteHandlers, failure: ReportedFailure, request: ToolCallRequest
) -> ToolMessage | None:
    """A route's answer to a failure no message answers yet (a malformed call), or `None`.

    On the sync path; an async-only route gives none there.
    """
    on_error = route[0]
    content = on_error(failure, request) if on_error else None
    return None if content is None else error_message("on_error", content, None, request)


async def areply_to(
    route: RouteHandlers, failure: ReportedFailure, request: ToolCallRequest
) -> ToolMessage | None:
    """A route's answer to a failure no message answers yet, on the async path."""
    on_error, aon_error, _ = route
    if aon_error is not None:
        argument = "aon_error"
        content = await require_awaitable(aon_error(failure, request), None)
    else:
        argument = "on_error"
        content = on_error(failure, request) if on_error else None
    return None if content is None else error_message(argument, content, None, request)
