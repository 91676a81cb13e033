"""What a `create_agent` agent sees when an MCP tool answers with an error result.

A probe through the real components: the server in `tests/_mcp_server.py` runs in a child
process, langchain's own adapter (`langchain.mcp`) loads its tools over stdio, and the
scripted model calls them. It pins down where an MCP error result (`isError: true`) shows
up, so that the middleware's MCP tests can rely on it:

- the adapter turns the result into a `ToolException` inside the tool, and the tool's own
  `handle_tool_error` turns that into an error `ToolMessage`, so a `wrap_tool_call`
  middleware is *returned* the message, not raised the exception;
- with the tool's own handling switched off, the exception is raised to the middleware;
- the tools are async-only: an agent run with `invoke` fails on the first call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import override

from tests._agents import Sent, build_agent, call, question, tool_messages

# The MCP packages come with the `dev` extra only (see pyproject.toml).
pytest.importorskip("fastmcp", reason="the MCP tests need `pip install -e '.[dev]'`")

from tests._mcp_server import ARCHIVED_RECORD
from tests._mcp_tools import mcp_tools
from tests._wrapping import Around, AroundToolCalls, ToolResult

# One server for the whole module: starting it (a Python process importing the MCP SDK)
# takes about a second, the calls themselves a few milliseconds.
pytestmark = pytest.mark.asyncio(loop_scope="module")

ARCHIVED = call("lookup", "archived", record_id=ARCHIVED_RECORD)
FOUND = call("lookup", "found", record_id=1)
ECHOED = call("echo", "echoed", text="hi")

# What the model is handed for each call: status, content (each block without the `id`
# langchain gives it), and artifact. Nothing but `status` sets the error apart: no artifact,
# and empty `additional_kwargs` and `response_metadata` on every message alike.
SEEN_BY_THE_MODEL: dict[str, tuple[str, list[dict[str, Any]], object]] = {
    "archived": ("error", [{"type": "text", "text": "record 7 is archived"}], None),
    "found": ("success", [{"type": "text", "text": "record 1: ok"}], None),
    # A tool returning `str` also gets structured content from the server.
    "echoed": (
        "success",
        [{"type": "text", "text": "hi"}],
        {"structured_content": {"result": "hi"}},
    ),
}


class Outcomes(AroundToolCalls):
    """Records what each tool call returned or raised under `awrap_tool_call`."""

    def __init__(self) -> None:
        super().__init__()
        self.returned: list[ToolResult] = []
        self.raised: list[Exception] = []

    @override
    def around(self, request: ToolCallRequest) -> Around:
        try:
            outcome = yield
        except Exception as exc:
            self.raised.append(exc)
            return ToolMessage("recorded", tool_call_id=request.tool_call["id"], status="error")
        self.returned.append(outcome)
        return outcome


def blocks(message: ToolMessage) -> list[dict[str, Any]]:
    """The message's content, which must be a list of content blocks (dicts)."""
    assert isinstance(message.content, list)
    found = [block for block in message.content if isinstance(block, dict)]
    assert len(found) == len(message.content)
    return found


def without_ids(message: ToolMessage) -> list[dict[str, Any]]:
    """The message's content blocks, less the random `id` langchain gives each one."""
    return [
        {key: value for key, value in block.items() if key != "id"} for block in blocks(message)
    ]


def without_handling(tools: Sequence[BaseTool]) -> list[BaseTool]:
    """Copies of `tools` whose own `handle_tool_error` is off."""
    return [tool.model_copy(update={"handle_tool_error": False}) for tool in tools]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tools() -> AsyncGenerator[list[BaseTool], None]:
    async with mcp_tools() as loaded:
        yield loaded


async def test_the_loaded_tools_are_async_and_handle_their_own_mcp_errors(
    tools: list[BaseTool],
) -> None:
    assert sorted(tool.name for tool in tools) == ["divide", "echo", "lookup"]
    for tool in tools:
        assert callable(tool.handle_tool_error)
        assert tool.response_format == "content_and_artifact"
        with pytest.raises(NotImplementedError, match="does not support sync invocation"):
            tool.invoke(FOUND)


async def test_an_mcp_error_result_reaches_the_model_as_an_error_tool_message(
    tools: list[BaseTool],
) -> None:
    outcomes, sent = Outcomes(), Sent()
    agent = build_agent(tools, [outcomes], [ARCHIVED, FOUND, ECHOED], answer=sent)
    result = await agent.ainvoke(question())

    received = {m.tool_call_id: m for m in sent.conversation if isinstance(m, ToolMessage)}
    assert received == tool_messages(result)
    seen = {
        call_id: (message.status, without_ids(message), message.artifact)
        for call_id, message in received.items()
    }
    assert seen == SEEN_BY_THE_MODEL
    for message in received.values():
        assert (message.additional_kwargs, message.response_metadata) == ({}, {})
    archived = received["archived"]
    assert (archived.name, archived.tool_call_id) == ("lookup", "archived")
    assert [str(block["id"])[:3] for block in blocks(archived)] == ["lc_"]

    # The tool answered for itself: the middleware was returned every message.
    assert outcomes.raised == []
    assert sorted(m.tool_call_id for m in outcomes.returned if isinstance(m, ToolMessage)) == [
        "archived",
        "echoed",
        "found",
    ]


async def test_with_the_tools_own_handling_off_the_mcp_error_is_raised_to_the_middleware(
    tools: list[BaseTool],
) -> None:
    outcomes = Outcomes()
    agent = build_agent(without_handling(tools), [outcomes], [ARCHIVED])
    result = await agent.ainvoke(question())

    [raised] = outcomes.raised
    assert isinstance(raised, ToolException)
    assert str(raised) == "record 7 is archived"
    assert outcomes.returned == []
    assert tool_messages(result)["archived"].content == "recorded"


async def test_an_agent_run_with_invoke_fails_on_the_first_mcp_call(
    tools: list[BaseTool],
) -> None:
    agent = build_agent(tools, [], [ARCHIVED])
    # In a worker thread, so that a sync path needing this loop could not deadlock.
    with pytest.raises(NotImplementedError, match="does not support sync invocation"):
        await asyncio.to_thread(agent.invoke, question())
