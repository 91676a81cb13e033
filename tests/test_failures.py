"""Failures that are not exceptions, through real agents: classified, routed and counted.

`ToolNode` answers invalid arguments and unknown tools itself, a tool may report its own
error, an inner middleware may answer a failure, and `create_agent` answers a malformed
call. Each reaches the model as an error message, never as an exception this middleware
sees; a model that keeps making the same mistake used to loop to the recursion limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, cast

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRequest,
    ModelResponse,
    ToolRetryMiddleware,
    hook_config,
)
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langchain_core.tools.base import ArgsSchema
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from pydantic import BaseModel, model_validator
from typing_extensions import override

from _langchain_tool_errors.classifying import field_errors
from _langchain_tool_errors.failures import FAILURE_KINDS, FieldError
from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    InnerMiddlewareError,
    InvalidArguments,
    MalformedToolCall,
    RepeatedCall,
    ReportedFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
    ToolReportedError,
    UnknownTool,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import (
    PATHS,
    ModelCalls,
    Path,
    agent_of,
    call,
    echo_tool,
    raising,
    run,
    runtime_of,
    tool_messages,
)
from tests._wrapping import Around, AroundToolCalls
from tests.conftest import FIGURES


def lookup_tool() -> BaseTool:
    """`lookup(record_id: int)`: succeeds for any int."""

    def lookup(record_id: int) -> str:
        """Look a record up by its number."""
        return f"record {record_id}: ok"

    return StructuredTool.from_function(lookup)


def reporting_tool() -> BaseTool:
    """A tool that reports its own failure (`handle_tool_error=True`)."""

    def archive(record_id: int) -> str:
        """Archive a record."""
        raise ToolException(f"record {record_id} is locked by host 10.0.0.7")

    return StructuredTool.from_function(archive, handle_tool_error=True)


def flaky_tool() -> BaseTool:
    """A tool whose exception carries a detail the model must not read."""

    def fetch(record_id: int) -> str:
        """Fetch a record from the store."""
        raise ConnectionError("connect to db.internal:5432 as admin failed")

    return StructuredTool.from_function(fetch)


def calling(name: str, **args: object) -> AIMessage:
    return AIMessage(content="", tool_calls=[call(name, "c", **args)])


DONE = AIMessage(content="done")

# Each kind a model can loop on: the tools, any inner middleware, and the repeated call.
LOOPS: dict[FailureKind, tuple[list[BaseTool], list[AgentMiddleware[Any, Any, Any]], AIMessage]] = {
    "invalid_arguments": ([lookup_tool()], [], calling("lookup", record_id="abc")),
    "unknown_tool": ([lookup_tool()], [], calling("lookkup", record_id=7)),
    "tool_reported": ([reporting_tool()], [], calling("archive", record_id=7)),
    "inner_middleware": (
        [flaky_tool()],
        [ToolRetryMiddleware(max_retries=1, initial_delay=0, on_failure="continue")],
        calling("fetch", record_id=7),
    ),
}


@pytest.mark.parametrize("kind", LOOPS)
def test_without_a_budget_a_model_looping_on_such_a_failure_hits_the_recursion_limit(
    kind: FailureKind, path: Path
) -> None:
    tools, inner, looping = LOOPS[kind]
    agent = agent_of(tools, [ToolErrorMiddleware(report_type_only), *inner], [Repeat(looping)])

    with pytest.raises(GraphRecursionError):
        run(agent, path, config={"recursion_limit": 30})


@pytest.mark.parametrize("kind", LOOPS)
def test_a_budget_stops_a_model_looping_on_each_kind(kind: FailureKind, path: Path) -> None:
    tools, inner, looping = LOOPS[kind]
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3))
    agent = agent_of(tools, [middleware, *inner], [Repeat(looping)])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 60})

    assert (spent.value.tool, spent.value.count, spent.value.kind) == (
        looping.tool_calls[0]["name"],
        4,
        kind,
    )
    FIGURES.append(f"failures ({path}): a model looping on {kind} stopped at failure 4 of 3")


def test_a_budget_counting_only_exceptions_lets_the_other_kinds_pass(path: Path) -> None:
    tools, _, looping = LOOPS["invalid_arguments"]
    budget = ErrorBudget(per_tool=1, kinds=["exception"])
    agent = agent_of(
        tools, [ToolErrorMiddleware(report_type_only, budget=budget)], [Repeat(looping)]
    )

    with pytest.raises(GraphRecursionError):
        run(agent, path, config={"recursion_limit": 30})


def transcript_of(
    kind: FailureKind, middleware: Sequence[AgentMiddleware[Any, Any, Any]], path: Path
) -> list[tuple[str, str, str]]:
    """The tool messages the model read after one failing call of `kind`, in order."""
    tools, inner, looping = LOOPS[kind]
    result = run(agent_of(tools, [*middleware, *inner], [looping, DONE]), path)
    return [
        (m.tool_call_id, str(m.status), m.text)
        for m in result["messages"]
        if isinstance(m, ToolMessage)
    ]


@pytest.mark.parametrize("kind", LOOPS)
def test_without_a_route_for_them_the_model_reads_these_failures_exactly_as_before(
    kind: FailureKind, path: Path
) -> None:
    before = transcript_of(kind, [], path)

    for middleware in (
        ToolErrorMiddleware(report_type_only),
        ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)]),
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3)),
    ):
        assert transcript_of(kind, [middleware], path) == before
    assert before[0][1] == "error"


class Seen:
    """A route handler for failures that are not exceptions: records them, answers briefly."""

    def __init__(self, answer: str | None = "rewritten") -> None:
        self.failures: list[ReportedFailure] = []
        self.answer = answer

    def handler(self, failure: ReportedFailure, request: ToolCallRequest) -> str | None:
        self.failures.append(failure)
        return self.answer

    async def ahandler(self, failure: ReportedFailure, request: ToolCallRequest) -> str | None:
        self.failures.append(failure)
        return self.answer


def routed(seen: Seen, path: Path, taken: type[ReportedFailure]) -> ToolErrorMiddleware:
    if path == "sync":
        return ToolErrorMiddleware.from_routes(
            [Route(KeyError, report_type_only), Route(taken, seen.handler)]
        )
    return ToolErrorMiddleware.from_routes(
        [Route(KeyError, report_type_only), Route(taken, seen.handler, aon_error=seen.ahandler)]
    )


def run_routed(
    path: Path,
    taken: type[ReportedFailure],
    tools: Sequence[BaseTool],
    reply: AIMessage,
    inner: Sequence[AgentMiddleware[Any, Any, Any]] = (),
) -> tuple[Seen, dict[str, Any]]:
    """A run whose failures of the class `taken` go to a `Seen` route (a `KeyError` to
    `report_type_only`), inside any `inner` middleware: the model sends `reply`, then
    answers "done". Returns the route's `Seen` and the run's result."""
    seen = Seen()
    agent = agent_of(list(tools), [routed(seen, path, taken), *inner], [reply, DONE])
    return seen, run(agent, path)


CLASSES: dict[FailureKind, type[ReportedFailure]] = {
    "invalid_arguments": InvalidArguments,
    "unknown_tool": UnknownTool,
    "tool_reported": ToolReportedError,
    "inner_middleware": InnerMiddlewareError,
}


@pytest.mark.parametrize("kind", LOOPS)
def test_a_route_for_a_kind_rewrites_what_the_model_reads(kind: FailureKind, path: Path) -> None:
    seen = Seen()
    before = transcript_of(kind, [], path)

    after = transcript_of(kind, [routed(seen, path, CLASSES[kind])], path)

    assert after == [(before[0][0], "error", "rewritten")]
    [failure] = seen.failures
    assert type(failure) is CLASSES[kind]
    assert (failure.kind, failure.text) == (kind, before[0][2])
    assert failure.tool == LOOPS[kind][2].tool_calls[0]["name"]
    assert dict(failure.args) == LOOPS[kind][2].tool_calls[0]["args"]


@pytest.mark.parametrize("kind", LOOPS)
def test_a_route_for_the_base_class_takes_every_kind_and_none_leaves_the_message(
    kind: FailureKind, path: Path
) -> None:
    seen = Seen(answer=None)
    before = transcript_of(kind, [], path)

    assert transcript_of(kind, [routed(seen, path, ReportedFailure)], path) == before
    assert [failure.kind for failure in seen.failures] == [kind]


def test_a_route_for_invalid_arguments_gets_each_field_and_what_it_expects(path: Path) -> None:
    seen = Seen()
    transcript_of("invalid_arguments", [routed(seen, path, InvalidArguments)], path)

    [failure] = seen.failures
    assert isinstance(failure, InvalidArguments)
    assert [error.field for error in failure.errors] == ["record_id"]
    assert failure.errors[0].expected.startswith("Input should be a valid integer")
    assert "abc" not in failure.errors[0].expected


def test_a_route_for_unknown_tools_gets_the_agents_tool_names(path: Path) -> None:
    seen = Seen()
    transcript_of("unknown_tool", [routed(seen, path, UnknownTool)], path)

    [failure] = seen.failures
    assert isinstance(failure, UnknownTool)
    assert failure.known_tools == ("lookup",)


def test_the_inner_middlewares_leak_is_replaced(path: Path) -> None:
    def no_details(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
        return f"`{failure.tool}` is failing; answer without it."

    before = transcript_of("inner_middleware", [], path)
    middleware = ToolErrorMiddleware.from_routes([Route(InnerMiddlewareError, no_details)])
    after = transcript_of("inner_middleware", [middleware], path)

    assert "db.internal" in before[0][2]
    assert after == [(before[0][0], "error", "`fetch` is failing; answer without it.")]


CUT_SHORT = InvalidToolCall(
    name="lookup", args='{"record_id": ', id="cut", error="unexpected end", type="invalid_tool_call"
)
"""A call to `lookup` whose arguments were cut short: they are not JSON."""

MALFORMED = AIMessage(
    content="", tool_calls=[call("lookup", "valid", record_id=1)], invalid_tool_calls=[CUT_SHORT]
)


def test_a_malformed_call_beside_a_valid_one_is_routed(path: Path) -> None:
    seen, result = run_routed(path, MalformedToolCall, [lookup_tool()], MALFORMED)

    answers = tool_messages(result)
    assert (answers["cut"].text, answers["cut"].status) == ("rewritten", "error")
    assert answers["valid"].text == "record 1: ok"
    [failure] = seen.failures
    assert isinstance(failure, MalformedToolCall)
    assert (failure.tool, failure.raw_arguments, failure.error) == (
        "lookup",
        '{"record_id": ',
        "unexpected end",
    )


MALFORMED_THREE = AIMessage(
    content="",
    invalid_tool_calls=[
        InvalidToolCall(name="lookup", args="{", id=None, error="no id", type="invalid_tool_call"),
        InvalidToolCall(name=None, args="{", id="nameless", error=None, type="invalid_tool_call"),
        InvalidToolCall(
            name="lookup", args="[", id="second", error="bad", type="invalid_tool_call"
        ),
    ],
)


def test_each_malformed_call_with_an_id_reaches_the_route_with_what_the_model_would_read(
    path: Path,
) -> None:
    seen = Seen()
    agent = agent_of(
        [lookup_tool()], [routed(seen, path, MalformedToolCall)], [MALFORMED_THREE, DONE]
    )

    result = run(agent, path, config={"recursion_limit": 10})

    nameless, second = seen.failures
    assert isinstance(nameless, MalformedToolCall)
    assert isinstance(second, MalformedToolCall)
    assert (nameless.tool, nameless.args, nameless.raw_arguments) == ("", {}, "{")
    assert nameless.text == (
        "The call to `(no name)` could not be run: its arguments were malformed or cut short. "
        "Send the call again with complete JSON arguments."
    )
    assert (second.tool, second.args, second.error) == ("lookup", {}, "bad")
    assert second.text.startswith("The call to `lookup` could not be run")
    assert sorted(tool_messages(result)) == ["nameless", "second"]


MALFORMED_ONLY = AIMessage(content="", invalid_tool_calls=[CUT_SHORT])


@pytest.mark.parametrize(
    "budget",
    [
        ErrorBudget(per_run=2),
        ErrorBudget(per_run=2, when_spent="tell"),
        ErrorBudget(per_run=2, when_spent="interrupt"),
        ErrorBudget(consecutive=2),
    ],
)
def test_a_reply_of_only_malformed_calls_gets_a_second_chance_in_the_same_run(
    path: Path, budget: ErrorBudget
) -> None:
    # Every kind of budget, whatever else its middleware looks at before or after a call.
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    good = AIMessage("", tool_calls=[call("lookup", "good", record_id=7)])
    agent = agent_of([lookup_tool()], [middleware], [MALFORMED_ONLY, good, DONE])

    result = run(agent, path)

    answers = tool_messages(result)
    assert answers["cut"].status == "error"
    assert answers["good"].text == "record 7: ok"
    assert result["messages"][-1].text == "done"


def test_a_reply_of_only_malformed_calls_goes_back_to_the_model_for_listeners_alone(
    path: Path,
) -> None:
    # No budget, no route, no record: a listener is enough for the middleware to meet the
    # reply's malformed call and send the run back to the model, which reads its answer.
    told: list[ToolFailure] = []
    read: list[BaseMessage] = []

    def next_reply(messages: Sequence[BaseMessage]) -> AIMessage:
        read.extend(messages)
        return DONE

    middleware = ToolErrorMiddleware(report_type_only, listeners=[told.append])
    agent = agent_of([lookup_tool()], [middleware], [MALFORMED_ONLY, next_reply])

    result = run(agent, path)

    assert [(m.tool_call_id, m.status) for m in read if isinstance(m, ToolMessage)] == [
        ("cut", "error")
    ]
    assert result["messages"][-1].text == "done"
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == [
        ("cut", "malformed_call", "answered")
    ]


class Bracketing(AgentMiddleware[AgentState[Any], None, Any]):
    """Notes its hooks at the run's start and end, where `ShellToolMiddleware` opens and
    closes its shell session."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: list[str] = []

    # Sync hooks only: langchain runs them on the async path too.
    @override
    def before_agent(self, state: AgentState[Any], runtime: Runtime[None]) -> None:
        self.hooks.append("start")

    @override
    def after_agent(self, state: AgentState[Any], runtime: Runtime[None]) -> None:
        self.hooks.append("end")


