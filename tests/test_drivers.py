"""A failure's life is written once and driven on both paths: what passes through the drivers.

The life yields where it needs a handler or the listeners (`effects.run`, `effects.arun`).
A handler's exception is thrown back into it: LangGraph's control flow from a handler
passes through untouched, and any other exception stays chained to the tool's and is told
once as gone on up, whatever the middleware watches.
"""

from __future__ import annotations

import gc
import weakref
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from langchain_tool_errors import (
    ErrorBudget,
    ReportedFailure,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)
from tests._agents import (
    PATHS,
    Path,
    build_agent,
    call,
    direct_request,
    failing_tool,
    run,
    tool_messages,
)

CONFIGURATIONS = ("plain", "budget", "record and listener")


def _middleware(
    configuration: str, handler: Any, told: list[ToolFailure]
) -> ToolErrorMiddleware[Any, Any, Any]:
    """The same handler, in a plain middleware or in one whose hooks watch and count."""
    if configuration == "plain":
        return ToolErrorMiddleware(handler)
    if configuration == "budget":
        return ToolErrorMiddleware(handler, budget=ErrorBudget(per_tool=5))
    return ToolErrorMiddleware(handler, record_failures=True, listeners=[told.append])


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("path", PATHS)
def test_a_handler_that_asks_a_person_pauses_the_run_and_answers_with_the_resume_value(
    path: Path, configuration: str
) -> None:
    asked: list[str] = []

    def ask_a_person(exc: Exception, request: ToolCallRequest) -> str:
        asked.append(request.tool_call["id"] or "")
        return f"a person says: {interrupt({'failed': type(exc).__name__})}"

    told: list[ToolFailure] = []
    middleware = _middleware(configuration, ask_a_person, told)
    tool = failing_tool("search", ConnectionError("reset"))
    agent = build_agent([tool], [middleware], [call("search", "c1")], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"{path}-{configuration}"}}

    paused = run(agent, path, config=config)

    assert [i.value for i in paused["__interrupt__"]] == [{"failed": "ConnectionError"}]
    assert "c1" not in tool_messages(paused)
    assert told == []  # a pause is control flow: nothing is told

    done = run(agent, path, Command(resume="try the mirror"), config)

    answer = tool_messages(done)["c1"]
    assert (answer.status, answer.text) == ("error", "a person says: try the mirror")
    assert asked == ["c1", "c1"]  # the hook runs again from the start on resume
    if configuration == "record and listener":
        assert [(f["call_id"], f["outcome"]) for f in told] == [("c1", "answered")]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("path", PATHS)
def test_a_handler_s_exception_goes_up_chained_to_the_tool_s_and_is_told_once(
    path: Path, configuration: str
) -> None:
    tool_error = ConnectionError("reset")
    handler_error = RuntimeError("handler bug")

    def broken(exc: Exception, request: ToolCallRequest) -> str:
        raise handler_error

    told: list[ToolFailure] = []
    middleware = _middleware(configuration, broken, told)
    agent = build_agent([failing_tool("search", tool_error)], [middleware], [call("search", "c1")])

    with pytest.raises(RuntimeError) as raised:
        run(agent, path)

    assert raised.value is handler_error
    assert raised.value.__context__ is tool_error
    expected = [("c1", "propagated")] if configuration == "record and listener" else []
    assert [(f["call_id"], f["outcome"]) for f in told] == expected


@pytest.mark.parametrize("path", PATHS)
def test_content_refused_after_a_handler_answers_goes_up_from_the_tool_s_exception(
    path: Path,
) -> None:
    tool_error = ConnectionError("reset")

    def wrong(exc: Exception, request: ToolCallRequest) -> Any:
        return 42

    told: list[ToolFailure] = []
    middleware = _middleware("record and listener", wrong, told)
    agent = build_agent([failing_tool("search", tool_error)], [middleware], [call("search", "c1")])

    with pytest.raises(TypeError, match="returned 42") as raised:
        run(agent, path)

    assert raised.value.__cause__ is tool_error
    assert [(f["call_id"], f["outcome"]) for f in told] == [("c1", "propagated")]


@pytest.mark.parametrize("path", PATHS)
def test_a_declining_handler_lets_the_tool_s_own_exception_go_up_untouched(path: Path) -> None:
    tool_error = ConnectionError("reset")

    def decline(exc: Exception, request: ToolCallRequest) -> None:
        return None

    told: list[ToolFailure] = []
    middleware = _middleware("record and listener", decline, told)
    agent = build_agent([failing_tool("search", tool_error)], [middleware], [call("search", "c1")])

    with pytest.raises(ConnectionError) as raised:
        run(agent, path)

    assert raised.value is tool_error
    assert raised.value.__context__ is None
    assert [(f["call_id"], f["outcome"]) for f in told] == [("c1", "propagated")]


@pytest.mark.parametrize("path", PATHS)
def test_a_handler_s_exception_leaves_no_cycle_that_keeps_the_call_s_state_alive(
    path: Path,
) -> None:
    class Conversation:
        """Stands for a run's messages: freed as soon as nothing refers to it."""

    conversation = Conversation()
    freed = weakref.ref(conversation)
    request = direct_request(None, call("search", "c1")).override(state={"c": conversation})
    del conversation

    def broken(exc: Exception, request: ToolCallRequest) -> str:
        raise RuntimeError("handler bug")

    def run_tool(request: ToolCallRequest) -> ToolMessage:
        raise ConnectionError("reset")

    async def arun_tool(request: ToolCallRequest) -> ToolMessage:
        raise ConnectionError("reset")

    middleware = _middleware("record and listener", broken, [])

    def call_the_hook(request: ToolCallRequest) -> object:
        if path == "sync":
            return middleware.wrap_tool_call(request, run_tool)
        # Stepped by hand: an event loop keeps a task's exception in cycles of its own.
        return middleware.awrap_tool_call(request, arun_tool).send(None)

    gc.disable()  # only reference counting frees it: a cycle would keep it alive
    try:
        with pytest.raises(RuntimeError, match="handler bug"):
            call_the_hook(request)
        del request
        assert freed() is None
    finally:
        gc.enable()


def test_a_route_s_text_replaces_only_the_text_of_an_error_a_tool_returned(path: Path) -> None:
    def quota(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Search, over a quota: answers with an error message of its own."""
        return ToolMessage(
            "quota exceeded",
            tool_call_id=tool_call_id,
            status="error",
            artifact={"retry_after": 30},
        )

    def rewrite(failure: ReportedFailure, request: ToolCallRequest) -> str:
        return "The search quota is spent; answer from what you know."

    middleware = ToolErrorMiddleware.from_routes([Route(ReportedFailure, rewrite)])
    tool = StructuredTool.from_function(quota, name="search")
    agent = build_agent([tool], [middleware], [call("search", "c1", query="x")])

    answer = tool_messages(run(agent, path))["c1"]

    assert (answer.status, answer.text) == (
        "error",
        "The search quota is spent; answer from what you know.",
    )
    assert answer.artifact == {"retry_after": 30}  # what the tool attached stays
