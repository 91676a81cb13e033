"""The handler Protocols, the content they return, and the selection of tools."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TypeAlias

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
