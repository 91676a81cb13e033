"""The ready-made handlers; `langchain_tool_errors.handlers` is their public face."""

from __future__ import annotations

import logging

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import TypeVar

from _langchain_tool_errors.call_checks import require_awaitable
from _langchain_tool_errors.checks import require_exception_types
from _langchain_tool_errors.failures import (
    KIND_PHRASES,
    InvalidArguments,
    ReportedFailure,
    UnknownTool,
)
from _langchain_tool_errors.handler_checks import is_async_callable, require_handler_to_wrap
from _langchain_tool_errors.handler_types import AOnError, OnError, ToolErrorContent
from _langchain_tool_errors.tool_calls import tool_name

LOGGER = logging.getLogger("langchain_tool_errors")
"""The library's logger, `logging.getLogger("langchain_tool_errors")`, used by `log_handled`.

Example:
    ```python
    import logging

    from langchain_tool_errors.handlers import LOGGER

    LOGGER.addHandler(logging.StreamHandler())  # or configure "langchain_tool_errors"
    ```
"""

_C = TypeVar("_C", bound=ToolErrorContent)
_E = TypeVar("_E", bound=Exception)


def report_type_only(exc: Exception, request: ToolCallRequest, /) -> str:
    """Name the tool and the exception's type, never its message.

    A `TimeoutError("db.internal:5432 timed out")` raised by `search` becomes
    ``Tool `search` failed with TimeoutError.``

    Example:
        ```python
        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only

        middleware = ToolErrorMiddleware(report_type_only)
        ```
    """
    return f"Tool `{tool_name(request)}` failed with {type(exc).__name__}."


def report_invalid_fields(failure: InvalidArguments, request: ToolCallRequest, /) -> str:
    """Name each argument that does not fit the tool's schema and what it expects there.

    The values the model sent are never repeated (`ToolNode`'s own answer quotes them all).
    `lookup` called with `{"record_id": "A-17"}` for an `int` becomes
    ``The arguments of `lookup` do not fit its schema: `record_id`: Input should be a valid
    integer, unable to parse string as an integer. Fix them and call it again.``

    Example:
        ```python
        from langchain_tool_errors import InvalidArguments, Route, ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_invalid_fields, report_type_only

        middleware = ToolErrorMiddleware.from_routes(
            [Route(InvalidArguments, report_invalid_fields), Route(Exception, report_type_only)]
        )
        ```
    """
    wrong = "; ".join(f"`{error.field}`: {error.expected}" for error in failure.errors)
    return (
        f"The arguments of `{failure.tool}` do not fit its schema: {wrong}. Fix them and call "
        "it again."
    )


def report_known_tools(failure: UnknownTool, request: ToolCallRequest, /) -> str:
    """Say the tool does not exist and list the agent's tools.

    A call to `lookkup` in an agent with `lookup` and `search` becomes
    ``There is no tool `lookkup`. The tools you can call are `lookup`, `search`.``

    Example:
        ```python
        from langchain_tool_errors import Route, ToolErrorMiddleware, UnknownTool
        from langchain_tool_errors.handlers import report_known_tools

        middleware = ToolErrorMiddleware.from_routes([Route(UnknownTool, report_known_tools)])
        ```
    """
    if not failure.known_tools:
        return f"There is no tool `{failure.tool}`. Call only the tools you were given."
    known = ", ".join(f"`{name}`" for name in failure.known_tools)
    return f"There is no tool `{failure.tool}`. The tools you can call are {known}."


def report_kind_only(failure: ReportedFailure, request: ToolCallRequest, /) -> str:
    """Name the tool and how its call failed, never the error's text.

    For errors whose text may hold internal detail: an inner middleware's answer
    (`ToolRetryMiddleware` quotes the exception), or a tool's own report. An error
    `fetch`'s retry middleware answered becomes
    ``Tool `fetch` failed (an error another middleware answered); try another way.``

    Example:
        ```python
        from langchain_tool_errors import (
            InnerMiddlewareError,
            Route,
            ToolErrorMiddleware,
            ToolReportedError,
        )
        from langchain_tool_errors.handlers import report_kind_only

        middleware = ToolErrorMiddleware.from_routes(
            [Route((InnerMiddlewareError, ToolReportedError), report_kind_only)]
        )
        ```
    """
    return f"Tool `{failure.tool}` failed ({KIND_PHRASES[failure.kind]}); try another way."


