"""A handler returning content blocks instead of a string.

Any list of langchain content blocks (`TextContentBlock`, any `ContentBlock`) fits; the
error `ToolMessage` carries them as a list.

Run: `.venv/bin/python examples/content_blocks.py`
"""

from __future__ import annotations

from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage, TextContentBlock, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.testing import ScriptedChatModel, transcript


@tool
def convert(amount: float, currency: str) -> str:
    """Convert an amount of euros into `currency`."""
    raise ValueError(f"unsupported currency {currency!r}")


def as_blocks(exc: Exception, request: ToolCallRequest) -> list[TextContentBlock]:
    """The failure, and what to do about it, as two text blocks."""
    return [
        {"type": "text", "text": f"`{request.tool_call['name']}` failed: {exc}."},
        {"type": "text", "text": "Supported currencies: USD, GBP. Ask the user which one."},
    ]


call = {"name": "convert", "args": {"amount": 10, "currency": "XYZ"}, "id": "c1"}
model = ScriptedChatModel(
    script=[AIMessage("", tool_calls=[call]), AIMessage("Which currency: USD or GBP?")]
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    return create_agent(model, tools=[convert], middleware=[ToolErrorMiddleware(as_blocks)])


agent = build_agent()

result = agent.invoke({"messages": [HumanMessage("Convert 10 EUR to XYZ")]})
print(transcript(result["messages"]))
error = next(m for m in result["messages"] if isinstance(m, ToolMessage))
print(f"\nthe error message's content, as the model gets it ({error.status}):")
for block in error.content:
    print(f"  {block}")
