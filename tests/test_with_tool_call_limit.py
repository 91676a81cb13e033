"""Beside `ToolCallLimitMiddleware`: every call answered once, in either order, every exit.

The limit answers the calls it blocks in its hook after the model; those calls never reach
the tools. The model reads each block as an error answer, so this middleware meets it before
the next model call as an `"inner_middleware"` failure: recorded, told and counted, so a
budget stops a model that keeps calling a blocked tool. A tool a "tell" budget closed is
answered as its call comes to run, so a call the limit already blocked is not answered a
second time, and is not counted again.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import pytest
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langchain_tool_errors import (
    ErrorBudget,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import PATHS, Agent, Path, call, echo_tool, failing_tool, run

Exit = Literal["continue", "end", "error"]
ORDERS = ("limit first", "ours first")

WEATHER = failing_tool("weather", LookupError("no forecast"))
CALLS = [AIMessage("", tool_calls=[call("weather", f"w{n}")]) for n in (1, 2, 3)]


def agent_of(exit_behavior: Exit, order: str, told: list[ToolFailure]) -> Agent:
    # create_agent is partially unknown in pyright strict (its checkpointer parameter).
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    limit = ToolCallLimitMiddleware(run_limit=2, exit_behavior=exit_behavior)
    ours = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, when_spent="tell"),
        record_failures=True,
        listeners=[told.append],
    )
    middleware: list[Any] = [limit, ours] if order == "limit first" else [ours, limit]
    model = ScriptedChatModel(script=[*CALLS, AIMessage("done")])
    built: Agent = create_agent(model, tools=[WEATHER], middleware=middleware)
    return built


def answer_counts(messages: list[BaseMessage]) -> Counter[str]:
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("exit_behavior", ["continue", "end"])
def test_a_call_the_limit_blocks_is_answered_once_by_the_limit_alone(
    exit_behavior: Exit, path: Path, order: str
) -> None:
    told: list[ToolFailure] = []

    result = run(agent_of(exit_behavior, order, told), path)

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


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("path", PATHS)
def test_a_limit_that_raises_still_raises_and_nothing_is_answered_twice(
    path: Path, order: str
) -> None:
    told: list[ToolFailure] = []

    with pytest.raises(ToolCallLimitExceededError):
        run(agent_of("error", order, told), path)

    assert [(f["call_id"], f["outcome"]) for f in told] == [("w1", "answered"), ("w2", "told")]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("path", PATHS)
def test_a_budget_bounds_a_model_looping_on_the_limits_blocks(path: Path, order: str) -> None:
    # The model keeps calling a tool the limit blocks (exit_behavior="continue"): each call
    # is answered by the limit before it could run, and the model reads that answer as an
    # error, so the budget counts it, of the kind "inner_middleware", and stops the loop.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ours = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=3), listeners=[told.append]
    )
    middleware: list[Any] = [limit, ours] if order == "limit first" else [ours, limit]
    model = ScriptedChatModel(script=[Repeat(AIMessage("", tool_calls=[call("echo", "e")]))])
    agent: Agent = create_agent(model, tools=[echo_tool()], middleware=middleware)

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


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("path", PATHS)
def test_a_limit_that_ends_the_run_is_never_met_as_a_failure(path: Path, order: str) -> None:
    # With exit_behavior="end" the limit answers the calls and ends the run: no model
    # call follows, so its answers are never met before one, and never counted.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    told: list[ToolFailure] = []
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    ours = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=5),
        record_failures=True,
        listeners=[told.append],
    )
    middleware: list[Any] = [limit, ours] if order == "limit first" else [ours, limit]
    script = [
        AIMessage("", tool_calls=[call("echo", "e1")]),
        AIMessage("", tool_calls=[call("echo", "e2"), call("echo", "e3")]),
    ]
    agent: Agent = create_agent(
        ScriptedChatModel(script=script), tools=[echo_tool()], middleware=middleware
    )

    result = run(agent, path)

    blocked = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert sorted(m.tool_call_id for m in blocked) == ["e2", "e3"]
    assert result["tool_failures"] == []
    assert told == []
