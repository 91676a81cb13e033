"""Recovery: a call that already failed is not run again, and a wrong call is repaired.

The scripted model charges an order, the payment service declines it, and the model does
what real models often do with an error: it sends exactly the same call again, twice.
Without a route for repeats, each repeat reaches the payment service again. With
`Route(RepeatedCall, ...)` the tool runs once; the model reads that the same call already
failed, and how often, and changes its arguments. Last, a model that sends an order
number as "A-17" where the tool takes 17: `repair=` corrects the call before it runs.

Run: `.venv/bin/python examples/recovery.py`
"""

from __future__ import annotations

from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    RepairableFailure,
    RepeatedCall,
    Route,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, transcript


class PaymentDeclined(Exception):
    """The payment service refused the charge."""


def payment_tool(sent: list[str]) -> BaseTool:
    """`charge(order, card)`: the card "main" is declined; every request is noted in `sent`."""

    @tool
    def charge(order: str, card: str) -> str:
        """Charge an order to a card."""
        sent.append(f"{order} on {card}")
        if card == "main":
            raise PaymentDeclined("card declined")
        return f"charged {order} on {card}"

    return charge


CHARGE_MAIN = AIMessage(
    "", tool_calls=[{"name": "charge", "args": {"order": "A-17", "card": "main"}, "id": "c"}]
)
"""The model's reply, three times in a row: charge the order to the main card."""

CHARGE_BACKUP = AIMessage(
    "", tool_calls=[{"name": "charge", "args": {"card": "backup", "order": "A-17"}, "id": "b"}]
)


def as_runnable(
    agent: Runnable[InputAgentState, dict[str, Any]],
) -> Runnable[InputAgentState, dict[str, Any]]:
    """The agent as the runnable it is: what it takes and what it returns."""
    return agent


def ask(middleware: ToolErrorMiddleware) -> None:
    """Run the model's script with `middleware`; print the conversation and the requests."""
    sent: list[str] = []
    model = ScriptedChatModel(
        script=[Repeat(CHARGE_MAIN, times=3), CHARGE_BACKUP, AIMessage("Paid with the backup.")]
    )
    agent = as_runnable(create_agent(model, tools=[payment_tool(sent)], middleware=[middleware]))
    result = agent.invoke({"messages": [HumanMessage("Pay order A-17.")]})
    print(transcript(result["messages"]))
    print(f"requests sent to the payment service: {len(sent)} ({'; '.join(sent)})")
    if "tool_failures" in result:
        print("record:", [(f["call_id"], f["kind"]) for f in result["tool_failures"]])


def not_again(failure: RepeatedCall, request: ToolCallRequest) -> str:
    """The package's own answer: the tool, and how often the same call failed."""
    return failure.text


print("A handler for exceptions only: every repeat reaches the payment service again.")
ask(ToolErrorMiddleware(report_type_only))
print()
print("Route(RepeatedCall, not_again): the same call is answered without running the tool.")
ask(
    ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, not_again), Route(Exception, report_type_only)],
        budget=ErrorBudget(per_run=5),
        record_failures=True,
    )
)


@tool
def refund(order: int) -> str:
    """Refund an order by its number."""
    return f"refunded order {order}"


def order_numbers(failure: RepairableFailure) -> ToolCall | None:
    """An order number sent as "A-17" is 17; anything else is left for the model to fix."""
    if isinstance(failure, InvalidArguments):
        order = str(failure.args.get("order", ""))
        if order.startswith("A-") and order[2:].isdigit():
            return ToolCall(name=failure.tool, args={"order": int(order[2:])}, id=None)
    return None


print()
print('repair=order_numbers: refund(order="A-17") runs as refund(order=17), once.')
REFUND = AIMessage("", tool_calls=[{"name": "refund", "args": {"order": "A-17"}, "id": "r"}])
repairing = ToolErrorMiddleware(report_type_only, record_failures=True, repair=order_numbers)
refunds = as_runnable(
    create_agent(
        ScriptedChatModel(script=[REFUND, AIMessage("Refunded.")]),
        tools=[refund],
        middleware=[repairing],
    )
)
repaired = refunds.invoke({"messages": [HumanMessage("Refund order A-17.")]})
print(transcript(repaired["messages"]))
print("record:", [(f["call_id"], f["kind"], f["outcome"]) for f in repaired["tool_failures"]])
