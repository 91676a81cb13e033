"""Real `create_agent` agents on the scripted model, run on either execution path."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Literal, Protocol

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.types import Command, StateSnapshot
from typing_extensions import override

from langchain_tool_errors import ErrorBudget, SyncCapable, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, ScriptStep

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


def explaining(exc: Exception, request: ToolCallRequest) -> str:
    """A handler that names the tool and the exception's type: `search failed with KeyError`."""
    return f"{request.tool_call['name']} failed with {type(exc).__name__}"


def raising(message: str) -> Callable[[object, ToolCallRequest], str]:
    """A handler with a bug: it raises `RuntimeError(message)` whatever it is given."""

    def handler(failure: object, request: ToolCallRequest) -> str:
        raise RuntimeError(message)

    return handler


class Sent:
    """A model's closing step: it keeps the conversation it was sent, then answers "done"."""

    def __init__(self) -> None:
        self.conversation: list[BaseMessage] = []

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        self.conversation = list(messages)
        return AIMessage("done")

    @property
    def messages(self) -> list[ToolMessage]:
        """The tool messages of the conversation, in order."""
        return [m for m in self.conversation if isinstance(m, ToolMessage)]

    def contents(self) -> dict[str | None, object]:
        """What each tool message it was sent says, by call id."""
        return {m.tool_call_id: m.content for m in self.messages}


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


def agent_of(
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    script: Sequence[ScriptStep | Repeat],
    checkpointer: BaseCheckpointSaver[str] | None = None,
) -> Agent:
    """An agent whose scripted model plays `script`, one step a model call."""
    agent: Agent = create_agent(
        ScriptedChatModel(script=list(script)),
        tools=list(tools),
        middleware=list(middleware),
        checkpointer=checkpointer,
    )
    return agent


def reporting(
    told: list[ToolFailure], budget: ErrorBudget | None = None
) -> ToolErrorMiddleware[str, Exception, SyncCapable]:
    """Our middleware answering with `report_type_only`: it keeps the record, tells every
    failure to `told`, and counts against `budget`."""
    return ToolErrorMiddleware(
        report_type_only, budget=budget, record_failures=True, listeners=[told.append]
    )


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


def runtime_of(
    request: ToolCallRequest, call_id: str, store: object, context: object
) -> ToolRuntime[Any, Any]:
    """The tool runtime a handler is given with the request, checked to be the run's: the
    call's id, the agent's store, the context the run was given, a stream writer."""
    # ToolCallRequest leaves its runtime's type parameters unset, which pyright strict
    # reports on the attribute itself: read through `Any`, then typed.
    untyped: Any = request
    tool_runtime: ToolRuntime[Any, Any] = untyped.runtime
    assert tool_runtime.tool_call_id == call_id
    assert tool_runtime.store is store
    assert tool_runtime.context is context  # what the run was given, for a handler to read
    assert callable(tool_runtime.stream_writer)
    return tool_runtime


class Ready:
    """An awaitable that is not a coroutine (as some libraries return): its value at once."""

    def __init__(self, content: str) -> None:
        self.content = content

    def __await__(self) -> Generator[Any, None, str]:
        yield from ()
        return self.content


class ModelCalls(AgentMiddleware[AgentState[Any], Any, Any]):
    """Counts the times the run went to the model's hooks."""

    def __init__(self) -> None:
        super().__init__()
        self.before_model_calls = 0

    @override
    def before_model(self, state: AgentState[Any], runtime: Any) -> None:
        self.before_model_calls += 1

    @override
    async def abefore_model(self, state: AgentState[Any], runtime: Any) -> None:
        self.before_model_calls += 1
