"""`RepeatedCall` through real agents: a call the same as one that already failed in the run.

The tool here, `charge(order, amount)`, fails for the order "bad" and counts every run, so
a test can tell a call answered in place of running from one that ran again.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from _langchain_tool_errors.state import COUNTS_KEY
from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    RepeatedCall,
    ReportedFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
    ToolReportedError,
)
from langchain_tool_errors.handlers import report_kind_only, report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, echo_tool, raising, run, tool_messages

DONE = AIMessage("done")
TYPE_ONLY = "Tool `charge` failed with ValueError."


def charge_tool(runs: list[dict[str, object]]) -> BaseTool:
    """`charge(order, amount)`: raises `ValueError` for the order "bad"; counts runs."""

    def charge(order: str, amount: int = 1) -> str:
        """Charge an order."""
        runs.append({"order": order, "amount": amount})
        if order == "bad":
            raise ValueError("the payment service refused it")
        return f"charged {order}"

    return StructuredTool.from_function(charge)


def replies(*steps: Sequence[ToolCall]) -> list[AIMessage]:
    """One model reply per step, with its calls, then "done"."""
    return [AIMessage("", tool_calls=list(calls)) for calls in steps] + [DONE]


def bad(call_id: str, **args: object) -> ToolCall:
    return call("charge", call_id, order="bad", **args)


def not_again(failure: RepeatedCall, request: ToolCallRequest) -> str:
    return failure.text


def guarded(*routes: Route[Any], **options: Any) -> ToolErrorMiddleware[Any, Any, Any]:
    """Repeats answered with their own text, exceptions by type only."""
    return ToolErrorMiddleware.from_routes(
        [*routes, Route(RepeatedCall, not_again), Route(Exception, report_type_only)], **options
    )


def agent_of(
    middleware: ToolErrorMiddleware[Any, Any, Any],
    script: list[AIMessage],
    runs: list[dict[str, object]],
    checkpointer: Any = None,
) -> Agent:
    built: Agent = create_agent(
        ScriptedChatModel(script=list(script)),
        tools=[charge_tool(runs), echo_tool()],
        middleware=[middleware],
        checkpointer=checkpointer,
    )
    return built


def charge_and_echo_agent(
    middleware: ToolErrorMiddleware[Any, Any, Any], runs: list[dict[str, object]], echoed: list[str]
) -> Agent:
    """`charge` and an `echo` that always fails, each called twice with the same arguments."""

    def echo(query: str) -> str:
        """Echo, failing."""
        echoed.append(query)
        raise ValueError("echo is down")

    script = replies(
        [bad("a"), call("echo", "b", query="x")], [bad("c"), call("echo", "d", query="x")]
    )
    built: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[charge_tool(runs), StructuredTool.from_function(echo)],
        middleware=[middleware],
    )
    return built


def test_a_call_that_failed_is_answered_without_running_again(path: Path) -> None:
    runs: list[dict[str, object]] = []
    agent = agent_of(guarded(), replies([bad("a")], [bad("b")], [bad("c")]), runs)

    result = run(agent, path)

    assert runs == [{"order": "bad", "amount": 1}]  # the tool ran once
    answers = tool_messages(result)
    assert [answers[i].status for i in "abc"] == ["error"] * 3
    assert answers["a"].text == TYPE_ONLY
    assert answers["b"].text == (
        "`charge` was not run again: the same call, with the same arguments, already failed "
        "once in this run. Change the arguments, or try another way."
    )
    assert "already failed 2 times in this run" in answers["c"].text
    assert result["messages"][-1].text == "done"


def test_arguments_are_compared_as_json_whatever_their_order(path: Path) -> None:
    runs: list[dict[str, object]] = []
    first = call("charge", "a", order="bad", amount=5)
    reordered = ToolCall(
        name="charge", args={"amount": 5, "order": "bad"}, id="b", type="tool_call"
    )
    agent = agent_of(guarded(), replies([first], [reordered]), runs)

    result = run(agent, path)

    assert len(runs) == 1
    assert "was not run again" in tool_messages(result)["b"].text


def test_a_number_and_its_text_are_different_arguments(path: Path) -> None:
    runs: list[dict[str, object]] = []
    agent = agent_of(guarded(), replies([bad("a", amount=1)], [bad("b", amount="1")]), runs)

    result = run(agent, path)

    # The tool's schema reads both as 1, but the model sent different JSON: it ran again.
    assert runs == [{"order": "bad", "amount": 1}] * 2
    assert tool_messages(result)["b"].text == TYPE_ONLY


def test_other_arguments_or_another_tool_run_as_usual(path: Path) -> None:
    runs: list[dict[str, object]] = []
    script = replies([bad("a")], [bad("b", amount=2)], [call("echo", "c", query="bad")])
    agent = agent_of(guarded(), script, runs)

    result = run(agent, path)

    assert runs == [{"order": "bad", "amount": 1}, {"order": "bad", "amount": 2}]
    answers = tool_messages(result)
    assert answers["b"].text == TYPE_ONLY
    assert answers["c"].text == "echo: bad"


def test_a_call_that_succeeded_is_never_a_repeat(path: Path) -> None:
    runs: list[dict[str, object]] = []
    good = {"order": "ok"}
    script = replies([bad("a")], [call("charge", "b", **good)], [call("charge", "c", **good)])
    agent = agent_of(guarded(), script, runs)

    result = run(agent, path)

    assert [r["order"] for r in runs] == ["bad", "ok", "ok"]
    assert tool_messages(result)["c"].text == "charged ok"


def test_without_a_route_for_repeats_the_call_runs_again(path: Path) -> None:
    runs: list[dict[str, object]] = []
    script = replies([bad("a")], [bad("b")])
    # A route for every reported failure does not turn repeats on: only naming them does.
    middleware = ToolErrorMiddleware.from_routes(
        [Route(ReportedFailure, report_kind_only), Route(Exception, report_type_only)],
        budget=ErrorBudget(per_run=5),
        record_failures=True,
    )
    result = run(agent_of(middleware, script, runs), path)

    assert len(runs) == 2
    assert tool_messages(result)["b"].text == TYPE_ONLY
    assert [f["kind"] for f in result["tool_failures"]] == ["exception", "exception"]


def test_a_handler_that_declines_lets_the_call_run_again(path: Path) -> None:
    runs: list[dict[str, object]] = []
    seen: list[tuple[str, object, int]] = []

    def count_only(failure: RepeatedCall, request: ToolCallRequest) -> str | None:
        seen.append((failure.tool, failure.args, failure.failures))
        return None

    middleware = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, count_only), Route(Exception, report_type_only)]
    )
    result = run(agent_of(middleware, replies([bad("a")], [bad("b")], [bad("c")]), runs), path)

    assert len(runs) == 3
    # each failure of the same call is remembered
    assert seen == [("charge", {"order": "bad"}, 1), ("charge", {"order": "bad"}, 2)]
    assert tool_messages(result)["c"].text == TYPE_ONLY


def test_a_route_for_some_tools_looks_for_their_repeats_only(path: Path) -> None:
    runs: list[dict[str, object]] = []
    echoed: list[str] = []
    middleware = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, not_again, tools=["charge"]), Route(Exception, report_type_only)]
    )

    result = run(charge_and_echo_agent(middleware, runs, echoed), path)

    assert len(runs) == 1
    assert echoed == ["x", "x"]
    assert "was not run again" in tool_messages(result)["c"].text


def test_calls_of_one_reply_are_not_repeats_of_each_other(path: Path) -> None:
    runs: list[dict[str, object]] = []
    agent = agent_of(guarded(), replies([bad("a"), bad("b")], [bad("c")]), runs)

    result = run(agent, path)

    assert len(runs) == 2  # both ran: neither had failed when the step began
    assert "already failed 2 times" in tool_messages(result)["c"].text


def test_invalid_arguments_repeated_are_answered_as_repeats(path: Path) -> None:
    runs: list[dict[str, object]] = []
    wrong = {"order": "x", "amount": "a lot"}
    agent = agent_of(
        guarded(), replies([call("charge", "a", **wrong)], [call("charge", "b", **wrong)]), runs
    )

    result = run(agent, path)

    assert runs == []
    answers = tool_messages(result)
    assert "amount" in answers["a"].text  # ToolNode's own answer to invalid arguments
    assert "was not run again" in answers["b"].text


def test_a_budget_counts_repeats_as_their_kind(path: Path) -> None:
    runs: list[dict[str, object]] = []
    repeats_only: tuple[FailureKind, ...] = ("repeated_call",)
    middleware = guarded(budget=ErrorBudget(per_run=2, kinds=repeats_only))
    agent = agent_of(middleware, replies([bad("a")], [bad("b")], [bad("c")], [bad("d")]), runs)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    stop = spent.value
    assert (stop.kind, stop.count, stop.limit, stop.scope) == ("repeated_call", 3, 2, "run")
    assert stop.__cause__ is None
    assert len(runs) == 1


def test_the_record_and_the_listeners_show_the_repeat(path: Path) -> None:
    runs: list[dict[str, object]] = []
    told: list[ToolFailure] = []
    middleware = guarded(record_failures=True, listeners=[told.append])
    agent = agent_of(middleware, replies([bad("a")], [bad("b")]), runs)

    result = run(agent, path)

    kinds: list[FailureKind] = [f["kind"] for f in result["tool_failures"]]
    assert kinds == ["exception", "repeated_call"]
    repeat = result["tool_failures"][1]
    assert (repeat["call_id"], repeat["outcome"], repeat["route"]) == ("b", "answered", 0)
    assert repeat["error_type"] == "langchain_tool_errors.RepeatedCall"
    assert told == result["tool_failures"]


def test_a_new_input_starts_a_run_with_nothing_failed(path: Path) -> None:
    runs: list[dict[str, object]] = []
    script = replies([bad("a")]) + replies([bad("b")])
    agent = agent_of(guarded(), script, runs, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    run(agent, path, config=config)
    second = run(agent, path, {"messages": [HumanMessage("again")]}, config)

    assert len(runs) == 2
    assert tool_messages(second)["b"].text == TYPE_ONLY


def test_a_handler_that_fails_on_a_repeat_propagates(path: Path) -> None:
    runs: list[dict[str, object]] = []
    told: list[ToolFailure] = []
    middleware = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, raising("the handler is broken")), Route(Exception, report_type_only)],
        listeners=[told.append],
    )
    agent = agent_of(middleware, replies([bad("a")], [bad("b")]), runs)

    with pytest.raises(RuntimeError, match="the handler is broken"):
        run(agent, path)

    assert len(runs) == 1
    assert [(f["call_id"], f["kind"], f["route"], f["outcome"]) for f in told] == [
        ("a", "exception", 1, "answered"),
        ("b", "repeated_call", 0, "propagated"),
    ]


def test_a_call_a_person_rejected_is_not_an_earlier_failure(path: Path) -> None:

    runs: list[dict[str, object]] = []
    review = HumanInTheLoopMiddleware(interrupt_on={"charge": True})
    agent: Agent = create_agent(
        ScriptedChatModel(script=replies([bad("a")], [bad("b")])),
        tools=[charge_tool(runs)],
        middleware=[guarded(budget=ErrorBudget(per_run=5)), review],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    reject = {"decisions": [{"type": "reject", "message": "not now"}]}
    approve = {"decisions": [{"type": "approve"}]}

    run(agent, path, config=config)
    run(agent, path, Command(resume=reject), config)  # "a" is rejected: it never runs
    result = run(agent, path, Command(resume=approve), config)  # "b" is approved

    assert len(runs) == 1  # the approved call ran: the rejection was not a failure of it
    answers = tool_messages(result)
    assert answers["a"].text.endswith("not now")
    assert answers["b"].text == TYPE_ONLY


def test_one_instance_in_two_threads_keeps_each_thread_s_failures_apart(path: Path) -> None:
    runs: list[dict[str, object]] = []
    agent = agent_of(guarded(), replies([bad("a")]), runs, InMemorySaver())

    run(agent, path, config={"configurable": {"thread_id": "first"}})
    second = run(agent, path, config={"configurable": {"thread_id": "second"}})

    assert len(runs) == 2  # the second thread's call is its first failure, not a repeat
    assert tool_messages(second)["a"].text == TYPE_ONLY


def test_a_wider_route_after_a_route_for_some_tools_repeats_leaves_the_others_alone(
    path: Path,
) -> None:
    runs: list[dict[str, object]] = []
    echoed: list[str] = []
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(RepeatedCall, not_again, tools=["charge"]),
            Route(RepeatedCall, not_again, tools=["refund"]),
            Route(ReportedFailure, report_kind_only),
            Route(Exception, report_type_only),
        ]
    )

    result = run(charge_and_echo_agent(middleware, runs, echoed), path)

    assert echoed == ["x", "x"]  # no route for repeats selects `echo`: it runs again
    assert len(runs) == 1
    assert "was not run again" in tool_messages(result)["c"].text


def test_two_middleware_each_remember_their_own_failures(path: Path) -> None:
    runs: list[dict[str, object]] = []
    outer = guarded(name="outer")
    inner = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, not_again), Route(Exception, report_type_only)], name="inner"
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=replies([bad("a")], [bad("b")])),
        tools=[charge_tool(runs)],
        middleware=[outer, inner],
    )
    result = run(agent, path)

    assert len(runs) == 1
    assert "already failed once in this run" in tool_messages(result)["b"].text


async def anot_again(failure: RepeatedCall, request: ToolCallRequest) -> str:
    return failure.text


async def atype_only(exc: Exception, request: ToolCallRequest) -> str:
    return report_type_only(exc, request)


def test_an_async_only_route_for_repeats_answers_without_running_again() -> None:
    runs: list[dict[str, object]] = []
    middleware = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, aon_error=anot_again), Route(Exception, aon_error=atype_only)]
    )
    agent = agent_of(middleware, replies([bad("a")], [bad("b")]), runs)

    result = run(agent, "async")

    assert runs == [{"order": "bad", "amount": 1}]  # the tool ran once
    assert tool_messages(result)["b"].text.startswith("`charge` was not run again")


def test_arguments_json_cannot_hold_are_never_a_repeat(path: Path) -> None:
    runs: list[dict[str, object]] = []
    # A `Decimal` (another middleware may put one in): the tool's schema reads it as 1.
    script = replies([bad("a")], [bad("b", amount=Decimal(1))], [bad("c", amount=Decimal(1))])
    agent = agent_of(guarded(), script, runs)

    result = run(agent, path)

    assert runs == [{"order": "bad", "amount": 1}] * 3
    assert [tool_messages(result)[i].text for i in "abc"] == [TYPE_ONLY] * 3


def test_a_route_for_some_tools_repeats_leaves_the_others_failures_in_a_row_to_the_budget(
    path: Path,
) -> None:
    runs: list[dict[str, object]] = []
    echoed: list[str] = []
    exceptions: tuple[FailureKind, ...] = ("exception",)  # not the repeat of `charge`
    middleware = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, not_again, tools=["charge"]), Route(Exception, report_type_only)],
        budget=ErrorBudget(consecutive=1, kinds=exceptions),
    )

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(charge_and_echo_agent(middleware, runs, echoed), path)

    stop = spent.value
    assert (stop.tool, stop.count, stop.limit, stop.scope) == ("echo", 2, 1, "consecutive")
    assert echoed == ["x", "x"]


def answers_once(failure: RepeatedCall, request: ToolCallRequest) -> str | None:
    return "outer: not again" if failure.failures == 1 else None


def counts_failures(failure: RepeatedCall, request: ToolCallRequest) -> str:
    return f"inner: {failure.failures} earlier failure(s)"


def test_an_inner_middleware_counts_only_the_repeats_that_reach_it(path: Path) -> None:
    runs: list[dict[str, object]] = []
    outer, inner = (
        ToolErrorMiddleware.from_routes(
            [Route(RepeatedCall, handler), Route(Exception, report_type_only)], name=name
        )
        for name, handler in (("outer", answers_once), ("inner", counts_failures))
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=replies([bad("a")], [bad("b")], [bad("c")])),
        tools=[charge_tool(runs)],
        middleware=[outer, inner],
    )

    result = run(agent, path)

    assert len(runs) == 1
    answers = tool_messages(result)
    assert [answers[i].text for i in "abc"] == [
        TYPE_ONLY,
        "outer: not again",  # the inner middleware never saw this repeat
        "inner: 1 earlier failure(s)",
    ]


def reporting_charge_tool(runs: list[dict[str, object]]) -> BaseTool:
    """`charge(order, amount)` that reports its failure itself: an error message, no raise."""

    def charge(order: str, amount: int = 1) -> str:
        """Charge an order."""
        runs.append({"order": order, "amount": amount})
        raise ToolException("the payment service refused it")

    return StructuredTool.from_function(charge, handle_tool_error=True)


def test_a_call_the_tool_reported_an_error_for_is_answered_without_running_again(
    path: Path,
) -> None:
    runs: list[dict[str, object]] = []
    agent: Agent = create_agent(
        ScriptedChatModel(script=replies([bad("a")], [bad("b")])),
        tools=[reporting_charge_tool(runs)],
        middleware=[guarded()],
    )

    result = run(agent, path)

    assert runs == [{"order": "bad", "amount": 1}]  # the tool ran once
    answers = tool_messages(result)
    assert answers["a"].text == "the payment service refused it"  # the tool's own report
    assert answers["b"].status == "error"
    assert answers["b"].text.startswith("`charge` was not run again")  # the route's answer
    assert "already failed once in this run" in answers["b"].text


def test_a_budget_of_every_kind_stops_a_model_that_keeps_repeating_a_failed_call(
    path: Path,
) -> None:
    runs: list[dict[str, object]] = []
    middleware = guarded(budget=ErrorBudget(per_run=1))  # every kind counts, by default
    agent = agent_of(middleware, replies([bad("a")], [bad("b")], [bad("c")]), runs)

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        run(agent, path)

    stop = spent.value
    assert (stop.kind, stop.count, stop.limit, stop.scope) == ("repeated_call", 2, 1, "run")
    assert len(runs) == 1


def test_a_failed_call_is_remembered_across_a_pause_and_an_agent_built_again(path: Path) -> None:
    # Each part of the run is on an agent (and a middleware) built anew on the same
    # checkpoints, as after a restart: only the state carries the failed call.
    runs: list[dict[str, object]] = []
    saver = InMemorySaver()
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    approve = {"decisions": [{"type": "approve"}]}

    def reviewed() -> Agent:
        built: Agent = create_agent(
            ScriptedChatModel(script=replies([bad("a")], [bad("b")])),
            tools=[charge_tool(runs)],
            middleware=[guarded(), HumanInTheLoopMiddleware(interrupt_on={"charge": True})],
            checkpointer=saver,
        )
        return built

    run(reviewed(), path, config=config)  # pauses before "a"
    run(reviewed(), path, Command(resume=approve), config)  # "a" fails; pauses before "b"
    assert len(runs) == 1
    result = run(reviewed(), path, Command(resume=approve), config)  # "b" is approved

    assert len(runs) == 1  # "b" was answered in place of running
    assert tool_messages(result)["b"].text.startswith("`charge` was not run again")
    counts: dict[str, int] = reviewed().get_state(config).values[COUNTS_KEY]
    assert counts  # the failed call is remembered in the state...
    assert not any("bad" in key or "order" in key for key in counts)  # ...but not its text


def scripted_tool(outcomes: list[Exception | str | None], runs: list[object]) -> BaseTool:
    """`charge(order)` whose runs, in turn, raise or answer as `outcomes` says (`None`: a
    `Command` that answers the call with "charged"); counts its runs."""

    def charge(order: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Charge an order."""
        runs.append(order)
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        if outcome is None:
            answer = ToolMessage("charged", tool_call_id=tool_call_id, name="charge")
            return Command(update={"messages": [answer]})
        return outcome

    return StructuredTool.from_function(charge)


