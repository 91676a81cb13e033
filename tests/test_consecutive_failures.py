"""`ErrorBudget(consecutive=N)` through real agents: a tool's failures in a row.

The tool here fails or succeeds as each call asks (`outcome="fail"` or `"ok"`), so a script
of calls is a script of outcomes: a flaky tool that keeps recovering, one that breaks for
good, and parallel calls of one step in either order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import override

from _langchain_tool_errors.state import SettledState, add_counts
from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    Route,
    SyncCapable,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, direct_request, rerun, run, tool_messages

DONE = AIMessage("done")


def flaky_tool(runs: list[str] | None = None) -> BaseTool:
    """`flaky(outcome)`: raises `ConnectionError` for "fail", answers "ok" otherwise."""

    def flaky(outcome: str) -> str:
        """Reach a service that is sometimes down."""
        if runs is not None:
            runs.append(outcome)
        if outcome == "fail":
            raise ConnectionError("the service is down")
        return "ok"

    return StructuredTool.from_function(flaky)


def turns(*steps: Sequence[str]) -> list[AIMessage]:
    """One model reply per step, calling `flaky` once per outcome, in that order."""
    return [
        AIMessage(
            "", tool_calls=[call("flaky", f"s{n}-{i}", outcome=o) for i, o in enumerate(outcomes)]
        )
        for n, outcomes in enumerate(steps)
    ] + [DONE]


def agent_of(
    middleware: ToolErrorMiddleware, script: list[AIMessage], checkpointer: Any = None
) -> Agent:
    # create_agent's `checkpointer` parameter is partially unknown in pyright strict.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    built: Agent = create_agent(
        ScriptedChatModel(script=list(script)),
        tools=[flaky_tool()],
        middleware=[middleware],
        checkpointer=checkpointer,
    )
    return built


def in_a_row(limit: int, **options: Any) -> ToolErrorMiddleware[str, Exception, SyncCapable]:
    return ToolErrorMiddleware(report_type_only, budget=ErrorBudget(consecutive=limit, **options))


def test_a_tool_that_keeps_recovering_is_never_stopped(path: Path) -> None:
    steps = [["fail"], ["fail"], ["ok"]] * 3  # six failures, never more than two in a row
    agent = agent_of(in_a_row(2), turns(*steps))

    result = run(agent, path)

    assert result["messages"][-1].text == "done"
    assert [m.status for m in tool_messages(result).values()] == ["error", "error", "success"] * 3


def test_the_same_failures_spend_a_per_tool_budget(path: Path) -> None:
    steps = [["fail"], ["fail"], ["ok"]] * 3
    agent = agent_of(
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2)), turns(*steps)
    )

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.scope, spent.value.count) == ("tool", 3)


def test_one_failure_too_many_in_a_row_stops_the_run(path: Path) -> None:
    agent = agent_of(in_a_row(2), turns(["fail"], ["ok"], ["fail"], ["fail"], ["fail"]))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    stop = spent.value
    assert (stop.tool, stop.count, stop.limit, stop.scope) == ("flaky", 3, 2, "consecutive")
    assert isinstance(stop.__cause__, ConnectionError)
    assert "3 failures of `flaky` in a row in this run, over the limit of 2" in str(stop)
    assert "(consecutive)" in str(stop)


def test_a_stop_in_a_row_is_kept_in_the_thread_and_answers_the_call(path: Path) -> None:
    agent = agent_of(in_a_row(1), turns(["fail"], ["fail"]), InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path, config=config)
    answers = tool_messages(agent.get_state(config).values)
    assert answers["s1-0"].text == (
        "This call to `flaky` failed, and the error budget stopped the run (2 failures of "
        "`flaky` in a row in this run, over the limit of 1)."
    )


def test_a_tell_budget_closes_the_tool_after_too_many_failures_in_a_row(path: Path) -> None:
    agent = agent_of(in_a_row(2, when_spent="tell"), turns(["fail"], ["fail"], ["fail"], ["ok"]))

    result = run(agent, path)

    told = ErrorBudget.DEFAULT_MESSAGE.format(tool="flaky", times="3 times")
    texts = [m.text for m in tool_messages(result).values()]
    assert texts[2:] == [told, told]  # the last call, "ok", never ran: the tool is closed


def test_consecutive_and_per_tool_are_each_checked(path: Path) -> None:
    steps = [["fail"], ["ok"]] * 3 + [["fail"]]  # four failures, none in a row
    budget = ErrorBudget(per_tool=3, consecutive=2)
    agent = agent_of(ToolErrorMiddleware(report_type_only, budget=budget), turns(*steps))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.scope, spent.value.count, spent.value.limit) == ("tool", 4, 3)


@pytest.mark.parametrize(
    ("budget", "scope"),
    [
        (ErrorBudget(per_tool=1, per_run=1), "tool"),  # per_tool is checked before per_run
        (ErrorBudget(per_run=1, consecutive=1), "run"),  # per_run before consecutive
        (ErrorBudget(per_tool=1, consecutive=1), "tool"),
    ],
    ids=["per_tool, per_run", "per_run, consecutive", "per_tool, consecutive"],
)
def test_a_failure_over_several_limits_is_stopped_by_the_first_in_order(
    path: Path, budget: ErrorBudget, scope: str
) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    agent = agent_of(middleware, turns(["fail"], ["fail"]))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.scope, spent.value.count, spent.value.limit) == (scope, 2, 1)


@pytest.mark.parametrize(
    ("first_step", "stopped"),
    [
        (["fail", "ok"], False),  # the success comes after the failure: it resets it
        (["ok", "fail"], True),  # the failure comes after the success: it is still in a row
    ],
)
def test_parallel_calls_of_one_step_are_taken_in_call_order(
    path: Path, first_step: list[str], stopped: bool
) -> None:
    # Both calls of the first step see no failure before it; the count after the step is
    # 0 or 1 as the calls come, and the next failure is the first or the second in a row.
    agent = agent_of(in_a_row(1), turns(first_step, ["fail"]))

    if stopped:
        with pytest.raises(ToolErrorBudgetExceeded) as spent:
            run(agent, path)
        assert (spent.value.scope, spent.value.count) == ("consecutive", 2)
    else:
        assert run(agent, path)["messages"][-1].text == "done"


def test_failures_in_a_row_continue_after_an_interrupt_and_restart_with_a_new_input(
    path: Path,
) -> None:
    from langgraph.types import interrupt

    def ask(question: str) -> str:
        """Ask a person."""
        return str(interrupt(question))

    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    script = [
        AIMessage("", tool_calls=[call("flaky", "a", outcome="fail")]),
        AIMessage("", tool_calls=[call("ask", "q", question="retry?")]),
        AIMessage("", tool_calls=[call("flaky", "b", outcome="fail")]),
        DONE,
        AIMessage("", tool_calls=[call("flaky", "c", outcome="fail")]),
        DONE,
    ]
    saver = InMemorySaver()
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[flaky_tool(), StructuredTool.from_function(ask)],
        middleware=[in_a_row(1)],
        checkpointer=saver,
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    run(agent, path, config=config)  # pauses at `ask`, one failure in a row counted
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, Command(resume="yes"), config)  # the ask's success is another tool's

    assert (spent.value.count, spent.value.scope) == (2, "consecutive")
    # A new input starts from zero: its one failure is the first in a row.
    again = run(agent, path, {"messages": [HumanMessage("once more")]}, config)
    assert again["messages"][-1].text == "done"


def test_a_routes_own_budget_counts_its_failures_in_a_row(path: Path) -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [Route(ConnectionError, report_type_only, budget=ErrorBudget(consecutive=1))]
    )
    recovering = agent_of(middleware, turns(["fail"], ["ok"], ["fail"], ["ok"]))
    breaking = agent_of(middleware, turns(["fail"], ["ok"], ["fail"], ["fail"]))

    assert run(recovering, path)["messages"][-1].text == "done"
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(breaking, path)
    assert (spent.value.route, spent.value.scope, spent.value.count) == (0, "consecutive", 2)


def test_a_success_goes_back_as_it_came_and_its_row_ends_before_the_next_model_call() -> None:
    # The success path writes nothing, even with failures in a row counted: the hook before
    # the next model call ends the row, from the answers the step left in the state.
    middleware = in_a_row(2)
    ok = ToolMessage("ok", tool_call_id="c", name="flaky")
    row = f"{middleware.name}\x00flaky\x00row"
    request = direct_request(flaky_tool(), call("flaky", "c", outcome="ok"))
    counted = request.override(state={"tool_error_budget_counts": {row: 1}})

    def handler(request: ToolCallRequest) -> ToolMessage:
        return ok

    assert middleware.wrap_tool_call(counted, handler) is ok
    reply = AIMessage("", tool_calls=[call("flaky", "c", outcome="ok")])
    state: SettledState = {"messages": [reply, ok], "tool_error_budget_counts": {row: 1}}
    written = model_step_update(middleware, state)
    assert written is not None
    assert add_counts({row: 1}, written["tool_error_budget_counts"]) == {row: 0}
    # Another tool's success leaves the row as it is: nothing to write.
    other = AIMessage("", tool_calls=[call("other", "c")])
    elsewhere: SettledState = {"messages": [other, ok], "tool_error_budget_counts": {row: 1}}
    assert model_step_update(middleware, elsewhere) is None


def model_step_update(
    middleware: ToolErrorMiddleware, state: SettledState
) -> dict[str, Any] | None:
    """What the model call's step writes besides the reply, from `state`."""
    done = AIMessage("done")
    model = ScriptedChatModel(script=[done])
    request: ModelRequest[Any] = ModelRequest(
        model=model, messages=state["messages"], state=state, runtime=Runtime()
    )
    response = middleware.wrap_model_call(request, lambda sent: ModelResponse(result=[done]))
    if not isinstance(response, ExtendedModelResponse) or response.command is None:
        return None
    written: dict[str, Any] | None = response.command.update
    return written


