"""Run agents offline, with no API key: a scripted chat model and a transcript printer.

For tests of your handlers, for examples, and for the demo. `ScriptedChatModel` plays a
fixed list of replies, so a real `create_agent` agent runs the way it would with a real
model: its tools run, this package's middleware handles their failures, and the model's
next reply can read what came back.

Example:
    ```python
    from typing import Any

    # For pyright strict: create_agent's own signature is partially unknown there.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain.agents.middleware.types import InputAgentState
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import tool

    from langchain_tool_errors import ToolErrorMiddleware
    from langchain_tool_errors.handlers import report_type_only
    from langchain_tool_errors.testing import ScriptedChatModel, transcript


    @tool(description="Search the web.")
    def search(query: str) -> str:
        raise TimeoutError(f"search for {query!r} timed out")


    def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
        model = ScriptedChatModel(
            script=[
                AIMessage("", tool_calls=[{"name": "search", "args": {"query": "x"}, "id": "c1"}]),
                AIMessage("Search is down; here is what I know."),
            ]
        )
        middleware = ToolErrorMiddleware(report_type_only)
        return create_agent(model, tools=[search], middleware=[middleware])


    result = build_agent().invoke({"messages": [HumanMessage("Find x")]})
    print(transcript(result["messages"]))
    ```
"""

from __future__ import annotations

from _langchain_tool_errors.scripted_model import Repeat, ScriptedChatModel, ScriptStep
from _langchain_tool_errors.transcript import transcript

__all__ = ["Repeat", "ScriptStep", "ScriptedChatModel", "transcript"]