@pytest.mark.parametrize("order", ["ours outside", "ours inside"])
def test_a_reply_sent_back_to_the_model_runs_other_middlewares_start_and_end_once(
    path: Path, order: str
) -> None:
    # The reply of only malformed calls goes back to the model within the run: a
    # middleware's hooks at the run's start and end still run once each.
    bracketing = Bracketing()
    ours = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    middleware = [ours, bracketing] if order == "ours outside" else [bracketing, ours]
    good = AIMessage("", tool_calls=[call("lookup", "good", record_id=7)])
    agent = agent_of([lookup_tool()], middleware, [MALFORMED_ONLY, good, DONE])

    result = run(agent, path)

    assert tool_messages(result)["cut"].status == "error"
    assert result["messages"][-1].text == "done"
    assert bracketing.hooks == ["start", "end"]


@pytest.mark.parametrize("order", ["ours outside", "ours inside"])
def test_beside_another_hook_after_the_model_a_reply_goes_back_from_the_run_s_end(
    path: Path, order: str
) -> None:
    # Another middleware's hook after the model drops the model call's way back to the
    # model; ours sends the reply back from its hook at the run's end. A middleware listed
    # inside ours has run its own hook there by then, and runs it again at the real end.
    bracketing = Bracketing()
    ours = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    limit = ModelCallLimitMiddleware(run_limit=10)
    middleware: list[AgentMiddleware[Any, Any, Any]] = (
        [ours, bracketing, limit] if order == "ours outside" else [bracketing, ours, limit]
    )
    good = AIMessage("", tool_calls=[call("lookup", "good", record_id=7)])
    agent = agent_of([lookup_tool()], middleware, [MALFORMED_ONLY, good, DONE])

    result = run(agent, path)

    assert tool_messages(result)["cut"].status == "error"
    assert result["messages"][-1].text == "done"
    ends = 2 if order == "ours outside" else 1
    assert bracketing.hooks == ["start", *["end"] * ends]