@pytest.mark.parametrize(
    ("first_step", "next_count"),
    [
        (["fail", "fail", "ok"], None),  # the success ends both failures before it
        (["fail", "ok", "fail", "fail"], 3),  # two after the last success, then the third
        (["ok", "fail", "ok", "fail"], 2),
        (["fail", "fail"], 3),  # no success: both count
    ],
)
def test_a_step_of_several_calls_leaves_the_failures_after_its_last_success(
    path: Path, first_step: list[str], next_count: int | None
) -> None:
    # Each call of the first step sees no failure before it, so none of them spends the
    # budget of 1; after the step the count is the failures after the tool's last success.
    saver = InMemorySaver()
    agent = agent_of(in_a_row(1), turns(first_step, ["fail"]), saver)
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    if next_count is None:
        assert run(agent, path, config=config)["messages"][-1].text == "done"
    else:
        with pytest.raises(ToolErrorBudgetExceeded) as spent:
            run(agent, path, config=config)
        assert (spent.value.scope, spent.value.count) == ("consecutive", next_count)


def test_the_state_keeps_one_count_per_row_and_no_trace_of_each_failure(path: Path) -> None:
    saver = InMemorySaver()
    middleware = in_a_row(5)
    agent = agent_of(middleware, turns(["fail", "ok", "fail"], ["fail", "fail"]), saver)
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    run(agent, path, config=config)
    counts: dict[str, int] = agent.get_state(config).values["tool_error_budget_counts"]
    name = middleware.name
    assert counts == {f"{name}\x00": 4, f"{name}\x00flaky": 4, f"{name}\x00flaky\x00row": 3}


