"""Strictly typed tool-error middleware for LangChain v1 agents.

`ToolErrorMiddleware` hands exceptions raised by tools back to the model as error
`ToolMessage`s, with configuration mistakes caught by mypy and pyright and, for code that
skips them, by matching checks at run time.
"""

from _langchain_tool_errors.budget import ErrorBudget, ToolErrorBudgetExceeded
from _langchain_tool_errors.handler_types import (
    AOnError,
    AsyncOnly,
    HandlerMode,
    OnError,
    SyncCapable,
    ToolErrorContent,
    ToolSelection,
)
from _langchain_tool_errors.middleware import ToolErrorMiddleware
from _langchain_tool_errors.routes import Route

__all__ = [
    "AOnError",
    "AsyncOnly",
    "ErrorBudget",
    "HandlerMode",
    "OnError",
    "Route",
    "SyncCapable",
    "ToolErrorBudgetExceeded",
    "ToolErrorContent",
    "ToolErrorMiddleware",
    "ToolSelection",
]
