"""Load: one model turn with many parallel failing tool calls, through a real agent.

Every call must get exactly one error message, with its own content (no cross-talk), and
sync handlers must cope with being called from many threads at once.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Path, build_agent, call, run
from tests.conftest import FIGURES

CALLS = {"async": 1000, "sync": 300}


class OrderFailed(Exception):
    """Carries the order id it failed for, so cross-talk would show."""


def _failing_order_tool() -> BaseTool:
    # The first two sync calls wait for each other before they fail: two calls are in the
    # tool at once, on two threads, however fast each call would be alone.
    together = threading.Barrier(2)

    def place(order: str) -> str:
        if order in ("o-0", "o-1"):
            together.wait(timeout=30)
        raise OrderFailed(order)

    async def aplace(order: str) -> str:
        await asyncio.sleep(0)
        raise OrderFailed(order)

    return StructuredTool.from_function(
        place, coroutine=aplace, name="place_order", description="places an order (fails)"
    )


class Recorder:
    """A handler that answers with the failed order's id and notes the threads it ran on."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.calls = 0
        self._lock = threading.Lock()

    def handler(self, exc: OrderFailed, request: ToolCallRequest) -> str:
        with self._lock:
            self.threads.add(threading.get_ident())
            self.calls += 1
        return f"order {exc.args[0]} failed (call {request.tool_call['id']})"

    async def ahandler(self, exc: OrderFailed, request: ToolCallRequest) -> str:
        await asyncio.sleep(0)
        return self.handler(exc, request)


@pytest.mark.parametrize("path", ["async", "sync"])
def test_parallel_failures_each_get_their_own_message(path: Path) -> None:
    count = CALLS[path]
    recorder = Recorder()
    middleware = (
        ToolErrorMiddleware(recorder.handler, aon_error=recorder.ahandler, exceptions=OrderFailed)
        if path == "async"
        else ToolErrorMiddleware(recorder.handler, exceptions=OrderFailed)
    )
    calls = [call("place_order", f"call-{i}", order=f"o-{i}") for i in range(count)]
    agent = build_agent([_failing_order_tool()], [middleware], calls)

    result = run(agent, path)

    messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(messages) == count
    by_id = {m.tool_call_id: m for m in messages}
    assert len(by_id) == count
    for i in range(count):
        message = by_id[f"call-{i}"]
        assert message.content == f"order o-{i} failed (call call-{i})"
        assert message.status == "error"
    assert recorder.calls == count
    if path == "sync":
        assert len(recorder.threads) > 1, "ToolNode runs parallel sync calls on a thread pool"
    FIGURES.append(
        f"load ({path} path): {count} parallel failing calls in one turn, {count} messages, "
        f"handler ran on {len(recorder.threads)} thread(s)"
    )
