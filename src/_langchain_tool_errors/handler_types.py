"""The handler Protocols, the content they return, and the middleware's mode markers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias, final

from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import Protocol, TypeVar

ToolErrorContent: TypeAlias = str | Sequence[Mapping[str, object]]
"""What a handler may return to the model: a `str`, or a sequence of content blocks.

Every langchain content block (`TextContentBlock`, any member of `ContentBlock`) is a
`Mapping[str, object]`, so `list[ContentBlock]` and `list[TextContentBlock]` fit; spelled
this way, a type error names this one short type instead of langchain's 15 block types. At
run time each block must also have a string `"type"`, and a list or tuple of blocks is sent
as a list.

Example:
    ```python
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from langchain_tool_errors import OnError, ToolErrorContent, ToolErrorMiddleware

    def describe(exc: Exception, request: ToolCallRequest) -> ToolErrorContent:
        if isinstance(exc, TimeoutError):
            return "The tool timed out; try once more."
        return [{"type": "text", "text": f"The tool failed with {type(exc).__name__}."}]


    # A handler that returns a str *or* blocks: name its type for mypy, which cannot
    # infer the content type from such a union by itself.
    handler: OnError[ToolErrorContent] = describe
    middleware = ToolErrorMiddleware(handler)
    ```
"""

_ContentT_co = TypeVar(
    "_ContentT_co", bound=ToolErrorContent, default=ToolErrorContent, covariant=True
)
_ExcT_contra = TypeVar("_ExcT_contra", bound=Exception, default=Exception, contravariant=True)


class OnError(Protocol[_ContentT_co, _ExcT_contra]):
    """A sync handler: content for an error `ToolMessage`, or `None` to let the exception propagate.

    `OnError[str]` handles any `Exception`; `OnError[str, ValueError]` only `ValueError`
    (pair it with `exceptions=ValueError`). Parameters are positional-only, so any names fit.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import OnError

        def on_error(exc: Exception, request: ToolCallRequest) -> str | None:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        handler: OnError[str] = on_error
        ```
    """

    def __call__(self, exc: _ExcT_contra, request: ToolCallRequest, /) -> _ContentT_co | None:
        """Return the content to send to the model, or `None` to re-raise `exc`."""
        ...


class AOnError(Protocol[_ContentT_co, _ExcT_contra]):
    """An async handler: awaits to content for an error `ToolMessage`, or `None` to propagate.

    Used on the async path (`ainvoke`, `astream`). Parameters are positional-only.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import AOnError

        async def aon_error(exc: Exception, request: ToolCallRequest) -> str | None:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        handler: AOnError[str] = aon_error
        ```
    """

    def __call__(
        self, exc: _ExcT_contra, request: ToolCallRequest, /
    ) -> Awaitable[_ContentT_co | None]:
        """Return an awaitable of the content to send to the model, or of `None` to re-raise."""
        ...


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


ToolSelection: TypeAlias = (
    list[str | BaseTool] | list[str] | tuple[str | BaseTool, ...] | Sequence[BaseTool]
)
"""The tools a middleware handles: names or `BaseTool`s, in a list or tuple (never a bare str).

Mix names and tools in a tuple: mypy types a mixed list literal as `list[object]`.

Example:
    ```python
    from langchain_core.tools import tool

    from langchain_tool_errors import ToolErrorMiddleware, ToolSelection
    from langchain_tool_errors.handlers import report_type_only

    @tool(description="A record by its id.")
    def lookup(record_id: str) -> str:
        return f"record {record_id}"

    selected: ToolSelection = ("search", lookup)
    middleware = ToolErrorMiddleware(report_type_only, tools=selected)
    ```
"""


StoredHandler: TypeAlias = Callable[[Any, ToolCallRequest], object]
"""A sync handler as the implementation stores it (not public): any exception, any result.

The overloads of `ToolErrorMiddleware` and `Route` tie a handler to its exceptions and
content; their shared implementation cannot name those types, and what a handler returns
is checked at run time before anything reaches the model.
"""

StoredAsyncHandler: TypeAlias = Callable[[Any, ToolCallRequest], Awaitable[object]]
"""An async handler as the implementation stores it (not public); see `StoredHandler`."""