class EndsAfterTheFirstReply(AgentMiddleware[AgentState[Any], Any, Any]):
    """Ends the run before any model call after the first, adding no message."""

    def __init__(self) -> None:
        super().__init__()
        self.before_model_calls = 0

    @hook_config(can_jump_to=["end"])
    @override
    def before_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        self.before_model_calls += 1
        replied = any(isinstance(m, AIMessage) for m in state["messages"])
        return {"jump_to": "end"} if replied else None

    @hook_config(can_jump_to=["end"])
    @override
    async def abefore_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)


def test_a_reply_goes_back_from_the_run_s_end_once(path: Path) -> None:
    # Beside a hook after the model, the reply goes back from the run's end. A hook before
    # the model that then ends the run again is obeyed: the reply is not sent back twice.
    ends = EndsAfterTheFirstReply()
    ours = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    limit = ModelCallLimitMiddleware(run_limit=10)
    agent = agent_of([lookup_tool()], [ends, ours, limit], [MALFORMED_ONLY, DONE])

    result = run(agent, path, config={"recursion_limit": 40})

    assert [m.text for m in result["messages"] if isinstance(m, AIMessage)] == [""]
    assert ends.before_model_calls == 2


class EndsAfterEachReply(AgentMiddleware[AgentState[Any], Any, Any]):
    """Ends the run after each model reply, on purpose."""

    @hook_config(can_jump_to=["end"])
    @override
    def after_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any]:
        return {"jump_to": "end"}

    @hook_config(can_jump_to=["end"])
    @override
    async def aafter_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any]:
        return {"jump_to": "end"}


def test_a_hook_after_the_model_that_ends_the_run_gets_the_reply_sent_back_once(
    path: Path,
) -> None:
    # That end looks the same as a dropped way back: the reply goes back once, and the
    # next reply's end is kept.
    ours = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    agent = agent_of(
        [lookup_tool()], [ours, EndsAfterEachReply()], [MALFORMED_ONLY, AIMessage("again")]
    )

    result = run(agent, path)

    assert [m.text for m in result["messages"] if isinstance(m, AIMessage)] == ["", "again"]


def test_a_review_before_ours_asks_about_a_call_beside_a_stop_that_then_does_not_run(
    path: Path,
) -> None:
    # The malformed call spends the budget in the model call's step; the review's hook after
    # the model asks about the valid call beside it; approved, it is answered without
    # running, and the run stops.
    ran: list[int] = []

    def lookup(record_id: int) -> str:
        """Look a record up by its number."""
        ran.append(record_id)
        return "ok"

    review = HumanInTheLoopMiddleware(interrupt_on={"lookup": True})
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=1))
    first = AIMessage("", invalid_tool_calls=[{**CUT_SHORT, "id": "cut-0"}])
    agent = agent_of(
        [StructuredTool.from_function(lookup)],
        [review, ours],
        [first, MALFORMED, DONE],
        InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "review"}}

    paused = run(agent, path, config=config)
    assert paused["__interrupt__"]
    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path, Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert ran == []
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    answers = {m.tool_call_id: m.text for m in messages if isinstance(m, ToolMessage)}
    assert "did not run" in answers["valid"]


class CopiesTheState(AgentMiddleware[AgentState[Any], Any, Any]):
    """Hands the model call on with a copy of the agent state."""

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(request.override(state={**request.state}))

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(request.override(state={**request.state}))


def test_two_middleware_around_one_model_call_send_a_reply_back_once(path: Path) -> None:
    # A middleware between them copies the state: the two still meet the reply as one, and
    # only the outer one sends it back (LangGraph takes one `jump_to` a step).
    told: list[ToolFailure] = []
    outer = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="outer")
    inner = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="inner")
    agent = agent_of([lookup_tool()], [outer, CopiesTheState(), inner], [MALFORMED_ONLY, DONE])

    result = run(agent, path)

    assert result["messages"][-1].text == "done"
    assert [f["middleware"] for f in told] == ["inner", "outer"]


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(MALFORMED, id="a malformed call beside a valid one"),
        pytest.param(MALFORMED_ONLY, id="only malformed calls"),
    ],
)
def test_a_model_repeating_malformed_calls_is_stopped_by_a_budget(
    path: Path, reply: AIMessage
) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=2))
    agent = agent_of([lookup_tool()], [middleware], [Repeat(reply)])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 60})

    assert (spent.value.kind, spent.value.count, spent.value.tool) == (
        "malformed_call",
        3,
        "lookup",
    )
    assert spent.value.__cause__ is None


def test_the_calls_beside_a_malformed_call_that_spends_the_budget_never_run(path: Path) -> None:
    # The budget is spent in the model call's step, beside a valid call: the call goes to
    # the tools, where it is answered without running, and the run stops before the model.
    ran: list[int] = []

    def lookup(record_id: int) -> str:
        """Look a record up by its number."""
        ran.append(record_id)
        return "ok"

    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=1))
    first = AIMessage("", invalid_tool_calls=[{**CUT_SHORT, "id": "cut-0"}])
    agent = agent_of(
        [StructuredTool.from_function(lookup)], [middleware], [first, MALFORMED], InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "beside"}}

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config=config)

    assert (spent.value.kind, spent.value.count, spent.value.limit) == ("malformed_call", 2, 1)
    assert ran == []
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    answers = {m.tool_call_id: m.text for m in messages if isinstance(m, ToolMessage)}
    assert len(answers) == len([m for m in messages if isinstance(m, ToolMessage)]) == 3
    assert "did not run" in answers["valid"]
    assert "limit of 1" in answers["valid"]
    assert "failed" in answers["cut"]


@pytest.mark.parametrize("budget_first", [True, False])
@pytest.mark.parametrize("reply", [MALFORMED_ONLY, MALFORMED], ids=["only", "beside a call"])
def test_a_budget_stops_malformed_calls_beside_another_watching_middleware(
    path: Path, budget_first: bool, reply: AIMessage
) -> None:
    # Both meet the reply's malformed calls in the model call's step, the inner one first,
    # and the reply of only malformed calls goes back to the model once. Each counts and
    # records each call once.
    budget = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=2), name="budget")
    told: list[ToolFailure] = []
    recording = ToolErrorMiddleware(
        report_type_only, record_failures=True, listeners=[told.append], name="recording"
    )
    stack = [budget, recording] if budget_first else [recording, budget]
    agent = agent_of([lookup_tool()], stack, [Repeat(reply)])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 60})

    assert (spent.value.kind, spent.value.count, spent.value.tool) == (
        "malformed_call",
        3,
        "lookup",
    )
    # The recording middleware is told of each reply's call once: of all three when it is
    # inside and meets them first, of the two before the stop when it is outside.
    assert [(f["middleware"], f["kind"]) for f in told] == [("recording", "malformed_call")] * (
        3 if budget_first else 2
    )


def test_the_outer_middleware_answers_a_malformed_call_the_inner_one_only_counted(
    path: Path,
) -> None:
    # Both meet the reply in the model call's step, the inner one first: it counts the call
    # and leaves it unanswered, so the outer one's route answers it, and the reply goes back
    # to the model once.
    told: list[ToolFailure] = []
    outer = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, lambda failure, request: "send it again")],
        listeners=[told.append],
        name="outer",
    )
    inner = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_run=5), listeners=[told.append], name="inner"
    )
    agent = agent_of([lookup_tool()], [outer, inner], [MALFORMED_ONLY, AIMessage("done")])

    result = run(agent, path)

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.text) for m in answers] == [("cut", "send it again")]
    assert [(f["middleware"], f["route"]) for f in told] == [("inner", None), ("outer", 0)]
    assert [m.text for m in result["messages"] if isinstance(m, AIMessage)] == ["", "done"]


