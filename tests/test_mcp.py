"""The middleware over a real MCP server: its error results are counted, routed and bounded.

The server in `tests/_mcp_server.py` runs in a child process and langchain's own adapter
(`langchain.mcp`) loads its tools over stdio. An MCP error result reaches the agent as an
error message the tool answers itself (`ToolReportedError`), never as an exception, unless
the arguments are ones the tool's JSON schema refuses: that error result is an
`InvalidArguments`, whatever the server wrote. The tools are async-only, so every run here
is `ainvoke`.
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
    InvalidArguments,
    ReportedFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolReportedError,
)
from langchain_tool_errors.handlers import report_invalid_fields, report_kind_only, report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Agent, call, question, tool_messages

# The MCP packages come with the `dev` extra only (see pyproject.toml).
pytest.importorskip("fastmcp", reason="the MCP tests need `pip install -e '.[dev]'`")

from tests._mcp_server import ARCHIVED_RECORD
from tests._mcp_tools import mcp_tools

pytestmark = pytest.mark.asyncio(loop_scope="module")

ARCHIVED = AIMessage(content="", tool_calls=[call("lookup", "archived", record_id=ARCHIVED_RECORD)])
DIVIDE_BY_WORD = AIMessage(content="", tool_calls=[call("divide", "word", a="one", b=2)])
DIVIDE_BY_ZERO = AIMessage(content="", tool_calls=[call("divide", "zero", a=1, b=0)])


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


def fields_then_kinds() -> ToolErrorMiddleware:
    """Invalid arguments named field by field, every other reported failure by its kind."""
    return ToolErrorMiddleware.from_routes(
        [
            Route(InvalidArguments, report_invalid_fields),
            Route(ReportedFailure, report_kind_only),
            Route(Exception, report_type_only),
        ],
        record_failures=True,
    )


async def test_arguments_the_mcp_tools_schema_refuses_are_invalid_arguments(
    tools: list[BaseTool],
) -> None:
    agent = agent_of(tools, fields_then_kinds(), DIVIDE_BY_WORD, AIMessage("done"))

    result = await agent.ainvoke(question())

    message = tool_messages(result)["word"]
    assert (message.status, message.text) == (
        "error",
        "The arguments of `divide` do not fit its schema: `a`: Input should be a valid "
        "integer. Fix them and call it again.",
    )
    [record] = result["tool_failures"]
    assert (record["tool"], record["kind"], record["route"]) == ("divide", "invalid_arguments", 0)


async def test_the_server_text_for_refused_arguments_reaches_the_route_as_written(
    tools: list[BaseTool],
) -> None:
    seen: list[InvalidArguments] = []

    async def keep(failure: InvalidArguments, request: ToolCallRequest) -> None:
        seen.append(failure)

    middleware = ToolErrorMiddleware.from_routes([Route(InvalidArguments, aon_error=keep)])
    result = await agent_of(tools, middleware, DIVIDE_BY_WORD, AIMessage("done")).ainvoke(
        question()
    )

    [failure] = seen
    assert [tuple(error) for error in failure.errors] == [("a", "Input should be a valid integer")]
    assert failure.text.startswith("Error executing tool divide: 1 validation error")
    assert tool_messages(result)["word"].text == failure.text


async def test_an_mcp_error_result_for_valid_arguments_stays_tool_reported(
    tools: list[BaseTool],
) -> None:
    agent = agent_of(tools, fields_then_kinds(), DIVIDE_BY_ZERO, AIMessage("done"))

    result = await agent.ainvoke(question())

    assert tool_messages(result)["zero"].status == "error"
    [record] = result["tool_failures"]
    assert (record["tool"], record["kind"], record["route"]) == ("divide", "tool_reported", 1)
