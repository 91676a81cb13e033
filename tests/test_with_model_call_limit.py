"""`ModelCallLimitMiddleware` beside this middleware: replies of only malformed calls.

A watching middleware sends a reply of only malformed calls back to the model from its hook
after the model (`jump_to="model"`), and LangGraph then skips the hooks after the model of
every middleware listed before it. The limit counts model calls in its hook after the
model: listed after this middleware, it counts every call and ends the run at its limit;
listed before, the calls this middleware sent back are not counted.
"""

from __future__ import annotations

from typing import Any

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


def test_listed_after_this_one_the_limit_counts_every_model_call(path: Path) -> None:
    told: list[ToolFailure] = []
    ours = ToolErrorMiddleware(report_type_only, listeners=[told.append])
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    agent = agent_of([ours, limit], [Repeat(only_malformed(0))])

    result = run(agent, path)

    # Two model calls, each a reply of only malformed calls sent back; the limit's message.
    *sent_back, last = replies(result["messages"])
    assert len(sent_back) == 2
    assert all(r.invalid_tool_calls and not r.tool_calls for r in sent_back)
    assert not last.invalid_tool_calls
    assert "limit" in last.text
    assert [f["kind"] for f in told] == ["malformed_call", "malformed_call"]


def test_listed_before_this_one_the_calls_sent_back_are_not_counted(path: Path) -> None:
    ours = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    script: list[ScriptStep | Repeat] = [only_malformed(i) for i in range(4)]
    agent = agent_of([limit, ours], [*script, AIMessage("done")])

    result = run(agent, path)

    # Five model calls with a limit of two: the four sent back were never counted.
    assert len(replies(result["messages"])) == 5
    assert result["messages"][-1].text == "done"