def test_two_middleware_taking_different_tools_each_answer_their_own_malformed_calls(
    path: Path,
) -> None:
    # The inner one answers only `other`'s calls; the outer one answers every tool's. In the
    # first reply each answers its own tool's call, and the one between them meets neither
    # (one is answered, the other not its tool's); in the second, the outer one still
    # answers.
    outer = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, lambda failure, request: "outer: send it again")],
        name="outer",
    )
    # Between them, one that counts only `other`'s failures and answers none.
    middle = ToolErrorMiddleware(
        report_type_only, tools=["other"], budget=ErrorBudget(per_run=9), name="middle"
    )
    inner = ToolErrorMiddleware.from_routes(
        [
            Route(
                MalformedToolCall,
                lambda failure, request: "inner: send it again",
                tools=["other"],
            )
        ],
        name="inner",
    )
    other = {**CUT_SHORT, "name": "other", "id": "cut-other"}
    first = AIMessage("", invalid_tool_calls=[CUT_SHORT, other])
    second = AIMessage("", invalid_tool_calls=[{**CUT_SHORT, "id": "cut-2"}])
    tools = [lookup_tool(), echo_tool("other")]
    agent = agent_of(tools, [outer, middle, inner], [first, second, AIMessage("done")])

    result = run(agent, path)

    answers = {m.tool_call_id: m.text for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers == {
        "cut": "outer: send it again",
        "cut-other": "inner: send it again",
        "cut-2": "outer: send it again",
    }
    assert result["messages"][-1].text == "done"


def test_a_stop_beside_a_reply_sent_back_ends_the_run_without_another_model_call(
    path: Path,
) -> None:
    # The inner middleware, which only listens, would send the reply back; the outer one's
    # budget stops the run at the reply's malformed call. The run ends there: no hook
    # before the model runs again.
    counted = ModelCalls()
    outer = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=1), name="outer")
    inner = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None], name="inner")
    agent = agent_of([lookup_tool()], [counted, outer, inner], [Repeat(MALFORMED_ONLY)])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 40})

    assert (spent.value.kind, spent.value.count) == ("malformed_call", 2)
    assert counted.before_model_calls == 2


class AsksAnAgentFirst(AgentMiddleware[AgentState[Any], Any, Any]):
    """Runs an agent of its own inside each model call, before the model, and keeps what it
    answered."""

    def __init__(self, agent: Any) -> None:
        super().__init__()
        self.agent = agent
        self.answers: list[str] = []

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        result = self.agent.invoke({"messages": [HumanMessage("plan")]})
        self.answers.append(result["messages"][-1].text)
        return handler(request)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        result = await self.agent.ainvoke({"messages": [HumanMessage("plan")]})
        self.answers.append(result["messages"][-1].text)
        return await handler(request)


def test_an_agent_run_inside_a_model_call_meets_its_own_replies(path: Path) -> None:
    # The inner agent's middleware meets its own reply of only malformed calls and sends
    # it back to its own model, though it runs inside the outer agent's model call.
    told: list[ToolFailure] = []
    inner = agent_of(
        [lookup_tool()],
        [ToolErrorMiddleware(report_type_only, listeners=[told.append], name="inner")],
        [MALFORMED_ONLY, AIMessage("planned")],
    )
    asks = AsksAnAgentFirst(inner)
    outer = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="outer")
    agent = agent_of([lookup_tool()], [outer, asks], [AIMessage("done")])

    result = run(agent, path)

    assert asks.answers == ["planned"]
    assert [(f["middleware"], f["kind"]) for f in told] == [("inner", "malformed_call")]
    assert result["messages"][-1].text == "done"


class ReplacesTheReply(AgentMiddleware[AgentState[Any], Any, Any]):
    """Gives, in place of the model's first reply, one the middleware inside never read."""

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        response = handler(request)
        first = not any(isinstance(m, AIMessage) for m in request.messages)
        return ModelResponse(result=[MALFORMED]) if first else response

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        response = await handler(request)
        first = not any(isinstance(m, AIMessage) for m in request.messages)
        return ModelResponse(result=[MALFORMED]) if first else response


def test_a_malformed_call_langchain_answered_as_the_model_call_started_keeps_one_answer(
    path: Path,
) -> None:
    # A middleware outside ours replaces the reply after ours met it: ours meets the new
    # reply's malformed call as the next model call starts, where langchain has answered it
    # already. It is met without its route: the call keeps langchain's answer, its only one,
    # and the listener is told of it once.
    told: list[ToolFailure] = []
    ours = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, lambda failure, request: "send it again")],
        listeners=[told.append],
    )
    agent = agent_of(
        [lookup_tool()], [ReplacesTheReply(), ours], [AIMessage("thinking"), AIMessage("done")]
    )

    result = run(agent, path)

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.tool_call_id for m in answers) == ["cut", "valid"]
    [cut] = [m for m in answers if m.tool_call_id == "cut"]
    assert "send it again" not in cut.text
    assert [(f["kind"], f["route"]) for f in told] == [("malformed_call", None)]
    assert result["messages"][-1].text == "done"


class RefusesEveryCall(AgentMiddleware[AgentState[Any], Any, Any]):
    """Answers each valid call of a reply with an error in place of running it, and sends the
    run back to the model, so the hooks after the model of middleware outside it never run."""

    @hook_config(can_jump_to=["model"])
    @override
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        reply = next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))
        if not reply.tool_calls:
            return None
        refusals = [
            ToolMessage("refused", tool_call_id=str(c["id"]), name=c["name"], status="error")
            for c in reply.tool_calls
        ]
        return {"messages": refusals, "jump_to": "model"}

    @hook_config(can_jump_to=["model"])
    @override
    async def aafter_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.after_model(state, runtime)


def test_a_stop_met_before_the_model_leaves_every_call_with_one_answer(path: Path) -> None:
    # The budget meets the reply's malformed call in the model call's step, and the other
    # middleware's refusal of the valid call as the next model call starts. When a malformed
    # call spends the budget, the refusal stays the valid call's one answer.
    told: list[ToolFailure] = []
    budget = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_run=2), listeners=[told.append]
    )
    agent = agent_of(
        [lookup_tool()], [budget, RefusesEveryCall()], [Repeat(MALFORMED)], InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}, "recursion_limit": 40}

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config=config)

    assert (spent.value.kind, spent.value.count) == ("malformed_call", 3)
    assert [(f["kind"], f["outcome"]) for f in told] == [
        ("malformed_call", "answered"),
        ("inner_middleware", "answered"),
        ("malformed_call", "stopped"),
    ]
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(answered) == sorted(set(answered))
    [last] = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls][-1:]
    refused = str(last.tool_calls[0]["id"])
    assert [
        m.text for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == refused
    ] == ["refused"]


def test_a_malformed_call_of_a_tool_left_alone_does_not_hide_the_next_one(path: Path) -> None:
    told: list[ToolFailure] = []
    middleware = ToolErrorMiddleware(report_type_only, listeners=[told.append], tools=["lookup"])
    archive_cut = InvalidToolCall(
        name="archive", args='{"record_id": ', id="a-cut", error="cut", type="invalid_tool_call"
    )
    reply = AIMessage(content="", invalid_tool_calls=[archive_cut, CUT_SHORT])
    agent = agent_of([lookup_tool(), reporting_tool()], [middleware], [reply, DONE])

    run(agent, path)

    assert [(f["call_id"], f["tool"], f["kind"]) for f in told] == [
        ("cut", "lookup", "malformed_call")
    ]


def test_a_malformed_calls_route_that_raises_is_told_as_propagated(path: Path) -> None:
    told: list[ToolFailure] = []
    broken = raising("the route's handler broke")
    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, report_type_only), Route(MalformedToolCall, broken)],
        listeners=[told.append],
    )
    agent = agent_of([lookup_tool()], [middleware], [MALFORMED_ONLY, DONE])

    with pytest.raises(RuntimeError, match="the route's handler broke"):
        run(agent, path)

    assert [(f["call_id"], f["tool"], f["kind"], f["route"], f["outcome"]) for f in told] == [
        ("cut", "lookup", "malformed_call", 1, "propagated")
    ]


@pytest.mark.parametrize("watching", [False, True])
def test_a_reply_of_only_malformed_calls_ends_the_run_where_nothing_watches_them(
    path: Path, watching: bool
) -> None:
    # A plain handler, or a budget whose middleware leaves the malformed call's tool alone:
    # langchain's behaviour, the run ends with the reply.
    middleware = (
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=2), tools=["archive"])
        if watching
        else ToolErrorMiddleware(report_type_only)
    )
    called_again: list[bool] = []

    def next_reply(messages: Sequence[BaseMessage]) -> AIMessage:
        called_again.append(True)
        return DONE

    agent = agent_of([lookup_tool(), reporting_tool()], [middleware], [MALFORMED_ONLY, next_reply])

    result = run(agent, path)

    assert not called_again
    assert result["messages"][-1].invalid_tool_calls == MALFORMED_ONLY.invalid_tool_calls