class PaymentPending(Exception):
    """A payment the service has not settled yet: it may pass on its own."""


def try_once_more(exc: Exception, request: ToolCallRequest) -> str:
    return f"`{request.tool_call['name']}` timed out; try once more."


def seen_by(seen: list[int], *, answer: bool) -> Any:
    """A handler for repeats that notes each repeat's `failures`; answers, or lets it run."""

    def handler(failure: RepeatedCall, request: ToolCallRequest) -> str | None:
        seen.append(failure.failures)
        return failure.text if answer else None

    return handler


@pytest.mark.parametrize("transient", [TimeoutError, ConnectionError, ConnectionResetError])
def test_the_retry_of_a_timeout_or_a_lost_connection_runs_the_tool_by_default(
    path: Path, transient: type[Exception]
) -> None:
    # The recovery guide's case: a route tells the model to try once more, and a route for
    # every repeat stands beside it. The retry is not a repeat: it runs, and succeeds.
    runs: list[object] = []
    seen: list[int] = []
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route((TimeoutError, ConnectionError), try_once_more),
            Route(RepeatedCall, seen_by(seen, answer=True)),
            Route(Exception, report_type_only),
        ]
    )
    outcomes: list[Exception | str | None] = [transient("slow"), "charged"]
    agent: Agent = create_agent(
        ScriptedChatModel(
            script=replies([call("charge", "a", order="o")], [call("charge", "b", order="o")])
        ),
        tools=[scripted_tool(outcomes, runs)],
        middleware=[middleware],
    )

    result = run(agent, path)

    assert runs == ["o", "o"]
    assert seen == []  # never met as a repeat
    assert tool_messages(result)["a"].text == "`charge` timed out; try once more."
    assert tool_messages(result)["b"].text == "charged"


