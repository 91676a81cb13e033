"""Error budgets through real agents: a model that keeps calling a broken tool is stopped.

The scripted model here calls the tools it is told to, turn after turn, as a model that
does not learn from an error message would; without a budget such a run goes on until
the recursion limit.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal, cast
from unittest.mock import ANY

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from _langchain_tool_errors.state import COUNTS_KEY
from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from tests._agents import Path, agent_of, call, direct_request, echo_tool, failing_tool, run
from tests._processes import run_python
from tests._refusals import Refusal, assert_refused
from tests.conftest import FIGURES

# The classes as code that skips the type checker sees them, for the runtime checks.
Untyped: Any = ErrorBudget
UntypedMiddleware: Any = ToolErrorMiddleware


def calling(plan: Callable[[int], Sequence[str]], turns: int) -> list[Any]:
    """A script: for each of `turns` model calls, call the tools `plan(turn)` names."""

    def step(turn: int) -> Callable[[Sequence[BaseMessage]], AIMessage]:
        def reply(messages: Sequence[BaseMessage]) -> AIMessage:
            names = plan(turn)
            return AIMessage("", tool_calls=[call(n, f"t{turn}-{i}") for i, n in enumerate(names)])

        return reply

    return [step(turn) for turn in range(turns)] + [AIMessage("I give up on that tool.")]


def telling(*, per_tool: int | None = None, per_run: int | None = None) -> ErrorBudget:
    """A "tell" budget: once it is spent, each call of the tool is answered
    "`<tool>` is off (<count>)." and never runs."""
    message = "`{tool}` is off ({count})."
    return ErrorBudget(per_tool=per_tool, per_run=per_run, when_spent="tell", message=message)


def errors(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


BROKEN = failing_tool("weather", LookupError("Atlantis"))


async def _aexplain(exc: Exception, request: ToolCallRequest) -> str:
    return "failed"


def _never_run(request: ToolCallRequest) -> ToolMessage:
    raise AssertionError("the sync path ran a tool")


def counted(name: str, runs: list[str], *errors: Exception) -> BaseTool:
    """A tool that records its name in `runs` each time it runs, then raises.

    It raises each of `errors` in turn, one per call; a `LookupError` if none is given.
    """
    raised = errors or (LookupError(name),)

    def run_tool(query: str = "") -> str:
        runs.append(name)
        raise raised[(runs.count(name) - 1) % len(raised)]

    return StructuredTool.from_function(run_tool, name=name, description=f"{name} (fails)")


def test_without_a_budget_the_model_loops_on_a_broken_tool(path: Path) -> None:
    agent = agent_of(
        [BROKEN], [ToolErrorMiddleware(report_type_only)], calling(lambda t: ["weather"], 12)
    )

    result = run(agent, path)

    assert len(errors(result)) == 12  # every call handed back; only the script ended it


def test_stop_ends_the_run_after_the_limit_with_the_tools_last_exception(path: Path) -> None:
    error = LookupError("Atlantis")
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3))
    agent = agent_of(
        [failing_tool("weather", error)], [middleware], calling(lambda t: ["weather"], 12)
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    spent = raised.value
    assert (spent.tool, spent.count, spent.limit, spent.scope) == ("weather", 4, 3, "tool")
    assert spent.__cause__ is error
    assert str(spent).endswith("the last failure of `weather` is chained below.")
    FIGURES.append(f"budget ({path}): a looping model stopped at failure 4 of per_tool=3")


def _needs_a_record_id(name: str) -> BaseTool:
    """A tool with a required `int` argument: a call without it has invalid arguments."""

    def lookup(record_id: int) -> str:
        return f"record {record_id}"

    return StructuredTool.from_function(lookup, name=name, description="Look a record up.")


def test_a_budget_spent_by_invalid_arguments_names_that_kind_and_chains_nothing(
    path: Path,
) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1))
    agent = agent_of([_needs_a_record_id("lookup")], [middleware], calling(lambda t: ["lookup"], 4))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    spent = raised.value
    assert (spent.tool, spent.count, spent.kind, spent.__cause__) == (
        "lookup",
        2,
        "invalid_arguments",
        None,
    )
    message = str(spent)
    assert message.endswith(
        "The run is stopped; the last failure was a call with invalid arguments (`lookup`)."
    )
    assert "exception" not in message


def test_tell_answers_once_then_never_runs_the_tool_again_in_the_run(path: Path) -> None:
    runs: list[str] = []
    tool = counted("weather", runs)
    budget = telling(per_tool=2)
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    agent = agent_of([tool], [middleware], calling(lambda t: ["weather"], 6))

    result = run(agent, path)

    failed, closed = "Tool `weather` failed with LookupError.", "`weather` is off (3)."
    assert errors(result) == [failed] * 2 + [closed] * 4
    assert len(runs) == 3  # the tool ran until the budget was spent, never after
    assert result["messages"][-1].content == "I give up on that tool."
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert {(m.status, m.name) for m in answers} == {("error", "weather")}


def test_budgets_per_tool_are_independent_and_successes_are_free(path: Path) -> None:
    tools = [failing_tool("a", KeyError("a")), failing_tool("b", KeyError("b")), echo_tool()]
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    plan = ["echo", "a", "echo", "b", "echo", "a", "echo", "b", "echo", "a"]
    agent = agent_of(tools, [middleware], calling(lambda t: [plan[t]], len(plan)))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.tool, raised.value.count) == ("a", 3)  # b's two failures not counted


def test_a_run_budget_counts_every_tool_together(path: Path) -> None:
    runs: list[str] = []
    tools = [counted("a", runs), counted("b", runs)]
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=3))
    agent = agent_of(tools, [middleware], calling(lambda t: ["ab"[t % 2]], 8))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.count, raised.value.limit, raised.value.scope) == (4, 3, "run")
    assert runs == ["a", "b", "a", "b"]  # the fourth failure, not a later one, stopped it


def test_a_run_budget_of_one_stops_at_the_second_failure(path: Path) -> None:
    runs: list[str] = []
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=1))
    agent = agent_of([counted("a", runs)], [middleware], calling(lambda t: ["a"], 5))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.count, runs) == (2, ["a", "a"])


def test_fifty_parallel_failures_in_one_step_all_count(path: Path) -> None:
    # Calls within one step all see the count from before the step, so all 50 are handled;
    # the next failure finds all 50 counted.
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=50))
    script = calling(lambda t: ["weather"] * 50 if t == 0 else ["weather"], 2)
    agent = agent_of([BROKEN], [middleware], script)

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert raised.value.count == 51
    FIGURES.append(f"budget ({path}): 50 parallel failures in one step, 50 increments kept")


def test_tell_closes_a_tool_from_the_reply_after_the_failure_over_the_limit(path: Path) -> None:
    # per_tool=2. Step 1: three parallel failures, each checked against 0: all handled.
    # Step 2: two parallel calls run (the tool is not closed yet), each fails over the
    # limit and is answered with the final message. Step 3: answered without running.
    runs: list[str] = []
    tool = counted("weather", runs)
    budget = telling(per_tool=2)
    sizes = [3, 2, 1]
    agent = agent_of(
        [tool],
        [ToolErrorMiddleware(report_type_only, budget=budget)],
        calling(lambda t: ["weather"] * sizes[t], len(sizes)),
    )

    result = run(agent, path)

    handled = "Tool `weather` failed with LookupError."
    # One text for the rest of the run: each call told in step 2 and the call answered in
    # step 3 read the count the tool was closed at (3 before the step, plus one).
    assert errors(result) == [handled] * 3 + ["`weather` is off (4)."] * 3
    assert len(runs) == 5


def test_tell_says_once_for_one_failure_in_the_default_message(path: Path) -> None:
    # per_run=1: `lookup` fails first (the run's count is 1), then `weather` fails once,
    # which spends the budget and closes `weather` after one failure of its own.
    budget = ErrorBudget(per_run=1, when_spent="tell")
    agent = agent_of(
        [counted("lookup", []), counted("weather", [])],
        [ToolErrorMiddleware(report_type_only, budget=budget)],
        calling(lambda t: [["lookup"], ["weather"], ["weather"]][t], 3),
    )

    result = run(agent, path)

    closed = ErrorBudget.DEFAULT_MESSAGE.format(tool="weather", count=1, times="once")
    assert errors(result) == ["Tool `lookup` failed with LookupError.", closed, closed]
    assert "failed once in this run" in closed


def test_a_new_run_on_the_same_thread_starts_from_zero(path: Path) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    turns = [
        *calling(lambda t: ["weather"], 2)[:2],
        AIMessage("first answer"),
        *calling(lambda t: ["weather"], 2)[:2],
        AIMessage("second answer"),
    ]
    agent = agent_of([BROKEN], [middleware], turns, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "same"}}

    first = run(agent, path, {"messages": [HumanMessage("weather?")]}, config)
    second = run(agent, path, {"messages": [HumanMessage("and now?")]}, config)

    assert first["messages"][-1].content == "first answer"
    assert second["messages"][-1].content == "second answer"  # 2 more failures, not 4


def test_an_interrupt_is_never_counted_and_the_count_survives_the_resume(path: Path) -> None:
    def approve(action: str = "") -> str:
        answer = interrupt({"approve": action})
        raise PermissionError(f"{answer} may not approve")

    approve_tool = StructuredTool.from_function(approve, name="approve", description="asks")
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1))
    plan = ["weather", "approve", "weather"]
    agent = agent_of(
        [BROKEN, approve_tool],
        [middleware],
        calling(lambda t: [plan[t]], 3),
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "resume"}}

    paused = run(agent, path, None, config)
    assert "__interrupt__" in paused
    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path, Command(resume="bob"), config)

    # approve failed once (its own budget of 1: handled); weather's second failure spent its
    # budget, counted across the interrupt; the interrupt itself was never a failure.
    assert (raised.value.tool, raised.value.count) == ("weather", 2)


def test_retries_inside_count_as_one_failure(path: Path) -> None:
    attempts: list[int] = []

    def flaky(city: str = "") -> str:
        attempts.append(1)
        raise TimeoutError(city)

    tool = StructuredTool.from_function(flaky, name="weather", description="times out")
    middleware = [
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2)),
        ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False, on_failure="error"),
    ]
    agent = agent_of([tool], middleware, calling(lambda t: ["weather"], 5))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert raised.value.count == 3  # three calls failed, after three attempts each
    assert len(attempts) == 9


def test_a_budget_counts_the_calls_a_tool_call_limit_blocks(path: Path) -> None:
    runs: list[str] = []
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=5)),
        ToolCallLimitMiddleware(run_limit=3, exit_behavior="continue"),
    ]
    agent = agent_of([counted("weather", runs)], middleware, calling(lambda t: ["weather"], 6))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    # Three calls run and fail; the limit blocks the next ones, and the model reads each
    # block as an error answer, which the budget counts too: the sixth stops the run.
    assert runs == ["weather"] * 3
    assert (raised.value.count, raised.value.kind) == (6, "inner_middleware")


def explain_outage(exc: ConnectionError, request: ToolCallRequest) -> str:
    return f"`{request.tool_call['name']}` is unreachable; try again later."


def test_a_route_budget_counts_only_the_failures_its_route_handles(path: Path) -> None:
    # Outages have a budget of 2 per tool; other failures none. The tool alternates
    # KeyError and ConnectionError, so its third outage (its sixth failure) stops the run.
    error = ConnectionError("down")
    tool = counted("lookup", [], KeyError("id"), error)
    routes = [
        Route(ConnectionError, explain_outage, budget=ErrorBudget(per_tool=2)),
        Route(Exception, report_type_only),
    ]
    agent = agent_of(
        [tool], [ToolErrorMiddleware.from_routes(routes)], calling(lambda t: ["lookup"], 9)
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    spent = raised.value
    assert (spent.tool, spent.count, spent.limit, spent.scope) == ("lookup", 3, 2, "tool")
    assert spent.route == 0
    assert spent.__cause__ is error


def test_routes_without_a_budget_loop_freely_beside_one_with(path: Path) -> None:
    tools = [failing_tool("lookup", KeyError("id")), failing_tool("fetch", ConnectionError("down"))]
    routes = [
        Route(ConnectionError, explain_outage, budget=ErrorBudget(per_tool=1, when_spent="tell")),
        Route(Exception, report_type_only),
    ]
    agent = agent_of(
        tools, [ToolErrorMiddleware.from_routes(routes)], calling(lambda t: ["lookup", "fetch"], 4)
    )

    result = run(agent, path)

    texts = errors(result)
    assert texts.count("Tool `lookup` failed with KeyError.") == 4  # never counted
    assert texts.count("`fetch` is unreachable; try again later.") == 1
    closed = [t for t in texts if t.startswith("The tool `fetch` failed 2 times")]
    assert len(closed) == 3  # told once, then answered without running, twice


def test_a_route_budget_and_the_middleware_budget_both_count(path: Path) -> None:
    # The middleware allows 3 failures in the run, whatever their route; the outage route
    # allows 5 of its own. Failures of both routes spend the middleware's budget first.
    tool = counted("lookup", [], KeyError("id"), ConnectionError("down"))
    routes = [
        Route(ConnectionError, explain_outage, budget=ErrorBudget(per_tool=5)),
        Route(Exception, report_type_only),
    ]
    middleware = ToolErrorMiddleware.from_routes(routes, budget=ErrorBudget(per_run=3))
    agent = agent_of([tool], [middleware], calling(lambda t: ["lookup"], 9))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    spent = raised.value
    assert (spent.count, spent.limit, spent.scope, spent.route) == (4, 3, "run", None)


def test_the_first_budget_spent_decides_even_when_it_is_the_routes(path: Path) -> None:
    tool = failing_tool("lookup", ConnectionError("down"))
    routes = [Route(ConnectionError, explain_outage, budget=ErrorBudget(per_run=2))]
    middleware = ToolErrorMiddleware.from_routes(routes, budget=ErrorBudget(per_tool=10))
    agent = agent_of([tool], [middleware], calling(lambda t: ["lookup"], 9))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    spent = raised.value
    assert (spent.count, spent.limit, spent.scope, spent.route) == (3, 2, "run", 0)


def test_each_route_keeps_its_own_count_for_the_same_tool(path: Path) -> None:
    # Two routes, each with a budget of 2, for two kinds of failure of one tool: four
    # failures are handled (two of each), the fifth (a third KeyError) stops the run.
    tool = counted("lookup", [], KeyError("id"), ConnectionError("down"))
    routes = [
        Route(ConnectionError, explain_outage, budget=ErrorBudget(per_tool=2)),
        Route(KeyError, report_type_only, budget=ErrorBudget(per_tool=2)),
    ]
    agent = agent_of(
        [tool], [ToolErrorMiddleware.from_routes(routes)], calling(lambda t: ["lookup"], 9)
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.count, raised.value.route) == (3, 1)
    assert isinstance(raised.value.__cause__, KeyError)


def test_only_budgeted_routes_add_the_budget_hooks() -> None:
    plain = ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)])
    counted = ToolErrorMiddleware.from_routes(
        [Route(Exception, report_type_only, budget=ErrorBudget(per_tool=1))]
    )
    exceptions_only = ToolErrorMiddleware.from_routes(
        [Route(Exception, report_type_only, budget=ErrorBudget(per_tool=1, kinds=["exception"]))]
    )
    telling = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, report_type_only),
            Route(
                Exception,
                report_type_only,
                budget=ErrorBudget(per_tool=1, when_spent="tell", kinds=["exception"]),
            ),
        ]
    )

    nodes = [
        set(cast("Any", agent_of([BROKEN], [m], [])).get_graph().nodes)
        for m in (plain, counted, exceptions_only, telling)
    ]

    # A new run's reset, and the stop raised once the step that spent a budget is saved.
    # The rest is done in the model call's own step: the step the model reads is settled
    # as it starts, and the reply's malformed calls are met once it answers.
    budgeted = {"ToolErrorMiddleware.before_agent", "ToolErrorMiddleware.after_agent"}
    assert not any(node.startswith("ToolErrorMiddleware.") for node in nodes[0])
    for hooks in nodes[1:]:
        assert {node for node in hooks if node.startswith("ToolErrorMiddleware.")} == budgeted


def test_a_run_budget_told_closes_a_tool_on_its_first_failure(path: Path) -> None:
    # per_run=2: a fails twice; b's first failure is the third of the run, so b is closed
    # with a count of its own failures, 1.
    runs: list[str] = []
    budget = telling(per_run=2)
    plan = ["a", "a", "b", "b"]
    agent = agent_of(
        [counted("a", runs), counted("b", runs)],
        [ToolErrorMiddleware(report_type_only, budget=budget)],
        calling(lambda t: [plan[t]], len(plan)),
    )

    result = run(agent, path)

    assert errors(result)[2:] == ["`b` is off (1).", "`b` is off (1)."]
    assert runs == ["a", "a", "b"]


def test_a_failure_a_route_budget_closes_still_counts_for_the_middleware(path: Path) -> None:
    # fetch's outages: route budget of 1, told. Every failure, that one included, counts
    # for the middleware's per_run=3, so lookup's second failure is the fourth: stopped.
    runs: list[str] = []
    tools = [counted("fetch", runs, ConnectionError("down")), counted("lookup", runs)]
    routes = [
        Route(ConnectionError, explain_outage, budget=ErrorBudget(per_tool=1, when_spent="tell")),
        Route(Exception, report_type_only),
    ]
    middleware = ToolErrorMiddleware.from_routes(routes, budget=ErrorBudget(per_run=3))
    plan = ["fetch", "fetch", "lookup", "lookup", "lookup"]
    agent = agent_of(tools, [middleware], calling(lambda t: [plan[t]], len(plan)))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.count, raised.value.scope, raised.value.route) == (4, "run", None)
    assert runs == ["fetch", "fetch", "lookup", "lookup"]


def test_two_budgeted_middleware_in_one_agent_keep_their_own_counts(path: Path) -> None:
    # Each middleware handles one tool with per_run=2; a shared count would stop the run
    # at the third failure of the two together.
    runs: list[str] = []
    middleware = [
        ToolErrorMiddleware(
            report_type_only, tools=["a"], budget=ErrorBudget(per_run=2), name="for_a"
        ),
        ToolErrorMiddleware(
            report_type_only, tools=["b"], budget=ErrorBudget(per_run=2), name="for_b"
        ),
    ]
    plan = ["a", "b", "a", "b", "a"]
    agent = agent_of(
        [counted("a", runs), counted("b", runs)], middleware, calling(lambda t: [plan[t]], 5)
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.tool, raised.value.count) == ("a", 3)
    assert runs == plan


def test_a_spent_tell_budget_without_a_call_id_fails_clearly_and_keeps_the_exception() -> None:
    error = LookupError("Atlantis")
    middleware: Any = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=1, when_spent="tell")
    )
    request = direct_request(BROKEN, call("weather", "c1")).override(
        tool_call={"name": "weather", "args": {}, "id": None, "type": "tool_call"},
        state={"messages": [], COUNTS_KEY: {"ToolErrorMiddleware\x00weather": 1}},
    )

    def fail(_: ToolCallRequest) -> ToolMessage:
        raise error

    with pytest.raises(ValueError, match="`weather` has no id") as raised:
        middleware.wrap_tool_call(request, fail)

    assert raised.value.__cause__ is error


def test_a_closed_tools_call_without_an_id_runs_and_one_with_an_id_is_answered() -> None:
    middleware: Any = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=1, when_spent="tell", message="off")
    )
    closed = {
        "ToolErrorMiddleware\x00weather": 2,
        "ToolErrorMiddleware\x00weather\x00spent": 1,
        "ToolErrorMiddleware\x00\x00closed": 1,
    }
    ran: list[str | None] = []

    def run_tool(request: ToolCallRequest) -> ToolMessage:
        ran.append(request.tool_call["id"])
        return ToolMessage("sunny", tool_call_id=str(request.tool_call["id"]))

    def request_for(call_id: str | None) -> ToolCallRequest:
        return direct_request(BROKEN, call("weather", "c")).override(
            tool_call={"name": "weather", "args": {}, "id": call_id, "type": "tool_call"},
            state={"messages": [], COUNTS_KEY: closed},
        )

    without_id = middleware.wrap_tool_call(request_for(None), run_tool)
    with_id = middleware.wrap_tool_call(request_for("c2"), run_tool)

    assert ran == [None]
    assert without_id.content == "sunny"
    # The answer goes back marked as the package's own: no middleware counts it.
    assert isinstance(with_id, Command)
    update: dict[str, Any] = cast("dict[str, Any]", with_id.update)
    # Marked in its step: the state holds no reply, so the step is "" before the call's id.
    assert update == {"messages": [ANY], "tool_error_settled": {"\x00c2": 1, "\x00c2\x00own": 1}}
    answer: ToolMessage = update["messages"][0]
    assert (answer.tool_call_id, answer.content, answer.status) == ("c2", "off", "error")


ONLY_EXCEPTIONS: tuple[FailureKind, ...] = ("exception",)


@pytest.mark.parametrize(
    "budget",
    [
        ErrorBudget(per_tool=1),
        ErrorBudget(per_tool=1, kinds=ONLY_EXCEPTIONS),
        ErrorBudget(per_tool=1, when_spent="tell"),
        ErrorBudget(per_tool=1, when_spent="tell", kinds=ONLY_EXCEPTIONS),
        ErrorBudget(per_tool=1, when_spent="interrupt"),
        ErrorBudget(consecutive=1),
        ErrorBudget(consecutive=1, kinds=ONLY_EXCEPTIONS),
    ],
)
def test_a_budgeted_async_only_middleware_refuses_the_sync_path_by_name(
    budget: ErrorBudget,
) -> None:
    middleware: Any = ToolErrorMiddleware(aon_error=_aexplain, budget=budget, name="async_errors")

    with pytest.raises(NotImplementedError, match="async_errors has only an async handler"):
        middleware.wrap_tool_call(direct_request(BROKEN, call("weather", "c1")), _never_run)


@pytest.mark.parametrize(
    ("scope", "route", "words"),
    [
        ("tool", None, ["The error budget", "of `weather`", "(per_tool)"]),
        ("run", None, ["The error budget", "of all tools", "(per_run)"]),
        ("tool", 2, ["The budget of routes[2]", "handled by routes[2]", "(per_tool)"]),
    ],
)
def test_a_spent_budget_says_which_limit_of_which_budget(
    scope: Literal["tool", "run"], route: int | None, words: list[str]
) -> None:
    spent = ToolErrorBudgetExceeded("weather", 4, 3, scope, route=route)

    text = str(spent)

    assert all(word in text for word in words), text
    assert "4 failures" in text
    assert "limit of 3" in text


def test_the_repr_shows_each_budget() -> None:
    route = Route(KeyError, report_type_only, budget=ErrorBudget(per_tool=2))
    middleware = ToolErrorMiddleware.from_routes([route], budget=ErrorBudget(per_run=4))

    assert "budget=ErrorBudget(per_tool=2, per_run=None" in repr(route)
    assert "budget=ErrorBudget(per_tool=None, per_run=4" in repr(middleware)
    assert "budget" not in repr(Route(KeyError, report_type_only))
    assert "budget" not in repr(ToolErrorMiddleware(report_type_only))


def test_the_repr_of_a_budget_shows_the_kinds_it_counts_and_only_those_it_narrows() -> None:
    narrowed = ErrorBudget(per_tool=3, kinds=("exception", "unknown_tool"))

    assert repr(narrowed) == (
        "ErrorBudget(per_tool=3, per_run=None, when_spent='stop', "
        "kinds=('exception', 'unknown_tool'))"
    )
    assert "kinds" not in repr(ErrorBudget(per_tool=3))


def test_the_repr_of_a_budget_shows_a_consecutive_limit_only_when_it_has_one() -> None:
    assert repr(ErrorBudget(consecutive=3, when_spent="tell")) == (
        "ErrorBudget(per_tool=None, per_run=None, consecutive=3, when_spent='tell')"
    )
    assert "consecutive" not in repr(ErrorBudget(per_run=3))


def test_a_route_budget_that_is_not_an_error_budget_fails_at_construction() -> None:
    untyped_route: Any = Route

    with pytest.raises(TypeError, match=re.escape("ErrorBudget or None")):
        untyped_route(Exception, report_type_only, budget={"per_tool": 3})


@pytest.mark.parametrize("kind", ["exception", "invalid_arguments"])
def test_a_run_paused_in_one_process_keeps_its_counts_when_resumed_in_another(
    tmp_path: FilePath, kind: str
) -> None:
    database = str(tmp_path / "checkpoints.sqlite")

    paused = run_python("-m", "tests._durable_budget", "pause", database, kind)
    resumed = run_python("-m", "tests._durable_budget", "resume", database, kind)

    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "paused after 2 handled failures"
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == f"stopped: weather failed 4 times, limit 3, last kind {kind}"
    FIGURES.append(
        f"budget: counts of {kind} kept across an interrupt, resumed in another process (SQLite)"
    )


def declines_value_errors(exc: Exception, request: ToolCallRequest) -> str | None:
    """Hands back every failure but a `ValueError`, which it lets propagate."""
    return None if isinstance(exc, ValueError) else "Try again."


DECLINING: dict[str, Callable[[ErrorBudget], ToolErrorMiddleware]] = {
    "the middleware's handler": lambda budget: ToolErrorMiddleware(
        declines_value_errors, budget=budget
    ),
    "a route's handler, under the route's budget": lambda budget: ToolErrorMiddleware.from_routes(
        [Route(Exception, declines_value_errors, budget=budget)]
    ),
    "a route of its own, under the middleware's budget": lambda budget: (
        ToolErrorMiddleware.from_routes(
            [Route(ValueError, lambda e, r: None), Route(Exception, report_type_only)],
            budget=budget,
        )
    ),
}


@pytest.mark.parametrize("when_spent", ["stop", "tell"])
@pytest.mark.parametrize("declining", DECLINING)
def test_a_handler_that_declines_propagates_the_same_exception_once_the_budget_is_used(
    path: Path, declining: str, when_spent: Literal["stop", "tell"]
) -> None:
    # The first failure is handled and uses the whole budget; the second is one the
    # handler declines, so it must propagate as it is, neither stopping nor closing.
    declined = ValueError("bad input")
    runs: list[str] = []
    tool = counted("svc", runs, ConnectionError("down"), declined)
    middleware = DECLINING[declining](ErrorBudget(per_tool=1, per_run=1, when_spent=when_spent))
    agent = agent_of([tool], [middleware], calling(lambda t: ["svc"], 4))

    with pytest.raises(ValueError, match="bad input") as raised:
        run(agent, path)

    assert raised.value is declined
    assert runs == ["svc", "svc"]


def catches_value_errors(exc: ValueError, request: ToolCallRequest) -> str:
    return "outer"


def test_a_declined_failure_counts_nothing_and_stops_nothing(path: Path) -> None:
    # An outer middleware answers what the budgeted one declines. Failures: handled (1),
    # handled (2: the budget is used), declined, declined, handled (3: over, the stop).
    last = ConnectionError("down again")
    raised_in_turn = (ConnectionError("1"), ConnectionError("2"), ValueError("a"), ValueError("b"))
    runs: list[str] = []
    outer = ToolErrorMiddleware(catches_value_errors, exceptions=ValueError, name="outer")
    inner = ToolErrorMiddleware(declines_value_errors, budget=ErrorBudget(per_tool=2))
    tool = counted("svc", runs, *raised_in_turn, last)
    agent = agent_of([tool], [outer, inner], calling(lambda t: ["svc"], 9))

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert (raised.value.count, raised.value.limit) == (3, 2)
    assert raised.value.__cause__ is last
    assert len(runs) == 5


def test_a_declined_failure_closes_nothing(path: Path) -> None:
    # As above under "tell": the declined failures reach the outer middleware and the
    # tool stays open until the third handled failure.
    raised_in_turn = (ConnectionError("1"), ConnectionError("2"), ValueError("a"), ValueError("b"))
    runs: list[str] = []
    outer = ToolErrorMiddleware(catches_value_errors, exceptions=ValueError, name="outer")
    budget = telling(per_tool=2)
    inner = ToolErrorMiddleware(declines_value_errors, budget=budget)
    tool = counted("svc", runs, *raised_in_turn, ConnectionError("3"))
    agent = agent_of([tool], [outer, inner], calling(lambda t: ["svc"], 6))

    result = run(agent, path)

    assert errors(result) == ["Try again."] * 2 + ["outer"] * 2 + ["`svc` is off (3)."] * 2
    assert len(runs) == 5


BAD_BUDGETS: dict[str, Refusal] = {
    "zero": (lambda: Untyped(per_tool=0), ValueError, "at least 1"),
    "negative": (lambda: Untyped(per_run=-2), ValueError, "at least 1"),
    "a float": (lambda: Untyped(per_tool=2.5), TypeError, "`per_tool` must be a positive int"),
    "a bool": (lambda: Untyped(per_tool=True), TypeError, "(bool)"),
    "a str": (lambda: Untyped(per_run="3"), TypeError, "`per_run` must be a positive int"),
    "consecutive as a str": (
        lambda: Untyped(consecutive="2"),
        TypeError,
        "`consecutive` must be a positive int or None, but got '2' (str)",
    ),
    "consecutive of zero": (lambda: Untyped(consecutive=0), ValueError, "`consecutive`"),
    "no limit": (lambda: Untyped(), ValueError, "no limit"),
    "an unknown when_spent": (
        lambda: Untyped(per_tool=1, when_spent="retry"),
        ValueError,
        '"tell"',
    ),
    "a when_spent that is not a str": (
        lambda: Untyped(per_tool=3, when_spent=1),
        TypeError,
        "but got 1 (int)",
    ),
    "an empty message": (lambda: Untyped(per_tool=1, message=""), TypeError, "non-empty str"),
    "a message with an unknown field": (
        lambda: Untyped(per_tool=1, message="{tool} failed {n}"),
        ValueError,
        "{n}",
    ),
    "a budget that is not an ErrorBudget": (
        lambda: UntypedMiddleware(report_type_only, budget=3),
        TypeError,
        "ErrorBudget or None",
    ),
}


@pytest.mark.parametrize("case", BAD_BUDGETS)
def test_a_wrong_budget_fails_at_construction(case: str) -> None:
    assert_refused(BAD_BUDGETS[case])


def test_without_a_budget_the_agent_graph_is_unchanged() -> None:
    plain = agent_of([BROKEN], [ToolErrorMiddleware(report_type_only)], [])
    budgeted = agent_of(
        [BROKEN], [ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1))], []
    )

    graph: Any = plain
    budgeted_graph: Any = budgeted
    assert "ToolErrorMiddleware.before_agent" not in graph.get_graph().nodes
    assert "ToolErrorMiddleware.before_agent" in budgeted_graph.get_graph().nodes


def test_create_agent_sets_the_recursion_limit_a_looping_model_would_reach() -> None:
    # Nothing in langchain stops a model that keeps calling a broken tool before this
    # limit, which the guide names: an upstream change to it shows here.
    graph: Any = agent_of([], [], [])

    assert graph.config["recursion_limit"] == 9999


def test_without_a_budget_the_agent_state_and_graph_are_langchains_own() -> None:
    # Compared with an agent without middleware, not with langchain's key names.
    bare: Any = agent_of([BROKEN], [], [])
    without_budget = [
        ToolErrorMiddleware(report_type_only),
        ToolErrorMiddleware.from_routes(
            [Route(LookupError, report_type_only), Route(Exception, report_type_only)]
        ),
    ]

    for middleware in without_budget:
        graph: Any = agent_of([BROKEN], [middleware], [])
        assert set(graph.channels) == set(bare.channels)  # the state keys, and nothing else
        assert set(graph.get_graph().nodes) == set(bare.get_graph().nodes)


# The counts of a run in which a "tell" budget has closed the weather tool.
CLOSED_WEATHER = {
    "ToolErrorMiddleware\x00weather": 2,
    "ToolErrorMiddleware\x00weather\x00spent": 1,
    "ToolErrorMiddleware\x00\x00closed": 1,
}

# Calls that are not to the closed tool, with the counts they meet.
NOT_A_CLOSED_TOOL: dict[str, tuple[str, dict[str, int]]] = {
    "a call to an open tool": ("echo", CLOSED_WEATHER),
    "a call to a tool counted but not closed": ("weather", {"ToolErrorMiddleware\x00weather": 1}),
    "a run with nothing counted": ("weather", {}),
}


@pytest.mark.parametrize("case", NOT_A_CLOSED_TOOL)
def test_only_a_call_to_a_closed_tool_is_answered_without_running(case: str, path: Path) -> None:
    middleware: Any = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=1, when_spent="tell")
    )
    tool, counts = NOT_A_CLOSED_TOOL[case]
    request = direct_request(BROKEN, call(tool, "c1")).override(
        state={"messages": [], COUNTS_KEY: counts}
    )
    ran: list[str] = []

    def run_tool(request: ToolCallRequest) -> ToolMessage:
        ran.append(request.tool_call["name"])
        return ToolMessage("ran", tool_call_id="c1")

    async def arun_tool(request: ToolCallRequest) -> ToolMessage:
        return run_tool(request)

    answer = (
        middleware.wrap_tool_call(request, run_tool)
        if path == "sync"
        else asyncio.run(middleware.awrap_tool_call(request, arun_tool))
    )

    assert (ran, answer.content) == ([tool], "ran")


def noting_tool() -> BaseTool:
    """`note(text)`: succeeds with a `Command` that answers the call; raises for "fail"."""

    def note(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Keep a note."""
        if text == "fail":
            raise OSError("the notebook is full")
        answer = ToolMessage(f"noted: {text}", tool_call_id=tool_call_id)
        return Command(update={"messages": [answer]})

    return StructuredTool.from_function(note)


