"""Which `Command`s an inner middleware answers a call with, and how the answer goes back.

The agents in test_recording.py and test_failures.py prove the whole path; these tables pin
each shape a `Command` can take, since any other `Command` must pass untouched.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from _langchain_tool_errors.inner_commands import answered_inside, put_back
from tests._agents import call, direct_request, echo_tool

REQUEST = direct_request(echo_tool(), call("echo", "c1"))
ERROR = ToolMessage("echo failed", tool_call_id="c1", name="echo", status="error")

NOT_AN_ANSWER: list[tuple[str, object]] = [
    ("not a Command", {"messages": [ERROR]}),
    ("to the parent graph", Command(graph=Command.PARENT, update={"messages": [ERROR]})),
    ("with a goto", Command(goto="model", update={"messages": [ERROR]})),
    ("with a resume", Command(resume="yes", update={"messages": [ERROR]})),
    ("an update of pairs", Command(update=[("messages", [ERROR])])),
    ("no messages", Command(update={"tool_error_budget_counts": {"k": 1}})),
    ("two messages", Command(update={"messages": [ERROR, ERROR]})),
    ("messages not in a list", Command(update={"messages": ERROR})),
    ("not a ToolMessage", Command(update={"messages": [AIMessage("hi")]})),
    (
        "a success",
        Command(update={"messages": [ToolMessage("ok", tool_call_id="c1", name="echo")]}),
    ),
    (
        "another call's error",
        Command(
            update={
                "messages": [
                    ToolMessage("no", tool_call_id="c2", name="echo", status="error"),
                ]
            }
        ),
    ),
]


@pytest.mark.parametrize(
    "result", [case for _, case in NOT_AN_ANSWER], ids=[name for name, _ in NOT_AN_ANSWER]
)
def test_a_command_that_is_not_an_inner_answer_is_left_alone(result: object) -> None:
    assert answered_inside(result, REQUEST) is None


def test_an_inner_answer_is_its_error_message_and_the_rest_of_its_update() -> None:
    counts = {"inner\x00echo": 1}
    result: Command[Any] = Command(update={"messages": [ERROR], "tool_error_budget_counts": counts})

    assert answered_inside(result, REQUEST) == (ERROR, {"tool_error_budget_counts": counts})


def test_a_message_answer_goes_back_beside_the_rest() -> None:
    ours = ERROR.model_copy(update={"content": "rewritten"})

    put = put_back({"tool_error_budget_counts": {"inner\x00echo": 1}}, ours)

    assert put == Command(
        update={"tool_error_budget_counts": {"inner\x00echo": 1}, "messages": [ours]}
    )


def test_the_counts_and_the_records_of_both_are_joined() -> None:
    inner_record: dict[str, Any] = {"middleware": "inner"}
    outer_record: dict[str, Any] = {"middleware": "outer"}
    rest: dict[str, Any] = {
        "tool_error_budget_counts": {"inner\x00echo": 1},
        "tool_failures": [inner_record],
    }
    ours: Command[Any] = Command(
        update={
            "messages": [ERROR],
            "tool_error_budget_counts": {"outer\x00echo": 1},
            "tool_failures": [outer_record],
        }
    )

    put = put_back(rest, ours)

    assert put.update == {
        "tool_error_budget_counts": {"inner\x00echo": 1, "outer\x00echo": 1},
        "tool_failures": [inner_record, outer_record],
        "messages": [ERROR],
    }
    assert rest["tool_failures"] == [inner_record]  # the inner update is not changed


def test_a_key_only_this_middleware_writes_is_added() -> None:
    record: dict[str, Any] = {"middleware": "outer"}
    ours: Command[Any] = Command(
        update={
            "messages": [ERROR],
            "tool_failures": [record],
            "tool_error_budget_counts": {"o": 1},
        }
    )

    put = put_back({"other": 1}, ours)

    assert put.update == {
        "other": 1,
        "messages": [ERROR],
        "tool_failures": [record],
        "tool_error_budget_counts": {"o": 1},
    }