def report_messages_of(*exception_types: type[Exception]) -> OnError[str]:
    """A handler that passes the message through for `exception_types` only.

    Use it for exceptions whose messages are written for the model, such as langchain's
    `ToolException`; every other exception gets `report_type_only`'s text. An empty message
    also falls back to it.

    Args:
        *exception_types: The exception types whose messages are safe to show the model.

    Returns:
        An `OnError[str]` handler.

    Raises:
        TypeError: An argument is not an `Exception` subclass.
        ValueError: No type was given.

    Example:
        ```python
        from langchain_core.tools import ToolException

        from langchain_tool_errors.handlers import report_messages_of

        handler = report_messages_of(ToolException)
        ```
        A `ToolException("No results; try fewer keywords.")` from `search` becomes
        ``Tool `search` failed: No results; try fewer keywords.``
    """
    if not exception_types:
        msg = (
            "report_messages_of() was given no exception type, so it would pass no message "
            "through; name the types, e.g. report_messages_of(ToolException), or use "
            "report_type_only."
        )
        raise ValueError(msg)
    selected = require_exception_types(exception_types, argument="exception_types")

    def report_messages(exc: Exception, request: ToolCallRequest, /) -> str:
        message = str(exc)
        if isinstance(exc, selected) and message:
            return f"Tool `{tool_name(request)}` failed: {message}"
        return report_type_only(exc, request)

    names = ", ".join(kind.__name__ for kind in selected)
    report_messages.__name__ = report_messages.__qualname__ = f"report_messages_of({names})"
    return report_messages


def log_handled(handler: OnError[_C, _E], /) -> OnError[_C, _E]:
    """Wrap a sync handler so each exception it handles is logged with its traceback.

    The record goes to `LOGGER` at WARNING, naming the tool, the call id and the exception
    type, with the traceback attached; the tool's arguments and the agent state are not
    logged. Operators keep the full detail while the model gets the handler's safe text.
    Exceptions the handler declines (returns `None` for) propagate and are not logged here.

    Args:
        handler: A sync handler. For an async one, use `alog_handled`.

    Returns:
        A sync handler that returns what `handler` returns.

    Raises:
        TypeError: `handler` is not callable, or is an async function (type errors too).

    Example:
        ```python
        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.handlers import log_handled, report_type_only

        middleware = ToolErrorMiddleware(log_handled(report_type_only))
        ```
    """
    require_handler_to_wrap("log_handled", handler)
    if is_async_callable(handler):
        msg = (
            f"log_handled() wraps sync handlers, but got the async callable {handler!r}; "
            "use alog_handled() and pass the result as `aon_error=`."
        )
        raise TypeError(msg)

    def log_handled_sync(exc: _E, request: ToolCallRequest, /) -> _C | None:
        content = handler(exc, request)
        if content is not None:
            _log(exc, request)
        return content

    return log_handled_sync


def alog_handled(handler: AOnError[_C, _E], /) -> AOnError[_C, _E]:
    """Wrap an async handler so each exception it handles is logged; see `log_handled`.

    Args:
        handler: An async handler, as passed to `aon_error=`.

    Returns:
        An async handler that returns what `handler` returns.

    Raises:
        TypeError: `handler` is not callable (a type error too).

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.handlers import alog_handled

        async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        middleware = ToolErrorMiddleware(aon_error=alog_handled(aexplain))
        ```
    """
    require_handler_to_wrap("alog_handled", handler)

    async def log_handled_async(exc: _E, request: ToolCallRequest, /) -> _C | None:
        content = await require_awaitable(handler(exc, request), exc)
        if content is not None:
            _log(exc, request)
        return content

    return log_handled_async


def _log(exc: Exception, request: ToolCallRequest) -> None:
    LOGGER.warning(
        "tool %r (call %s) failed with %s; the model was sent the handler's content",
        tool_name(request),
        request.tool_call.get("id"),
        type(exc).__name__,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