def test_a_row_put_in_call_order_by_an_agent_built_again_from_the_checkpoint(path: Path) -> None:
    # The run pauses before the model call whose step ends the rows, and each part of it
    # runs on an agent built anew, as another worker would: the step's failures and
    # successes come from the checkpoint alone.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    saver = InMemorySaver()
    middleware = in_a_row(1)
    script = turns(["fail", "ok"], ["ok", "fail"], ["fail"])
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    model = ScriptedChatModel(script=script)

    def worker() -> Agent:
        built: Agent = create_agent(
            model,
            tools=[flaky_tool()],
            middleware=[middleware],
            checkpointer=saver,
            interrupt_before=["model"],
        )
        return built

    run(worker(), path, config=config)  # pauses before the first model call
    for _ in range(3):  # a step, then a pause before its rows are put in call order
        rerun(worker(), path, config)
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        rerun(worker(), path, config)

    assert (spent.value.scope, spent.value.count) == ("consecutive", 2)
    graph: Any = worker()
    answers = tool_messages(graph.get_state(config).values)
    assert list(answers) == ["s0-0", "s0-1", "s1-0", "s1-1", "s2-0"]


def test_two_middleware_counting_failures_in_a_row_each_reset_on_a_success(path: Path) -> None:
    # The inner one answers the success with a `Command` holding its reset; the outer one
    # adds its own beside it.
    outer = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(consecutive=1), name="outer")
    inner = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(consecutive=5), name="inner")
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["fail"], ["ok"], ["fail"], ["ok"])),
        tools=[flaky_tool()],
        middleware=[outer, inner],
    )

    result = run(agent, path)

    assert result["messages"][-1].text == "done"


