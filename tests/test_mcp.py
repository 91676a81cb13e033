"""The middleware over a real MCP server: its error results are counted, routed and bounded.

The server in `tests/_mcp_server.py` runs in a child process and langchain's own adapter
(`langchain.mcp`) loads its tools over stdio. An MCP error result reaches the agent as an
error message the tool answers itself (`ToolReportedError`), never as an exception; the
tools are async-only, so every run here is `ainvoke`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
import pytest_asyncio
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolReportedError,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Agent, call, question, tool_messages

# The MCP packages come with the `dev` extra only (see pyproject.toml).
pytest.importorskip("fastmcp", reason="the MCP tests need `pip install -e '.[dev]'`")

from tests._mcp_server import ARCHIVED_RECORD
from tests._mcp_tools import mcp_tools

pytestmark = pytest.mark.asyncio(loop_scope="module")

ARCHIVED = AIMessage(content="", tool_calls=[call("lookup", "archived", record_id=ARCHIVED_RECORD)])


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tools() -> AsyncGenerator[list[BaseTool], None]:
    async with mcp_tools() as loaded:
        yield loaded


def agent_of(
    tools: list[BaseTool], middleware: ToolErrorMiddleware, *script: AIMessage | Repeat
) -> Agent:
    agent: Agent = create_agent(
        ScriptedChatModel(script=[*script]), tools=tools, middleware=[middleware]
    )
    return agent


async def test_a_route_rewrites_an_mcp_error_result(tools: list[BaseTool]) -> None:
    seen: list[ToolReportedError] = []

    async def archived(failure: ToolReportedError, request: ToolCallRequest) -> str:
        seen.append(failure)
        return f"`{failure.tool}` could not answer; ask the user which record they mean."

    middleware = ToolErrorMiddleware.from_routes([Route(ToolReportedError, aon_error=archived)])
    result = await agent_of(tools, middleware, ARCHIVED, AIMessage("done")).ainvoke(question())

    message = tool_messages(result)["archived"]
    assert (message.status, message.text) == (
        "error",
        "`lookup` could not answer; ask the user which record they mean.",
    )
    [failure] = seen
    assert (failure.tool, dict(failure.args), failure.text) == (
        "lookup",
        {"record_id": ARCHIVED_RECORD},
        "record 7 is archived",
    )


async def test_a_budget_stops_a_model_looping_on_an_mcp_error(tools: list[BaseTool]) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    agent = agent_of(tools, middleware, Repeat(ARCHIVED))

    with pytest.raises(ToolErrorBudgetExceeded) as spent:
        await agent.ainvoke(question(), {"recursion_limit": 40})

    assert (spent.value.tool, spent.value.count, spent.value.kind) == (
        "lookup",
        3,
        "tool_reported",
    )


async def test_without_a_route_the_mcp_error_reaches_the_model_unchanged(
    tools: list[BaseTool],
) -> None:
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
    result = await agent_of(tools, middleware, ARCHIVED, AIMessage("done")).ainvoke(question())

    message = tool_messages(result)["archived"]
    assert isinstance(message, ToolMessage)
    assert (message.status, message.text) == ("error", "record 7 is archived")
