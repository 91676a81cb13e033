"""LangGraph's control flow never reaches a handler, through real agents on both paths.

Each scenario is something LangGraph treats as control flow rather than a tool failure. It
runs once without middleware and once under each middleware configuration that would catch
it if it were an ordinary exception; the observable run (what it raised, what stays pending,
how it ends) must be the same, and the handlers must never be called.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph import errors as langgraph_errors
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import START
from langgraph.errors import GraphDrained, ParentCommand

# pyright finds no stubs for langgraph.graph (the other langgraph modules used here resolve).
from langgraph.graph.state import StateGraph  # pyright: ignore[reportMissingTypeStubs]
from langgraph.types import Command, interrupt
from pydantic import BaseModel, ValidationError

from _langchain_tool_errors.control_flow import is_invalid_resume
from langchain_tool_errors import ErrorBudget, Route, ToolErrorMiddleware, ToolFailure
from tests._agents import PATHS, Agent, Calls, Path, build_agent, call, rerun, run, tool_messages
from tests._processes import run_python

MARKS_INVALID_RESUME = hasattr(langgraph_errors, "is_invalid_resume")
"""Whether this langgraph marks invalid resume values (from 1.2.15, with `response_schema`)."""


class Approval(BaseModel):
    approved: bool


Middlewares = list[AgentMiddleware[Any, Any, Any]]


def _outcome(action: Callable[[], object]) -> str:
    """What a step of a run did: the exception it raised, or `ok`."""
    try:
        action()
    except BaseException as exc:  # CancelledError is a BaseException
        return f"raised {type(exc).__name__}"
    return "ok"


def _pending(agent: Agent, config: RunnableConfig) -> int:
    graph: Any = agent
    return sum(len(task.interrupts) for task in graph.get_state(config).tasks)


def invalid_resume(middleware: Middlewares, path: Path) -> list[str]:
    """interrupt() with a response_schema, resumed with a value the schema refuses."""

    def approve(query: str = "") -> str:
        approval = interrupt({"question": "refund 120?"}, response_schema=Approval)
        return f"approved: {approval.approved}"

    tool = StructuredTool.from_function(approve, name="approve", description="asks a human")
    agent = build_agent([tool], middleware, [call("approve", "c1")], checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    events = [f"paused: {'__interrupt__' in run(agent, path, config=config)}"]
    try:
        run(agent, path, Command(resume={"approved": "maybe"}), config=config)
        events.append("resumed with an invalid value")
    except ValidationError as exc:
        events.append(f"raised ValidationError, invalid resume: {is_invalid_resume(exc)}")
    events.append(f"pending interrupts: {_pending(agent, config)}")
    done = run(agent, path, Command(resume={"approved": True}), config=config)
    events.append(f"answered again: {tool_messages(done)['c1'].content}")
    return events


def graph_interrupt(middleware: Middlewares, path: Path) -> list[str]:
    """interrupt() pauses the run; a resume completes it."""

    def approve(query: str = "") -> str:
        return f"approved by {interrupt({'question': 'refund 120?'})}"

    tool = StructuredTool.from_function(approve, name="approve", description="asks a human")
    agent = build_agent([tool], middleware, [call("approve", "c1")], checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    events = [f"paused: {'__interrupt__' in run(agent, path, config=config)}"]
    events.append(f"pending interrupts: {_pending(agent, config)}")
    done = run(agent, path, Command(resume="alice"), config=config)
    events.append(f"resumed: {tool_messages(done)['c1'].content}")
    return events


def parent_command(middleware: Middlewares, path: Path) -> list[str]:
    """A handoff: the tool sends the parent graph elsewhere (a ParentCommand)."""

    def hand_off(query: str = "") -> str:
        raise ParentCommand(Command(graph=Command.PARENT, goto="billing"))

    tool = StructuredTool.from_function(hand_off, name="hand_off", description="hands off")
    agent = build_agent([tool], middleware, [call("hand_off", "c1")])

    def billing(state: AgentState[Any]) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage("billing took over")]}

    # ty and pyrefly: langgraph's Protocol bound on the state type (`TypedDictLikeV1`, ...)
    # does not admit langchain's `AgentState` TypedDict there (astral-sh/ty#2826,
    # facebook/pyrefly#3745); mypy and pyright accept it.
    builder: Any = StateGraph(AgentState)  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-specialization]
    builder.add_node("support", agent, destinations=("billing",))
    builder.add_node("billing", billing)
    builder.add_edge(START, "support")
    parent: Agent = builder.compile()
    messages: list[BaseMessage] = run(parent, path)["messages"]
    return [f"{type(m).__name__}: {m.content}" for m in messages]


def graph_drained(middleware: Middlewares, path: Path) -> list[str]:
    """A graph the tool runs was drained (shutdown): the run stops, resumable later."""
    drained: list[bool] = []

    def shut_down(query: str = "") -> str:
        if not drained:
            drained.append(True)
            raise GraphDrained("shutdown")
        return "ran after the restart"

    tool = StructuredTool.from_function(shut_down, name="shut_down", description="drains")
    agent = build_agent([tool], middleware, [call("shut_down", "c1")], checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    events = [_outcome(lambda: run(agent, path, config=config))]
    events.append(f"resumed: {tool_messages(rerun(agent, path, config))['c1'].content}")
    return events


def cancelled(middleware: Middlewares, path: Path) -> list[str]:
    """The tool raises asyncio.CancelledError, a BaseException and never an Exception."""

    def cancel(query: str = "") -> str:
        raise asyncio.CancelledError

    tool = StructuredTool.from_function(cancel, name="cancel", description="cancels")
    agent = build_agent([tool], middleware, [call("cancel", "c1")])
    return [_outcome(lambda: run(agent, path))]


@dataclass(frozen=True)
class Scenario:
    """A control-flow signal, how a run shows it, and the exception type it travels as."""

    observe: Callable[[Middlewares, Path], list[str]]
    expected: Mapping[Path, list[str]]
    exception: type[Exception]
    tool: str


def _same(events: list[str]) -> dict[Path, list[str]]:
    return dict.fromkeys(PATHS, events)


SCENARIOS = {
    "invalid resume value": Scenario(
        invalid_resume,
        _same(
            [
                "paused: True",
                "raised ValidationError, invalid resume: True",
                "pending interrupts: 1",
                "answered again: approved: True",
            ]
        ),
        ValidationError,
        "approve",
    ),
    "GraphInterrupt": Scenario(
        graph_interrupt,
        _same(["paused: True", "pending interrupts: 1", "resumed: approved by alice"]),
        Exception,
        "approve",
    ),
    "ParentCommand": Scenario(
        parent_command,
        _same(["HumanMessage: go", "AIMessage: billing took over"]),
        Exception,
        "hand_off",
    ),
    "GraphDrained": Scenario(
        graph_drained,
        _same(["raised GraphDrained", "resumed: ran after the restart"]),
        Exception,
        "shut_down",
    ),
    "asyncio.CancelledError": Scenario(
        cancelled, _same(["raised NodeCancelledError"]), Exception, "cancel"
    ),
}

CONFIGURATIONS: dict[str, Callable[[Calls, Scenario], ToolErrorMiddleware]] = {
    "catch-all": lambda r, s: ToolErrorMiddleware(r.handler),
    "exceptions= its type": lambda r, s: ToolErrorMiddleware(r.handler, exceptions=s.exception),
    "tools= its tool": lambda r, s: ToolErrorMiddleware(r.handler, tools=[s.tool]),
    "sync + async": lambda r, s: ToolErrorMiddleware(r.handler, aon_error=r.ahandler),
    "async only": lambda r, s: ToolErrorMiddleware(aon_error=r.ahandler),
    "budget of one failure": lambda r, s: ToolErrorMiddleware(
        r.handler, budget=ErrorBudget(per_tool=1)
    ),
    "routes: its tool, then a catch-all": lambda r, s: ToolErrorMiddleware.from_routes(
        [Route(s.exception, r.handler, tools=[s.tool]), Route(Exception, r.handler)]
    ),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_without_middleware_the_signal_behaves_as_recorded(scenario: str, path: Path) -> None:
    if scenario == "invalid resume value" and not MARKS_INVALID_RESUME:
        pytest.skip("this langgraph has no response_schema and marks no invalid resume")
    chosen = SCENARIOS[scenario]

    assert chosen.observe([], path) == chosen.expected[path]


# An async-only middleware refuses the sync path before the tool runs: async path only.
# `interrupt(..., response_schema=...)` and its invalid-resume mark need langgraph 1.2.15.
COMBINATIONS = [
    pytest.param(
        scenario,
        path,
        configuration,
        marks=pytest.mark.skipif(
            scenario == "invalid resume value" and not MARKS_INVALID_RESUME,
            reason="this langgraph has no response_schema and marks no invalid resume",
        ),
    )
    for scenario in SCENARIOS
    for path in PATHS
    for configuration in CONFIGURATIONS
    if not (configuration == "async only" and path == "sync")
]


@pytest.mark.parametrize(("scenario", "path", "configuration"), COMBINATIONS)
def test_control_flow_propagates_unchanged_and_never_reaches_a_handler(
    scenario: str, path: Path, configuration: str
) -> None:
    chosen, recorder = SCENARIOS[scenario], Calls()
    middleware = CONFIGURATIONS[configuration](recorder, chosen)

    events = chosen.observe([middleware], path)

    assert events == chosen.expected[path]
    assert recorder.seen == []


@pytest.mark.parametrize(
    ("scenario", "path", "configuration"),
    [combination for combination in COMBINATIONS if combination.values[2] == "catch-all"],
)
def test_control_flow_is_never_recorded_nor_told_to_listeners(
    scenario: str, path: Path, configuration: str
) -> None:
    chosen, told = SCENARIOS[scenario], list[ToolFailure]()
    middleware = ToolErrorMiddleware(Calls().handler, record_failures=True, listeners=[told.append])

    events = chosen.observe([middleware], path)

    assert events == chosen.expected[path]
    assert told == []


_WITHOUT_MARKER = """
import langchain.agents  # langgraph's own modules import the marker first
import langgraph.errors
from langgraph.errors import _mark_invalid_resume
del langgraph.errors.is_invalid_resume  # as in langgraph < 1.2.15

