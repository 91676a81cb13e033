"""`ModelCallLimitMiddleware` beside this middleware: replies of only malformed calls.

A watching middleware meets a reply of only malformed calls in the model call's own step
and sends it back to the model through the graph, so every other middleware's hooks run
as for any model call. The limit counts model calls in its hook after the model: in either
order it counts every call, the ones sent back too, and ends the run at its limit.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, ModelCallLimitMiddleware
from langchain_core.messages import AIMessage, BaseMessage, InvalidToolCall
from langchain_core.tools import StructuredTool

from langchain_tool_errors import ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, ScriptStep
from tests._agents import Agent, Path, run


def _lookup(record_id: int) -> str:
    return f"record {record_id}"


def only_malformed(index: int) -> AIMessage:
    cut = InvalidToolCall(
        name="lookup",
        args='{"record_id": ',
        id=f"cut{index}",
        error="cut",
        type="invalid_tool_call",
    )
    return AIMessage("", invalid_tool_calls=[cut])


def agent_of(
    middleware: list[AgentMiddleware[Any, Any, Any]], script: list[ScriptStep | Repeat]
) -> Agent:
    lookup = StructuredTool.from_function(_lookup, name="lookup", description="A record.")
    agent: Agent = create_agent(
        ScriptedChatModel(script=script), tools=[lookup], middleware=middleware
    )
    return agent


def replies(messages: list[BaseMessage]) -> list[AIMessage]:
    return [m for m in messages if isinstance(m, AIMessage)]


@pytest.mark.parametrize("limit_first", [False, True], ids=["ours first", "limit first"])
def test_the_limit_counts_every_model_call_the_ones_sent_back_too(
    path: Path, limit_first: bool
) -> None:
    told: list[ToolFailure] = []
    ours = ToolErrorMiddleware(report_type_only, listeners=[told.append])
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    order: list[AgentMiddleware[Any, Any, Any]] = [limit, ours] if limit_first else [ours, limit]
    agent = agent_of(order, [Repeat(only_malformed(0))])

    result = run(agent, path)

    # Two model calls, each a reply of only malformed calls sent back; the limit's message.
    *sent_back, last = replies(result["messages"])
    assert len(sent_back) == 2
    assert all(r.invalid_tool_calls and not r.tool_calls for r in sent_back)
    assert not last.invalid_tool_calls
    assert "limit" in last.text
    assert [f["kind"] for f in told] == ["malformed_call", "malformed_call"]