def retry_agent(
    route: Route[Any], outcomes: list[Exception | str | None], runs: list[object]
) -> Agent:
    """`charge(order="o")` called three times, under `route` and a route for exceptions."""
    middleware = ToolErrorMiddleware.from_routes([route, Route(Exception, report_type_only)])
    script = replies(*([call("charge", call_id, order="o")] for call_id in "abc"))
    built: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[scripted_tool(outcomes, runs)],
        middleware=[middleware],
    )
    return built


def test_retryable_names_the_failures_whose_retry_runs(path: Path) -> None:
    runs: list[object] = []
    seen: list[int] = []
    route = Route(RepeatedCall, seen_by(seen, answer=True), retryable=PaymentPending)
    outcomes: list[Exception | str | None] = [PaymentPending(), ValueError("refused"), "no"]

    result = run(retry_agent(route, outcomes, runs), path)

    # The pending payment's retry ran; the refusal made the third call a repeat.
    assert runs == ["o", "o"]
    assert seen == [1]
    assert tool_messages(result)["c"].text.startswith("`charge` was not run again")


def test_retryable_replaces_the_default(path: Path) -> None:
    # Given its own list, a timeout makes a repeat again.
    runs: list[object] = []
    seen: list[int] = []
    route = Route(RepeatedCall, seen_by(seen, answer=True), retryable=(PaymentPending,))
    outcomes: list[Exception | str | None] = [TimeoutError("slow"), "no", "no"]

    run(retry_agent(route, outcomes, runs), path)

    assert runs == ["o"]
    assert seen == [1, 2]


