"""The agents two `langhost` servers serve over one PostgreSQL: `create_agent`, the scripted model.

Each server process is started with `TOOL_ERRORS_SERVER` naming it ("a" or "b"), and every
tool and handler call appends a line naming the process that ran it to the file named by
`TOOL_ERRORS_EVENTS`, so the test can tell which process did what:

- `recorded` keeps the record of each run's failures in the thread state. Its model calls
  `lookup` for a missing key (a `KeyError` the handler answers), then `approve` (which
  interrupts), then `lookup` again, whose second failure spends a budget of one failure per
  tool and so tells the model the tool is closed.
- `failover` calls `lookup` for a missing key, then `hold`, which waits until the file named
  by `TOOL_ERRORS_RELEASE` exists (the test kills the process running it meanwhile), then
  answers.

An event line is `<what> <call id> server=<name> attempt=<n>`; `attempt` is the server's
attempt number of the run (its run metadata's `run_attempt`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import interrupt

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
from langchain_tool_errors.testing import Repeat, ScriptedChatModel


def _event(what: str, call_id: str) -> str:
    """One line of the events file: what ran, for which call, on which server and attempt."""
    metadata = get_config().get("metadata") or {}
    server = os.environ.get("TOOL_ERRORS_SERVER", "?")
    return f"{what} {call_id} server={server} attempt={metadata.get('run_attempt', '?')}"


def _append(line: str) -> None:
    events = os.environ.get("TOOL_ERRORS_EVENTS")
    if events:
        with Path(events).open("a", encoding="utf-8") as file:
            file.write(line + "\n")


async def record(what: str, call_id: str) -> None:
    """Append an event line (off the event loop)."""
    await asyncio.to_thread(_append, _event(what, call_id))


@tool
async def lookup(key: str) -> str:
    """The value stored under `key`."""
    if key.startswith("missing"):
        raise KeyError(key)
    return f"value of {key}"


@tool
async def approve(action: str) -> str:
    """Ask a human to approve `action`."""
    await record("approve", action)
    answer = interrupt({"approve": action})
    return f"{action}: {answer}"


@tool
async def hold(key: str) -> str:
    """Wait until the test releases the run, then answer."""
    await record("hold", key)
    release = Path(os.environ.get("TOOL_ERRORS_RELEASE", "/nonexistent"))
    while not await asyncio.to_thread(release.exists):
        await asyncio.sleep(0.1)
    return f"held {key}"


async def explain_missing(exc: KeyError, request: ToolCallRequest) -> str:
    """Tell the model which key is missing; record which process handled the call."""
    call_id = str(request.tool_call["id"])
    await record("handled", call_id)
    return f"No record {exc.args[0]!r} (call {call_id})."


def _turn(messages: Sequence[BaseMessage]) -> tuple[int, int]:
    """Which run of the thread this is (1, 2, ...) and the model's turn in it (0, 1, ...)."""
    run = sum(isinstance(m, HumanMessage) for m in messages)
    last_question = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    turn = sum(isinstance(m, AIMessage) for m in messages[last_question:])
    return run, turn


RECORDED_PLAN = [("lookup", {"key": "missing-r"}), ("approve", {"action": "refund"})] * 2


def call_the_recorded_plan(messages: Sequence[BaseMessage]) -> AIMessage:
    """Each reply of a `recorded` run: the next call of `RECORDED_PLAN`, then an answer."""
    run, turn = _turn(messages)
    if turn >= 3:
        return AIMessage("done")
    name, args = RECORDED_PLAN[turn]
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"rec{run}-{turn}"}])


FAILOVER_PLAN = [("lookup", {"key": "missing-f"}), ("hold", {"key": "held-f"})]


def call_the_failover_plan(messages: Sequence[BaseMessage]) -> AIMessage:
    """Each reply of a `failover` run: the next call of `FAILOVER_PLAN`, then an answer."""
    run, turn = _turn(messages)
    if turn >= len(FAILOVER_PLAN):
        return AIMessage("done")
    name, args = FAILOVER_PLAN[turn]
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"fo{run}-{turn}"}])


def build(
    plan: Callable[[Sequence[BaseMessage]], AIMessage],
    tools: list[BaseTool],
    budget: ErrorBudget | None,
) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent of the scripted model following `plan`, with a recording middleware."""
    model = ScriptedChatModel(script=[Repeat(plan)])
    middleware = ToolErrorMiddleware(
        aon_error=explain_missing, exceptions=KeyError, budget=budget, record_failures=True
    )
    return create_agent(model, tools=tools, middleware=[middleware])


recorded = build(
    call_the_recorded_plan, [lookup, approve], ErrorBudget(per_tool=1, when_spent="tell")
)
failover = build(call_the_failover_plan, [lookup, hold], None)
