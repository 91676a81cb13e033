"""`ErrorBudget(when_spent="interrupt")` through real agents: a person decides, before the tool
runs again.

The tool here fails every time and counts its runs, so a test can tell that the pause
comes before the call runs and that a resume runs it at most once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import ValidationError

from langchain_tool_errors import (
    BudgetDecision,
    BudgetPause,
    ErrorBudget,
    FailureKind,
    MalformedToolCall,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, ScriptStep
from tests._agents import Agent, Path, call, echo_tool, failing_tool, rerun, run, tool_messages
from tests._postgres import Postgres
from tests._processes import run_python

CONFIG: RunnableConfig = {"configurable": {"thread_id": "t"}}
CALL = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c"}])
TWO_CITIES = AIMessage(
    "",
    tool_calls=[
        {"name": "weather", "args": {"city": "Oslo"}, "id": "a"},
        {"name": "weather", "args": {"city": "Bergen"}, "id": "b"},
    ],
)
"""One reply of two parallel calls of `weather`, ids "a" and "b"."""
FAILED = "Tool `weather` failed with ConnectionError."


def weather_tool(runs: list[str]) -> BaseTool:
    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        runs.append(city)
        raise ConnectionError("the weather service is down")

    return weather


def agent_of(runs: list[str], calls: int = 8, inputs: int = 1, **options: Any) -> Agent:
    middleware = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=2, when_spent="interrupt"),
        record_failures=True,
        **options,
    )
    built: Agent = create_agent(
        ScriptedChatModel(script=[Repeat(CALL, times=calls), AIMessage("done")] * inputs),
        tools=[weather_tool(runs)],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    return built


def scripted_agent(
    script: list[AIMessage | Repeat], tools: list[BaseTool], budget: ErrorBudget
) -> Agent:
    """An agent of one middleware (`report_type_only`, `budget`) whose model says "done" last."""
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    built: Agent = create_agent(
        ScriptedChatModel(script=[*script, AIMessage("done")]),
        tools=tools,
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    return built


def stacked_pausing_agent(runs: list[str], calls: int) -> Agent:
    """Two middleware, "outer" and "inner", each holding `weather` at its second failure;
    the model calls it `calls` times, then says "done"."""
    budget = ErrorBudget(per_tool=1, when_spent="interrupt")
    outer = ToolErrorMiddleware(report_type_only, budget=budget, name="outer")
    inner = ToolErrorMiddleware(report_type_only, budget=budget, name="inner")
    built: Agent = create_agent(
        ScriptedChatModel(script=[Repeat(CALL, times=calls), AIMessage("done")]),
        tools=[weather_tool(runs)],
        middleware=[outer, inner],
        checkpointer=InMemorySaver(),
    )
    return built


def cut_short(*ids: str) -> AIMessage:
    """A reply of calls to `weather` whose arguments were cut short (not JSON)."""
    return AIMessage(
        "",
        invalid_tool_calls=[
            invalid_tool_call(name="weather", args='{"city": "Os', id=call_id) for call_id in ids
        ],
    )


def paused_with(result: dict[str, Any]) -> BudgetPause:
    [pause] = result["__interrupt__"]
    value: BudgetPause = pause.value
    return value


def resume(agent: Agent, path: Path, decision: BudgetDecision | object) -> dict[str, Any]:
    return run(agent, path, Command(resume=decision), CONFIG)


def test_the_run_pauses_before_the_spent_tool_runs_again(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs)

    result = run(agent, path, config=CONFIG)

    assert runs == ["Oslo"] * 3  # the third failure spent the budget; the fourth call waits
    pause = paused_with(result)
    assert {k: v for k, v in pause.items() if k != "failures"} == {
        "middleware": "ToolErrorMiddleware",
        "tool": "weather",
        "call_id": "c-4",
        "args": {"city": "Oslo"},
        "kind": "exception",
        "count": 3,
        "limit": 2,
        "scope": "tool",
        "route": None,
    }
    assert [(f["call_id"], f["outcome"]) for f in pause["failures"]] == [
        ("c-1", "answered"),
        ("c-2", "answered"),
        ("c-3", "held"),
    ]
    assert tool_messages(result)["c-3"].text == FAILED  # the spending failure, as usual


def test_go_on_runs_the_call_once_and_starts_the_tool_s_count_again(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "go_on"})

    # c-4 ran once; it and two more failures spend the budget again, and c-7 waits.
    assert len(runs) == 6
    assert paused_with(result)["call_id"] == "c-7"
    assert paused_with(result)["count"] == 3
    assert tool_messages(result)["c-4"].text == FAILED


def test_an_answer_replaces_the_call_and_the_tool_stays_held(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "answer", "text": "It is sunny in Oslo."})

    assert len(runs) == 3  # the tool did not run for c-4
    answer = tool_messages(result)["c-4"]
    assert (answer.text, answer.status, answer.name) == (
        "It is sunny in Oslo.",
        "success",
        "weather",
    )
    assert paused_with(result)["call_id"] == "c-5"  # the next call waits again


def test_stop_ends_the_run_with_the_budget_s_error_and_answers_the_call(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs, calls=4)
    run(agent, path, config=CONFIG)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        resume(agent, path, {"type": "stop"})

    stop = spent.value
    assert (stop.tool, stop.count, stop.limit, stop.scope, stop.kind) == (
        "weather",
        3,
        2,
        "tool",
        "exception",
    )
    assert stop.failure == {  # the failure that spent the budget, not the waiting call
        "middleware": "ToolErrorMiddleware",
        "tool": "weather",
        "call_id": "c-3",
        "kind": "exception",
        "error_type": "ConnectionError",
        "route": 0,
        "outcome": "stopped",
    }
    assert len(runs) == 3
    assert "chained below" not in str(stop)  # nothing is: a person stopped the run
    assert "a person stopped the run at a pause" in str(stop)
    # The thread goes on at its next input, with the waiting call answered by the stop.
    after = run(agent, path, {"messages": [HumanMessage("and now?")]}, CONFIG)
    stopped = tool_messages(after)["c-4"]
    assert stopped.text == (  # it never ran: the person stopped the run at its pause
        "This call to `weather` did not run: a person stopped the run when the error budget "
        "was spent (3 failures of `weather` in this run, over the limit of 2)."
    )
    assert (stopped.name, stopped.status) == ("weather", "error")
    assert after["messages"][-1].text == "done"


def test_a_resume_that_is_not_a_decision_is_refused_and_the_pause_stays(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs)
    run(agent, path, config=CONFIG)

    with pytest.raises(ValidationError) as refused:
        resume(agent, path, {"type": "retry"})

    # One error, about the type (the schema tells the decisions apart by it); the note
    # names the call that waits and the fix.
    assert [error["type"] for error in refused.value.errors()] == ["union_tag_invalid"]
    [note] = [note for note in refused.value.__notes__ if "Command(resume=...)" in note]
    assert "`weather`" in note
    assert "'c-4'" in note
    assert "Command(resume=...)" in note
    assert note.endswith(
        'one of {"type": "go_on"}, {"type": "answer", "text": "..."}, {"type": "stop"}.'
    )
    assert len(runs) == 3
    result = resume(agent, path, {"type": "answer", "text": "Sunny."})
    assert tool_messages(result)["c-4"].text == "Sunny."


def test_without_a_record_the_pause_lists_no_failures_and_says_the_rest(path: Path) -> None:
    # The payload's failures are the record's: without `record_failures=True` there is none.
    runs: list[str] = []
    budget = ErrorBudget(per_tool=2, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=4)], [weather_tool(runs)], budget)

    pause = paused_with(run(agent, path, config=CONFIG))

    assert pause["failures"] == []
    assert (pause["tool"], pause["call_id"], pause["count"], pause["limit"]) == (
        "weather",
        "c-4",
        3,
        2,
    )
    assert len(runs) == 3


def test_the_pause_shows_clients_the_decisions_it_takes_as_json_schema() -> None:
    # A client (the LangGraph server's, a UI) can build its form from the schema: one of
    # three objects told apart by "type", none with a key of another.
    agent = agent_of([])

    [pause] = run(agent, "sync", config=CONFIG)["__interrupt__"]

    schema: dict[str, Any] = pause.response_schema
    assert schema["discriminator"]["propertyName"] == "type"
    members = schema["$defs"]
    assert sorted(members[name]["properties"]["type"]["const"] for name in members) == [
        "answer",
        "go_on",
        "stop",
    ]
    assert all(member["additionalProperties"] is False for member in members.values())
    assert members["AnswerDecision"]["required"] == ["type", "text"]


def test_a_new_input_starts_with_no_tool_held(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs, calls=3, inputs=2)
    first = run(agent, path, config=CONFIG)
    assert "__interrupt__" not in first  # three failures: held, but never called again

    second = run(agent, path, {"messages": [HumanMessage("again")]}, CONFIG)

    assert len(runs) == 6  # the new run's calls ran: the tool was not held any more
    assert "__interrupt__" not in second


DECIDED_ELSEWHERE = {
    '{"type": "go_on"}': "c-4 read 'Tool `weather` failed with ConnectionError.', ran 4",
    '{"type": "answer", "text": "Sunny."}': "c-4 read 'Sunny.', ran 3",
    '{"type": "stop"}': "stopped at count 3, ran 3",
}


@pytest.mark.parametrize("decision", DECIDED_ELSEWHERE)
def test_a_pause_in_one_process_is_decided_in_another(tmp_path: FilePath, decision: str) -> None:
    database = str(tmp_path / "checkpoints.sqlite")
    runs = str(tmp_path / "runs.txt")
    decided_elsewhere(database, runs, decision)


@pytest.mark.parametrize("decision", DECIDED_ELSEWHERE)
def test_a_pause_kept_in_postgresql_is_decided_in_another_process(
    tmp_path: FilePath, postgres: Postgres, decision: str
) -> None:
    decided_elsewhere(postgres.new_database(), str(tmp_path / "runs.txt"), decision)


def decided_elsewhere(database: str, runs: str, decision: str) -> None:
    paused = run_python("-m", "tests._durable_pause", "pause", database, runs)
    resumed = run_python("-m", "tests._durable_pause", "resume", database, runs, decision)

    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "paused before c-4: count 3, ran 3"
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == DECIDED_ELSEWHERE[decision]


def test_go_on_after_a_per_run_budget_starts_the_run_s_count_again(path: Path) -> None:
    runs: list[str] = []
    budget = ErrorBudget(per_run=2, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=8)], [weather_tool(runs)], budget)
    first = run(agent, path, config=CONFIG)
    assert (paused_with(first)["scope"], paused_with(first)["count"]) == ("run", 3)

    result = resume(agent, path, {"type": "go_on"})

    assert len(runs) == 6  # three more failures before the run's count is over again
    assert paused_with(result)["call_id"] == "c-7"


def test_parallel_calls_to_a_held_tool_each_wait_for_their_own_decision(path: Path) -> None:
    runs: list[str] = []
    budget = ErrorBudget(per_tool=1, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=2), TWO_CITIES], [weather_tool(runs)], budget)

    paused = run(agent, path, config=CONFIG)

    assert len(runs) == 2
    pauses = {p.value["call_id"]: p.id for p in paused["__interrupt__"]}
    assert sorted(pauses) == ["a", "b"]
    decisions = {
        pauses["a"]: {"type": "answer", "text": "Oslo: sunny."},
        pauses["b"]: {"type": "answer", "text": "Bergen: rain."},
    }
    result = resume(agent, path, decisions)

    answers = tool_messages(result)
    assert (answers["a"].text, answers["b"].text) == ("Oslo: sunny.", "Bergen: rain.")
    assert len(runs) == 2


def test_a_tool_held_by_malformed_calls_pauses_at_its_next_call(path: Path) -> None:
    runs: list[str] = []
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed)
    script: list[AIMessage | Repeat] = [Repeat(cut_short("m"), times=2), CALL]
    agent = scripted_agent(script, [weather_tool(runs)], budget)

    paused = run(agent, path, config=CONFIG)

    pause = paused_with(paused)
    assert (pause["call_id"], pause["kind"], pause["count"]) == ("c", "malformed_call", 2)
    assert runs == []  # the valid call waits for the person


def test_an_interrupt_budget_inside_another_middleware_counts_its_malformed_calls(
    path: Path,
) -> None:
    # The outer middleware answers malformed calls with its route. The budget inside it
    # meets each reply first, in the model call's step, and counts the calls: the second
    # spends it, and the tool is held.
    told: list[ToolFailure] = []
    answering = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, lambda failure, request: "send it again")],
        listeners=[told.append],
        name="answering",
    )
    budget = ErrorBudget(per_run=1, when_spent="interrupt")
    holding = ToolErrorMiddleware(
        report_type_only, budget=budget, listeners=[told.append], name="holding"
    )
    # Then a cut-short call of a tool it does not hold is met in the step as any other.
    other = AIMessage(
        "", invalid_tool_calls=[invalid_tool_call(name="other", args='{"city', id="o3")]
    )
    built: Agent = create_agent(
        ScriptedChatModel(script=[cut_short("m1"), cut_short("m2"), other, AIMessage("done")]),
        tools=[weather_tool([]), echo_tool("other")],
        middleware=[answering, holding],
        checkpointer=InMemorySaver(),
    )

    result = run(built, path, config=CONFIG)

    assert [(f["middleware"], f["call_id"], f["outcome"]) for f in told] == [
        ("holding", "m1", "answered"),
        ("answering", "m1", "answered"),
        ("holding", "m2", "held"),
        ("answering", "m2", "answered"),
        ("holding", "o3", "held"),
        ("answering", "o3", "answered"),
    ]
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == [
        "send it again"
    ] * 3


def test_a_held_tool_s_cut_short_call_pauses_before_another_middleware_answers_it(
    path: Path,
) -> None:
    # Once the budget holds `weather`, its next cut-short call is left to the budget's
    # node after the model, which pauses: the outer middleware's route does not answer it.
    answering = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, lambda failure, request: "send it again")], name="answering"
    )
    budget = ErrorBudget(per_run=1, when_spent="interrupt")
    holding = ToolErrorMiddleware(report_type_only, budget=budget, name="holding")
    asked: list[int] = []

    def third(messages: Sequence[BaseMessage]) -> AIMessage:
        asked.append(len(messages))
        return cut_short("m3")

    script: list[ScriptStep] = [cut_short("m1"), cut_short("m2"), third, AIMessage("done")]
    built: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[weather_tool([])],
        middleware=[answering, holding],
        checkpointer=InMemorySaver(),
    )

    paused = run(built, path, config=CONFIG)

    assert paused_with(paused)["call_id"] == "m3"
    answered = [m.tool_call_id for m in paused["messages"] if isinstance(m, ToolMessage)]
    assert answered == ["m1", "m2"]

    # The resume goes on from the pause: the model is not called again for the same reply.
    done = resume(built, path, {"type": "answer", "text": "no forecast today"})

    replies = [m for m in done["messages"] if isinstance(m, AIMessage)]
    assert [r.invalid_tool_calls[0]["id"] for r in replies[:3]] == ["m1", "m2", "m3"]
    assert [r.text for r in replies[3:]] == ["done"]
    assert tool_messages(done)["m3"].text == "no forecast today"
    assert len(asked) == 1


def test_a_route_s_own_interrupt_budget_holds_the_tool(path: Path) -> None:
    runs: list[str] = []
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(
                ConnectionError,
                report_type_only,
                budget=ErrorBudget(per_tool=1, when_spent="interrupt"),
            )
        ]
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[Repeat(CALL, times=3), AIMessage("done")]),
        tools=[weather_tool(runs)],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )

    paused = run(agent, path, config=CONFIG)

    pause = paused_with(paused)
    assert (pause["call_id"], pause["route"], pause["count"]) == ("c-3", 0, 2)
    assert len(runs) == 2
    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        resume(agent, path, {"type": "stop"})
    assert (spent.value.route, spent.value.count) == (0, 2)  # the route's budget, stopped


def blocked_agent(order: str, calls: int = 12) -> Agent:
    """A model that keeps calling a tool a limit blocks after its first run: each block is a
    failure ("inner_middleware") the interrupt budget counts, and the tool never runs again."""
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=2, when_spent="interrupt"),
        record_failures=True,
    )
    middleware: list[Any] = [limit, ours] if order == "limit first" else [ours, limit]
    echo = AIMessage("", tool_calls=[call("echo", "e", query="hi")])
    built: Agent = create_agent(
        ScriptedChatModel(script=[Repeat(echo, times=calls), AIMessage("done")]),
        tools=[echo_tool()],
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    return built


ORDERS = ("limit first", "ours first")


@pytest.mark.parametrize("order", ORDERS)
def test_a_held_tool_a_limit_keeps_blocking_pauses_at_its_next_block(
    path: Path, order: str
) -> None:
    agent = blocked_agent(order)

    paused = run(agent, path, config=CONFIG)

    # e-1 ran; the blocks of e-2 and e-3 counted, e-4's spent the budget and held the tool,
    # and e-5, which the limit blocked too, is where the run waits (not a loop to the end).
    pause = paused_with(paused)
    assert (pause["call_id"], pause["kind"], pause["count"]) == ("e-5", "inner_middleware", 3)
    records = [(f["call_id"], f["outcome"]) for f in paused["tool_failures"]]
    assert records == [("e-2", "answered"), ("e-3", "answered"), ("e-4", "held")]


@pytest.mark.parametrize("order", ORDERS)
def test_a_person_s_answer_takes_the_place_of_the_block_and_the_tool_stays_held(
    path: Path, order: str
) -> None:
    agent = blocked_agent(order)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "answer", "text": "hi from a person"})

    answer = tool_messages(result)["e-5"]
    assert (answer.text, answer.status, answer.name) == ("hi from a person", "success", "echo")
    assert [m.tool_call_id for m in result["messages"] if isinstance(m, ToolMessage)].count(
        "e-5"
    ) == 1  # the block's answer was replaced, not answered twice
    assert paused_with(result)["call_id"] == "e-6"
    # The block is still a failure of the run, answered: by the person, in the block's place.
    [record] = [f for f in result["tool_failures"] if f["call_id"] == "e-5"]
    assert (record["kind"], record["outcome"]) == ("inner_middleware", "answered")


@pytest.mark.parametrize("order", ORDERS)
def test_go_on_at_a_block_counts_the_tool_s_failures_from_zero(path: Path, order: str) -> None:
    agent = blocked_agent(order)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "go_on"})

    # e-5's block is the first failure counted again. The limit counts each invocation's
    # calls, so e-6 ran (the tool was released: it did not pause); e-8's block is the third.
    messages = tool_messages(result)
    assert "limit" in messages["e-5"].text  # the block stays its answer
    assert messages["e-6"].text == "echo: hi"
    outcomes = [(f["call_id"], f["outcome"]) for f in result["tool_failures"]][3:]
    assert outcomes == [("e-5", "answered"), ("e-7", "answered"), ("e-8", "held")]
    pause = paused_with(result)
    assert (pause["call_id"], pause["count"]) == ("e-9", 3)


@pytest.mark.parametrize("order", ORDERS)
def test_stop_at_a_block_ends_the_run_with_the_budget_s_error(path: Path, order: str) -> None:
    agent = blocked_agent(order)
    run(agent, path, config=CONFIG)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        resume(agent, path, {"type": "stop"})

    assert (spent.value.tool, spent.value.count, spent.value.kind) == (
        "echo",
        3,
        "inner_middleware",
    )
    assert spent.value.failure is not None
    # e-4's block spent the budget; e-5, blocked too, waited at the pause.
    assert (spent.value.failure["middleware"], spent.value.failure["call_id"]) == (
        "ToolErrorMiddleware",
        "e-4",
    )


def test_a_held_tool_the_model_keeps_cutting_short_pauses_at_its_next_cut_call(
    path: Path,
) -> None:
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed)
    agent = scripted_agent([Repeat(cut_short("m"), times=6)], [weather_tool([])], budget)

    paused = run(agent, path, config=CONFIG)
    assert (paused_with(paused)["call_id"], paused_with(paused)["count"]) == ("m-3", 2)

    answered = resume(agent, path, {"type": "answer", "text": "Write the city in full."})

    assert tool_messages(answered)["m-3"].text == "Write the city in full."
    assert paused_with(answered)["call_id"] == "m-4"


def two_tools_agent(script: list[AIMessage], runs: list[str]) -> Agent:
    middleware = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, when_spent="interrupt"),
        record_failures=True,
    )
    built: Agent = create_agent(
        ScriptedChatModel(script=[*script, AIMessage("done")]),
        tools=[weather_tool(runs), failing_tool("traffic", TimeoutError("no traffic data"))],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    return built


def one_call(name: str, call_id: str) -> AIMessage:
    args = {"city": "Oslo"} if name == "weather" else {}
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_each_held_tool_pauses_with_its_own_failures_and_a_release_keeps_the_other(
    path: Path,
) -> None:
    runs: list[str] = []
    order = [("weather", "w1"), ("traffic", "t1"), ("weather", "w2"), ("traffic", "t2")]
    after = [("weather", "w3"), ("traffic", "t3")]
    agent = two_tools_agent([one_call(n, i) for n, i in order + after], runs)

    paused = run(agent, path, config=CONFIG)

    pause = paused_with(paused)
    assert (pause["tool"], pause["call_id"]) == ("weather", "w3")
    assert [f["call_id"] for f in pause["failures"]] == ["w1", "w2"]  # its own, not traffic's
    # "go on" releases the weather tool only: traffic is still held, so t3 waits.
    resumed = resume(agent, path, {"type": "go_on"})
    assert len(runs) == 3
    pause = paused_with(resumed)
    assert (pause["tool"], pause["call_id"]) == ("traffic", "t3")
    assert [f["call_id"] for f in pause["failures"]] == ["t1", "t2"]


def test_go_on_for_parallel_calls_of_one_held_tool_runs_each_once(path: Path) -> None:
    runs: list[str] = []
    script = [one_call("weather", "w1"), one_call("weather", "w2"), TWO_CITIES]
    agent = two_tools_agent(script, runs)
    paused = run(agent, path, config=CONFIG)
    ids = [p.id for p in paused["__interrupt__"]]

    result = resume(agent, path, {key: {"type": "go_on"} for key in ids})

    assert sorted(runs) == ["Bergen", "Oslo", "Oslo", "Oslo"]  # each released call ran once
    answers = tool_messages(result)
    assert (answers["a"].text, answers["b"].text) == (FAILED, FAILED)
    assert result["messages"][-1].text == "done"


def test_two_go_ons_for_parallel_calls_each_start_the_count_again_in_call_order(
    path: Path,
) -> None:
    # Each decision starts the count again where its call comes: the second call's failure
    # is the first of a fresh count, so the next failure (w3) spends the budget again and
    # the call after it (w4) pauses. With one release for both, w3 would pause at once.
    runs: list[str] = []
    script = [one_call("weather", "w1"), one_call("weather", "w2"), TWO_CITIES]
    agent = two_tools_agent([*script, one_call("weather", "w3"), one_call("weather", "w4")], runs)
    paused = run(agent, path, config=CONFIG)

    result = resume(agent, path, {p.id: {"type": "go_on"} for p in paused["__interrupt__"]})

    assert sorted(runs) == ["Bergen", "Oslo", "Oslo", "Oslo", "Oslo"]  # w3 ran, w4 did not
    assert paused_with(result)["call_id"] == "w4"
    assert paused_with(result)["count"] == 2


def test_an_answer_without_its_text_is_refused_before_it_is_kept(path: Path) -> None:
    runs: list[str] = []
    agent = agent_of(runs)
    run(agent, path, config=CONFIG)

    # langgraph validates the value against the schema before keeping it, so the pause stays.
    with pytest.raises(ValidationError, match="text"):
        resume(agent, path, {"type": "answer"})

    result = resume(agent, path, {"type": "answer", "text": "Sunny."})
    assert tool_messages(result)["c-4"].text == "Sunny."
    assert len(runs) == 3


def test_a_blank_answer_pauses_again_saying_why_and_the_next_decision_is_taken(
    path: Path,
) -> None:
    runs: list[str] = []
    agent = agent_of(runs)
    first = run(agent, path, config=CONFIG)

    again = resume(agent, path, {"type": "answer", "text": "  "})

    pause = paused_with(again)
    assert {k: v for k, v in pause.items() if k != "refused"} == paused_with(first)
    refused = pause.get("refused", "")
    assert "`weather`" in refused
    assert "{'type': 'answer', 'text': '  '}" in refused  # what was given
    assert "blank" in refused.lower()  # why: the answer's text, not its type
    for decision in ('{"type": "go_on"}', '{"type": "answer", "text": "..."}', '{"type": "stop"}'):
        assert decision in refused
    assert len(runs) == 3
    result = resume(agent, path, {"type": "answer", "text": "Sunny."})
    assert tool_messages(result)["c-4"].text == "Sunny."
    assert paused_with(result)["call_id"] == "c-5"  # the next call, with nothing refused
    assert "refused" not in paused_with(result)


@pytest.mark.parametrize(
    ("decision", "extra"),
    [
        ({"type": "go_on", "text": "try Bergen instead"}, "text"),
        ({"type": "stop", "text": "enough"}, "text"),
        ({"type": "answer", "text": "Sunny.", "status": "error"}, "status"),
    ],
)
def test_a_decision_with_a_key_its_type_does_not_have_is_refused_before_it_is_kept(
    path: Path, decision: dict[str, str], extra: str
) -> None:
    # A type checker refuses these; at run time nothing would read the extra key, so it is
    # refused rather than dropped, and the pause stays.
    runs: list[str] = []
    agent = agent_of(runs)
    run(agent, path, config=CONFIG)

    with pytest.raises(ValidationError) as refused:
        resume(agent, path, decision)

    [error] = refused.value.errors()
    assert error["loc"][-1] == extra  # the key refused, and only it
    assert any("`weather`" in note for note in refused.value.__notes__)
    assert len(runs) == 3  # nothing ran
    result = resume(agent, path, {"type": "answer", "text": "Sunny."})
    assert tool_messages(result)["c-4"].text == "Sunny."
    assert len(runs) == 3


def test_go_on_counts_the_released_call_s_failure_as_the_first(path: Path) -> None:
    runs: list[str] = []
    budget = ErrorBudget(per_tool=1, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=6)], [weather_tool(runs)], budget)
    assert paused_with(run(agent, path, config=CONFIG))["call_id"] == "c-3"

    result = resume(agent, path, {"type": "go_on"})

    # c-3 ran and failed: the first failure of a fresh count, within the limit of 1.
    assert len(runs) == 4
    assert (paused_with(result)["call_id"], paused_with(result)["count"]) == ("c-5", 2)


def test_go_on_keeps_the_run_s_count_when_the_tool_s_limit_was_spent(path: Path) -> None:
    runs: list[str] = []
    budget = ErrorBudget(per_tool=2, per_run=3, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=6)], [weather_tool(runs)], budget)
    first = paused_with(run(agent, path, config=CONFIG))
    assert (first["call_id"], first["scope"]) == ("c-4", "tool")

    result = resume(agent, path, {"type": "go_on"})

    # The tool's count started again, the run's did not: c-4's failure is the run's fourth.
    pause = paused_with(result)
    assert (pause["call_id"], pause["scope"], pause["count"]) == ("c-5", "run", 4)


def test_a_released_call_that_succeeds_answers_and_the_tool_is_no_longer_held(
    path: Path,
) -> None:
    runs: list[str] = []

    @tool
    def weather(city: str) -> str:
        """The weather in a city: down for its first three calls."""
        runs.append(city)
        if len(runs) <= 3:
            raise ConnectionError("the weather service is down")
        return f"Sunny in {city}."

    budget = ErrorBudget(per_tool=2, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=5)], [weather], budget)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "go_on"})

    answers = tool_messages(result)
    assert answers["c-4"].text == "Sunny in Oslo."
    assert answers["c-5"].text == "Sunny in Oslo."  # it ran: the tool was released
    assert "__interrupt__" not in result


def test_go_on_then_a_failure_the_budget_does_not_count_still_starts_the_count_again(
    path: Path,
) -> None:
    runs: list[str] = []
    invalid = AIMessage("", tool_calls=[{"name": "weather", "args": {}, "id": "bad"}])
    exceptions: tuple[FailureKind, ...] = ("exception",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=exceptions)
    script: list[AIMessage | Repeat] = [Repeat(CALL, times=2), invalid, Repeat(CALL, times=3)]
    agent = scripted_agent(script, [weather_tool(runs)], budget)
    assert paused_with(run(agent, path, config=CONFIG))["call_id"] == "bad"

    result = resume(agent, path, {"type": "go_on"})

    # "bad" failed on its arguments, which this budget does not count; the counts still
    # started again, so the next exception is the first: held only at the second.
    assert len(runs) == 4
    assert "city" in tool_messages(result)["bad"].text
    # The second Repeat numbers its calls from c-1 again: c-1 counted 1, c-2 held it.
    assert (paused_with(result)["call_id"], paused_with(result)["count"]) == ("c-3", 2)


def test_a_middleware_around_the_pausing_one_never_counts_the_person_s_decisions(
    path: Path,
) -> None:
    runs: list[str] = []
    told: list[ToolFailure] = []
    outer = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="outer")
    pausing = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=2, when_spent="interrupt")
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[Repeat(CALL, times=6), AIMessage("done")]),
        tools=[weather_tool(runs)],
        middleware=[outer, pausing],
        checkpointer=InMemorySaver(),
    )
    run(agent, path, config=CONFIG)
    resume(agent, path, {"type": "answer", "text": "Sunny."})

    with pytest.raises(ToolErrorBudgetExceeded):
        resume(agent, path, {"type": "stop"})

    # The outer middleware meets the inner one's answers to the tool's failures, as any
    # middleware's error answers; the person's answer and stop are the package's own.
    assert [(f["call_id"], f["kind"]) for f in told] == [
        ("c-1", "inner_middleware"),
        ("c-2", "inner_middleware"),
        ("c-3", "inner_middleware"),
    ]


def rewritten(failure: MalformedToolCall, request: ToolCallRequest) -> str:
    return f"Resend `{failure.tool}` with its arguments whole."


def test_a_route_s_own_budget_stops_cut_short_calls_and_keeps_the_answers_before(
    path: Path,
) -> None:
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    middleware = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, rewritten, budget=ErrorBudget(per_run=1, kinds=malformed))],
        record_failures=True,
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[cut_short("m1", "m2"), AIMessage("done")]),
        tools=[weather_tool([])],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path, config=CONFIG)

    assert (spent.value.route, spent.value.count, spent.value.kind) == (0, 2, "malformed_call")
    assert spent.value.failure is not None
    assert spent.value.failure["middleware"] == "ToolErrorMiddleware"
    # The stopping step is saved: the thread's next input reads both answers.
    answers = tool_messages(run(agent, path, {"messages": [HumanMessage("again")]}, CONFIG))
    assert answers["m1"].text == "Resend `weather` with its arguments whole."  # kept
    assert "stopped the run" in answers["m2"].text


def test_after_go_on_a_cut_short_call_still_counts_in_its_route_s_own_budget(path: Path) -> None:
    # The person's "go on" starts the middleware's count of the tool again; the route's own
    # budget goes on counting, and the third cut-short call spends it.
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    middleware = ToolErrorMiddleware.from_routes(
        [Route(MalformedToolCall, rewritten, budget=ErrorBudget(per_tool=2, kinds=malformed))],
        budget=ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed),
    )
    script = [cut_short("m1"), cut_short("m2"), cut_short("m3"), AIMessage("done")]
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[weather_tool([])],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    paused = run(agent, path, config=CONFIG)
    assert paused_with(paused)["call_id"] == "m3"

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        resume(agent, path, {"type": "go_on"})

    assert (spent.value.route, spent.value.count, spent.value.tool) == (0, 3, "weather")


def test_a_tell_budget_spent_by_cut_short_calls_records_them_as_told(path: Path) -> None:
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    middleware = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, when_spent="tell", kinds=malformed),
        record_failures=True,
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[cut_short("m1"), cut_short("m2"), AIMessage("done")]),
        tools=[weather_tool([])],
        middleware=[middleware],
    )

    result = run(agent, path)

    assert [(f["call_id"], f["outcome"]) for f in result["tool_failures"]] == [
        ("m1", "answered"),
        ("m2", "told"),
    ]
    assert tool_messages(result)["m2"].text.startswith("The tool `weather` failed 2 times")


def test_two_stacked_middleware_each_keep_their_hold_of_one_tool(path: Path) -> None:
    # Both count the same failures and both hold the tool at the second: the outer one's
    # answer goes back with the inner one's update, and neither hold may be lost there.
    runs: list[str] = []
    agent = stacked_pausing_agent(runs, calls=3)

    first = run(agent, path, config=CONFIG)
    second = resume(agent, path, {"type": "go_on"})
    done = resume(agent, path, {"type": "go_on"})

    assert (paused_with(first)["middleware"], paused_with(second)["middleware"]) == (
        "outer",
        "inner",
    )
    assert len(runs) == 3  # the third call ran once, after both decisions
    assert done["messages"][-1].text == "done"


def test_a_released_call_answering_with_a_command_that_goes_elsewhere_keeps_the_tool_held(
    path: Path,
) -> None:
    # A `Command` that does more than update the state goes back as the tool gave it: the
    # hold is not released in its update, so the next call pauses again.
    runs: list[str] = []

    @tool
    def weather(city: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """The weather in a city: down for its first three calls."""
        runs.append(city)
        if len(runs) <= 3:
            raise ConnectionError("the weather service is down")
        answer = ToolMessage(f"Sunny in {city}.", tool_call_id=tool_call_id)
        return Command(update={"messages": [answer]}, goto="model")

    budget = ErrorBudget(per_tool=2, when_spent="interrupt")
    agent = scripted_agent([Repeat(CALL, times=5)], [weather], budget)
    run(agent, path, config=CONFIG)

    result = resume(agent, path, {"type": "go_on"})

    assert tool_messages(result)["c-4"].text == "Sunny in Oslo."
    assert len(runs) == 4
    assert paused_with(result)["call_id"] == "c-5"


def test_after_both_stacked_middleware_release_the_tool_its_next_call_runs(path: Path) -> None:
    runs: list[str] = []
    agent = stacked_pausing_agent(runs, calls=4)
    run(agent, path, config=CONFIG)
    resume(agent, path, {"type": "go_on"})

    done = resume(agent, path, {"type": "go_on"})

    # c-3 ran after both decisions; c-4 ran too (its failure holds the tool again).
    assert len(runs) == 4
    assert tool_messages(done)["c-4"].text == FAILED
    assert done["messages"][-1].text == "done"


def test_stop_at_a_cut_short_call_answers_it_as_a_call_a_person_stopped(path: Path) -> None:
    # The third cut-short call is the held tool's next call: the run pauses after the
    # model, and the person's stop answers that call as one that did not run.
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed)
    script: list[AIMessage | Repeat] = [cut_short("m1"), cut_short("m2"), cut_short("m3")]
    agent = scripted_agent(script, [weather_tool([])], budget)
    paused = run(agent, path, config=CONFIG)
    assert paused_with(paused)["call_id"] == "m3"

    with pytest.raises(ToolErrorBudgetExceeded):
        resume(agent, path, {"type": "stop"})
    answer = tool_messages(agent.get_state(CONFIG).values)["m3"]
    assert answer.text == (
        "This call to `weather` did not run: a person stopped the run when the error budget "
        "was spent (2 failures of `weather` in this run, over the limit of 1)."
    )


def test_stop_at_a_cut_short_call_answers_every_other_call_of_its_reply_as_stopped_by_a_person(
    path: Path,
) -> None:
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed)
    last = cut_short("m3", "m4")
    last.tool_calls = [call("weather", "v3", city="Oslo")]
    runs: list[str] = []
    agent = scripted_agent([cut_short("m1"), cut_short("m2"), last], [weather_tool(runs)], budget)
    paused = run(agent, path, config=CONFIG)
    assert paused_with(paused)["call_id"] == "m3"

    with pytest.raises(ToolErrorBudgetExceeded):
        resume(agent, path, {"type": "stop"})

    answers = tool_messages(agent.get_state(CONFIG).values)
    assert runs == []  # the valid call beside them never ran
    for call_id in ("m3", "m4", "v3"):
        assert answers[call_id].text.startswith(
            "This call to `weather` did not run: a person stopped the run"
        ), call_id


@pytest.mark.parametrize("order", ["watching outside", "watching inside"])
def test_a_middleware_beside_one_that_holds_a_tool_meets_each_cut_short_call_once(
    path: Path, order: str
) -> None:
    # Beside a middleware that pauses at the held tool's third cut-short call, one that only
    # watches meets every malformed call of the run once: the paused one too, whichever is
    # listed outside.
    told: list[ToolFailure] = []
    watching = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="watching")
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = ErrorBudget(per_tool=1, when_spent="interrupt", kinds=malformed)
    holding = ToolErrorMiddleware(report_type_only, budget=budget, name="holding")
    middleware = [watching, holding] if order == "watching outside" else [holding, watching]
    script = [cut_short("m1"), cut_short("m2"), cut_short("m3"), AIMessage("done")]
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[weather_tool([])],
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    assert paused_with(run(agent, path, config=CONFIG))["call_id"] == "m3"

    done = resume(agent, path, {"type": "go_on"})

    assert done["messages"][-1].text == "done"
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == [
        (call_id, "malformed_call", "answered") for call_id in ("m1", "m2", "m3")
    ]
    assert answered_once(done["messages"])


PAUSE_SITES = ("tool call", "block", "cut short")
"""Where a person stops the run: at the held tool's next call in the tool node, or after
the model, at a call of the held tool that never reaches it (a limit blocked it, or the
model cut its arguments short)."""


def site_agent(site: str, when_spent: Literal["stop", "interrupt"], **options: Any) -> Agent:
    """An agent whose budget is spent at `site` by its third failure (its second, cut short),
    with `when_spent`, so that "interrupt" pauses at the next call there."""
    malformed: tuple[FailureKind, ...] = ("malformed_call",)
    budget = (
        ErrorBudget(per_tool=1, when_spent=when_spent, kinds=malformed)
        if site == "cut short"
        else ErrorBudget(per_tool=2, when_spent=when_spent)
    )
    ours = ToolErrorMiddleware(report_type_only, budget=budget, **options)
    middleware: list[Any] = [ours]
    tools = [weather_tool([])]
    script: list[AIMessage | Repeat] = [Repeat(CALL, times=4)]
    if site == "block":
        middleware.append(ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue"))
        tools = [echo_tool()]
        script = [Repeat(AIMessage("", tool_calls=[call("echo", "e", query="hi")]), times=6)]
    elif site == "cut short":
        script = [cut_short("m1"), cut_short("m2"), cut_short("m3")]
    built: Agent = create_agent(
        ScriptedChatModel(script=[*script, AIMessage("done")]),
        tools=tools,
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    return built


def answered_once(messages: list[Any]) -> bool:
    """Whether every call of every reply has exactly one answer, and no answer is stray."""
    replies = [m for m in messages if isinstance(m, AIMessage)]
    calls = [str(c["id"]) for m in replies for c in [*m.tool_calls, *m.invalid_tool_calls]]
    answers = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    return sorted(calls) == sorted(answers)


def run_to_the_stop(agent: Agent, path: Path) -> None:
    """Run until the budget stops the run: at once, or at the pause by a person's stop."""
    paused = run(agent, path, config=CONFIG)
    assert "__interrupt__" in paused  # a "stop" budget raised before this
    resume(agent, path, {"type": "stop"})


