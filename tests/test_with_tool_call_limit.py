"""Beside `ToolCallLimitMiddleware`: every call answered once, in either order, every exit.

The limit answers the calls it blocks in its hook after the model; those calls never reach
the tools. The model reads each block as an error answer, so this middleware meets it before
the next model call as an `"inner_middleware"` failure: recorded, told and counted, so a
budget stops a model that keeps calling a blocked tool. A tool a "tell" budget closed is
answered as its call comes to run, so a call the limit already blocked is not answered a
second time, and is not counted again.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRetryMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from typing_extensions import override

from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    InnerMiddlewareError,
    RepairableFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, ScriptStep
from tests._agents import (
    Agent,
    Path,
    Sent,
    agent_of,
    call,
    echo_tool,
    failing_tool,
    reporting,
    rerun,
    run,
    runtime_of,
)
from tests._composing import stacked

Exit = Literal["continue", "end", "error"]
ORDERS = ("limit first", "ours first")

WEATHER = failing_tool("weather", LookupError("no forecast"))
CALLS = [AIMessage("", tool_calls=[call("weather", f"w{n}")]) for n in (1, 2, 3)]
ONE_THEN_TWO = [
    AIMessage("", tool_calls=[call("echo", "e1")]),
    AIMessage("", tool_calls=[call("echo", "e2"), call("echo", "e3")]),
]
"""A reply of one call of `echo`, then one of two."""
DONE = AIMessage("done")


@pytest.fixture(params=ORDERS)
def order(request: pytest.FixtureRequest) -> str:
    """Which is listed first, outside the other: the limit, or ours."""
    return str(request.param)


def closing(exit_behavior: Exit, order: str, told: list[ToolFailure]) -> Agent:
    """A limit of two runs of `weather`, and a "tell" budget that closes it after two
    failures; the model calls it three times."""
    limit = ToolCallLimitMiddleware(run_limit=2, exit_behavior=exit_behavior)
    ours = reporting(told, ErrorBudget(per_tool=1, when_spent="tell"))
    return agent_of([WEATHER], stacked(order, limit, ours), [*CALLS, DONE])


def answer_counts(messages: list[BaseMessage]) -> Counter[str]:
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


@pytest.mark.parametrize("exit_behavior", ["continue", "end"])
def test_a_call_the_limit_blocks_is_answered_once_by_the_limit_alone(
    exit_behavior: Exit, path: Path, order: str
) -> None:
    told: list[ToolFailure] = []

    result = run(closing(exit_behavior, order, told), path)

    messages: list[BaseMessage] = result["messages"]
    assert answer_counts(messages) == {"w1": 1, "w2": 1, "w3": 1}
    by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert by_id["w1"].text == "Tool `weather` failed with LookupError."
    assert by_id["w2"].text.startswith("The tool `weather` failed 2 times")  # the budget's
    assert "limit" in by_id["w3"].text  # the limit's own words, not the budget's
    assert "unavailable" not in by_id["w3"].text
    # The block answers a call to the tool the budget closed: answered once, by the limit,
    # and not counted again (a block of an open tool is a failure: see the last test).
    records = [(f["call_id"], f["outcome"]) for f in result["tool_failures"]]
    assert records == [("w1", "answered"), ("w2", "told")]
    assert [(f["call_id"], f["outcome"]) for f in told] == records


def test_a_limit_that_raises_still_raises_and_nothing_is_answered_twice(
    path: Path, order: str
) -> None:
    told: list[ToolFailure] = []

    with pytest.raises(ToolCallLimitExceededError):
        run(closing("error", order, told), path)

    assert [(f["call_id"], f["outcome"]) for f in told] == [("w1", "answered"), ("w2", "told")]


def looping_on_blocks(order: str, step: ScriptStep, told: list[ToolFailure]) -> Agent:
    """A model that calls `echo` with `step` for ever, a limit that lets one call run and
    blocks the rest (`"continue"`), and a `per_tool=3` budget whose failures `told` gets."""
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=3), listeners=[told.append]
    )
    return agent_of([echo_tool()], stacked(order, limit, ours), [Repeat(step)])


def test_a_budget_bounds_a_model_looping_on_the_limits_blocks(path: Path, order: str) -> None:
    # The model keeps calling a tool the limit blocks (exit_behavior="continue"): each call
    # is answered by the limit before it could run, and the model reads that answer as an
    # error, so the budget counts it, of the kind "inner_middleware", and stops the loop.
    told: list[ToolFailure] = []
    agent = looping_on_blocks(order, AIMessage("", tool_calls=[call("echo", "e")]), told)

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, "sync" if path == "sync" else "async")

    assert (raised.value.tool, raised.value.count, raised.value.kind) == (
        "echo",
        4,
        "inner_middleware",
    )
    # e-1 ran; e-2 to e-5 were blocked, and the fourth block stopped the run.
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == [
        ("e-2", "inner_middleware", "answered"),
        ("e-3", "inner_middleware", "answered"),
        ("e-4", "inner_middleware", "answered"),
        ("e-5", "inner_middleware", "stopped"),
    ]


def same_id_every_time(messages: Sequence[BaseMessage]) -> AIMessage:
    """A model (or an OpenAI-compatible server) that gives each reply's call the id "call_0"."""
    return AIMessage("", tool_calls=[call("echo", "call_0")])


