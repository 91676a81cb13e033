"""Strictly typed tool-error middleware for LangChain v1 agents.

`ToolErrorMiddleware` hands exceptions raised by tools back to the model as error
`ToolMessage`s, with configuration mistakes caught by mypy and pyright and, for code that
skips them, by matching checks at run time.
"""

from langchain_tool_errors._middleware import ToolErrorMiddleware, ToolSelection
from langchain_tool_errors._types import (
    AOnError,
    AsyncOnly,
    HandlerMode,
    OnError,
    SyncCapable,
    ToolErrorContent,
)

__all__ = [
    "AOnError",
    "AsyncOnly",
    "HandlerMode",
    "OnError",
    "SyncCapable",
    "ToolErrorContent",
    "ToolErrorMiddleware",
    "ToolSelection",
]
