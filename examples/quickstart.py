"""Quick start: a sync handler turns a tool's failure into a message the model recovers from.

Run: `.venv/bin/python examples/quickstart.py` (offline: the model is scripted).
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
    raise TimeoutError("search backend timed out after 30 s")


def explain(exc: Exception, request: ToolCallRequest) -> str:
    """What the model reads instead of the exception: the tool, the type, what to do."""
    return f"`{request.tool_call['name']}` failed with {type(exc).__name__}; answer from memory."


# Your own chat model goes here, e.g. init_chat_model("openai:gpt-4.1").
model = ScriptedChatModel(
    script=[
        AIMessage(
            "", tool_calls=[{"name": "search", "args": {"query": "tallest tree"}, "id": "c1"}]
        ),
        AIMessage("Search is down, but from memory: Hyperion, a coast redwood, about 116 m."),
    ]
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    return create_agent(model, tools=[search], middleware=[ToolErrorMiddleware(explain)])


agent = build_agent()

result = agent.invoke({"messages": [HumanMessage("What is the tallest tree?")]})
print(transcript(result["messages"]))