def test_a_budget_bounds_a_model_that_gives_every_call_the_same_id(path: Path, order: str) -> None:
    # Each block answers a call of a step of its own, whatever the call's id: each is a
    # failure, counted, so the loop stops as it does with ids of their own (the test above).
    told: list[ToolFailure] = []
    agent = looping_on_blocks(order, same_id_every_time, told)

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, config={"recursion_limit": 40})

    assert (raised.value.count, raised.value.kind) == (4, "inner_middleware")
    assert [(f["call_id"], f["outcome"]) for f in told] == [
        ("call_0", "answered"),
        ("call_0", "answered"),
        ("call_0", "answered"),
        ("call_0", "stopped"),
    ]


def test_a_limit_that_ends_the_run_is_never_met_as_a_failure(path: Path, order: str) -> None:
    # With exit_behavior="end" the limit answers the calls and ends the run: no model
    # call follows, so its answers are never met before one, and never counted.
    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    ours = reporting(told, ErrorBudget(per_tool=5))
    agent = agent_of([echo_tool()], stacked(order, limit, ours), ONE_THEN_TWO)

    result = run(agent, path)

    blocked = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert sorted(m.tool_call_id for m in blocked) == ["e2", "e3"]
    assert result["tool_failures"] == []
    assert told == []


class Seen:
    """A route's handler for answers written elsewhere: keeps what it was given."""

    def __init__(self) -> None:
        self.given: list[tuple[InnerMiddlewareError, ToolCallRequest]] = []

    def handler(self, failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
        self.given.append((failure, request))
        return f"`{failure.tool}` is over its limit; answer with what you have."


class AnswersFirst(AgentMiddleware[AgentState[Any], Any, Any]):
    """Writes, after the model, a stray error answer and a success before the limit's own."""

    @override
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any]:
        stray = ToolMessage("not for this reply", tool_call_id="stray", status="error")
        spoken = ToolMessage("a person answered", tool_call_id="e2", status="success")
        return {"messages": [stray, spoken]}


@dataclass(frozen=True)
class Caller:
    """The run's context: who is asking."""

    user: str


