"""Calls and annotations both checkers must accept, with the types they must infer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Literal, Never, Protocol, assert_type

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import (
    ContentBlock,
    HumanMessage,
    TextContentBlock,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, StateSnapshot
from typing_extensions import TypedDict

from _langchain_tool_errors.scripted_model import ScriptedChatModel
from langchain_tool_errors import (
    AFailureListener,
    AnswerDecision,
    AOnError,
    AsyncOnly,
    BudgetDecision,
    BudgetPause,
    ErrorBudget,
    FailureKind,
    FailureListener,
    FailureOutcome,
    FieldError,
    GoOnDecision,
    InnerMiddlewareError,
    InvalidArguments,
    MalformedToolCall,
    OnError,
    RepairableFailure,
    RepairCall,
    RepeatedCall,
    ReportedFailure,
    Route,
    StopDecision,
    SyncCapable,
    ToolErrorBudgetExceeded,
    ToolErrorContent,
    ToolErrorMiddleware,
    ToolFailure,
    ToolReportedError,
    UnknownTool,
)
from langchain_tool_errors.handlers import (
    alog_handled,
    log_handled,
    report_invalid_fields,
    report_kind_only,
    report_known_tools,
    report_messages_of,
    report_type_only,
)


def maybe_text(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


def text(exc: Exception, request: ToolCallRequest) -> str:
    return ""


def maybe_blocks(exc: Exception, request: ToolCallRequest) -> list[ContentBlock] | None:
    return None


def maybe_text_blocks(exc: Exception, request: ToolCallRequest) -> list[TextContentBlock] | None:
    return None


async def amaybe_text(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


async def ablocks(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
    return []


def value_error_only(exc: ValueError, request: ToolCallRequest) -> str:
    return ""


async def avalue_error_only(exc: ValueError, request: ToolCallRequest) -> str:
    return ""


def lookup_errors(exc: KeyError | IndexError, request: ToolCallRequest) -> str:
    return ""


def any_names(error: Exception, call: ToolCallRequest, /) -> str:
    return ""


@tool
def search(query: str) -> str:
    """Search."""
    return query


def execute(request: ToolCallRequest) -> ToolMessage | Command[Any]:
    raise NotImplementedError


async def aexecute(request: ToolCallRequest) -> ToolMessage | Command[Any]:
    raise NotImplementedError


# A sync handler, positionally or by keyword, and each accepted return type.
assert_type(ToolErrorMiddleware(maybe_text), ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(ToolErrorMiddleware(on_error=text), ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(
    ToolErrorMiddleware(maybe_blocks),
    ToolErrorMiddleware[list[ContentBlock], Exception, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(maybe_text_blocks),
    ToolErrorMiddleware[list[TextContentBlock], Exception, SyncCapable],
)
assert_type(ToolErrorMiddleware(any_names), ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(
    ToolErrorMiddleware(lambda exc, request: f"failed: {exc}"),
    ToolErrorMiddleware[str, Exception, SyncCapable],
)

# A handler that returns a str *or* blocks. mypy cannot infer the content type from such a
# union in a bare call (it joins the members into a type outside ToolErrorContent); naming
# the handler's Protocol type, or the middleware's, works in both checkers.


def text_or_blocks(exc: Exception, request: ToolCallRequest) -> str | list[TextContentBlock] | None:
    return None


def any_content(exc: Exception, request: ToolCallRequest) -> ToolErrorContent:
    return "failed"


async def atext_or_blocks(
    exc: Exception, request: ToolCallRequest
) -> str | list[TextContentBlock] | None:
    return None


named_handler: OnError[ToolErrorContent] = text_or_blocks
ToolErrorMiddleware(named_handler)  # a bare call: no context to infer from
named_async_handler: AOnError[ToolErrorContent] = atext_or_blocks
ToolErrorMiddleware(aon_error=named_async_handler)
named_middleware: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable] = (
    ToolErrorMiddleware(any_content)
)

# `aon_error=` alone is async-only; with `on_error` the middleware serves both paths.
assert_type(
    ToolErrorMiddleware(aon_error=amaybe_text), ToolErrorMiddleware[str, Exception, AsyncOnly]
)
assert_type(
    ToolErrorMiddleware(maybe_text, aon_error=amaybe_text),
    ToolErrorMiddleware[str, Exception, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(text, aon_error=ablocks),
    ToolErrorMiddleware[str | list[ContentBlock], Exception, SyncCapable],
)

# A narrow handler with a matching `exceptions=` (the type itself, a tuple, or a subclass).
assert_type(
    ToolErrorMiddleware(value_error_only, exceptions=ValueError),
    ToolErrorMiddleware[str, ValueError, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(value_error_only, exceptions=(ValueError,)),
    ToolErrorMiddleware[str, ValueError, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(value_error_only, exceptions=UnicodeError),
    ToolErrorMiddleware[str, UnicodeError, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(value_error_only, aon_error=avalue_error_only, exceptions=ValueError),
    ToolErrorMiddleware[str, ValueError, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(aon_error=avalue_error_only, exceptions=ValueError),
    ToolErrorMiddleware[str, ValueError, AsyncOnly],
)
# With several types, mypy infers their join (Exception) and pyright their union.
ToolErrorMiddleware(text, exceptions=(KeyError, TimeoutError))
ToolErrorMiddleware(lookup_errors, exceptions=KeyError)

# Tool selections and names.
tools: list[BaseTool] = [search]
ToolErrorMiddleware(text, tools=["search"])
ToolErrorMiddleware(text, tools=[search])
# mypy infers `list[object]` for a list mixing names and tools; a tuple works in both.
ToolErrorMiddleware(text, tools=(search, "lookup"))
ToolErrorMiddleware(text, tools=("search", search))
ToolErrorMiddleware(text, tools=tools)
ToolErrorMiddleware(text, tools=None, name="search_errors")

# Handlers assigned to the Protocols.
sync_text: OnError[str] = maybe_text
sync_text_narrow: OnError[str, ValueError] = value_error_only
sync_any_names: OnError[str] = any_names
sync_blocks: OnError[list[ContentBlock]] = maybe_blocks
sync_content: OnError = maybe_text_blocks
async_text: AOnError[str] = amaybe_text
async_content: AOnError[ToolErrorContent] = ablocks
assert_type(ToolErrorMiddleware(sync_text), ToolErrorMiddleware[str, Exception, SyncCapable])

# A bare annotation accepts every instance; so does a list of AgentMiddleware.
# (mypy lets a bare annotation's `Exception` override a narrow handler's exception type,
# so a narrow middleware is annotated with its own parameters, or as an AgentMiddleware.)
bare: list[ToolErrorMiddleware] = [
    ToolErrorMiddleware(maybe_text),
    ToolErrorMiddleware(aon_error=ablocks),
    ToolErrorMiddleware(maybe_blocks, tools=["search"]),
]
narrow: ToolErrorMiddleware[str, ValueError, SyncCapable] = ToolErrorMiddleware(
    value_error_only, exceptions=ValueError
)
bare.append(narrow)
middleware: list[AgentMiddleware] = [
    ToolErrorMiddleware(maybe_text, name="a"),
    ToolErrorMiddleware(aon_error=amaybe_text, name="b"),
    ToolErrorMiddleware(value_error_only, exceptions=ValueError, name="c"),
]


class Context(TypedDict):
    user_id: str


model = ScriptedChatModel(script=[])
agent = create_agent(model, tools=[search], middleware=[ToolErrorMiddleware(text)])
# ty and pyrefly cannot match a TypedDict against langgraph's TypedDictLikeV1 Protocol bound,
# even with no middleware at all (https://github.com/astral-sh/ty/issues/2826,
# https://github.com/facebook/pyrefly/issues/3745).
create_agent(  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]
    model,
    tools=[search],
    middleware=[ToolErrorMiddleware(text), ToolErrorMiddleware(aon_error=ablocks, name="b")],
    context_schema=Context,
)
create_agent(model, tools=[search], middleware=middleware)
create_agent(model, tools=[search], middleware=bare)


# The type-checking guide's pattern for an agent built in a function: a Protocol of what the
# app calls, so that `invoke`, `ainvoke` and `get_state` are typed in every checker.
class TypedAgent(Protocol):
    def invoke(
        self, input: InputAgentState | Command[Any], config: RunnableConfig | None = None
    ) -> dict[str, Any]: ...

    async def ainvoke(
        self, input: InputAgentState | Command[Any], config: RunnableConfig | None = None
    ) -> dict[str, Any]: ...

    def get_state(self, config: RunnableConfig) -> StateSnapshot: ...


def build_typed_agent() -> TypedAgent:
    return create_agent(
        model, tools=[search], middleware=[ToolErrorMiddleware(text, record_failures=True)]
    )


async def use_typed_agent(config: RunnableConfig) -> None:
    typed = build_typed_agent()
    assert_type(typed.invoke({"messages": [HumanMessage("hi")]}, config), dict[str, Any])
    assert_type(await typed.ainvoke(Command(resume={"type": "go_on"}), config), dict[str, Any])
    assert_type(typed.get_state(config), StateSnapshot)
    assert_type(typed.get_state(config).values, dict[str, Any] | Any)


# The sync entry point on sync-capable instances; the async one on every instance.
def call_hooks(request: ToolCallRequest) -> None:
    ToolErrorMiddleware(text).wrap_tool_call(request, execute)
    ToolErrorMiddleware(text, aon_error=ablocks).wrap_tool_call(request, execute)
    asyncio.run(ToolErrorMiddleware(text).awrap_tool_call(request, aexecute))
    asyncio.run(ToolErrorMiddleware(aon_error=ablocks).awrap_tool_call(request, aexecute))
    narrow.wrap_tool_call(request, execute)
    sync_capable: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable] = narrow
    sync_capable.wrap_tool_call(request, execute)


# The ready-made handlers.
type_only: Callable[[Exception, ToolCallRequest], str] = report_type_only
safe_sync: OnError[str] = report_type_only
assert_type(report_messages_of(ToolException), OnError[str])
assert_type(log_handled(report_type_only), OnError[str, Exception])
assert_type(log_handled(value_error_only), OnError[str, ValueError])
assert_type(alog_handled(amaybe_text), AOnError[str, Exception])
assert_type(
    ToolErrorMiddleware(log_handled(report_messages_of(ToolException))),
    ToolErrorMiddleware[str, Exception, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(aon_error=alog_handled(ablocks)),
    ToolErrorMiddleware[list[ContentBlock], Exception, AsyncOnly],
)

# The configuration, read back: handlers keep their content type (their exception type is
# `Never`, as the class is covariant in it), `exceptions=` its types, `tools=` its names.
built = ToolErrorMiddleware(value_error_only, aon_error=ablocks, exceptions=ValueError)
assert_type(built.on_error, OnError[str | list[ContentBlock], Never] | None)
assert_type(built.aon_error, AOnError[str | list[ContentBlock], Never] | None)
assert_type(built.exceptions, tuple[type[ValueError], ...])
assert_type(built.selected_tools, frozenset[str] | None)
assert_type(built.tools, Sequence[BaseTool])
assert_type(ToolErrorMiddleware(text).on_error, OnError[str, Never] | None)
assert_type(ToolErrorMiddleware(text).exceptions, tuple[type[Exception], ...])


# Routes: each route's handler is typed for exactly its exceptions, in every checker.
def key_only(exc: KeyError, request: ToolCallRequest) -> str:
    return ""


async def akey_only(exc: KeyError, request: ToolCallRequest) -> str:
    return ""


assert_type(Route(KeyError, key_only), Route[SyncCapable])
assert_type(Route((KeyError, IndexError), lookup_errors), Route[SyncCapable])
assert_type(Route((KeyError, IndexError), text), Route[SyncCapable])
assert_type(Route(KeyError, key_only, aon_error=akey_only), Route[SyncCapable])
assert_type(Route(KeyError, aon_error=akey_only), Route[AsyncOnly])
assert_type(Route(ValueError, value_error_only, tools=["search"]), Route[SyncCapable])
assert_type(Route((TimeoutError, ConnectionError, OSError), text), Route[SyncCapable])
# A route has no content type to infer, so a handler that returns a str *or* blocks needs no
# annotation, in mypy too.
assert_type(Route(KeyError, text_or_blocks), Route[SyncCapable])
assert_type(
    ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, key_only, tools=["lookup"]),
            Route((KeyError, IndexError), lookup_errors),
            Route(Exception, maybe_blocks),
        ]
    ),
    ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
)
assert_type(
    ToolErrorMiddleware.from_routes(
        (Route(KeyError, aon_error=akey_only), Route(Exception, aon_error=ablocks))
    ),
    ToolErrorMiddleware[ToolErrorContent, Exception, AsyncOnly],
)
routed = ToolErrorMiddleware.from_routes([Route(KeyError, key_only), Route(Exception, text)])
create_agent(model, tools=[search], middleware=[routed])


# Error budgets: the middleware's type is unchanged by a budget.
assert_type(
    ToolErrorMiddleware(text, budget=ErrorBudget(per_tool=3)),
    ToolErrorMiddleware[str, Exception, SyncCapable],
)
assert_type(
    ToolErrorMiddleware(
        aon_error=ablocks, budget=ErrorBudget(per_run=10, when_spent="tell", message="{tool}")
    ),
    ToolErrorMiddleware[list[ContentBlock], Exception, AsyncOnly],
)
assert_type(
    ToolErrorMiddleware.from_routes([Route(Exception, text)], budget=ErrorBudget(per_tool=2)),
    ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
)
# Budgets per route: a route's type is its mode, with a budget or without.
assert_type(Route(KeyError, key_only, budget=ErrorBudget(per_tool=2)), Route[SyncCapable])
assert_type(
    Route((KeyError, IndexError), lookup_errors, budget=ErrorBudget(per_run=3)),
    Route[SyncCapable],
)
assert_type(
    Route(KeyError, aon_error=akey_only, budget=ErrorBudget(per_tool=1, when_spent="tell")),
    Route[AsyncOnly],
)
budgeted_routes = ToolErrorMiddleware.from_routes(
    [
        Route(KeyError, key_only, budget=ErrorBudget(per_tool=2)),
        Route(Exception, text),
    ],
    budget=ErrorBudget(per_run=5),
)
assert_type(budgeted_routes, ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable])
assert_type(budgeted_routes.budget, ErrorBudget | None)
assert_type(budgeted_routes.routes[0].budget, ErrorBudget | None)
assert_type(ToolErrorBudgetExceeded("search", 3, 2, "tool", route=0).route, int | None)
create_agent(model, tools=[search], middleware=[budgeted_routes])

# The error mark, in every shape of constructor: a prefix of the user's, or off.
unmarked = ToolErrorMiddleware(text, error_prefix=None)
assert_type(unmarked, ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(unmarked.error_prefix, str | None)
assert_type(
    ToolErrorMiddleware(aon_error=amaybe_text, error_prefix="Tool error: "),
    ToolErrorMiddleware[str, Exception, AsyncOnly],
)
assert_type(
    ToolErrorMiddleware.from_routes([Route(KeyError, key_only)], error_prefix=None),
    ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
)
create_agent(model, tools=[search], middleware=[unmarked])


# Failures that are not exceptions: a route selects them by class, its handler typed for
# exactly what it selects; budgets name the kinds they count.
def fields(failure: InvalidArguments, request: ToolCallRequest) -> str:
    assert_type(failure.errors, tuple[FieldError, ...])
    return ", ".join(error.field for error in failure.errors)


async def asuggest(failure: UnknownTool, request: ToolCallRequest) -> str:
    assert_type(failure.known_tools, tuple[str, ...])
    return failure.tool


def any_reported(failure: ReportedFailure, request: ToolCallRequest) -> str | None:
    assert_type(failure.kind, FailureKind)
    return failure.text


def key_or_malformed(failure: KeyError | MalformedToolCall, request: ToolCallRequest) -> str:
    return "retry"


def not_again(failure: RepeatedCall, request: ToolCallRequest) -> str | None:
    assert_type(failure.failures, int)
    return failure.text if failure.failures < 3 else None


assert_type(Route(InvalidArguments, fields), Route[SyncCapable])
assert_type(Route(UnknownTool, aon_error=asuggest), Route[AsyncOnly])
assert_type(Route(ReportedFailure, any_reported), Route[SyncCapable])
assert_type(Route((InnerMiddlewareError, ToolReportedError), report_kind_only), Route[SyncCapable])
assert_type(Route((KeyError, MalformedToolCall), key_or_malformed), Route[SyncCapable])
assert_type(Route(RepeatedCall, not_again, tools=["charge"]), Route[SyncCapable])
assert_type(Route(RepeatedCall, report_kind_only), Route[SyncCapable])
assert_type(
    Route(RepeatedCall, not_again, retryable=(TimeoutError, ToolReportedError)), Route[SyncCapable]
)
assert_type(Route(RepeatedCall, not_again, retryable=()), Route[SyncCapable])
assert_type(ErrorBudget(per_run=3, kinds=["repeated_call"]).kinds, tuple[FailureKind, ...])
assert_type(Route(InvalidArguments, report_invalid_fields), Route[SyncCapable])
assert_type(Route(UnknownTool, report_known_tools), Route[SyncCapable])
every_kind = ToolErrorMiddleware.from_routes(
    [
        Route(InvalidArguments, report_invalid_fields),
        Route(UnknownTool, report_known_tools),
        Route(ReportedFailure, report_kind_only),
        Route(Exception, report_type_only),
    ],
    budget=ErrorBudget(per_tool=3, kinds=("exception", "invalid_arguments")),
)
assert_type(every_kind, ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable])
assert_type(ErrorBudget(per_run=5, kinds=["unknown_tool"]).kinds, tuple[FailureKind, ...])
assert_type(ToolErrorBudgetExceeded("search", 3, 2, "tool").kind, FailureKind)
# Failures in a row, alone or beside the other limits; the scope that names it.
in_a_row = ErrorBudget(consecutive=3)
assert_type(in_a_row.consecutive, int | None)
ToolErrorMiddleware(text, budget=ErrorBudget(per_tool=5, consecutive=2, when_spent="tell"))
assert_type(
    ToolErrorBudgetExceeded("search", 3, 2, "consecutive").scope,
    Literal["tool", "run", "consecutive"],
)
create_agent(model, tools=[search], middleware=[every_kind])


# The record of a run's failures, and the listeners told of each failure.
def count_failure(failure: ToolFailure) -> None:
    assert_type(failure["tool"], str)
    assert_type(failure["call_id"], str | None)
    assert_type(failure["kind"], FailureKind)
    assert_type(failure["error_type"], str)
    assert_type(failure["route"], int | None)
    assert_type(failure["outcome"], FailureOutcome)
    assert_type(failure["middleware"], str)


async def alert_on_failure(failure: ToolFailure) -> None:
    await asyncio.sleep(0)


seen_failures: list[ToolFailure] = []
sync_listener: FailureListener = count_failure
async_listener: AFailureListener = alert_on_failure
appending_listener: FailureListener = seen_failures.append
recorded = ToolErrorMiddleware(
    text, record_failures=True, listeners=[count_failure, alert_on_failure, seen_failures.append]
)
assert_type(recorded, ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(recorded.record_failures, bool)
assert_type(recorded.listeners, tuple[FailureListener | AFailureListener, ...])
assert_type(
    ToolErrorMiddleware(aon_error=amaybe_text, listeners=(alert_on_failure,)),
    ToolErrorMiddleware[str, Exception, AsyncOnly],
)
assert_type(
    ToolErrorMiddleware.from_routes(
        [Route(KeyError, key_only)], record_failures=True, listeners=[count_failure]
    ),
    ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
)
stopped: ToolFailure = {
    "middleware": "ToolErrorMiddleware",
    "tool": "search",
    "call_id": "call-1",
    "kind": "exception",
    "error_type": "KeyError",
    "route": 0,
    "outcome": "stopped",
}
outcomes: tuple[FailureOutcome, ...] = ("answered", "told", "stopped", "propagated")
create_agent(model, tools=[search], middleware=[recorded])


def failures_of_run(result: dict[str, Any]) -> list[ToolFailure]:
    # What `invoke` returns is a `dict[str, Any]`: the record reads as its declared type.
    failures: list[ToolFailure] = result["tool_failures"]
    return failures


# A repair: any function of the failure it may be offered that returns a call or None.
def fix_call(failure: RepairableFailure) -> ToolCall | None:
    if isinstance(failure, UnknownTool):
        assert_type(failure.known_tools, tuple[str, ...])
        return ToolCall(name=failure.known_tools[0], args=dict(failure.args), id=None)
    if isinstance(failure, MalformedToolCall):
        assert_type(failure.raw_arguments, str | None)
    return None


repairing = ToolErrorMiddleware(report_type_only, repair=fix_call)
assert_type(repairing, ToolErrorMiddleware[str, Exception, SyncCapable])
assert_type(repairing.repair, RepairCall | None)
assert_type(
    ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)], repair=fix_call),
    ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
)


# A budget that pauses for a person: what the person reads, and the decisions they give.
pausing = ErrorBudget(per_tool=3, when_spent="interrupt")
assert_type(pausing.when_spent, Literal["stop", "tell", "interrupt"])


def decide(pause: BudgetPause) -> BudgetDecision:
    assert_type(pause["count"], int)
    assert_type(pause["scope"], Literal["tool", "run", "consecutive"])
    assert_type(pause["route"], int | None)
    if pause["count"] > 5:
        return {"type": "stop"}
    if pause["kind"] == "exception":
        return {"type": "answer", "text": f"`{pause['tool']}` is down; answer without it."}
    return {"type": "go_on"}


def text_of(decision: BudgetDecision) -> str | None:
    if decision["type"] == "answer":
        assert_type(decision, AnswerDecision)
        return decision["text"]
    return None


going_on: GoOnDecision = {"type": "go_on"}
answering: AnswerDecision = {"type": "answer", "text": "Sunny."}
stopping_now: StopDecision = {"type": "stop"}
each_decision: list[BudgetDecision] = [going_on, answering, stopping_now]
