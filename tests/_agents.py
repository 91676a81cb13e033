"""Real `create_agent` agents on the scripted model, run on either execution path."""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Mapping, Sequence
from typing import Any, Literal, Protocol

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.types import Command, StateSnapshot

from _langchain_tool_errors.scripted_model import ScriptedChatModel, ScriptStep

Path = Literal["sync", "async"]
PATHS: tuple[Path, ...] = ("sync", "async")


class Agent(Protocol):
    """What the tests use of a compiled agent.

    The graph's own `invoke` takes langgraph's bare `Command`, whose unset type parameter
    pyright strict reports as unknown at every call; this Protocol names it `Command[Any]`.
    """

    def invoke(
        self,
        input: InputAgentState | Command[Any] | None,
        config: RunnableConfig | None = None,
        /,
    ) -> dict[str, Any]:
        """Run the agent on the sync path."""
        ...

    async def ainvoke(
        self,
        input: InputAgentState | Command[Any] | None,
        config: RunnableConfig | None = None,
        /,
    ) -> dict[str, Any]:
        """Run the agent on the async path."""
        ...

    def get_state(self, config: RunnableConfig, /) -> StateSnapshot:
        """The thread's state, as its checkpointer keeps it."""
        ...


class Calls:
    """Handlers that record every exception they are given, and answer "handled"."""

    def __init__(self) -> None:
        self.seen: list[Exception] = []

    def handler(self, exc: Exception, request: ToolCallRequest) -> str:
        """The sync handler."""
        self.seen.append(exc)
        return "handled"

    async def ahandler(self, exc: Exception, request: ToolCallRequest) -> str:
        """The async handler."""
        self.seen.append(exc)
        return "handled"


def call(name: str, call_id: str, **args: object) -> ToolCall:
    """A tool call as a model emits it."""
    return ToolCall(name=name, args=dict(args), id=call_id, type="tool_call")


def build_agent(
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    calls: Sequence[ToolCall],
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    answer: ScriptStep | None = None,
) -> Agent:
    """An agent whose model makes `calls` in one turn, then gives `answer` (default "done")."""
    final = answer if answer is not None else AIMessage(content="done")
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=list(calls)), final])
    agent: Agent = create_agent(
        model, tools=list(tools), middleware=list(middleware), checkpointer=checkpointer
    )
    return agent


def run(
    agent: Agent,
    path: Path,
    request: InputAgentState | Command[Any] | None = None,
    config: RunnableConfig | None = None,
) -> dict[str, Any]:
    """Run `agent` to the end with `invoke` or `ainvoke`; the input defaults to one question."""
    payload = request if request is not None else question()
    if path == "sync":
        return agent.invoke(payload, config)
    return asyncio.run(agent.ainvoke(payload, config))


def rerun(agent: Agent, path: Path, config: RunnableConfig) -> dict[str, Any]:
    """Run a failed thread again from its last checkpoint (input `None`)."""
    if path == "sync":
        return agent.invoke(None, config)
    return asyncio.run(agent.ainvoke(None, config))


def question() -> InputAgentState:
    """The user's opening message."""
    return {"messages": [HumanMessage("go")]}


def tool_messages(result: Mapping[str, Any]) -> dict[str, ToolMessage]:
    """The run's tool messages by call id."""
    messages: list[BaseMessage] = result["messages"]
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def failing_tool(name: str, error: Exception) -> BaseTool:
    """A tool that raises `error` (the same object) every time it runs."""

    def run_tool(query: str = "") -> str:
        raise error

    return StructuredTool.from_function(run_tool, name=name, description=f"{name} (fails)")


def echo_tool(name: str = "echo") -> BaseTool:
    """A tool that succeeds, answering `echo: <query>`."""

    def run_tool(query: str = "") -> str:
        return f"echo: {query}"

    return StructuredTool.from_function(run_tool, name=name, description=f"{name} (succeeds)")


def direct_request(tool: BaseTool | None, tool_call: ToolCall) -> ToolCallRequest:
    """A `ToolCallRequest` for calling a middleware's hooks directly, outside an agent."""
    runtime: ToolRuntime[None, dict[str, Any]] = ToolRuntime(
        state={},
        context=None,
        config={},
        stream_writer=lambda _chunk: None,
        tool_call_id=tool_call["id"],
        store=None,
    )
    return ToolCallRequest(tool_call=tool_call, tool=tool, state={}, runtime=runtime)


class Ready:
    """An awaitable that is not a coroutine (as some libraries return): its value at once."""

    def __init__(self, content: str) -> None:
        self.content = content

    def __await__(self) -> Generator[Any, None, str]:
        yield from ()
        return self.content