def test_each_middleware_meets_a_block_once_with_the_call_and_the_runs_state(path: Path) -> None:
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    seen, told = Seen(), list[ToolFailure]()
    store = InMemoryStore()
    first = ToolErrorMiddleware.from_routes(
        [Route(InnerMiddlewareError, seen.handler)], listeners=[told.append], name="first"
    )
    second = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="second")
    limit = ToolCallLimitMiddleware(tool_name="echo", run_limit=1, exit_behavior="continue")
    script = [
        AIMessage("", tool_calls=[call("echo", "e1", query="a")]),
        AIMessage("", tool_calls=[call("other", "e2"), call("echo", "e3", query="b")]),
        AIMessage("done"),
    ]
    middleware: list[Any] = [first, second, limit, AnswersFirst()]
    agent: Any = create_agent(
        ScriptedChatModel(script=script),
        tools=[echo_tool(), echo_tool("other")],
        middleware=middleware,
        store=store,
        context_schema=Caller,
    )
    question: dict[str, Any] = {"messages": [HumanMessage("go")]}
    caller = Caller(user="ada")

    result = (
        agent.invoke(question, context=caller)
        if path == "sync"
        else asyncio.run(agent.ainvoke(question, context=caller))
    )

    # Each middleware met the limit's block of e3 once; not the stray answer, not e2's.
    # (Each meets it in its own model-call hook, and tells its listeners as the model's
    # answer comes back through it: the one listed inside first.)
    assert sorted((f["middleware"], f["call_id"], f["kind"]) for f in told) == [
        ("first", "e3", "inner_middleware"),
        ("second", "e3", "inner_middleware"),
    ]
    [(failure, request)] = seen.given
    assert (failure.tool, dict(failure.args), failure.text) == (
        "echo",
        {"query": "b"},
        "Tool call limit exceeded. Do not call 'echo' again.",
    )
    assert request.tool is None
    assert request.tool_call["id"] == "e3"
    tool_runtime = runtime_of(request, "e3", store, caller)
    assert request.state is tool_runtime.state
    assert [m.text for m in request.state["messages"]][-1] == failure.text
    assert "configurable" in tool_runtime.config
    answers = {m.tool_call_id: m.text for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers["e3"] == "`echo` is over its limit; answer with what you have."


def _blocked(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
    return f"`{failure.tool}` is blocked for this run."


def test_a_routes_answer_to_a_block_takes_the_blocks_place(path: Path) -> None:
    # The route's answer replaces the block in the model call's step: the model reads it
    # there, and the thread keeps it.
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware.from_routes([Route(InnerMiddlewareError, _blocked)])
    script = [AIMessage("", tool_calls=[call("echo", f"e{n}", text="hi")]) for n in (1, 2)]
    sent = Sent()
    # As in `closing`: two middleware, two states.
    agent = agent_of([echo_tool()], [limit, ours], [*script, sent])

    messages: list[BaseMessage] = run(agent, path)["messages"]

    assert answer_counts(messages) == {"e1": 1, "e2": 1}
    [block] = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "e2"]
    assert block.text == "`echo` is blocked for this run."
    assert block.status == "error"
    assert sent.contents()["e2"] == "Error: `echo` is blocked for this run."


def _also_blocked(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
    return f"`{failure.tool}` is blocked; answer without it."


def test_of_two_routes_for_one_block_the_thread_keeps_what_the_model_read(path: Path) -> None:
    # Two middleware of ours each replace the block with their route's answer as the model
    # call starts. The model reads the inner one's, which is the one the thread keeps.
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    outer = ToolErrorMiddleware.from_routes(
        [Route(InnerMiddlewareError, _blocked)], listeners=[lambda failure: None], name="outer"
    )
    # The inner one takes only `echo`: the block of `other` keeps the outer one's answer.
    inner = ToolErrorMiddleware.from_routes(
        [Route(InnerMiddlewareError, _also_blocked, tools=["echo"])],
        listeners=[lambda failure: None],
        name="inner",
    )
    first = AIMessage("", tool_calls=[call("echo", "e1", text="hi")])
    second = AIMessage("", tool_calls=[call("echo", "e2"), call("other", "o2")])
    sent = Sent()
    agent = agent_of(
        [echo_tool(), echo_tool("other")], [limit, outer, inner], [first, second, sent]
    )

    messages: list[BaseMessage] = run(agent, path)["messages"]

    assert answer_counts(messages) == {"e1": 1, "e2": 1, "o2": 1}
    texts = {m.tool_call_id: m.text for m in messages if isinstance(m, ToolMessage)}
    assert texts["e2"] == "`echo` is blocked; answer without it."
    assert texts["o2"] == "`other` is blocked for this run."
    assert sent.contents()["e2"] == "Error: `echo` is blocked; answer without it."
    assert sent.contents()["o2"] == "Error: `other` is blocked for this run."


def test_a_block_and_a_malformed_call_met_in_one_model_call_both_count(path: Path) -> None:
    # The model call's step meets the block of e2 as it starts and the cut-short call of
    # its reply once it answers: two failures of `echo`, so the block of e3 is the third.
    limit = ToolCallLimitMiddleware(tool_name="echo", run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    script = [
        AIMessage("", tool_calls=[call("echo", "e1")]),
        AIMessage("", tool_calls=[call("echo", "e2")]),
        AIMessage("", tool_calls=[call("echo", "e3")], invalid_tool_calls=[malformed("m1")]),
        DONE,
    ]
    agent = agent_of([echo_tool()], [limit, ours], script)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.kind, spent.value.count, spent.value.limit) == ("inner_middleware", 3, 2)


def test_a_repair_and_a_block_met_in_one_model_call_are_both_recorded(path: Path) -> None:
    # The block of e2 is met as the model call starts; the call to `find` in the model's
    # reply is repaired after it. One step writes both records, the block's first.
    def repair(failure: RepairableFailure) -> ToolCall | None:
        return ToolCall(name="other", args={}, id=None)

    limit = ToolCallLimitMiddleware(tool_name="echo", run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, record_failures=True, repair=repair)
    script = [*ONE_THEN_TWO, AIMessage("", tool_calls=[call("find", "f")])]
    agent = agent_of([echo_tool(), echo_tool("other")], [limit, ours], [*script, DONE])

    failures: list[ToolFailure] = run(agent, path)["tool_failures"]

    assert [(f["call_id"], f["kind"], f["outcome"]) for f in failures] == [
        ("e2", "inner_middleware", "answered"),
        ("e3", "inner_middleware", "answered"),
        ("f", "unknown_tool", "repaired"),
    ]


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "not recorded"])
def test_a_routes_answer_to_a_block_is_written_once_beside_langchains_patch_of_a_cut_call(
    path: Path, record: bool
) -> None:
    # The reply that the limit blocks also holds a cut-short call of `other`, which this
    # middleware (for `echo` alone) leaves unanswered: langchain answers it itself as the
    # next model call starts, rewriting the thread. The route's answer takes the block's
    # place in that same step, and every message of the thread is kept once.
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    route = Route(InnerMiddlewareError, _blocked, tools=["echo"])
    # With no record, no malformed call is watched: the step is settled in the model call's.
    ours = ToolErrorMiddleware.from_routes([route], record_failures=record)
    cut = invalid_tool_call(name="other", args='{"query": ', id="o2", error="not JSON")
    second = AIMessage("", tool_calls=[call("echo", "e2", text="hi")], invalid_tool_calls=[cut])
    script = [AIMessage("", tool_calls=[call("echo", "e1", text="hi")]), second, DONE]
    agent = agent_of([echo_tool(), echo_tool("other")], [limit, ours], script)

    messages: list[BaseMessage] = run(agent, path)["messages"]

    ids = [m.id for m in messages]
    assert len(ids) == len(set(ids))
    assert answer_counts(messages) == {"e1": 1, "e2": 1, "o2": 1}
    [block] = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "e2"]
    assert (block.status, block.text) == ("error", "`echo` is blocked for this run.")
    assert messages[-1].text == DONE.text