def told_after_the_budget(budget: ErrorBudget, path: Path) -> list[str]:
    """What a model calling a tool that does not exist four times reads after the second."""
    _, _, looping = LOOPS["unknown_tool"]
    agent = agent_of(
        [lookup_tool()],
        [ToolErrorMiddleware(report_type_only, budget=budget)],
        [Repeat(looping, times=4), DONE],
    )

    result = run(agent, path)

    return [str(m.text) for m in result["messages"] if isinstance(m, ToolMessage)][2:]


def test_a_spent_tell_budget_tells_the_model_a_tool_does_not_exist(path: Path) -> None:
    told = ErrorBudget.UNKNOWN_TOOL_MESSAGE.format(tool="lookkup", count=3, times="3 times")
    assert told_after_the_budget(ErrorBudget(per_tool=2, when_spent="tell"), path) == [told, told]
    assert "There is no tool `lookkup`" in told


def test_a_tell_budgets_own_message_is_what_a_tool_that_does_not_exist_is_told(
    path: Path,
) -> None:
    budget = ErrorBudget(per_tool=2, when_spent="tell", message="`{tool}` is off ({count}).")
    assert told_after_the_budget(budget, path) == ["`lookkup` is off (3).", "`lookkup` is off (3)."]


def test_fifty_parallel_calls_with_invalid_arguments_in_one_step_all_count(path: Path) -> None:
    # Calls within one step all see the count from before the step, so all 50 pass; the
    # next one finds all 50 counted.
    fifty = AIMessage(
        content="", tool_calls=[call("lookup", f"p{i}", record_id="abc") for i in range(50)]
    )
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=50))
    agent = agent_of([lookup_tool()], [middleware], [fifty, calling("lookup", record_id="x")])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 30})

    assert (spent.value.count, spent.value.kind) == (51, "invalid_arguments")
    FIGURES.append(f"failures ({path}): 50 parallel invalid-argument calls in one step all counted")


def test_a_rewritten_failure_still_counts(path: Path) -> None:
    seen = Seen()
    middleware = ToolErrorMiddleware.from_routes(
        [Route(InvalidArguments, seen.handler, aon_error=seen.ahandler)],
        budget=ErrorBudget(per_tool=1),
    )
    _, _, looping = LOOPS["invalid_arguments"]
    agent = agent_of([lookup_tool()], [middleware], [Repeat(looping)])

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config={"recursion_limit": 30})

    assert (spent.value.count, len(seen.failures)) == (2, 2)


def own_error_tool() -> BaseTool:
    """A tool that answers with an error message of its own instead of raising."""

    def ledger(record_id: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Read a ledger entry."""
        return ToolMessage("the ledger is closed", tool_call_id=tool_call_id, status="error")

    return StructuredTool.from_function(ledger)


def test_an_error_message_a_tool_returns_itself_is_classed_with_inner_middleware(
    path: Path,
) -> None:
    seen, result = run_routed(
        path, ReportedFailure, [own_error_tool()], calling("ledger", record_id=3)
    )

    assert tool_messages(result)["c"].text == "rewritten"
    assert [(failure.kind, failure.text) for failure in seen.failures] == [
        ("inner_middleware", "the ledger is closed")
    ]


def test_a_successful_message_is_never_classed(path: Path) -> None:
    seen, result = run_routed(
        path, ReportedFailure, [lookup_tool()], calling("lookup", record_id=3)
    )

    assert tool_messages(result)["c"].text == "record 3: ok"
    assert seen.failures == []


@pytest.mark.parametrize(
    ("given", "suggested"),
    [("invalid_args", "'invalid_arguments'"), ("unknown_tools", "'unknown_tool'")],
)
def test_a_misspelt_kind_is_refused_with_the_closest_kind_and_every_kind(
    given: str, suggested: str
) -> None:
    kinds: Any = [given]

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    message = str(raised.value)
    assert f"`kinds` has {given!r}" in message
    assert f"Did you mean {suggested}? " in message
    assert message.endswith(", ".join(repr(kind) for kind in FAILURE_KINDS) + ".")


def test_a_kind_like_none_of_them_gets_no_suggestion() -> None:
    kinds: Any = ["zzz"]

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    assert "Did you mean" not in str(raised.value)
    assert "failure. The kinds are 'exception', " in str(raised.value)


@pytest.mark.parametrize(
    ("given", "kind"),
    [(RepeatedCall, "'repeated_call'"), (InvalidArguments, "'invalid_arguments'")],
)
def test_a_class_of_failure_as_a_kind_is_refused_naming_its_kind(
    given: type[ReportedFailure], kind: str
) -> None:
    kinds: Any = (given,)

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    message = str(raised.value)
    assert f"`kinds` has the class {given.__name__}" in message  # not its module's path
    assert f"Name its kind instead: {kind}. " in message


def test_a_class_neither_a_failure_nor_an_exception_as_a_kind_gets_no_hint() -> None:
    kinds: Any = (int,)

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    assert "`kinds` has the class int, which is not a kind of failure. The kinds are " in str(
        raised.value
    )


def test_the_base_of_the_failure_classes_as_a_kind_is_refused_saying_what_it_stands_for() -> None:
    kinds: Any = [ReportedFailure]

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    assert (
        "failure. Name the kinds it stands for as strings, or leave kinds=None for all. The "
        in str(raised.value)
    )


def test_an_exception_class_as_a_kind_is_refused_saying_how_to_count_only_some() -> None:
    kinds: Any = (TimeoutError,)

    with pytest.raises(ValueError, match="not a kind of failure") as raised:
        ErrorBudget(per_tool=3, kinds=kinds)

    message = str(raised.value)
    assert "`kinds` has the class TimeoutError" in message
    assert "the kind 'exception'" in message
    assert "give their Route a budget of its own" in message


class _MyRepeat(RepeatedCall):  # type: ignore[misc]  # pyright: ignore[reportGeneralTypeIssues]  # ty: ignore[subclass-of-final-class]  # pyrefly: ignore[invalid-inheritance]
    """What a user might write to route some repeats apart: never made by the middleware."""


class _MyFailure(ReportedFailure):
    """A failure class of the user's own: the middleware never makes one either."""


def test_a_route_for_a_class_derived_from_a_kind_is_refused_naming_the_kind() -> None:
    # Typed `Any` as a class a checker cannot see would be: the runtime twin of `@final`.
    derived: Any = (KeyError, _MyRepeat)

    with pytest.raises(TypeError) as raised:
        Route(derived, report_type_only)

    message = str(raised.value)
    assert "`exceptions` names _MyRepeat, a class derived from RepeatedCall" in message
    assert "makes these failures itself, as RepeatedCall, never as a class of yours" in message
    assert "the route would never be taken" in message
    assert message.endswith(
        "Name RepeatedCall (a handler can look at the failure's fields to tell cases apart)."
    )


def test_a_route_for_a_failure_class_of_the_user_s_own_is_refused_naming_every_kind() -> None:
    own: Any = _MyFailure

    with pytest.raises(TypeError) as raised:
        Route(own, report_type_only)

    message = str(raised.value)
    assert "`exceptions` names _MyFailure, a class derived from ReportedFailure" in message
    assert (
        "(InvalidArguments, UnknownTool, ToolReportedError, InnerMiddlewareError, "
        "MalformedToolCall, RepeatedCall)" in message
    )
    assert message.endswith("Name one of those, or ReportedFailure for every kind.")


class _Address(BaseModel):
    city: str


class _Order(BaseModel):
    address: _Address
    quantity: int


def _order(address: _Address, quantity: int) -> str:
    return f"{quantity} to {address.city}"


ORDER = StructuredTool.from_function(_order, name="order", args_schema=_Order, description="o")


@pytest.mark.parametrize(
    ("args", "fields"),
    [
        ({"address": {"city": 7}, "quantity": 1}, ["address.city"]),
        ({"address": {}, "quantity": "x"}, ["address.city", "quantity"]),
    ],
)
def test_field_errors_name_nested_fields_by_their_path(
    args: dict[str, object], fields: list[str]
) -> None:
    errors = field_errors(ORDER, args)

    assert [error.field for error in errors] == fields
    assert all("7" not in error.expected for error in errors)


DIVIDE_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
"""What an MCP server publishes for `divide(a: int, b: int)`."""


def _divide(**args: object) -> str:
    a, b = args.get("a"), args.get("b")
    if not (isinstance(a, int) and isinstance(b, int)):
        raise ToolException(f"cannot divide {a!r} by {b!r}")
    if b == 0:
        raise ToolException("cannot divide by zero")
    return f"{a / b}"


def json_schema_tool() -> BaseTool:
    """`divide`, built from a JSON-schema dict, reporting its own errors as MCP tools do."""
    return StructuredTool(
        name="divide",
        description="Divide `a` by `b`.",
        args_schema=DIVIDE_SCHEMA,
        func=_divide,
        handle_tool_error=True,
    )


def test_a_json_schema_tools_refused_arguments_are_invalid_arguments_with_field_errors(
    path: Path,
) -> None:
    seen, result = run_routed(
        path, InvalidArguments, [json_schema_tool()], calling("divide", a="one", b=2)
    )

    assert tool_messages(result)["c"].text == "rewritten"
    [failure] = seen.failures
    assert isinstance(failure, InvalidArguments)
    assert failure.errors == (FieldError("a", "Input should be a valid integer"),)
    assert failure.text == "cannot divide 'one' by 2"


def test_a_json_schema_tools_own_failure_with_valid_arguments_stays_tool_reported(
    path: Path,
) -> None:
    seen, _ = run_routed(path, ReportedFailure, [json_schema_tool()], calling("divide", a=1, b=0))

    assert [(f.kind, f.text) for f in seen.failures] == [("tool_reported", "cannot divide by zero")]


class Stored(BaseModel):
    """A record as the store keeps it."""

    owner: str


def validating_tool() -> BaseTool:
    """`lookup(record_id: int)` with `handle_validation_error` set, and no `handle_tool_error`:
    it answers arguments its schema refuses, and a `ValidationError` of its own (the stored
    record it reads does not fit `Stored`), with the same text."""

    def lookup(record_id: int) -> str:
        """Look a record up by its number."""
        return Stored.model_validate({"owner": record_id}).owner  # raises: not a str

    return StructuredTool.from_function(lookup, handle_validation_error="lookup could not do it")


HANDLES_VALIDATION: dict[str, tuple[dict[str, object], FailureKind]] = {
    "arguments its schema refuses": ({"record_id": "A-17"}, "invalid_arguments"),
    "its own ValidationError, for arguments its schema takes": ({"record_id": 7}, "tool_reported"),
}


@pytest.mark.parametrize(
    ("args", "kind"), HANDLES_VALIDATION.values(), ids=HANDLES_VALIDATION.keys()
)
def test_a_tool_with_handle_validation_error_reported_it_unless_its_schema_refused_the_arguments(
    path: Path, args: dict[str, object], kind: FailureKind
) -> None:
    seen, result = run_routed(
        path,
        CLASSES[kind],
        [validating_tool()],
        AIMessage("", tool_calls=[call("lookup", "c", **args)]),
    )

    assert tool_messages(result)["c"].text == "rewritten"
    [failure] = seen.failures
    # The tool answered (its handle_validation_error's text), and the route for the kind took it.
    assert (type(failure), failure.kind, failure.text) == (
        CLASSES[kind],
        kind,
        "lookup could not do it",
    )


def _lenient_divide(**args: object) -> str:
    """A server that takes numbers sent as strings too, and fails on a zero divisor."""
    a, b = int(str(args.get("a"))), int(str(args.get("b")))
    if b == 0:
        raise ToolException("cannot divide by zero")
    return f"{a / b}"


def test_a_json_integer_refuses_a_string_of_digits_even_where_the_server_takes_it(
    path: Path,
) -> None:
    seen = Seen()
    lenient = StructuredTool(
        name="divide",
        description="Divide `a` by `b`.",
        args_schema=DIVIDE_SCHEMA,
        func=_lenient_divide,
        handle_tool_error=True,
    )
    agent = agent_of(
        [lenient], [routed(seen, path, InvalidArguments)], [calling("divide", a="1", b=0), DONE]
    )

    result = run(agent, path)

    assert tool_messages(result)["c"].text == "rewritten"
    [failure] = seen.failures
    assert isinstance(failure, InvalidArguments)
    assert failure.errors == (FieldError("a", "Input should be a valid integer"),)
    assert failure.text == "cannot divide by zero"  # the server took "1", and failed on b


def json_schema_of(schema: dict[str, object]) -> BaseTool:
    return StructuredTool(name="t", description="d", args_schema=schema, func=_divide)


ADDRESS = {"type": "object", "properties": {"zip": {"type": "string", "minLength": 5}}}
OPTIONAL_INT = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
POINT = {"type": "object", "properties": {"x": {"type": "integer"}}}
NODE = {
    "type": "object",
    "properties": {"child": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}},
}