def test_retryable_empty_makes_every_failure_count(path: Path) -> None:
    runs: list[object] = []
    seen: list[int] = []
    route = Route(RepeatedCall, seen_by(seen, answer=True), retryable=())
    outcomes: list[Exception | str | None] = [ConnectionError("lost"), "no", "no"]

    run(retry_agent(route, outcomes, runs), path)

    assert runs == ["o"]
    assert seen == [1, 2]


def test_retryable_takes_kinds_of_failure_that_are_not_exceptions(path: Path) -> None:
    # A tool that reports an error as its answer: with `ToolReportedError` retryable, the
    # same call runs again; the default counts it.
    for retryable, expected in (((ToolReportedError,), 3), ((), 1)):
        runs: list[dict[str, object]] = []
        middleware = ToolErrorMiddleware.from_routes(
            [
                Route(RepeatedCall, not_again, retryable=retryable),
                Route(Exception, report_type_only),
            ]
        )
        agent: Agent = create_agent(
            ScriptedChatModel(script=replies([bad("a")], [bad("b")], [bad("c")])),
            tools=[reporting_charge_tool(runs)],
            middleware=[middleware],
        )
        run(agent, path)
        assert len(runs) == expected, retryable


def test_each_tool_follows_the_first_route_for_repeats_that_selects_it(path: Path) -> None:
    # `charge` has a route of its own that counts timeouts; every other tool the default.
    runs: list[object] = []
    echoed: list[str] = []

    def echo(query: str) -> str:
        """Echo, timing out."""
        echoed.append(query)
        raise TimeoutError("slow")

    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(RepeatedCall, not_again, tools=["charge"], retryable=()),
            Route(RepeatedCall, not_again),
            Route(Exception, report_type_only),
        ]
    )
    outcomes: list[Exception | str | None] = [TimeoutError("slow"), "no"]
    script = replies(
        [call("charge", "a", order="o"), call("echo", "b", query="x")],
        [call("charge", "c", order="o"), call("echo", "d", query="x")],
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[scripted_tool(outcomes, runs), StructuredTool.from_function(echo)],
        middleware=[middleware],
    )

    result = run(agent, path)

    assert runs == ["o"]  # charge's timeout made a repeat
    assert echoed == ["x", "x"]  # echo's did not
    assert tool_messages(result)["c"].text.startswith("`charge` was not run again")