def test_two_middleware_each_put_only_their_own_rows_in_call_order(path: Path) -> None:
    # The outer one settles its rows first, and leaves the inner one's failures marked for it:
    # the inner one's row after [ok, fail] is 1, and the next failure is its second in a row.
    outer = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(consecutive=5), name="outer")
    inner = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(consecutive=1), name="inner")
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["ok", "fail"], ["fail"])),
        tools=[flaky_tool()],
        middleware=[outer, inner],
    )

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.count, spent.value.limit, spent.value.scope) == (2, 1, "consecutive")


async def _atype_only(exc: Exception, request: ToolCallRequest) -> str:
    return f"{type(exc).__name__}"


ONLY_EXCEPTIONS: tuple[FailureKind, ...] = ("exception",)


@pytest.mark.parametrize("kinds", [None, ONLY_EXCEPTIONS])
def test_an_async_only_middleware_resets_and_stops_failures_in_a_row(
    kinds: tuple[FailureKind, ...] | None,
) -> None:
    # An async-only middleware keeps its own class for failures in a row (with and without
    # the hook after the model that malformed calls need): a success still ends the row.
    budget = (
        ErrorBudget(consecutive=2) if kinds is None else ErrorBudget(consecutive=2, kinds=kinds)
    )
    recovering = agent_of(
        ToolErrorMiddleware(aon_error=_atype_only, budget=budget),
        turns(["fail"], ["fail"], ["ok"], ["fail"], ["fail"], ["ok"]),
    )
    breaking = agent_of(
        ToolErrorMiddleware(aon_error=_atype_only, budget=budget),
        turns(["fail"], ["ok"], ["fail"], ["fail"], ["fail"]),
    )

    result = run(recovering, "async")
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(breaking, "async")

    assert result["messages"][-1].text == "done"
    assert (spent.value.count, spent.value.scope) == (3, "consecutive")


def reporting_tool() -> BaseTool:
    """`flaky(outcome)` that reports its failure itself (an error message, nothing raised)."""

    def flaky(outcome: str) -> str:
        """Reach a service that is sometimes down."""
        if outcome == "fail":
            raise ToolException("the service is down")
        return "ok"

    return StructuredTool.from_function(flaky, handle_tool_error=True)


def test_failures_a_tool_reports_itself_count_in_a_row_too(path: Path) -> None:
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    def agent(script: list[AIMessage]) -> Agent:
        built: Agent = create_agent(
            ScriptedChatModel(script=script), tools=[reporting_tool()], middleware=[in_a_row(2)]
        )
        return built

    recovering = run(agent(turns(*[["fail"], ["fail"], ["ok"]] * 2)), path)
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent(turns(["fail"], ["ok"], ["fail"], ["fail"], ["fail"])), path)

    assert recovering["messages"][-1].text == "done"
    stop = spent.value
    assert (stop.kind, stop.count, stop.scope) == ("tool_reported", 3, "consecutive")


def test_a_tool_held_for_failures_in_a_row_runs_again_when_a_person_says_go_on(
    path: Path,
) -> None:
    runs: list[str] = []
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["fail"], ["fail"], ["ok"])),
        tools=[flaky_tool(runs)],
        middleware=[in_a_row(1, when_spent="interrupt")],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "held"}}

    paused = run(agent, path, config=config)
    assert runs == ["fail", "fail"]  # the third call waits for the person
    result = run(agent, path, Command(resume={"type": "go_on"}), config)

    assert runs == ["fail", "fail", "ok"]
    assert [p.value["call_id"] for p in paused["__interrupt__"]] == ["s2-0"]
    assert result["messages"][-1].text == "done"