def test_a_block_before_any_tool_is_closed_is_a_failure_a_tell_budget_counts(
    path: Path, order: str
) -> None:
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=3, when_spent="tell"), record_failures=True
    )
    script = [AIMessage("", tool_calls=[call("echo", f"e{n}")]) for n in (1, 2)]
    agent = agent_of([echo_tool()], stacked(order, limit, ours), [*script, DONE])

    result = run(agent, path)

    failures: list[ToolFailure] = result["tool_failures"]
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in failures] == [
        ("e2", "inner_middleware", "answered")
    ]


def malformed(call_id: str) -> dict[str, Any]:
    return {"name": "echo", "args": '{"query": "cut', "id": call_id, "error": None}


def test_a_stop_beside_the_limits_blocks_answers_each_blocked_call_once(
    path: Path, order: str
) -> None:
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1))
    blocked_and_malformed = AIMessage(
        "",
        tool_calls=[call("echo", "e2"), call("echo", "e3")],
        invalid_tool_calls=[malformed("m1"), malformed("m2")],
    )
    script = [AIMessage("", tool_calls=[call("echo", "e1")]), blocked_and_malformed, DONE]
    agent = agent_of([echo_tool()], stacked(order, limit, ours), script, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "blocked"}}

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    assert (raised.value.kind, raised.value.count) == ("malformed_call", 2)
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    counts = answer_counts(messages)
    assert (counts["e2"], counts["e3"]) == (1, 1)