@pytest.mark.parametrize("success", ["a message", "a Command"])
def test_a_success_ends_a_repeat_and_failures_count_from_it(path: Path, success: str) -> None:
    # A handler that lets each repeat run: the call fails twice, succeeds, then fails again.
    # After the success the same call is no repeat (the handler is not asked) until it
    # fails again, and then its failures count from one.
    runs: list[object] = []
    seen: list[int] = []
    route = Route(RepeatedCall, seen_by(seen, answer=False))
    ok: str | None = "charged" if success == "a message" else None
    outcomes: list[Exception | str | None] = [ValueError("1"), ValueError("2"), ok]
    outcomes += [ValueError("3"), "charged"]
    middleware = ToolErrorMiddleware.from_routes([route, Route(Exception, report_type_only)])
    script = replies(*([call("charge", call_id, order="o")] for call_id in "abcde"))
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=[scripted_tool(outcomes, runs)],
        middleware=[middleware],
    )

    result = run(agent, path)

    assert len(runs) == 5
    assert seen == [1, 2, 1]  # b and c were repeats; d was not; e was, after d's failure
    assert tool_messages(result)["c"].text == "charged"
    assert tool_messages(result)["e"].text == "charged"


def test_a_repeat_that_runs_and_fails_again_adds_to_its_failures(path: Path) -> None:
    runs: list[object] = []
    seen: list[int] = []
    route = Route(RepeatedCall, seen_by(seen, answer=False))
    outcomes: list[Exception | str | None] = [ValueError("1"), ValueError("2"), ValueError("3")]

    run(retry_agent(route, outcomes, runs), path)

    assert seen == [1, 2]