def picturing_tool() -> BaseTool:
    """`flaky(outcome)` whose success is a `Command` adding a user message after its answer
    (the way a tool hands the model an image)."""

    def flaky(outcome: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Take a picture of a service that is sometimes down."""
        if outcome == "fail":
            raise ConnectionError("the service is down")
        answer = ToolMessage("the picture follows", tool_call_id=tool_call_id, name="flaky")
        return Command(update={"messages": [answer, HumanMessage("[the picture]")]})

    return StructuredTool.from_function(flaky)


class Reminding(AgentMiddleware[AgentState[Any], None]):
    """Listed first, so its hook before the model runs before ours: adds a message after
    the step's answers."""

    @override
    def before_model(self, state: AgentState[Any], runtime: Runtime[None]) -> dict[str, Any] | None:
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": [HumanMessage("Keep it short.")]}
        return None


@pytest.mark.parametrize("between", ["a tool's Command", "a hook before the model"])
def test_a_success_ends_the_row_whatever_message_comes_after_the_steps_answers(
    path: Path, between: str
) -> None:
    # fail, ok, fail, fail: never more than two in a row, with a message between the step's
    # answers and the hook that puts the rows in call order.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    pictures = between == "a tool's Command"
    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["fail"], ["ok"], ["fail"], ["fail"])),
        tools=[picturing_tool() if pictures else flaky_tool()],
        middleware=[in_a_row(2)] if pictures else [Reminding(), in_a_row(2)],
    )

    assert run(agent, path)["messages"][-1].text == "done"


def test_a_persons_answer_in_place_of_the_tool_ends_the_row_as_a_success_does(path: Path) -> None:
    # The model reads a success for that call: HumanInTheLoopMiddleware's "respond" between
    # two failures starts the count again, so fail, fail, respond, fail, fail stays within 2.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    steps = [["fail"], ["fail"], ["ok"], ["fail"], ["fail"]]
    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(*steps)),
        tools=[flaky_tool()],
        middleware=[HumanInTheLoopMiddleware({"flaky": True}), in_a_row(2)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "respond"}}
    approve: dict[str, Any] = {"decisions": [{"type": "approve"}]}
    respond: dict[str, Any] = {"decisions": [{"type": "respond", "message": "It is up."}]}

    run(agent, path, config=config)
    for decision in [approve, approve, respond, approve]:
        run(agent, path, Command(resume=decision), config)
    result = run(agent, path, Command(resume=approve), config)

    assert result["messages"][-1].text == "done"
    assert tool_messages(result)["s2-0"].text == "It is up."  # the tool did not run


def two_tool_agent(middleware: list[Any], script: list[AIMessage]) -> Agent:
    """`flaky` and `other` (which always answers), with `middleware`."""
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    def other() -> str:
        """Another service, always up."""
        return "fine"

    built: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[flaky_tool(), StructuredTool.from_function(other)],
        middleware=middleware,
    )
    return built


def step(*calls: tuple[str, str | None]) -> AIMessage:
    """One reply: `("flaky", outcome)` or `("other", None)` per call, ids in order."""
    return AIMessage(
        "",
        tool_calls=[
            call(name, f"{name}-{i}", **({} if outcome is None else {"outcome": outcome}))
            for i, (name, outcome) in enumerate(calls)
        ],
    )


def test_each_tool_that_succeeded_in_a_step_ends_its_own_row(path: Path) -> None:
    # `other`'s success comes first and it has no row: `flaky`'s row still ends.
    script = [step(("flaky", "fail")), step(("other", None), ("flaky", "ok"))]
    agent = two_tool_agent([in_a_row(1)], [*script, step(("flaky", "fail")), DONE])

    assert run(agent, path)["messages"][-1].text == "done"


