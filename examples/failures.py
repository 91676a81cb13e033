"""Failures that are not exceptions: a model looping on invalid arguments, stopped and helped.

The scripted model keeps calling `lookup` with a record id that is not a number. The tool
never runs: LangGraph's ToolNode answers the call itself, with the value the model sent,
so no exception ever reaches a tool-error handler. With a budget the loop is stopped; with
a route for invalid arguments the model reads which field is wrong and what it expects.
Last, a reply whose only call was cut short: alone it ends the run with an empty answer;
with a budget, the model reads why and calls again in the same run.

Run: `.venv/bin/python examples/failures.py`
"""

from __future__ import annotations

from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, transcript


@tool
def lookup(record_id: int) -> str:
    """Look a customer record up by its number."""
    return f"record {record_id}: Ada Lovelace"


CALL_LOOKUP = AIMessage(
    "", tool_calls=[{"name": "lookup", "args": {"record_id": "A-17"}, "id": "c"}]
)
"""The model's reply, turn after turn: the record id as a string, which is not an int."""


def build_agent(middleware: ToolErrorMiddleware) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model calls `lookup` with the same wrong argument four times."""
    model = ScriptedChatModel(
        script=[Repeat(CALL_LOOKUP, times=4), AIMessage("I could not find the record.")]
    )
    return create_agent(model, tools=[lookup], middleware=[middleware])


CUT_SHORT = AIMessage(
    "",
    invalid_tool_calls=[
        invalid_tool_call(name="lookup", args='{"record_id": 1', id="cut", error="not JSON")
    ],
)
"""A reply whose only call was cut short: its arguments are not JSON, so nothing can run."""


def build_cut_short_agent(
    middleware: ToolErrorMiddleware,
) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model first sends only a cut-short call, then a good one."""
    again = AIMessage("", tool_calls=[{"name": "lookup", "args": {"record_id": 17}, "id": "c2"}])
    model = ScriptedChatModel(script=[CUT_SHORT, again, AIMessage("It is Ada Lovelace.")])
    return create_agent(model, tools=[lookup], middleware=[middleware])


def ask(agent: Runnable[InputAgentState, dict[str, Any]], limit: int = 9_999) -> None:
    """Ask for the record and print the conversation, or how the run was stopped."""
    try:
        result = agent.invoke(
            {"messages": [HumanMessage("Who is customer A-17?")]}, {"recursion_limit": limit}
        )
    except ToolErrorBudgetExceeded as spent:
        print(f"stopped: {spent}")
        print(f"  kind: {spent.kind}, cause: {spent.__cause__!r}")
        return
    except GraphRecursionError:
        print(f"stopped by LangGraph's recursion limit ({limit} steps)")
        return
    print(transcript(result["messages"]))


def fields_only(failure: InvalidArguments, request: ToolCallRequest) -> str:
    """Which arguments are wrong and what each expects, without echoing what was sent."""
    wrong = "; ".join(f"`{error.field}`: {error.expected}" for error in failure.errors)
    return f"The arguments of `{failure.tool}` do not fit: {wrong}. Fix them and call again."


print("A handler for exceptions only: ToolNode answers each call itself, with the value sent.")
ask(build_agent(ToolErrorMiddleware(report_type_only)))
print()
print("The same model with a loop of its own, as a real one can: the recursion limit ends it.")
looping = create_agent(
    ScriptedChatModel(script=[Repeat(CALL_LOOKUP)]),
    tools=[lookup],
    middleware=[ToolErrorMiddleware(report_type_only)],
)
ask(looping, limit=12)
print()
print("budget=ErrorBudget(per_tool=2): invalid arguments count, so the third one stops the run.")
ask(build_agent(ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))))
print()
print("A route for invalid arguments: the model reads the field and what it expects.")
ask(
    build_agent(
        ToolErrorMiddleware.from_routes(
            [Route(InvalidArguments, fields_only), Route(Exception, report_type_only)]
        )
    )
)
print()
print("A reply of only a cut-short call ends the run with it: an empty answer.")
ask(build_cut_short_agent(ToolErrorMiddleware(report_type_only)))
print()
print("With a budget (it counts malformed calls), the model reads why and calls again.")
ask(build_cut_short_agent(ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))))
