"""Strictly typed tool-error middleware for LangChain v1 agents.

`ToolErrorMiddleware` hands exceptions raised by tools back to the model as error
`ToolMessage`s, with configuration mistakes caught by mypy and pyright and, for code that
skips them, by matching checks at run time. The failures a model reads that are not
exceptions (invalid arguments, unknown tools, errors tools report, malformed calls, a call
that already failed) have a class each, for routes, and a kind, for budgets. Every failure
can be kept in a record of the run (`record_failures=True`) and told to listeners as it
happens.
"""

from _langchain_tool_errors.budget import ErrorBudget, ToolErrorBudgetExceeded
from _langchain_tool_errors.failures import (
    FailureKind,
    FieldError,
    InnerMiddlewareError,
    InvalidArguments,
    MalformedToolCall,
    RepeatedCall,
    ReportedFailure,
    ToolReportedError,
    UnknownTool,
)
from _langchain_tool_errors.handler_checks import MissingHandlerError
from _langchain_tool_errors.handler_types import AOnError, OnError, ToolErrorContent, ToolSelection
from _langchain_tool_errors.middleware import ToolErrorMiddleware
from _langchain_tool_errors.modes import AsyncOnly, HandlerMode, SyncCapable
from _langchain_tool_errors.pausing import (
    AnswerDecision,
    BudgetDecision,
    BudgetPause,
    GoOnDecision,
    StopDecision,
)
from _langchain_tool_errors.record_types import (
    AFailureListener,
    FailureListener,
    FailureOutcome,
    ToolFailure,
)
from _langchain_tool_errors.repair import RepairableFailure, RepairCall
from _langchain_tool_errors.routes import Route

__all__ = [
    "AFailureListener",
    "AOnError",
    "AnswerDecision",
    "AsyncOnly",
    "BudgetDecision",
    "BudgetPause",
    "ErrorBudget",
    "FailureKind",
    "FailureListener",
    "FailureOutcome",
    "FieldError",
    "GoOnDecision",
    "HandlerMode",
    "InnerMiddlewareError",
    "InvalidArguments",
    "MalformedToolCall",
    "MissingHandlerError",
    "OnError",
    "RepairCall",
    "RepairableFailure",
    "RepeatedCall",
    "ReportedFailure",
    "Route",
    "StopDecision",
    "SyncCapable",
    "ToolErrorBudgetExceeded",
    "ToolErrorContent",
    "ToolErrorMiddleware",
    "ToolFailure",
    "ToolReportedError",
    "ToolSelection",
    "UnknownTool",
]
