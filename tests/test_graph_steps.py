"""What a configuration costs in checkpoints: one for each graph step of a run.

A plain middleware adds no node, as langchain's own `ToolErrorMiddleware` does not. One
with a budget, the record or listeners adds a node at the run's start and one at its end,
and does the rest inside the model call's own step: it settles the step the model reads,
and meets the reply's malformed calls. The recursion limit a run needs is
`tests/test_recursion_limit.py`'s.
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

from langchain_tool_errors import ErrorBudget, FailureKind, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, echo_tool, failing_tool, run
from tests.conftest import FIGURES


def _listen(failure: ToolFailure) -> None:
    """A listener that does nothing."""


_EXCEPTIONS: tuple[FailureKind, ...] = ("exception", "inner_middleware")

CONFIGURATIONS: dict[str, list[AgentMiddleware[Any, Any, Any]]] = {
    "langchain's class": [LangchainToolErrorMiddleware(on_error=lambda exc, request: "failed")],
    "plain": [ToolErrorMiddleware(report_type_only)],
    "a budget without malformed calls": [
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=100, kinds=_EXCEPTIONS))
    ],
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


def checkpoints(name: str, turns: int, path: Path) -> int:
    """The checkpoints a run writes: `turns` model calls of two parallel calls, one of them
    failing, then a last answer."""
    script = [
        AIMessage("", tool_calls=[call("echo", f"e{turn}"), call("broken", f"b{turn}")])
        for turn in range(turns)
    ]
    agent: Agent = create_agent(
        ScriptedChatModel(script=[*script, AIMessage("done")]),
        tools=[echo_tool(), failing_tool("broken", ValueError("broken"))],
        middleware=CONFIGURATIONS[name],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": name}}
    assert run(agent, path, config=config)["messages"][-1].text == "done"
    graph: Any = agent
    return len(list(graph.checkpointer.list(config)))


@pytest.mark.parametrize("turns", [1, 4])
def test_the_checkpoints_a_run_writes_in_each_configuration(path: Path, turns: int) -> None:
    written = {name: checkpoints(name, turns, path) for name in CONFIGURATIONS}
    model_calls = turns + 1

    assert written["plain"] == written["langchain's class"]
    # The run's start and its end, whatever the number of model calls.
    for name in list(CONFIGURATIONS)[2:]:
        assert written[name] == written["plain"] + 2, name
    shown = ", ".join(f"{name} {count}" for name, count in written.items())
    FIGURES.append(f"checkpoints ({path}, {model_calls} model calls): {shown}")