def blocking_agent(ours: ToolErrorMiddleware, steps: list[int]) -> Agent:
    """`echo` blocked by a limit of none: one reply per step, of that many parallel calls."""
    limit = ToolCallLimitMiddleware(tool_name="echo", run_limit=0, exit_behavior="continue")
    script = [
        AIMessage("", tool_calls=[call("echo", f"s{n}-{i}") for i in range(calls)])
        for n, calls in enumerate(steps)
    ]
    return agent_of([echo_tool()], [ours, limit], [*script, DONE])


@pytest.mark.parametrize(("steps", "count"), [([3], 3), ([2, 1], 3)])
def test_every_block_of_a_step_counts_in_the_step_and_after_it(
    path: Path, steps: list[int], count: int
) -> None:
    # Three blocks in one step: the third passes a limit of two at once. Two blocks, then
    # one more: both of the first step's are kept in the run's count.
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(blocking_agent(ours, steps), path)

    assert (spent.value.tool, spent.value.count, spent.value.limit) == ("echo", count, 2)


def test_a_routes_own_budget_counts_the_blocks_that_route_takes(path: Path) -> None:
    ours = ToolErrorMiddleware.from_routes(
        [
            Route(InnerMiddlewareError, _blocked, budget=ErrorBudget(per_tool=1)),
            Route(Exception, report_type_only),
        ]
    )

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(blocking_agent(ours, [1, 1]), path)

    stop = spent.value
    assert (stop.route, stop.count, stop.kind) == (0, 2, "inner_middleware")
    assert stop.failure is not None
    assert (stop.failure["call_id"], stop.failure["route"]) == ("s1-0", 0)


def test_a_block_is_counted_after_the_failures_of_its_own_step(path: Path, order: str) -> None:
    # Three calls in one reply under per_tool=2: two run and fail, the limit blocks the third.
    # The two failures are checked against the count from before the step (0), so neither
    # spends the budget; the block is met before the next model call, after them, as the
    # third failure, and stops the run. Three failures of the tools alone would not.
    limit = ToolCallLimitMiddleware(tool_name="weather", run_limit=2, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    three = AIMessage("", tool_calls=[call("weather", f"w{n}") for n in (1, 2, 3)])
    agent = agent_of([WEATHER], stacked(order, limit, ours), [three, DONE])

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    stop = raised.value
    assert (stop.count, stop.kind) == (3, "inner_middleware")
    assert stop.failure is not None
    assert stop.failure["call_id"] == "w3"


@pytest.fixture(params=[None, ("exception", "inner_middleware")], ids=["all kinds", "no malformed"])
def kinds(request: pytest.FixtureRequest) -> tuple[FailureKind, ...] | None:
    """What a budget counts: every kind (the step is settled in a node before the model),
    or no malformed calls (no node: it is settled in the model call's own step)."""
    given: tuple[FailureKind, ...] | None = request.param
    return given


def saved_answers(agent: Agent, config: RunnableConfig) -> list[ToolMessage]:
    """The tool messages of the thread's last checkpoint."""
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_a_block_that_spends_the_budget_stops_the_run_with_the_limits_answer_kept(
    path: Path, order: str, kinds: tuple[FailureKind, ...] | None
) -> None:
    # The limit lets e1 run and blocks e2 and e3. This middleware meets both blocks before
    # the next model call; e3's is the second failure of `echo` and spends per_tool=1. The
    # run stops, and e3 keeps the answer the limit wrote for it: the stop writes none.
    script = [*ONE_THEN_TWO, DONE]

    def limit() -> ToolCallLimitMiddleware:
        return ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")

    # The limit alone: what it writes for each call.
    alone = agent_of([echo_tool()], [limit()], script)
    written = {
        m.tool_call_id: m for m in run(alone, path)["messages"] if isinstance(m, ToolMessage)
    }
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1, kinds=kinds))
    agent = agent_of([echo_tool()], stacked(order, limit(), ours), script, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "blocked"}}

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    stop = raised.value
    assert stop.failure is not None
    assert (stop.failure["call_id"], stop.count, stop.kind) == ("e3", 2, "inner_middleware")
    saved = saved_answers(agent, config)
    assert Counter(m.tool_call_id for m in saved) == {"e1": 1, "e2": 1, "e3": 1}
    kept = {m.tool_call_id: (m.status, m.content) for m in saved}
    assert written["e3"].status == "error"
    assert kept["e3"] == (written["e3"].status, written["e3"].content)
    assert kept["e2"] == (written["e2"].status, written["e2"].content)
    # Running the thread again meets the same answers, and the same stop.
    with pytest.raises(ToolErrorBudgetExceeded) as again:
        rerun(agent, path, config)
    assert (again.value.tool, again.value.count, again.value.kind) == (stop.tool, 2, stop.kind)


