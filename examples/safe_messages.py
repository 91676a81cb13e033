"""Ready-made handlers that keep exception messages (and the secrets in them) from the model.

- `report_type_only`: the tool and the exception type, never the message;
- `report_messages_of(ToolException)`: messages of the types you list, written for the
  model, and `report_type_only`'s text for everything else;
- `log_handled(...)`: operators still get the whole exception, with its traceback, in the
  logs (logger "langchain_tool_errors", WARNING).

Run: `.venv/bin/python examples/safe_messages.py`
"""

from __future__ import annotations

import logging
from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import ToolException, tool
from typing_extensions import override

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.handlers import log_handled, report_messages_of
from langchain_tool_errors.testing import ScriptedChatModel, transcript

SECRET_DSN = "postgres://admin:hunter2@db.internal:5432/orders"


@tool
def orders(customer: str) -> str:
    """A customer's recent orders."""
    if not customer.strip():
        raise ToolException("Give a customer name; it was empty.")
    raise ConnectionError(f"could not connect to {SECRET_DSN}")


class Collect(logging.Handler):
    """Keeps the records, to print them after the run (a real app logs them as they come)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    @override
    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record."""
        self.records.append(record)


logs = Collect()
logging.getLogger("langchain_tool_errors").addHandler(logs)
middleware = ToolErrorMiddleware(log_handled(report_messages_of(ToolException)))

calls = [
    {"name": "orders", "args": {"customer": " "}, "id": "c1"},
    {"name": "orders", "args": {"customer": "ada"}, "id": "c2"},
]
model = ScriptedChatModel(
    script=[AIMessage("", tool_calls=calls), AIMessage("The order service is unavailable.")]
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent, typed as the `Runnable` it is so `invoke` type-checks in pyright strict."""
    return create_agent(model, tools=[orders], middleware=[middleware])


agent = build_agent()

result = agent.invoke({"messages": [HumanMessage("Orders for ada?")]})
print(transcript(result["messages"]))
leaked = any(SECRET_DSN in str(m.content) for m in result["messages"])
print(f"\nthe DSN reached the model: {leaked}")
print("what operators get in the logs, each record with its traceback:")
for record in sorted(logs.records, key=lambda record: record.getMessage()):
    exc = record.exc_info[1] if record.exc_info else None
    print(f"  {record.levelname} {record.getMessage()}\n    {type(exc).__name__}: {exc}")
