"""Composed with langchain's `ToolRetryMiddleware`: retries first, then the error message.

Put this middleware first (outermost) and `ToolRetryMiddleware(on_failure="error")` inside
it: each call is retried; a call that recovers never reaches the handler; one that still
fails after every attempt reaches it once, with its last exception.

Run: `.venv/bin/python examples/with_retry.py`
"""

from __future__ import annotations

from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import ToolRetryMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel, transcript

attempts = {"flaky_quote": 0, "dead_quote": 0}


@tool
def flaky_quote(symbol: str) -> str:
    """A stock quote from a service that fails twice, then answers."""
    attempts["flaky_quote"] += 1
    if attempts["flaky_quote"] <= 2:
        raise TimeoutError("quote service timed out")
    return f"{symbol}: 187.20"


@tool
def dead_quote(symbol: str) -> str:
    """A stock quote from a service that is down."""
    attempts["dead_quote"] += 1
    raise TimeoutError("quote service timed out")


calls = [
    {"name": "flaky_quote", "args": {"symbol": "ACME"}, "id": "c1"},
    {"name": "dead_quote", "args": {"symbol": "INITECH"}, "id": "c2"},
]
model = ScriptedChatModel(
    script=[
        AIMessage("", tool_calls=calls),
        AIMessage("ACME is at 187.20; INITECH is unavailable."),
    ]
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    return create_agent(
        model,
        tools=[flaky_quote, dead_quote],
        middleware=[
            ToolErrorMiddleware(report_type_only),  # outer: sees only what retries could not fix
            ToolRetryMiddleware(max_retries=2, on_failure="error", initial_delay=0, jitter=False),
        ],
    )


agent = build_agent()

result = agent.invoke({"messages": [HumanMessage("Quotes for ACME and INITECH?")]})
print(transcript(result["messages"]))
print(f"\nattempts: {attempts}")
