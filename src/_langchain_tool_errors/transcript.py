"""A conversation as readable lines: who spoke, which tools were called, what they answered."""

from __future__ import annotations

import json
from collections.abc import Iterable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage


def _describe(message: BaseMessage) -> list[str]:
    if isinstance(message, HumanMessage):
        return [f"user       {message.content}"]
    if isinstance(message, AIMessage):
        lines = [f"assistant  {message.content}"] if message.content else []
        lines += [
            f"assistant  calls {call['name']}({json.dumps(call['args'])})  [{call['id']}]"
            for call in message.tool_calls
        ]
        lines += [
            f"assistant  calls {call['name'] or '(no name)'} with malformed arguments: "
            f"{call['args']}  [{call['id']}]"
            for call in message.invalid_tool_calls
        ]
        return lines
    if isinstance(message, ToolMessage):
        mark = "ERROR" if message.status == "error" else "ok"
        return [f"tool       {message.name} [{message.tool_call_id}] {mark}: {message.content}"]
    return [f"{message.type:<10} {message.content}"]


def transcript(messages: Iterable[BaseMessage], /) -> str:
    """The messages of a conversation, one line per message or tool call.

    Error `ToolMessage`s are marked `ERROR`, successful ones `ok`.

    Args:
        messages: The conversation, e.g. `agent.invoke(...)["messages"]`.

    Returns:
        The lines, joined with newlines.

    Example:
        ```python
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        from langchain_tool_errors.testing import transcript

        call = {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_1"}
        messages = [
            HumanMessage("What's the weather in Atlantis?"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("No forecast.", tool_call_id="call_1", name="get_weather", status="error"),
        ]
        print(transcript(messages))  # e.g. the `messages` of what `agent.invoke(...)` returned
        # user       What's the weather in Atlantis?
        # assistant  calls get_weather({"city": "Atlantis"})  [call_1]
        # tool       get_weather [call_1] ERROR: No forecast.
        ```
    """
    return "\n".join(line for message in messages for line in _describe(message))