def test_retryable_on_a_route_that_takes_no_repeats_is_refused() -> None:
    with pytest.raises(ValueError, match=r"retryable=") as refused:
        Route(KeyError, report_type_only, retryable=(TimeoutError,))
    message = str(refused.value)
    assert "this route takes KeyError, not RepeatedCall" in message
    assert "Route(RepeatedCall, handler, retryable=(<class 'TimeoutError'>,))" in message


@pytest.mark.parametrize(
    ("retryable", "shown"),
    [("TimeoutError", "'TimeoutError' (str)"), ((TimeoutError, 3), "(<class 'TimeoutError'>, 3)")],
)
def test_retryable_that_is_not_failure_types_is_refused(retryable: Any, shown: str) -> None:
    with pytest.raises(TypeError) as refused:
        Route(RepeatedCall, not_again, retryable=retryable)
    message = str(refused.value)
    assert message.startswith("`retryable` must be an Exception subclass")
    assert shown in message
    assert "For example: retryable=ValueError or retryable=(ValueError, KeyError)." in message


def test_a_route_shows_its_retryable_where_it_is_not_the_default() -> None:
    assert "retryable" not in repr(Route(RepeatedCall, not_again))
    assert repr(Route(RepeatedCall, not_again, retryable=())).endswith("retryable=())")
    shown = repr(Route(RepeatedCall, not_again, retryable=PaymentPending))
    assert shown.endswith("retryable=('PaymentPending',))")
