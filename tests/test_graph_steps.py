"""What a configuration costs in graph steps: checkpoints written, and the recursion limit.

Each graph step writes a checkpoint and counts against LangGraph's `recursion_limit`. A
plain middleware adds no node; one with a budget, the record or listeners adds two a run
(the run's start and its end), whatever the number of model calls: what happens around
each model call runs in the model's own step. The baseline is langchain's own
`ToolErrorMiddleware`, which adds no node either.
"""

from __future__ import annotations

from typing import Any

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, echo_tool, failing_tool, question, run


def _listen(failure: ToolFailure) -> None:
    """A listener that does nothing."""


CONFIGURATIONS: dict[str, list[AgentMiddleware[Any, Any, Any]]] = {
    "langchain's class": [LangchainToolErrorMiddleware(on_error=lambda exc, request: "failed")],
    "plain": [ToolErrorMiddleware(report_type_only)],
    "a budget": [ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=100))],
    "the record": [ToolErrorMiddleware(report_type_only, record_failures=True)],
    "a listener": [ToolErrorMiddleware(report_type_only, listeners=[_listen])],
    "all three": [
        ToolErrorMiddleware(
            report_type_only,
            budget=ErrorBudget(per_run=100),
            record_failures=True,
            listeners=[_listen],
        )
    ],
}


def agent_of(middleware: list[AgentMiddleware[Any, Any, Any]], turns: int) -> Agent:
    """`turns` model calls of two parallel calls, one failing, then a last answer."""
    script = [
        AIMessage("", tool_calls=[call("echo", f"e{turn}"), call("broken", f"b{turn}")])
        for turn in range(turns)
    ]
    built: Agent = create_agent(
        ScriptedChatModel(script=[*script, AIMessage("done")]),
        tools=[echo_tool(), failing_tool("broken", ValueError("broken"))],
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    return built


def checkpoints(name: str, turns: int, path: Path) -> int:
    """How many checkpoints a run of `turns` model calls of tools, and a last one, writes."""
    agent = agent_of(CONFIGURATIONS[name], turns)
    config: RunnableConfig = {"configurable": {"thread_id": name}}
    result = run(agent, path, config=config)
    assert result["messages"][-1].text == "done"
    graph: Any = agent
    return len(list(graph.checkpointer.list(config)))


@pytest.mark.parametrize("turns", [1, 4])
def test_a_budget_record_or_listener_costs_two_checkpoints_a_run(path: Path, turns: int) -> None:
    written = {name: checkpoints(name, turns, path) for name in CONFIGURATIONS}

    assert written["plain"] == written["langchain's class"]
    for name in ("a budget", "the record", "a listener", "all three"):
        assert written[name] == written["plain"] + 2, name


def smallest_limit(name: str, turns: int) -> int:
    """The smallest `recursion_limit` under which the run reaches its last answer."""
    for limit in range(1, 100):
        agent = agent_of(CONFIGURATIONS[name], turns)
        config: RunnableConfig = {"configurable": {"thread_id": "t"}, "recursion_limit": limit}
        try:
            agent.invoke(question(), config)
        except GraphRecursionError:
            continue
        return limit
    raise AssertionError(name)


def test_a_budget_record_or_listener_needs_a_recursion_limit_two_higher() -> None:
    # Each model call and each tools step is one step; the budget's two come on top, however
    # many model calls the run makes.
    for turns in (1, 3):
        plain = smallest_limit("plain", turns)
        assert smallest_limit("langchain's class", turns) == plain
        assert plain == 2 * turns + 2  # a step a model call and a tools step, and one more
        assert smallest_limit("all three", turns) == plain + 2
