"""What the composition tests share: a scripted model that keeps its place and remembers what
it was sent, and agents of several turns built around it.

`ScriptedChatModel` picks each reply by the number of AI messages in the conversation, which
a middleware that removes messages (summarization) changes. A `Plan` counts the model calls
it has answered instead, so its script plays in order whatever the conversation holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

# create_agent's `checkpointer` parameter leaves langgraph's saver type unset, which pyright
# strict reports as a partially unknown import (see tests/_agents.py).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Agent


class Plan:
    """The agent model's replies, one per model call in order, and what each call was sent."""

    def __init__(self, *replies: AIMessage) -> None:
        self.replies = list(replies)
        self.sent: list[list[BaseMessage]] = []

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        self.sent.append(list(messages))
        turn = len(self.sent)
        if turn > len(self.replies):
            msg = f"the plan has {len(self.replies)} replies; model call {turn} has none"
            raise IndexError(msg)
        return self.replies[turn - 1]

    def model(self) -> ScriptedChatModel:
        """A scripted model that answers every call from this plan."""
        return ScriptedChatModel(script=[Repeat(self)])

    def tool_messages_sent(self, turn: int) -> list[ToolMessage]:
        """The tool messages model call `turn` (counted from 1) was sent, in order."""
        return [m for m in self.sent[turn - 1] if isinstance(m, ToolMessage)]


def calls(*tool_calls: ToolCall) -> AIMessage:
    """A model reply that makes these tool calls."""
    return AIMessage("", tool_calls=list(tool_calls))


def agent_of(
    plan: Plan,
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    checkpointer: BaseCheckpointSaver[str] | None = None,
) -> Agent:
    """A real `create_agent` agent whose model plays `plan`."""
    built: Agent = create_agent(
        plan.model(), tools=list(tools), middleware=list(middleware), checkpointer=checkpointer
    )
    return built


Order = Literal["theirs outside", "ours outside"]
ORDERS: tuple[Order, ...] = ("theirs outside", "ours outside")
"""Where another package's middleware is listed: before ours (outside it), or after."""


def stacked(
    order: str, theirs: AgentMiddleware[Any, Any, Any], ours: AgentMiddleware[Any, Any, Any]
) -> list[AgentMiddleware[Any, Any, Any]]:
    """The two middleware as the agent lists them, outermost first: ours first where `order`
    says so ("ours outside", "ours first"), else theirs."""
    return [ours, theirs] if order.startswith("ours") else [theirs, ours]


def message_rows(messages: Sequence[ToolMessage]) -> list[tuple[str, str, str]]:
    """Tool messages as (call id, text, status), the way the tests compare them."""
    return [(m.tool_call_id, m.text, m.status) for m in messages]


class Flaky:
    """`fetch`: fails `failures` times with a TimeoutError quoting `secret`, then succeeds;
    counts its runs."""

    def __init__(self, failures: int, secret: str) -> None:
        self.failures = failures
        self.secret = secret
        self.runs = 0

    def tool(self) -> BaseTool:
        def fetch(query: str = "") -> str:
            self.runs += 1
            if self.runs <= self.failures:
                raise TimeoutError(f"attempt {self.runs} timed out; {self.secret}")
            return f"fetched on run {self.runs}"

        return StructuredTool.from_function(fetch, name="fetch", description="a flaky fetch")
