"""Mistakes both checkers must reject, one a line, each silenced by both checkers' ignores.

An ignore that stops being needed is an error in both checkers, so each line proves that
mypy and pyright still catch its mistake.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ContentBlock, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langchain_tool_errors import (
    AOnError,
    BudgetDecision,
    ErrorBudget,
    InvalidArguments,
    OnError,
    RepairableFailure,
    RepeatedCall,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    UnknownTool,
)
from langchain_tool_errors.handlers import alog_handled, log_handled, report_messages_of


def on_error(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


async def aon_error(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


def returns_int(exc: Exception, request: ToolCallRequest) -> int:
    return 42


def returns_int_list(exc: Exception, request: ToolCallRequest) -> list[int]:
    return [42]


def returns_str_list(exc: Exception, request: ToolCallRequest) -> list[str]:
    return ["plain strings are not content blocks"]


def one_parameter(exc: Exception) -> str:
    return ""


def value_error_only(exc: ValueError, request: ToolCallRequest) -> str:
    return ""


def blocks(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
    return []


def execute(request: ToolCallRequest) -> ToolMessage | Command[Any]:
    raise NotImplementedError


# No handler at all.
ToolErrorMiddleware()  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(None)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
# An async function where a sync one is expected, and the other way round.
ToolErrorMiddleware(aon_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(on_error=aon_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(aon_error=on_error)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, aon_error=on_error)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
# A handler whose result is not content.
ToolErrorMiddleware(returns_int)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(returns_int_list)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(returns_str_list)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
# A handler of the wrong shape.
ToolErrorMiddleware(one_parameter)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
# A narrow handler without a matching `exceptions=`.
ToolErrorMiddleware(value_error_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(value_error_only, exceptions=(KeyError,))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(value_error_only, exceptions=Exception)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, exceptions=KeyboardInterrupt)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
# A tool selection that is not a list of names or tools.
ToolErrorMiddleware(on_error, tools=[1])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, tools="search")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, name=1)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
# Handler annotations that do not fit.
blocks_as_text: OnError[str] = blocks  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
sync_as_async: AOnError[str] = on_error  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
not_content: OnError[int]  # type: ignore[type-var]  # pyright: ignore[reportInvalidTypeArguments]  # ty: ignore[invalid-type-arguments]  # pyrefly: ignore[bad-specialization]
# The sync entry point of an async-only middleware.
ToolErrorMiddleware(aon_error=aon_error).wrap_tool_call  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]


def call_the_sync_path_of_an_async_only_middleware(request: ToolCallRequest) -> None:
    ToolErrorMiddleware(aon_error=aon_error).wrap_tool_call(request, execute)  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


# The ready-made handlers' factories and wrappers.
report_messages_of("ToolException")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
report_messages_of(KeyboardInterrupt)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
log_handled(aon_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
alog_handled(on_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(aon_error=log_handled(on_error))  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
log_handled(None)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
alog_handled(None)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


# Routes: a handler typed for another exception, the wrong kind of handler, no handler.
def key_only(exc: KeyError, request: ToolCallRequest) -> str:
    return ""


Route(KeyError, value_error_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route((KeyError, IndexError), key_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route((KeyError, IndexError, ValueError), key_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(KeyError, aon_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(KeyError, aon_error=on_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(KeyError, returns_int)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(KeyError)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(KeyError, on_error, tools="search")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([Route(Exception, on_error)], on_error=on_error)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]  # ty: ignore[unknown-argument]  # pyrefly: ignore[unexpected-keyword]
ToolErrorMiddleware(routes=[Route(Exception, on_error)])  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, routes=[Route(Exception, on_error)])  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([on_error])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


def call_the_sync_path_of_routed_middleware(request: ToolCallRequest) -> None:
    async_routes = ToolErrorMiddleware.from_routes([Route(Exception, aon_error=aon_error)])
    async_routes.wrap_tool_call(request, execute)  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
    mixed = ToolErrorMiddleware.from_routes(
        [Route(KeyError, on_error), Route(Exception, aon_error=aon_error)]
    )
    mixed.wrap_tool_call(request, execute)  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]  # pyrefly: ignore[bad-argument-type]


# Error budgets: a limit that is not an int, an unknown choice, a budget that is not one.
ErrorBudget(per_tool="3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ErrorBudget(per_run=2.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ErrorBudget(consecutive="2")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorBudgetExceeded("search", 3, 2, "in_a_row")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ErrorBudget(per_tool=3, when_spent="retry")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
ToolErrorMiddleware(on_error, budget=3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
# Budgets per route: a budget that is not an ErrorBudget, in both shapes of route.
Route(KeyError, on_error, budget=3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route((KeyError, IndexError), on_error, budget={"per_tool": 2})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]


def for_unknown_tools(failure: UnknownTool, request: ToolCallRequest) -> str:
    return failure.tool


def repeat_text(failure: RepeatedCall, request: ToolCallRequest) -> str:
    return failure.text


# Failures that are not exceptions: only a Route takes them; a route's handler must take
# what the route selects; a budget's kinds are the known ones, in a collection.
ToolErrorMiddleware(on_error, exceptions=InvalidArguments)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
Route(InvalidArguments, for_unknown_tools)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(RepeatedCall, for_unknown_tools)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(RepeatedCall, repeat_text, retryable="TimeoutError")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(RepeatedCall, on_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ErrorBudget(per_tool=3, kinds=["repeated"])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
Route(InvalidArguments, on_error)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
Route(str, on_error)  # type: ignore[type-var, arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
ErrorBudget(per_tool=3, kinds="exception")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]
ErrorBudget(per_tool=3, kinds=["invalid_args"])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


# The middleware makes its failures itself: a class derived from a kind would never be made.
class MyRepeat(RepeatedCall):  # type: ignore[misc]  # pyright: ignore[reportGeneralTypeIssues]  # ty: ignore[subclass-of-final-class]  # pyrefly: ignore[invalid-inheritance]
    pass


# The error mark: a str, or None to turn it off; never another type.
ToolErrorMiddleware(on_error, error_prefix=True)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([Route(KeyError, on_error)], error_prefix=0)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


def repair_invalid_only(failure: InvalidArguments) -> ToolCall | None:
    return None


def repair_to_dict(failure: RepairableFailure) -> dict[str, object]:
    return {"name": failure.tool, "args": {}}


# A repair must take every failure it may be offered, and return a tool call or None.
ToolErrorMiddleware(on_error, repair=repair_invalid_only)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, repair=repair_to_dict)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([Route(Exception, on_error)], repair="fix")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


# A person's decision is one of three, with a type.
retry: BudgetDecision = {"type": "retry"}  # type: ignore[misc, assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
untyped: BudgetDecision = {"text": "Sunny."}  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
# An answer carries the text the model reads; the other two carry nothing else.
silent: BudgetDecision = {"type": "answer"}  # type: ignore[misc, assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
chatty: BudgetDecision = {"type": "go_on", "text": "Sunny."}  # type: ignore[typeddict-item]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
