"""An error budget: a model that keeps calling a broken tool is stopped, or told once.

The scripted model below does what a real model sometimes does with an error message: it
calls the same broken tool again, turn after turn. Without a budget the run goes on until
the script ends (with a real model: until langchain's recursion limit of 9,999 steps).
Then a flaky tool that fails twice and then answers, over and over: a limit of failures
in a row lets it keep recovering, where a limit per tool stops it. Last, a budget that
hands the decision to a person: the run pauses before the tool runs again.

Run: `.venv/bin/python examples/budget.py`
"""

from __future__ import annotations

from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_tool_errors import (
    BudgetDecision,
    BudgetPause,
    ErrorBudget,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, transcript


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    raise ConnectionError("weather service unreachable")


CALL_WEATHER = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c"}])
"""The model's reply, six times over: try the weather tool once more."""


def build_agent(middleware: ToolErrorMiddleware) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model calls `weather` six times, then gives up."""
    model = ScriptedChatModel(
        script=[Repeat(CALL_WEATHER, times=6), AIMessage("I cannot get the weather right now.")]
    )
    return create_agent(model, tools=[weather], middleware=[middleware])


def flaky_quote() -> BaseTool:
    """A `quote` tool whose service fails twice, then answers, and so on."""
    calls: list[int] = []

    @tool
    def quote(symbol: str) -> str:
        """The price of a stock."""
        calls.append(1)
        if len(calls) % 3:
            raise TimeoutError("quote service timed out")
        return f"{symbol}: 42.00"

    return quote


def build_quote_agent(middleware: ToolErrorMiddleware) -> Runnable[InputAgentState, dict[str, Any]]:
    """An agent whose model asks for a quote six times, then answers."""
    call = AIMessage("", tool_calls=[{"name": "quote", "args": {"symbol": "ACME"}, "id": "q"}])
    model = ScriptedChatModel(script=[Repeat(call, times=6), AIMessage("ACME is at 42.00.")])
    return create_agent(model, tools=[flaky_quote()], middleware=[middleware])


def ask(
    agent: Runnable[InputAgentState, dict[str, Any]], question: str = "Weather in Oslo?"
) -> None:
    """Ask the question and print the conversation, or how the run was stopped."""
    try:
        result = agent.invoke({"messages": [HumanMessage(question)]})
    except ToolErrorBudgetExceeded as spent:
        print(f"stopped: {spent}")
        print(f"  caused by: {spent.__cause__!r}")
    else:
        print(transcript(result["messages"]))


print("No budget: every failure goes back to the model, which tries again.")
ask(build_agent(ToolErrorMiddleware(report_type_only)))

print()
print("budget=ErrorBudget(per_tool=2): the third failure stops the run.")
ask(build_agent(ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))))

print()
print('when_spent="tell": the model is told once; the tool never runs again in the run.')
tell = ErrorBudget(per_tool=2, when_spent="tell")
ask(build_agent(ToolErrorMiddleware(report_type_only, budget=tell)))

print()
print("A flaky tool, budget=ErrorBudget(per_tool=2): its third failure stops the run.")
per_tool = ErrorBudget(per_tool=2)
ask(build_quote_agent(ToolErrorMiddleware(report_type_only, budget=per_tool)), "ACME's price?")

print()
print("budget=ErrorBudget(consecutive=2): each success starts the count again.")
in_a_row = ErrorBudget(consecutive=2)
ask(build_quote_agent(ToolErrorMiddleware(report_type_only, budget=in_a_row)), "ACME's price?")


def build_paused_agent() -> Runnable[Any, dict[str, Any]]:
    """The weather agent with a checkpointer: it takes a question, or a person's decision."""
    model = ScriptedChatModel(
        script=[Repeat(CALL_WEATHER, times=4), AIMessage("The weather service is down.")]
    )
    asking = ErrorBudget(per_tool=2, when_spent="interrupt")
    middleware = ToolErrorMiddleware(report_type_only, budget=asking)
    return create_agent(
        model, tools=[weather], middleware=[middleware], checkpointer=InMemorySaver()
    )


print()
print('when_spent="interrupt": the run pauses before the tool runs again; a person answers.')
paused_agent = build_paused_agent()
thread: RunnableConfig = {"configurable": {"thread_id": "weather-1"}}
waiting = paused_agent.invoke({"messages": [HumanMessage("Weather in Oslo?")]}, thread)
pause: BudgetPause = waiting["__interrupt__"][0].value
print(
    f"paused before {pause['tool']} [{pause['call_id']}]: {pause['count']} failures, "
    f"over the limit of {pause['limit']} ({pause['scope']})"
)
decision: BudgetDecision = {"type": "answer", "text": "The weather service is down today."}
answered = paused_agent.invoke(Command(resume=decision), thread)
print(transcript(answered["messages"][-4:]))
