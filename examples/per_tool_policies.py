"""Two named instances in one agent, each with its own tools and its own handler.

`name=` gives each instance its identity in the agent (langchain refuses two middleware with
one name); `tools=` limits each to its tools.

Run: `.venv/bin/python examples/per_tool_policies.py`
"""

from __future__ import annotations

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


@tool
def search(query: str) -> str:
    """Search the web."""
    raise TimeoutError("search timed out")


@tool
def lookup(record_id: str) -> str:
    """A record from the database, by id."""
    raise KeyError(record_id)


def search_down(exc: Exception, request: ToolCallRequest) -> str:
    """Policy for `search`: any failure means the search service is down."""
    return "Search is down; answer from what you know."


def missing_record(exc: KeyError, request: ToolCallRequest) -> str:
    """Policy for `lookup`: only a missing record is the model's to fix."""
    return f"No record {exc.args[0]!r}; ask the user for another id."


calls = [
    {"name": "search", "args": {"query": "opening hours"}, "id": "c1"},
    {"name": "lookup", "args": {"record_id": "r-404"}, "id": "c2"},
]
model = ScriptedChatModel(
    script=[AIMessage("", tool_calls=calls), AIMessage("Search is down and r-404 does not exist.")]
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    return create_agent(
        model,
        tools=[search, lookup],
        middleware=[
            ToolErrorMiddleware(search_down, tools=[search], name="search_errors"),
            ToolErrorMiddleware(
                missing_record, exceptions=KeyError, tools=["lookup"], name="lookup_errors"
            ),
        ],
    )


agent = build_agent()

result = agent.invoke({"messages": [HumanMessage("When are you open, and what is r-404?")]})
print(transcript(result["messages"]))