from langchain_core.messages import ToolMessage
from pydantic import BaseModel, ValidationError
from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import call, direct_request, failing_tool

class Approval(BaseModel):
    approved: bool

try:
    Approval.model_validate({"approved": "maybe"})
except ValidationError as exc:
    error = exc
_mark_invalid_resume(error)

def run_tool(request):
    raise error

middleware = ToolErrorMiddleware(lambda exc, request: "handled")
request = direct_request(failing_tool("approve", error), call("approve", "c1"))
message = middleware.wrap_tool_call(request, run_tool)
assert isinstance(message, ToolMessage), message
print(message.status, message.content)
"""


@pytest.mark.skipif(not MARKS_INVALID_RESUME, reason="this langgraph has no marker to hide")
def test_without_is_invalid_resume_in_langgraph_a_validation_error_is_an_ordinary_failure() -> None:
    done = run_python("-c", _WITHOUT_MARKER)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["error", "handled"]


@pytest.mark.skipif(MARKS_INVALID_RESUME, reason="this langgraph marks invalid resume values")
def test_on_a_langgraph_without_the_marker_the_fallback_marks_nothing() -> None:
    error = ValueError("resume value")
    error._langgraph_invalid_resume = True  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]  # ty: ignore[missing-attribute]  # pyrefly: ignore[missing-attribute]

    assert is_invalid_resume.__module__ == "_langchain_tool_errors.control_flow"
    assert not is_invalid_resume(error)
