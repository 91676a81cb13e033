"""The offline chat model: its script, repeated steps, and what it says when it runs out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
)

from langchain_tool_errors import ErrorBudget, ToolErrorBudgetExceeded, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, transcript
from tests._agents import Agent, Path, agent_of, call, failing_tool, run
from tests._refusals import Refusal, assert_refused

UntypedRepeat: Any = Repeat


def converse(model: ScriptedChatModel, turns: int) -> list[AIMessage]:
    """The model's first `turns` replies, each added to the conversation before the next."""
    messages: list[BaseMessage] = [HumanMessage("go")]
    replies: list[AIMessage] = []
    for _ in range(turns):
        reply = model.invoke(messages)
        replies.append(reply)
        messages.append(reply)
    return replies


def calls_weather() -> AIMessage:
    return AIMessage("", tool_calls=[call("weather", "c")])


def test_a_repeated_step_answers_as_many_calls_as_times_then_the_script_goes_on() -> None:
    model = ScriptedChatModel(
        script=[AIMessage("first"), Repeat(calls_weather(), times=3), AIMessage("last")]
    )

    replies = converse(model, 5)

    assert [reply.content for reply in replies] == ["first", "", "", "", "last"]
    assert [[c["id"] for c in reply.tool_calls] for reply in replies[1:4]] == [
        ["c-1"],
        ["c-2"],
        ["c-3"],
    ]


def test_a_repeated_reply_gives_its_malformed_calls_ids_of_their_own_too() -> None:
    reply = AIMessage(
        "",
        tool_calls=[call("weather", "v")],
        invalid_tool_calls=[
            {
                "name": "weather",
                "args": '{"city": "Os',
                "id": "m",
                "error": None,
                "type": "invalid_tool_call",
            }
        ],
    )

    replies = converse(ScriptedChatModel(script=[Repeat(reply, times=3)]), 3)

    assert [[c["id"] for c in r.tool_calls] for r in replies] == [["v-1"], ["v-2"], ["v-3"]]
    assert [[c["id"] for c in r.invalid_tool_calls] for r in replies] == [
        ["m-1"],
        ["m-2"],
        ["m-3"],
    ]
    assert [r.invalid_tool_calls[0]["args"] for r in replies] == ['{"city": "Os'] * 3


def test_a_repeat_without_times_answers_every_later_call() -> None:
    model = ScriptedChatModel(script=[AIMessage("first"), Repeat(calls_weather())])

    replies = converse(model, 40)

    assert replies[0].content == "first"
    assert [reply.tool_calls[0]["id"] for reply in replies[1:]] == [f"c-{n}" for n in range(1, 40)]


def test_a_repeated_function_step_is_called_each_time_with_the_conversation() -> None:
    seen: list[int] = []

    def reply(messages: Sequence[BaseMessage]) -> AIMessage:
        seen.append(len(messages))
        return AIMessage(f"reply to {len(messages)} messages")

    replies = converse(ScriptedChatModel(script=[Repeat(reply, times=2), AIMessage("end")]), 3)

    assert seen == [1, 2]
    assert [r.content for r in replies] == [
        "reply to 1 messages",
        "reply to 2 messages",
        "end",
    ]


def test_a_script_that_runs_out_says_how_many_calls_it_answers_and_how_to_fix_it() -> None:
    model = ScriptedChatModel(script=[AIMessage("one"), Repeat(AIMessage("more"), times=2)])
    converse(model, 3)

    with pytest.raises(IndexError) as raised:
        converse(model, 4)

    assert str(raised.value) == (
        "the script answers 3 model calls; model call 4 has no step. Add steps, or end the "
        "script with Repeat(step) to answer every later call."
    )


def test_an_endless_repeat_before_other_steps_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("script[1] is Repeat(")) as raised:
        ScriptedChatModel(script=[AIMessage("a"), Repeat(AIMessage("b")), AIMessage("c")])

    assert "the 1 step(s) after it would never play" in str(raised.value)
    assert "Give it times=N, or make it the last step." in str(raised.value)


BAD_REPEATS: dict[str, Refusal] = {
    "a step that is neither a message nor a function": (
        lambda: UntypedRepeat("call the tool"),
        TypeError,
        "but got 'call the tool' (str)",
    ),
    "times as a str": (
        lambda: UntypedRepeat(AIMessage("x"), times="3"),
        TypeError,
        "`times` must be a positive int or None, but got '3' (str)",
    ),
    "times as a bool": (lambda: UntypedRepeat(AIMessage("x"), times=True), TypeError, "(bool)"),
    "times zero": (
        lambda: UntypedRepeat(AIMessage("x"), times=0),
        ValueError,
        "`times` must be at least 1, but got 0",
    ),
}


@pytest.mark.parametrize("case", BAD_REPEATS)
def test_a_wrong_repeat_fails_at_construction(case: str) -> None:
    assert_refused(BAD_REPEATS[case])


def test_the_repr_of_a_repeat_shows_its_step_and_times() -> None:
    assert repr(Repeat(AIMessage("x"), times=2)) == f"Repeat({AIMessage('x')!r}, times=2)"


def test_a_model_that_keeps_calling_a_broken_tool_is_one_step_stopped_by_a_budget(
    path: Path,
) -> None:
    # create_agent's `checkpointer` parameter is partially unknown in pyright strict.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    model = ScriptedChatModel(script=[Repeat(calls_weather())])
    middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3))
    agent: Agent = create_agent(
        model, tools=[failing_tool("weather", LookupError("x"))], middleware=[middleware]
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    assert raised.value.count == 4


def test_a_transcript_shows_a_system_message_by_its_type() -> None:
    lines = transcript([SystemMessage("Be brief."), HumanMessage("hi"), AIMessage("hello")])

    assert lines.splitlines() == ["system     Be brief.", "user       hi", "assistant  hello"]


def test_a_transcript_shows_a_malformed_call_with_its_raw_arguments_and_id() -> None:
    cut = AIMessage(
        "",
        invalid_tool_calls=[
            InvalidToolCall(
                name="lookup", args='{"id": 1', id="cut", error="eof", type="invalid_tool_call"
            ),
            InvalidToolCall(name=None, args=None, id="x", error=None, type="invalid_tool_call"),
        ],
    )

    lines = transcript([cut]).splitlines()

    assert lines == [
        'assistant  calls lookup with malformed arguments: {"id": 1  [cut]',
        "assistant  calls (no name) with malformed arguments: None  [x]",
    ]


def test_a_thread_of_several_inputs_is_one_conversation_scripted_in_order(path: Path) -> None:
    # The second input's model call reads the first input's reply: its step is the next one.
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver

    script = [AIMessage("first answer"), AIMessage("second answer")]
    agent = agent_of([], [], script, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    first = run(agent, path, {"messages": [HumanMessage("one")]}, config)
    second = run(agent, path, {"messages": [HumanMessage("two")]}, config)

    assert first["messages"][-1].text == "first answer"
    assert second["messages"][-1].text == "second answer"
    with pytest.raises(IndexError):  # a third input has no step left
        run(agent, path, {"messages": [HumanMessage("three")]}, config)
