"""The middleware's configuration is read-only: assigning it is an error in both checkers.

Kept apart from `case_rejected.py` because mypy's error code for a bad constructor call
there depends on what else the module holds.
"""

from __future__ import annotations

from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware


def on_error(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


async def aon_error(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


middleware = ToolErrorMiddleware(on_error)
# The configuration is read-only.
middleware.on_error = on_error  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[read-only]
middleware.aon_error = aon_error  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[read-only]
middleware.exceptions = (KeyError,)  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[read-only]
middleware.selected_tools = None  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[read-only]
middleware.repair = None  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[read-only]
