"""One half of the durable-execution test, run in its own process.

    python -m tests._durable pause  DB HANDLER_LOG PATH   -> runs until the tool interrupts
    python -m tests._durable resume DB HANDLER_LOG PATH   -> resumes from the SQLite checkpoint

Each prints one JSON line describing what it saw. The handler appends to HANDLER_LOG, so the
parent test can prove it was never called in either process.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Agent, build_agent, call, question, tool_messages

CONFIG: RunnableConfig = {"configurable": {"thread_id": "refund-42"}}


def _agent(checkpointer: BaseCheckpointSaver[str], handler_log: FilePath) -> Agent:
    def approve_refund(amount: int) -> str:
        approver = interrupt({"question": f"approve a refund of {amount}?"})
        return f"refund of {amount} approved by {approver}"

    def record(exc: Exception, request: ToolCallRequest) -> str:
        with handler_log.open("a") as log:
            log.write(f"{type(exc).__name__}\n")
        return "handled"

    def report_result(messages: Sequence[BaseMessage]) -> AIMessage:
        result = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
        return AIMessage(content=f"The model read: {result.content}")

    tool = StructuredTool.from_function(
        approve_refund, name="approve_refund", description="asks a human to approve"
    )
    return build_agent(
        [tool],
        [ToolErrorMiddleware(record)],
        [call("approve_refund", "c1", amount=120)],
        checkpointer=checkpointer,
        answer=report_result,
    )


def _summary(phase: str, result: dict[str, Any]) -> dict[str, Any]:
    if phase == "pause":
        interrupts: list[Any] = list(result.get("__interrupt__", []))
        return {"interrupts": [i.value for i in interrupts]}
    message = tool_messages(result)["c1"]
    return {
        "tool_content": message.content,
        "tool_status": message.status,
        "answer": result["messages"][-1].content,
    }


def _request(phase: str) -> Any:
    return question() if phase == "pause" else Command(resume="alice")


def run_sync(phase: str, db: str, handler_log: FilePath) -> dict[str, Any]:
    with SqliteSaver.from_conn_string(db) as checkpointer:
        agent = _agent(checkpointer, handler_log)
        return _summary(phase, agent.invoke(_request(phase), CONFIG))


async def run_async(phase: str, db: str, handler_log: FilePath) -> dict[str, Any]:
    async with AsyncSqliteSaver.from_conn_string(db) as checkpointer:
        agent = _agent(checkpointer, handler_log)
        return _summary(phase, await agent.ainvoke(_request(phase), CONFIG))


def main(argv: Sequence[str]) -> int:
    phase, db, handler_log, path = argv
    log = FilePath(handler_log)
    summary = run_sync(phase, db, log) if path == "sync" else asyncio.run(run_async(phase, db, log))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
