"""A handler typed for one exception type, with `exceptions=` routing only that type to it.

`missing_record` takes a `KeyError`, so both type checkers require `exceptions=KeyError`;
at run time that is also the filter: any other exception propagates, unchanged.

Run: `.venv/bin/python examples/exception_routing.py`
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

CUSTOMERS = {"c-1": "Ada Lovelace"}


@tool
def lookup_customer(customer_id: str) -> str:
    """The customer's name, by id."""
    if customer_id == "c-admin":
        raise PermissionError("the agent's role may not read admin accounts")
    return CUSTOMERS[customer_id]  # KeyError for an unknown id


def missing_record(exc: KeyError, request: ToolCallRequest) -> str:
    """Only KeyError reaches this handler: `exc.args[0]` is the missing key."""
    return f"No customer {exc.args[0]!r}. Ask the user to check the id."


middleware = ToolErrorMiddleware(missing_record, exceptions=KeyError)


def ask_for(customer_id: str) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model looks up `customer_id`, then answers."""
    call = {"name": "lookup_customer", "args": {"customer_id": customer_id}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage("", tool_calls=[call]), AIMessage("I could not find that customer.")]
    )
    return create_agent(model, tools=[lookup_customer], middleware=[middleware])


print("a KeyError is handled:")
handled = ask_for("c-9").invoke({"messages": [HumanMessage("Who is c-9?")]})
print(transcript(handled["messages"]))

print("\na PermissionError is not selected, so it propagates:")
try:
    ask_for("c-admin").invoke({"messages": [HumanMessage("Who is c-admin?")]})
except PermissionError as exc:
    print(f"PermissionError: {exc}")
