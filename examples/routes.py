"""Ordered routes in one middleware: specific handlers first, a fallback last.

The trap: three middleware, two specific and a catch-all listed last. langchain runs the
last middleware in the list innermost, so the catch-all sees every failure first and the
specific handlers never run. One middleware built with `ToolErrorMiddleware.from_routes`
reads like a `try` statement's `except` clauses instead: the first route that matches
handles the failure.

Run: `.venv/bin/python examples/routes.py`
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import Route, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel, transcript


@tool
def search(query: str) -> str:
    """Search the web."""
    raise TimeoutError("search timed out")


@tool
def lookup(record_id: str) -> str:
    """A record from the database, by id."""
    raise KeyError(record_id)


@tool
def convert(amount: str) -> str:
    """Convert an amount to euros."""
    raise ValueError(f"cannot parse {amount!r}")


def missing_record(exc: KeyError, request: ToolCallRequest) -> str:
    """Only a missing record is the model's to fix: say which."""
    return f"No record {exc.args[0]!r}; ask the user for another id."


def timed_out(exc: TimeoutError | ConnectionError, request: ToolCallRequest) -> str:
    """The service is slow or away: one more try may work."""
    return "The service did not answer in time; try once more, then answer without it."


def build_agent(
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
) -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    calls = [
        {"name": "search", "args": {"query": "opening hours"}, "id": "c1"},
        {"name": "lookup", "args": {"record_id": "r-404"}, "id": "c2"},
        {"name": "convert", "args": {"amount": "twelve"}, "id": "c3"},
    ]
    model = ScriptedChatModel(script=[AIMessage("", tool_calls=calls), AIMessage("Done.")])
    return create_agent(model, tools=[search, lookup, convert], middleware=list(middleware))


def ask(agent: Runnable[InputAgentState, dict[str, Any]]) -> None:
    """Ask the agent, and print the conversation."""
    result = agent.invoke({"messages": [HumanMessage("Opening hours, r-404, and 12 in EUR?")]})
    print(transcript(result["messages"]))


print("Three middleware, the catch-all last: it runs innermost and answers everything.")
ask(
    build_agent(
        [
            ToolErrorMiddleware(missing_record, exceptions=KeyError, name="lookup_errors"),
            ToolErrorMiddleware(timed_out, exceptions=TimeoutError, name="timeouts"),
            ToolErrorMiddleware(report_type_only, name="fallback"),
        ]
    )
)

print()
print("One middleware with routes: the first route that matches answers, as `except` does.")
ask(
    build_agent(
        [
            ToolErrorMiddleware.from_routes(
                [
                    Route(KeyError, missing_record, tools=[lookup]),
                    Route((TimeoutError, ConnectionError), timed_out),
                    Route(Exception, report_type_only),
                ]
            )
        ]
    )
)