def test_a_stop_met_before_the_model_is_raised_with_a_model_retry_listed_outside_all(
    path: Path, order: str, kinds: tuple[FailureKind, ...] | None
) -> None:
    # As above, with `ModelRetryMiddleware` outside both: it retries a failed model call and
    # then answers it with an AI message. The stop met before the model (e3's block spends
    # the budget) is no failed model call: it is raised, and the thread ends at the answers.
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1, kinds=kinds))
    retrying = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    middleware = [retrying, *stacked(order, limit, ours)]
    agent = agent_of([echo_tool()], middleware, [*ONE_THEN_TWO, DONE], InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "retried"}}

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    assert raised.value.failure is not None
    assert (raised.value.failure["call_id"], raised.value.count) == ("e3", 2)
    messages: list[BaseMessage] = agent.get_state(config).values["messages"]
    assert [type(m).__name__ for m in messages[-2:]] == ["ToolMessage", "ToolMessage"]
    assert answer_counts(messages) == {"e1": 1, "e2": 1, "e3": 1}
    again = run(agent, path, {"messages": [HumanMessage("and now?")]}, config)
    assert again["messages"][-1].text == DONE.text


def test_a_block_met_as_a_retried_model_call_starts_is_told_once(path: Path) -> None:
    # ModelRetryMiddleware outside calls the model call's step again after the model fails,
    # and ours meets the limit's blocks of e2 and e3 as each attempt starts. Its listener
    # is told of each block once, when a model call has answered; the record keeps each once.
    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, record_failures=True, listeners=[told.append])
    retrying = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    attempts: list[int] = []

    def unreachable_once(messages: Sequence[BaseMessage]) -> AIMessage:
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise ConnectionError("the model is unreachable")
        return DONE

    script: list[ScriptStep | Repeat] = [*ONE_THEN_TWO, Repeat(unreachable_once)]
    agent = agent_of([echo_tool()], [retrying, limit, ours], script)

    result = run(agent, path)

    assert len(attempts) == 2
    assert result["messages"][-1].text == DONE.text
    blocks = [("e2", "inner_middleware"), ("e3", "inner_middleware")]
    assert [(f["call_id"], f["kind"]) for f in told] == blocks
    failures: list[ToolFailure] = result["tool_failures"]
    assert [(f["call_id"], f["kind"]) for f in failures] == blocks


def test_running_a_thread_stopped_by_a_block_again_meets_the_blocks_again(path: Path) -> None:
    # The step that met the blocks and stopped the run wrote nothing: running the thread
    # again meets them again, tells the listener again, and raises the same stop.
    told: list[ToolFailure] = []
    ours = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=1), listeners=[told.append]
    )
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    agent = agent_of([echo_tool()], [limit, ours], [*ONE_THEN_TWO, DONE], InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "met again"}}

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path, {"messages": [HumanMessage("go")]}, config)
    with pytest.raises(ToolErrorBudgetExceeded) as again:
        rerun(agent, path, config)

    assert (again.value.tool, again.value.count) == ("echo", 2)
    met = [(f["call_id"], f["outcome"]) for f in told]
    assert met == [("e2", "answered"), ("e3", "stopped")] * 2