@pytest.mark.parametrize(
    "budget",
    [
        ErrorBudget(per_tool=2),
        ErrorBudget(per_tool=2, when_spent="tell"),
        ErrorBudget(consecutive=1),  # the success between the failures must end their row
    ],
)
def test_a_tool_that_answers_with_a_command_passes_through_a_budget(
    path: Path, budget: ErrorBudget
) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    script = [
        AIMessage("", tool_calls=[call("note", f"c{n}", text=text)])
        for n, text in enumerate(["fail", "milk", "fail"])
    ]
    agent = agent_of([noting_tool()], [middleware], [*script, AIMessage("done")])

    result = run(agent, path)

    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert (answers["c1"].text, answers["c1"].status) == ("noted: milk", "success")
    assert [answers[i].status for i in ("c0", "c2")] == ["error", "error"]
    assert result["messages"][-1].text == "done"


def test_an_async_only_middleware_with_a_tell_budget_answers_the_closed_tool() -> None:
    # The looking classes have async-only twins: the closed tool's calls are still
    # answered before they run.
    runs: list[str] = []
    budget = telling(per_tool=1)
    middleware = ToolErrorMiddleware(aon_error=_aexplain, budget=budget)
    agent = agent_of([counted("weather", runs)], [middleware], calling(lambda t: ["weather"], 4))

    result = run(agent, "async")

    assert errors(result) == [
        "failed",
        "`weather` is off (2).",
        "`weather` is off (2).",
        "`weather` is off (2).",
    ]
    assert len(runs) == 2