# Each case: a JSON schema's properties (and its other keywords), the arguments, and what
# it refuses in them, as `FieldError`s (field, expected). None of them quotes a value sent.
REFUSED: dict[str, tuple[dict[str, object], dict[str, object], list[tuple[str, str]]]] = {
    "wrong type": (
        {"properties": {"a": {"type": "integer"}}},
        {"a": "one"},
        [("a", "Input should be a valid integer")],
    ),
    # What the tool publishes decides, not what its server would take.
    "a string of digits for an integer": (
        {"properties": {"a": {"type": "integer"}}},
        {"a": "1"},
        [("a", "Input should be a valid integer")],
    ),
    "true is not an integer": (
        {"properties": {"a": {"type": "integer"}}},
        {"a": True},
        [("a", "Input should be a valid integer")],
    ),
    "missing": (
        {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {},
        [("a", "Field required")],
    ),
    "extra": (
        {"properties": {"a": {}}, "additionalProperties": False},
        {"a": 1, "secret": "s3cr3t"},
        [("secret", "Extra inputs are not permitted")],
    ),
    "enum": (
        {"properties": {"c": {"enum": ["red", "blue"]}}},
        {"c": "s3cr3t"},
        [("c", 'Input should be "red" or "blue"')],
    ),
    "optional": (
        {"properties": {"n": OPTIONAL_INT}},
        {"n": "s3cr3t"},
        [("n", "Input should be a valid integer or null")],
    ),
    "nested by $ref": (
        {"properties": {"to": {"$ref": "#/$defs/Address"}}, "$defs": {"Address": ADDRESS}},
        {"to": {"zip": "s3c"}},
        [("to.zip", "String should have at least 5 characters")],
    ),
    "array items": (
        {"properties": {"ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}}},
        {"ids": [1, "s3cr3t", 3]},
        [
            ("ids", "Array should have at most 2 items"),
            ("ids.1", "Input should be a valid integer"),
        ],
    ),
    "number bound": (
        {"properties": {"n": {"type": "number", "minimum": 0}}},
        {"n": -1.5},
        [("n", "Input should be greater than or equal to 0")],
    ),
    "no value is allowed": (
        {"properties": {"a": False}},
        {"a": 1},
        [("a", "No value is allowed here")],
    ),
    "const": (
        {"properties": {"c": {"const": "on"}}},
        {"c": "off"},
        [("c", 'Input should be "on"')],
    ),
    "true is not the constant 1": (
        {"properties": {"c": {"const": 1}}},
        {"c": True},
        [("c", "Input should be 1")],
    ),
    "1 is not the choice true": (
        {"properties": {"c": {"enum": [True, None]}}},
        {"c": 1},
        [("c", "Input should be true or null")],
    ),
    "a list of types": (
        {"properties": {"a": {"type": ["string", "integer", "null"]}}},
        {"a": 2.5},
        [("a", "Input should be a valid string, a valid integer or null")],
    ),
    "each type": (
        {
            "properties": {
                "b": {"type": "boolean"},
                "o": {"type": "object"},
                "l": {"type": "array"},
                "z": {"type": "null"},
                "n": {"type": "number"},
            }
        },
        {"b": 1, "o": [1], "l": {"k": 1}, "z": 0, "n": True},
        [
            ("b", "Input should be a valid boolean"),
            ("o", "Input should be an object"),
            ("l", "Input should be an array"),
            ("z", "Input should be null"),
            ("n", "Input should be a valid number"),
        ],
    ),
    "allOf": (
        {"properties": {"n": {"allOf": [{"type": "integer"}, {"minimum": 3}]}}},
        {"n": 1},
        [("n", "Input should be greater than or equal to 3")],
    ),
    "oneOf": (
        {"properties": {"n": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}}},
        {"n": "x"},
        [("n", "Input should be a valid integer or a valid boolean")],
    ),
    "a choice the value fails inside": (
        {"properties": {"p": {"anyOf": [POINT, {"type": "string"}]}}},
        {"p": {"x": "y"}},
        [("p.x", "Input should be a valid integer")],
    ),
    "two choices the value fails inside": (
        {"properties": {"p": {"anyOf": [POINT, {**POINT, "required": ["z"]}]}}},
        {"p": {"x": "y"}},
        [("p", "Input fits none of the choices allowed here")],
    ),
    "choices refusing more than the type": (
        {"properties": {"s": {"anyOf": [{"type": "string", "minLength": 5}, {"type": "integer"}]}}},
        {"s": "abc"},
        [("s", "Input fits none of the choices allowed here")],
    ),
    "exclusive bounds and a maximum": (
        {
            "properties": {
                "lo": {"exclusiveMinimum": 0},
                "hi": {"exclusiveMaximum": 10},
                "top": {"maximum": 10},
            }
        },
        {"lo": 0, "hi": 10, "top": 11},
        [
            ("lo", "Input should be greater than 0"),
            ("hi", "Input should be less than 10"),
            ("top", "Input should be less than or equal to 10"),
        ],
    ),
    "a string's and an array's length": (
        {"properties": {"s": {"maxLength": 3}, "l": {"minItems": 2.0}}},
        {"s": "abcd", "l": [1]},
        [
            ("s", "String should have at most 3 characters"),
            ("l", "Array should have at least 2 items"),
        ],
    ),
    "prefixItems, then items": (
        {
            "properties": {
                "t": {
                    "prefixItems": [{"type": "string"}, {"type": "integer"}],
                    "items": {"type": "boolean"},
                }
            }
        },
        {"t": ["a", "b", 1]},
        [("t.1", "Input should be a valid integer"), ("t.2", "Input should be a valid boolean")],
    ),
    "items as a list": (
        {"properties": {"t": {"items": [{"type": "string"}]}}},
        {"t": [1, 2]},
        [("t.0", "Input should be a valid string")],
    ),
    "additionalProperties as a schema": (
        {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
        {"a": "x", "extra": "y"},
        [("extra", "Input should be a valid integer")],
    ),
    "escaped $ref": (
        {
            "properties": {"a": {"$ref": "#/$defs/a~1b"}, "b": {"$ref": "#/$defs/c~0d"}},
            "$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}},
        },
        {"a": "x", "b": 1},
        [("a", "Input should be a valid integer"), ("b", "Input should be a valid string")],
    ),
    "a $ref to itself, deeper": (
        {"properties": {"root": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": NODE}},
        {"root": {"child": {"child": {"v": "x"}}}},
        [("root.child.child.v", "Input should be a valid integer")],
    ),
    "the arguments as a whole": (
        {"enum": [{"a": 1}]},
        {"a": 2},
        [("(arguments)", 'Input should be {"a": 1}')],
    ),
    "every refusal at one path": (
        {
            "properties": {
                "n": {"const": 5, "allOf": [{"minimum": 3}, {"maximum": 0}]},
                "m": {"const": 5, "anyOf": [{"$ref": "#/$defs/Text"}, {"type": "boolean"}]},
                "r": {"allOf": [{"$ref": "#/$defs/Text"}]},
            },
            "$defs": {"Text": {"type": "string"}},
        },
        {"n": 1, "m": 1, "r": 1},
        [
            ("n", "Input should be 5"),
            ("n", "Input should be greater than or equal to 3"),
            ("n", "Input should be less than or equal to 0"),
            ("m", "Input should be 5"),
            ("m", "Input should be a valid string or a valid boolean"),
            ("r", "Input should be a valid string"),
        ],
    ),
    "nested required": (
        {"properties": {"o": {"type": "object", "properties": {"x": {}}, "required": ["x", 3]}}},
        {"o": {}},
        [("o.x", "Field required")],
    ),
    "the arguments by $ref": (
        {"$ref": "#/$defs/Args", "$defs": {"Args": {"properties": {"a": {"type": "integer"}}}}},
        {"a": "x"},
        [("a", "Input should be a valid integer")],
    ),
    "array items by $ref": (
        {
            "properties": {"ids": {"type": "array", "items": {"$ref": "#/$defs/Id"}}},
            "$defs": {"Id": {"type": "integer"}},
        },
        {"ids": [1, "x"]},
        [("ids.1", "Input should be a valid integer")],
    ),
    "a property, then an extra member by $ref": (
        {
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": {"$ref": "#/$defs/Id"},
            "$defs": {"Id": {"type": "integer"}},
        },
        {"a": "x", "extra": "y"},
        [("a", "Input should be a valid integer"), ("extra", "Input should be a valid integer")],
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_json_schema_refuses_arguments_by_field_without_quoting_them(case: str) -> None:
    keywords, args, refused = REFUSED[case]

    errors = field_errors(json_schema_of({"type": "object", **keywords}), args)

    assert [tuple(error) for error in errors] == refused
    assert not any("s3c" in error.expected or "-1.5" in error.expected for error in errors)


# Each case: properties and the arguments they accept (keywords it does not check included).
ACCEPTED: dict[str, tuple[dict[str, object], dict[str, object]]] = {
    "fits": ({"a": {"type": "integer"}, "b": {"type": "string"}}, {"a": 1, "b": "x"}),
    "an integral float is an integer": ({"a": {"type": "integer"}}, {"a": 2.0}),
    "unknown keyword": ({"a": {"type": "string", "pattern": "^[0-9]+$"}}, {"a": "x"}),
    "unknown format": ({"a": {"type": "string", "format": "email"}}, {"a": "x"}),
    "open object": ({"a": {"type": "object"}}, {"a": {"anything": [1]}}),
    "a ref to itself": ({"a": {"$ref": "#/properties/a"}}, {"a": 1}),
    "bounds kept at the bound": (
        {
            "lo": {"minimum": 0},
            "hi": {"maximum": 10},
            "xl": {"exclusiveMinimum": 0},
            "xh": {"exclusiveMaximum": 10},
            "s": {"minLength": 2, "maxLength": 2},
            "l": {"minItems": 1, "maxItems": 1},
        },
        {"lo": 0, "hi": 10, "xl": 1, "xh": 9, "s": "ab", "l": [1]},
    ),
    "true is the constant true, and 1 a choice beside false": (
        {"a": {"const": True}, "b": {"enum": [False, 1]}},
        {"a": True, "b": 1},
    ),
    "an unknown type among the types": ({"a": {"type": ["string", "decimal"]}}, {"a": 1}),
    "a value fitting one choice": (
        {"a": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
        {"a": "x"},
    ),
    "a value fitting two choices": (
        {"a": {"oneOf": [{"type": "number"}, {"type": "integer"}]}},
        {"a": 1},
    ),
    "a ref outside the schema": ({"a": {"$ref": "https://example.com/s.json"}}, {"a": 1}),
    "a ref to nothing": ({"a": {"$ref": "#/$defs/Missing"}}, {"a": 1}),
    "bounds on other types": (
        {"a": {"minimum": 5, "minLength": 9}, "b": {"maxLength": 0}},
        {"a": True, "b": 3},
    ),
    "bounds that are not numbers": (
        {"a": {"minimum": "5", "maximum": True}, "s": {"minLength": "9", "maxLength": 1.5}},
        {"a": 1, "s": "ab"},
    ),
    "extra members a pattern allows": (
        {
            "o": {
                "type": "object",
                "properties": {"a": {}},
                "patternProperties": {"^x": {}},
                "additionalProperties": False,
            }
        },
        {"o": {"a": 1, "x": 2}},
    ),
    "extra members an additionalProperties schema allows": (
        {"o": {"type": "object", "additionalProperties": {"type": "integer"}}},
        {"o": {"x": 1}},
    ),
    "a type that is not a name among the types": (
        {"a": {"type": ["string", ["integer"]]}},
        {"a": 1},
    ),
}


@pytest.mark.parametrize("case", ACCEPTED)
def test_a_json_schema_refuses_nothing_it_does_not_check(case: str) -> None:
    properties, args = ACCEPTED[case]

    assert field_errors(json_schema_of({"type": "object", "properties": properties}), args) == ()


class WrongContent:
    """A route handler for failures that are not exceptions: returns a number, not content."""

    def __init__(self) -> None:
        self.call_ids: list[str | None] = []

    def handler(self, failure: ReportedFailure, request: ToolCallRequest) -> str:
        self.call_ids.append(request.tool_call["id"])
        return cast("str", 42)  # what a mistyped handler returns at run time

    async def ahandler(self, failure: ReportedFailure, request: ToolCallRequest) -> str:
        return self.handler(failure, request)


# Each failure that is not an exception: the class a route takes, and the reply causing it.
NOT_EXCEPTIONS: dict[str, tuple[type[ReportedFailure], AIMessage, str]] = {
    "invalid arguments": (InvalidArguments, calling("lookup", record_id="abc"), "c"),
    "a malformed call": (MalformedToolCall, MALFORMED, "cut"),
}


@pytest.mark.parametrize(
    ("case", "path"), [(case, path) for case in NOT_EXCEPTIONS for path in PATHS]
)
def test_a_routes_wrong_content_for_a_failure_is_refused_naming_the_handler_that_gave_it(
    case: str, path: Path
) -> None:
    taken, reply, call_id = NOT_EXCEPTIONS[case]
    wrong = WrongContent()
    route = (
        Route(taken, wrong.handler)
        if path == "sync"
        else Route(taken, wrong.handler, aon_error=wrong.ahandler)
    )
    agent = agent_of([lookup_tool()], [ToolErrorMiddleware.from_routes([route])], [reply, DONE])

    with pytest.raises(TypeError) as raised:
        run(agent, path)

    argument = "`on_error`" if path == "sync" else "`aon_error`"
    assert str(raised.value).startswith(f"{argument} must return a str"), str(raised.value)
    assert "42 (int)" in str(raised.value)
    assert wrong.call_ids == [call_id]


def test_a_route_for_unknown_tools_gets_every_tool_name_of_the_agent(path: Path) -> None:
    seen, _ = run_routed(
        path, UnknownTool, [lookup_tool(), reporting_tool()], calling("lookkup", record_id=7)
    )

    [failure] = seen.failures
    assert isinstance(failure, UnknownTool)
    assert sorted(failure.known_tools) == ["archive", "lookup"]


def test_the_repr_of_a_failure_shows_each_field_by_name() -> None:
    failure = InvalidArguments(
        tool="lookup", args={"id": "x"}, text="bad", errors=(FieldError("id", "an int"),)
    )

    assert repr(failure) == (
        "InvalidArguments(args={'id': 'x'}, text='bad', tool='lookup', "
        "errors=(FieldError(field='id', expected='an int'),))"
    )


class _Range(BaseModel):
    low: int
    high: int

    @model_validator(mode="after")
    def _ordered(self) -> _Range:
        if self.low > self.high:
            raise ValueError("low must not be above high")
        return self


class _CountTool(BaseTool):
    """A tool whose schema for calls is its own model, checks across fields included."""

    name: str = "count"
    description: str = "Count the numbers from `low` to `high`."

    @property
    @override
    def tool_call_schema(self) -> ArgsSchema:
        return _Range

    @override
    def _run(self, *args: object, **kwargs: int) -> str:
        return f"{kwargs['high'] - kwargs['low'] + 1}"


def test_a_pydantic_schema_refusing_the_arguments_as_a_whole_names_no_field() -> None:
    errors = field_errors(_CountTool(), {"low": 3, "high": 1})

    assert errors == (FieldError("(arguments)", "Value error, low must not be above high"),)


class AnswersUnknownTools(AroundToolCalls):
    """An inner middleware that answers a call to no tool in its own words."""

    @override
    def around(self, request: ToolCallRequest) -> Around:
        if request.tool is None:
            call_id = request.tool_call["id"] or ""
            return ToolMessage("There is no such tool.", tool_call_id=call_id, status="error")
        return (yield)


def test_an_unknown_tool_an_inner_middleware_answers_in_its_own_words_lists_no_tools(
    path: Path,
) -> None:
    seen, result = run_routed(
        path, UnknownTool, [lookup_tool()], calling("lookkup", record_id=7), [AnswersUnknownTools()]
    )

    assert tool_messages(result)["c"].text == "rewritten"
    [failure] = seen.failures
    assert isinstance(failure, UnknownTool)
    assert (failure.tool, failure.text, failure.known_tools) == (
        "lookkup",
        "There is no such tool.",
        (),
    )


@dataclass(frozen=True)
class Caller:
    """The run's context: who is asking."""

    user: str


class Given:
    """A route handler that keeps each failure with the request it came with."""

    def __init__(self) -> None:
        self.given: list[tuple[ReportedFailure, ToolCallRequest]] = []

    def handler(self, failure: ReportedFailure, request: ToolCallRequest) -> str:
        self.given.append((failure, request))
        return "rewritten"

    async def ahandler(self, failure: ReportedFailure, request: ToolCallRequest) -> str:
        return self.handler(failure, request)


def test_a_malformed_calls_route_gets_a_request_with_the_call_and_the_runs_state(
    path: Path,
) -> None:
    given, store, caller = Given(), InMemoryStore(), Caller(user="ada")
    route = (
        Route(MalformedToolCall, given.handler)
        if path == "sync"
        else Route(MalformedToolCall, given.handler, aon_error=given.ahandler)
    )
    agent: Any = create_agent(
        ScriptedChatModel(script=[MALFORMED, DONE]),
        tools=[lookup_tool()],
        middleware=[ToolErrorMiddleware.from_routes([route])],
        store=store,
        context_schema=Caller,
    )
    question = {"messages": [HumanMessage("go")]}
    config: RunnableConfig = {"metadata": {"ticket": "T-7"}}

    if path == "sync":
        agent.invoke(question, config, context=caller)
    else:
        asyncio.run(agent.ainvoke(question, config, context=caller))

    [(failure, request)] = given.given
    assert isinstance(failure, MalformedToolCall)
    assert request.tool is None
    assert request.tool_call == ToolCall(name="lookup", args={}, id="cut", type="tool_call")
    tool_runtime = runtime_of(request, "cut", store, caller)
    assert tool_runtime.config.get("metadata", {}).get("ticket") == "T-7"
    assert tool_runtime.state is request.state
    assert request.state["messages"][-1].invalid_tool_calls == [CUT_SHORT]


def answering(name: str) -> Callable[[MalformedToolCall, ToolCallRequest], str]:
    def handler(failure: MalformedToolCall, request: ToolCallRequest) -> str:
        return f"{name} answers"

    return handler


def test_a_malformed_call_another_middleware_answered_first_is_answered_once(
    path: Path,
) -> None:
    outer, inner = (
        ToolErrorMiddleware.from_routes([Route(MalformedToolCall, answering(name))], name=name)
        for name in ("outer", "inner")
    )
    agent = agent_of([lookup_tool()], [outer, inner], [MALFORMED, DONE])

    result = run(agent, path)

    # The inner middleware's hook after the model runs first, and the outer one sees its answer.
    answers = [(m.tool_call_id, m.text) for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers == [("cut", "inner answers"), ("valid", "record 1: ok")]


@pytest.mark.parametrize("reply", [MALFORMED_ONLY, MALFORMED], ids=["only", "beside a call"])
def test_listeners_alone_are_told_of_malformed_calls_and_keep_no_record(
    path: Path, reply: AIMessage
) -> None:
    told: list[ToolFailure] = []
    listening = ToolErrorMiddleware(report_type_only, listeners=[told.append])
    agent = agent_of([lookup_tool()], [listening], [reply, DONE])

    result = run(agent, path)

    assert [(f["call_id"], f["kind"]) for f in told] == [("cut", "malformed_call")]
    assert "tool_failures" not in result  # nothing keeps a record: no channel is written
