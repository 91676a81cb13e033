"""What a failed tool call's request says, read the same way by every stage."""

from __future__ import annotations

from langgraph.prebuilt.tool_node import ToolCallRequest


def tool_name(request: ToolCallRequest) -> str:
    """The name of the tool a request calls: its `BaseTool`'s, else the name the model gave."""
    tool = request.tool
    return tool.name if tool is not None else request.tool_call["name"]


def id_of(request: ToolCallRequest) -> str:
    """The id of a settled call (checked when its message was made; malformed ones have one)."""
    return str(request.tool_call["id"])
