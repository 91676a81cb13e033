"""An async handler (`aon_error`) on the async path, beside a sync one for `invoke`.

`aon_error` may await (here: an audit log); `ainvoke`/`astream` use it, `invoke` uses the sync
`on_error`. Given only `aon_error=`, the middleware is async-only: `invoke` is then a type
error, and fails before any tool runs.

Run: `.venv/bin/python examples/async_handler.py`
"""

from __future__ import annotations

import asyncio
from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.testing import ScriptedChatModel, transcript

audit: list[str] = []


@tool
async def fetch_invoice(invoice_id: str) -> str:
    """Fetch an invoice by id."""
    raise ConnectionError(f"billing service refused the connection for {invoice_id}")


async def record_and_explain(exc: Exception, request: ToolCallRequest) -> str:
    """Record the failure (async I/O in real code), then tell the model what happened."""
    await asyncio.sleep(0)  # e.g. await audit_log.write(...)
    audit.append(f"{request.tool_call['id']}: {type(exc).__name__}")
    return f"`{request.tool_call['name']}` is unavailable ({type(exc).__name__}); try later."


def explain(exc: Exception, request: ToolCallRequest) -> str:
    """The sync handler `invoke` uses."""
    return f"`{request.tool_call['name']}` is unavailable ({type(exc).__name__})."


def build(middleware: ToolErrorMiddleware) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model calls the failing tool once, then apologises."""
    call = {"name": "fetch_invoice", "args": {"invoice_id": "INV-7"}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage("", tool_calls=[call]), AIMessage("Billing is down; I will retry later.")]
    )
    return create_agent(model, tools=[fetch_invoice], middleware=[middleware])


question: InputAgentState = {"messages": [HumanMessage("Show me invoice INV-7")]}
both = ToolErrorMiddleware(explain, aon_error=record_and_explain)
print("ainvoke, with on_error and aon_error:")
print(transcript(asyncio.run(build(both).ainvoke(question))["messages"]))
print(f"audit log: {audit}")

async_only = ToolErrorMiddleware(aon_error=record_and_explain)
print("\ninvoke, with aon_error alone:")
try:
    build(async_only).invoke(question)
except NotImplementedError as exc:
    print(f"NotImplementedError: {exc}")