def test_an_async_only_middleware_with_an_interrupt_budget_pauses_before_the_held_tool() -> None:
    runs: list[str] = []
    middleware = ToolErrorMiddleware(
        aon_error=_aexplain, budget=ErrorBudget(per_tool=1, when_spent="interrupt")
    )
    agent = agent_of(
        [counted("weather", runs)],
        [middleware],
        calling(lambda t: ["weather"], 4),
        checkpointer=InMemorySaver(),
    )

    paused = run(agent, "async", config={"configurable": {"thread_id": "async-only"}})

    assert len(runs) == 2  # the second failure spent the budget; the third call waits
    [pause] = paused["__interrupt__"]
    assert (pause.value["tool"], pause.value["count"]) == ("weather", 2)


def test_the_middlewares_budget_counts_a_kind_a_routes_own_budget_leaves_out(path: Path) -> None:
    # The route's own budget counts only errors tools report; the middleware's counts every
    # kind, so the route's exceptions spend it at the second failure.
    runs: list[str] = []
    reported: tuple[FailureKind, ...] = ("tool_reported",)
    own = ErrorBudget(per_tool=5, kinds=reported)
    middleware = ToolErrorMiddleware.from_routes(
        [Route(LookupError, report_type_only, budget=own)], budget=ErrorBudget(per_tool=1)
    )
    agent = agent_of([counted("weather", runs)], [middleware], calling(lambda t: ["weather"], 4))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    assert (spent.value.route, spent.value.count, len(runs)) == (None, 2, 2)


def test_a_malformed_call_of_a_closed_tool_is_told_the_count_the_tool_was_closed_at(
    path: Path,
) -> None:
    runs: list[str] = []
    budget = telling(per_tool=1)
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    cut = {"name": "weather", "args": '{"query": "Os', "id": "cut", "error": None}
    script = [
        AIMessage("", tool_calls=[call("weather", "w1")]),
        AIMessage("", tool_calls=[call("weather", "w2")]),
        AIMessage("", invalid_tool_calls=[cut]),
        AIMessage("done"),
    ]
    agent = agent_of([counted("weather", runs)], [middleware], script)

    result = run(agent, path)

    assert errors(result)[1:] == ["`weather` is off (2).", "`weather` is off (2)."]
