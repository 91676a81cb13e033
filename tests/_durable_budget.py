"""One half of the budget durability test, run in its own process.

    python -m tests._durable_budget pause  DB KIND  -> two failures, then an interrupt
    python -m tests._durable_budget resume DB KIND  -> resumes from the SQLite checkpoint

The model calls `weather`, then `approve` (which interrupts), then `weather` twice more.
With KIND `exception`, `weather` always raises; with `invalid_arguments`, the model sends
it a word where its schema wants a number, so `ToolNode` answers each call itself. With
`per_tool=3`, the resumed run is stopped at weather's fourth failure only if the first two
were kept in the checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command, interrupt

from langchain_tool_errors import ErrorBudget, ToolErrorBudgetExceeded, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, call, failing_tool, question

CONFIG: RunnableConfig = {"configurable": {"thread_id": "weather-7"}}
PLAN = ["weather", "weather", "approve", "weather", "weather"]


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    turn = sum(isinstance(m, AIMessage) for m in messages)
    if turn >= len(PLAN):
        return AIMessage("done")
    args = {"days": "several"} if PLAN[turn] == "weather" else {}
    return AIMessage("", tool_calls=[call(PLAN[turn], f"c{turn}", **args)])


def _weather(kind: str) -> BaseTool:
    if kind == "exception":
        return failing_tool("weather", LookupError("Atlantis"))

    def weather(days: int) -> str:
        return f"sunny for {days} days"

    return StructuredTool.from_function(weather, name="weather", description="the forecast")


def _agent(checkpointer: SqliteSaver, kind: str) -> Agent:
    def approve(action: str = "") -> str:
        return f"approved by {interrupt({'approve': action})}"

    tools = [
        _weather(kind),
        StructuredTool.from_function(approve, name="approve", description="asks a human"),
    ]
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3))
    model = ScriptedChatModel(script=[_script] * (len(PLAN) + 1))
    agent: Agent = create_agent(
        model, tools=tools, middleware=[middleware], checkpointer=checkpointer
    )
    return agent


def main(phase: str, database: str, kind: str) -> None:
    with SqliteSaver.from_conn_string(database) as checkpointer:
        agent = _agent(checkpointer, kind)
        if phase == "pause":
            result = agent.invoke(question(), CONFIG)
            assert "__interrupt__" in result
            print("paused after 2 handled failures")
            return
        try:
            agent.invoke(Command(resume="alice"), CONFIG)
        except ToolErrorBudgetExceeded as spent:
            print(
                f"stopped: {spent.tool} failed {spent.count} times, limit {spent.limit}, "
                f"last kind {spent.kind}"
            )
        else:
            print("not stopped: the counts were lost")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