def test_a_model_call_that_fails_for_good_behind_a_model_retry_keeps_nothing_it_met(
    path: Path,
) -> None:
    # ModelRetryMiddleware outside answers a model call that failed for good with a message
    # of its own (on_failure="continue"). What ours met as that call started, the limit's
    # block of e2, was to be written with the model's reply: with none, nothing of it is
    # kept. The block keeps the limit's text, and neither the record nor the listener has it.
    told: list[ToolFailure] = []
    route = Route(InnerMiddlewareError, _blocked)
    ours = ToolErrorMiddleware.from_routes([route], record_failures=True, listeners=[told.append])
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    retrying = ModelRetryMiddleware(max_retries=0, on_failure="continue")

    def unreachable(messages: Sequence[BaseMessage]) -> AIMessage:
        raise ConnectionError("the model is unreachable")

    calls = [AIMessage("", tool_calls=[call("echo", f"e{n}")]) for n in (1, 2)]
    script: list[ScriptStep | Repeat] = [*calls, Repeat(unreachable)]
    agent = agent_of([echo_tool()], [retrying, limit, ours], script)

    result = run(agent, path)

    last = result["messages"][-1]
    assert isinstance(last, AIMessage)  # the retry's own answer
    assert not last.tool_calls
    [block] = [
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "e2"
    ]
    assert block.status == "error"
    assert block.text != "`echo` is blocked for this run."  # the limit's, not the route's
    assert result["tool_failures"] == []
    assert told == []


def test_a_stop_met_inside_still_tells_the_listeners_of_a_middleware_outside(path: Path) -> None:
    # The inner middleware's budget is spent by the limit's block of e3, met as the next
    # model call starts, and it stops the run there. The outer one met both blocks in the
    # same step: its listener is told of each, though the model is never called.
    told: list[ToolFailure] = []
    outer = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="outer")
    inner = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1), name="inner")
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    agent = agent_of([echo_tool()], [outer, inner, limit], [*ONE_THEN_TWO, DONE])

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path)

    assert [(f["middleware"], f["call_id"], f["outcome"]) for f in told] == [
        ("outer", "e2", "answered"),
        ("outer", "e3", "answered"),
    ]


def test_the_limits_blocks_in_the_reply_whose_failure_stops_the_run_are_never_met(
    path: Path, order: str
) -> None:
    # w2 fails in the tools step and spends per_tool=1, so the run is stopped before the
    # next model call, where this middleware would have met the limit's block of e1, in the
    # same reply. No model call follows: the block is never met, neither recorded nor told,
    # and keeps the limit's answer.
    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(tool_name="echo", run_limit=0, exit_behavior="continue")
    ours = reporting(told, ErrorBudget(per_tool=1))
    script = [
        AIMessage("", tool_calls=[call("weather", "w1")]),
        AIMessage("", tool_calls=[call("weather", "w2"), call("echo", "e1")]),
        DONE,
    ]
    middleware = stacked(order, limit, ours)
    agent = agent_of([WEATHER, echo_tool()], middleware, script, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "stopped"}}

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    assert (raised.value.tool, raised.value.count, raised.value.kind) == ("weather", 2, "exception")
    kept: list[ToolFailure] = agent.get_state(config).values["tool_failures"]
    records = [(f["call_id"], f["kind"], f["outcome"]) for f in kept]
    assert records == [("w1", "exception", "answered"), ("w2", "exception", "stopped")]
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == records
    [e1] = [m for m in saved_answers(agent, config) if m.tool_call_id == "e1"]
    assert e1.status == "error"  # the limit's block, the only answer e1 has


def test_a_middleware_for_some_tools_meets_only_their_blocks(path: Path, order: str) -> None:
    # The limit blocks a call of `other` and, after it in the reply, one of `echo`. A
    # middleware for `echo` alone leaves the first block to others and meets the second.
    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(report_type_only, listeners=[told.append], tools=["echo"])
    script = [
        AIMessage("", tool_calls=[call("echo", "e1", query="a")]),
        AIMessage("", tool_calls=[call("other", "o2"), call("echo", "e2", query="b")]),
        DONE,
    ]
    agent = agent_of([echo_tool(), echo_tool("other")], stacked(order, limit, ours), script)

    result = run(agent, path)

    assert result["messages"][-1].text == "done"
    assert [(f["tool"], f["call_id"], f["kind"]) for f in told] == [
        ("echo", "e2", "inner_middleware")
    ]
