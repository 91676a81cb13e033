"""The mode markers: which execution paths a middleware or a route can serve."""

from __future__ import annotations

from typing import final


class HandlerMode:
    """Base of the mode markers: which execution paths a `ToolErrorMiddleware` can serve.

    Appears as the third type parameter of `ToolErrorMiddleware`; never instantiated.

    Example:
        ```python
        from langchain_tool_errors import HandlerMode, ToolErrorMiddleware

        def install(middleware: ToolErrorMiddleware[str, Exception, HandlerMode]) -> None:
            ...  # accepts sync-capable and async-only middleware alike
        ```
    """


@final
class SyncCapable(HandlerMode):
    """Mode marker: the middleware has a sync `on_error`, so it serves `invoke` and `ainvoke`.

    Example:
        ```python
        from langchain_tool_errors import SyncCapable, ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only

        sync_capable: ToolErrorMiddleware[str, Exception, SyncCapable] = ToolErrorMiddleware(
            report_type_only
        )
        ```
    """


@final
class AsyncOnly(HandlerMode):
    """Mode marker: the middleware has only `aon_error`, so it serves `ainvoke`/`astream` only.

    Calling `wrap_tool_call` (the sync path) on such a middleware is a type error.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import AsyncOnly, ToolErrorMiddleware

        async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        async_only: ToolErrorMiddleware[str, Exception, AsyncOnly] = ToolErrorMiddleware(
            aon_error=aexplain
        )
        ```
    """
