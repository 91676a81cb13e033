"""One half of the durability test of `when_spent="interrupt"`, run in its own process.

    python -m tests._durable_pause pause  DB RUNS           -> fails 3 times, then pauses
    python -m tests._durable_pause resume DB RUNS DECISION  -> resumes from DB with it

DB is a SQLite file, or a `postgresql://` URI. `weather` always fails and appends a line
to the file RUNS each time it runs, so the other process can tell how often it ran in
all. DECISION is a `BudgetDecision` as JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from langchain_tool_errors import ErrorBudget, ToolErrorBudgetExceeded, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Agent, question, tool_messages

CONFIG: RunnableConfig = {"configurable": {"thread_id": "weather-9"}}
CALL = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c"}])


def _weather(runs: Path) -> BaseTool:
    def weather(city: str) -> str:
        with runs.open("a", encoding="utf-8") as ran:
            ran.write(f"{city}\n")
        raise ConnectionError("the weather service is down")

    return StructuredTool.from_function(weather, name="weather", description="the forecast")


@contextmanager
def _saver(database: str) -> Generator[BaseCheckpointSaver[str]]:
    if not database.startswith("postgresql://"):
        with SqliteSaver.from_conn_string(database) as sqlite:
            yield sqlite
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(database) as postgres:
        postgres.setup()
        yield postgres


def _agent(checkpointer: BaseCheckpointSaver[str], runs: Path) -> Agent:
    middleware = ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=2, when_spent="interrupt")
    )
    model = ScriptedChatModel(script=[Repeat(CALL, times=4), AIMessage("done")])
    agent: Agent = create_agent(
        model, tools=[_weather(runs)], middleware=[middleware], checkpointer=checkpointer
    )
    return agent


def _ran(runs: Path) -> int:
    return len(runs.read_text(encoding="utf-8").splitlines()) if runs.exists() else 0


def main(phase: str, database: str, runs_file: str, decision: str = "") -> None:
    runs = Path(runs_file)
    with _saver(database) as checkpointer:
        agent = _agent(checkpointer, runs)
        if phase == "pause":
            result = agent.invoke(question(), CONFIG)
            [pause] = result["__interrupt__"]
            value = pause.value
            print(f"paused before {value['call_id']}: count {value['count']}, ran {_ran(runs)}")
            return
        try:
            result = agent.invoke(Command(resume=json.loads(decision)), CONFIG)
        except ToolErrorBudgetExceeded as spent:
            print(f"stopped at count {spent.count}, ran {_ran(runs)}")
            return
        answer = tool_messages(result)["c-4"]
        print(f"c-4 read {answer.text!r}, ran {_ran(runs)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
