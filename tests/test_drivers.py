"""A failure's life is written once and driven on both paths: what passes through the drivers.

The life yields where it needs a handler or the listeners (`effects.run`, `effects.arun`).
A handler's exception is thrown back into it: LangGraph's control flow from a handler
passes through untouched, and any other exception stays chained to the tool's and is told
once as gone on up, whatever the middleware watches.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware, ToolFailure
from tests._agents import PATHS, Path, build_agent, call, failing_tool, run, tool_messages

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
