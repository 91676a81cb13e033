"""Demo: `python -m langchain_tool_errors` runs an agent whose tool fails, and recovers.

A real `create_agent` agent on the package's scripted chat model (offline, no API key):
the weather tool raises for an unknown city, `ToolErrorMiddleware` hands the failure back
to the model as an error `ToolMessage`, and the model retries with a city that exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.middleware import ToolErrorMiddleware
from _langchain_tool_errors.scripted_model import ScriptedChatModel
from _langchain_tool_errors.transcript import transcript

_FORECASTS = {"paris": "18°C and sunny", "oslo": "4°C and raining"}


class UnknownCityError(LookupError):
    """The weather service has no forecast for the city."""


@tool
def get_weather(city: str) -> str:
    """The current weather in `city`."""
    forecast = _FORECASTS.get(city.lower())
    if forecast is None:
        msg = f"no forecast for {city!r}; known cities: {', '.join(sorted(_FORECASTS))}"
        raise UnknownCityError(msg)
    return forecast


def explain_lookup_failure(exc: UnknownCityError, request: ToolCallRequest) -> str:
    """Tell the model what went wrong, so it can correct its call."""
    return f"`{request.tool_call['name']}` could not answer: {exc}. Try a known city."


def _retry_with_known_city(messages: Sequence[BaseMessage]) -> AIMessage:
    """The model reads the error and calls the tool again with a city it was told about."""
    error = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    city = "Paris" if "paris" in str(error.content) else "Oslo"
    call = {"name": "get_weather", "args": {"city": city}, "id": "call_2", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


def _answer(messages: Sequence[BaseMessage]) -> AIMessage:
    result = messages[-1]
    return AIMessage(content=f"Atlantis has no forecast, but in Paris it is {result.content}.")


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The demo agent: one tool, the scripted model, and the middleware.

    Typed as the `Runnable` it is: the compiled graph's own `invoke` takes langgraph's bare
    `Command`, whose unset type parameter pyright strict reports as unknown.
    """
    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_1"}],
            ),
            _retry_with_known_city,
            _answer,
        ]
    )
    middleware = ToolErrorMiddleware(explain_lookup_failure, exceptions=UnknownCityError)
    return create_agent(model, tools=[get_weather], middleware=[middleware])


def main() -> int:
    """Run the demo agent and print its transcript."""
    result = build_agent().invoke({"messages": [HumanMessage("What's the weather in Atlantis?")]})
    print("langchain-tool-errors demo: a tool fails, the model reads the error and recovers\n")
    print(transcript(result["messages"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