def test_a_row_ends_in_the_step_where_another_middleware_also_answered_a_call(
    path: Path,
) -> None:
    # The limit blocks `other` in the step where `flaky` succeeds: the hook before the model
    # both counts the block and ends `flaky`'s row, so the next failure is the first again.
    from langchain.agents.middleware import ToolCallLimitMiddleware

    limit = ToolCallLimitMiddleware(tool_name="other", run_limit=0, exit_behavior="continue")
    script = [step(("flaky", "fail")), step(("flaky", "ok"), ("other", None))]
    agent = two_tool_agent([in_a_row(1), limit], [*script, step(("flaky", "fail")), DONE])

    result = run(agent, path)

    assert result["messages"][-1].text == "done"
    assert tool_messages(result)["other-1"].status == "error"  # the limit's block


def test_the_counts_written_with_a_row_put_in_order_keep_every_other_count(path: Path) -> None:
    # The step where `flaky` succeeds and the limit blocks `other` writes the whole counts:
    # `flaky`'s failures in the run are kept, so its third failure spends `per_tool=2`.
    from langchain.agents.middleware import ToolCallLimitMiddleware

    limit = ToolCallLimitMiddleware(tool_name="other", run_limit=0, exit_behavior="continue")
    script = [step(("flaky", "fail")), step(("flaky", "ok"), ("other", None))]
    script += [step(("flaky", "fail")), step(("flaky", "fail")), DONE]
    agent = two_tool_agent([in_a_row(1, per_tool=2), limit], script)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.scope, spent.value.count) == ("tool", 3)


def test_a_persons_answer_at_a_pause_ends_the_row_as_a_success_does(path: Path) -> None:
    # The route's budget holds `flaky` after its second failure; the person answers the
    # third call in its place, then lets the fourth run: it fails, the first in a row again.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    holding = ErrorBudget(per_tool=1, when_spent="interrupt")
    middleware = ToolErrorMiddleware.from_routes(
        [Route(ConnectionError, report_type_only, budget=holding)],
        budget=ErrorBudget(consecutive=2),
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["fail"], ["fail"], ["ok"], ["fail"])),
        tools=[flaky_tool()],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "answered"}}

    run(agent, path, config=config)  # two failures; the third call waits
    run(agent, path, Command(resume={"type": "answer", "text": "It is up."}), config)
    result = run(agent, path, Command(resume={"type": "go_on"}), config)

    assert result["messages"][-1].text == "done"
    assert tool_messages(result)["s2-0"].text == "It is up."


def test_another_tools_success_in_the_same_reply_leaves_the_row_as_it_is(path: Path) -> None:
    # `other` succeeds after `flaky`'s failure in the same reply: only a success of `flaky`
    # ends its row, so its next failure is the second in a row.
    script = [step(("flaky", "fail"), ("other", None)), step(("flaky", "fail")), DONE]
    agent = two_tool_agent([in_a_row(1)], script)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    stop = spent.value
    assert (stop.tool, stop.count, stop.limit, stop.scope) == ("flaky", 2, 1, "consecutive")


@pytest.mark.parametrize("rejected_first", [True, False], ids=["reject, ok", "ok, reject"])
def test_a_persons_rejection_counts_after_the_steps_successes_whatever_its_place(
    path: Path, rejected_first: bool
) -> None:
    # fail, then a step where a person rejects one call and the other succeeds, then fail:
    # the rejection is counted after the success, so it is the first in a row either way,
    # and the last failure the second.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    runs: list[str] = []
    agent: Agent = create_agent(
        ScriptedChatModel(script=turns(["fail"], ["ok", "ok"], ["fail"])),
        tools=[flaky_tool(runs)],
        middleware=[HumanInTheLoopMiddleware({"flaky": True}), in_a_row(1)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "rejected"}}
    approve: dict[str, Any] = {"type": "approve"}
    reject: dict[str, Any] = {"type": "reject", "message": "Not now."}
    both = [reject, approve] if rejected_first else [approve, reject]

    run(agent, path, config=config)
    run(agent, path, Command(resume={"decisions": [approve]}), config)
    run(agent, path, Command(resume={"decisions": both}), config)
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, Command(resume={"decisions": [approve]}), config)

    stop = spent.value
    assert (stop.count, stop.scope, stop.kind) == (2, "consecutive", "exception")
    assert runs == ["fail", "ok", "fail"]  # the stop came with the last call's failure