@pytest.mark.parametrize("site", PAUSE_SITES)
@pytest.mark.parametrize("recorded", [True, False], ids=["record", "no record"])
def test_a_person_s_stop_leaves_the_thread_as_a_stop_budget_s_stop_does(
    path: Path, site: str, recorded: bool
) -> None:
    """The record ends with the failure that spent the budget, `outcome="stopped"`: the
    entry the exception holds, the one a "stop" budget's stop ends with; the listeners are
    told of it once; the next input reaches the model with every call answered once."""
    told: dict[str, list[ToolFailure]] = {"stop": [], "interrupt": []}
    stops: dict[str, ToolErrorBudgetExceeded] = {}
    records: dict[str, list[ToolFailure]] = {}
    for when_spent in ("stop", "interrupt"):
        agent = site_agent(
            site, when_spent, record_failures=recorded, listeners=[told[when_spent].append]
        )
        with pytest.raises(ToolErrorBudgetExceeded) as spent:
            run_to_the_stop(agent, path)
        stops[when_spent] = spent.value
        records[when_spent] = agent.get_state(CONFIG).values.get("tool_failures", [])
        told[when_spent] = told[when_spent].copy()  # what comes after is not compared
        # The person's decision ended the pause: nothing is left to resume, and running
        # the thread again raises the same stop.
        assert agent.get_state(CONFIG).interrupts == ()
        with pytest.raises(ToolErrorBudgetExceeded) as again:
            rerun(agent, path, CONFIG)
        assert (again.value.tool, again.value.count) == (spent.value.tool, spent.value.count)
        after = run(agent, path, {"messages": [HumanMessage("and now?")]}, CONFIG)
        assert after["messages"][-1].text == "done"
        assert answered_once(after["messages"])

    budget_s, person_s = stops["stop"], stops["interrupt"]
    assert person_s.failure is not None
    assert person_s.failure == budget_s.failure
    assert person_s.failure["outcome"] == "stopped"
    assert (
        person_s.failure["call_id"] == {"tool call": "c-3", "block": "e-4", "cut short": "m2"}[site]
    )
    shown = (budget_s.tool, budget_s.count, budget_s.limit, budget_s.scope, budget_s.kind)
    assert (person_s.tool, person_s.count, person_s.limit, person_s.scope, person_s.kind) == shown
    # The person's thread also holds the failure's entry as "held", from before the pause.
    held = [r for r in told["interrupt"] if r["outcome"] == "held"]
    assert [{**r, "outcome": "stopped"} for r in held] == [person_s.failure]
    assert told["interrupt"][-1] == person_s.failure
    assert told["stop"][-1] == budget_s.failure
    if recorded:
        # A limit's block is met as the next model call starts: with a "stop" budget,
        # inside that call's step, where the stop it spends is raised, and the step writes
        # nothing. The stopping entry is then on the exception, not in the checkpoint's
        # record. An "interrupt" budget meets it in a node of its own, which is saved.
        assert records["interrupt"] == told["interrupt"]
        in_the_checkpoint = slice(None, -1) if site == "block" else slice(None)
        assert records["stop"] == told["stop"][in_the_checkpoint]
    else:
        assert records == {"stop": [], "interrupt": []}
