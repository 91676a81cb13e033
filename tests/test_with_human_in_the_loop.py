"""Beside `HumanInTheLoopMiddleware`: a person's decision about a call to a closed tool.

A "tell" budget closes `weather` after its second failure; the model calls it a third time
and a person reviews that call. Whatever the person decides, and in either list order,
with batched review (in the hook after the model) or per-call review (as the call runs),
the call is answered exactly once. Per-call review listed inside this middleware is never
asked about a call this middleware already closed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph import errors as langgraph_errors
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import ValidationError

from langchain_tool_errors import (
    ErrorBudget,
    InnerMiddlewareError,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from tests._agents import Agent, Path, agent_of, call, failing_tool, question, reporting, run
from tests._composing import stacked

Mode = Literal["batched", "per_call"]
ORDERS = ("review first", "ours first")
DECISIONS: dict[str, dict[str, Any]] = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "edited_action": {"name": "weather", "args": {"query": "Oslo"}}},
    "reject": {"type": "reject", "message": "not now"},
}

WEATHER = failing_tool("weather", LookupError("no forecast"))
CALLS = [AIMessage("", tool_calls=[call("weather", f"w{n}")]) for n in (1, 2, 3)]


@pytest.fixture(params=ORDERS)
def order(request: pytest.FixtureRequest) -> str:
    """Which is listed first, outside the other: the review, or ours."""
    return str(request.param)


@pytest.fixture(params=["batched", "per_call"])
def mode(request: pytest.FixtureRequest) -> Mode:
    """How the review asks: all the reply's calls at once after the model, or each call as
    it runs."""
    asks: Mode = request.param
    return asks


def reviewed(
    review: HumanInTheLoopMiddleware,
    ours: ToolErrorMiddleware[Any, Any, Any],
    order: str,
    replies: Sequence[AIMessage] = CALLS,
) -> Agent:
    """The review and ours in `order` around the failing `weather`, on a thread; the model
    sends `replies`, then answers "done"."""
    script = [*replies, AIMessage("done")]
    return agent_of([WEATHER], stacked(order, review, ours), script, InMemorySaver())


def closing(mode: Mode, order: str, told: list[ToolFailure]) -> Agent:
    """Every call of `weather` reviewed; a "tell" budget that closes it after two failures."""
    review = HumanInTheLoopMiddleware(interrupt_on={"weather": True}, interrupt_mode=mode)
    return reviewed(review, reporting(told, ErrorBudget(per_tool=1, when_spent="tell")), order)


def resume_value(mode: Mode, decision: dict[str, Any]) -> object:
    return {"decisions": [decision]} if mode == "batched" else decision


def run_to_end(
    agent: Agent, path: Path, mode: Mode, decisions: list[dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    """Run, answering each review in turn with the next decision; also how many were asked."""
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    result = run(agent, path, question(), config)
    asked = 0
    while "__interrupt__" in result:
        decision = decisions[min(asked, len(decisions) - 1)]
        asked += 1
        result = run(agent, path, Command(resume=resume_value(mode, decision)), config)
    return result, asked


def answer_counts(messages: list[BaseMessage]) -> Counter[str]:
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


@pytest.mark.parametrize("decision", DECISIONS)
def test_a_reviewed_call_to_a_closed_tool_is_answered_exactly_once(
    mode: Mode, path: Path, order: str, decision: str
) -> None:
    told: list[ToolFailure] = []
    approve = DECISIONS["approve"]
    agent = closing(mode, order, told)

    result, asked = run_to_end(agent, path, mode, [approve, approve, DECISIONS[decision]])

    messages: list[BaseMessage] = result["messages"]
    assert answer_counts(messages) == {"w1": 1, "w2": 1, "w3": 1}
    w3 = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "w3")
    assert w3.status == "error"
    if mode == "per_call" and order == "ours first":
        # The call to the closed tool is answered before the review inside would run.
        assert asked == 2
        assert "unavailable" in w3.text
    else:
        assert asked == 3
        assert ("rejected" in w3.text) == (decision == "reject")
        assert ("unavailable" in w3.text) == (decision != "reject")
    assert [(f["call_id"], f["outcome"]) for f in result["tool_failures"]][:2] == [
        ("w1", "answered"),
        ("w2", "told"),
    ]


def test_an_approved_call_that_fails_is_handled_and_recorded_once(
    mode: Mode, path: Path, order: str
) -> None:
    told: list[ToolFailure] = []

    result, asked = run_to_end(closing(mode, order, told), path, mode, [DECISIONS["approve"]])

    assert asked >= 2
    assert [(f["call_id"], f["kind"]) for f in told][:2] == [
        ("w1", "exception"),
        ("w2", "exception"),
    ]
    assert answer_counts(result["messages"])["w1"] == 1


# langgraph checks a review's answer against its schema from 1.2.15 (`response_schema`).
@pytest.mark.skipif(
    not hasattr(langgraph_errors, "is_invalid_resume"),
    reason="this langgraph has no response_schema and marks no invalid resume",
)
def test_an_invalid_review_answer_is_neither_recorded_nor_told(path: Path) -> None:
    # Per-call review listed after this middleware: the refused answer is raised inside
    # this middleware's tool-call hook, which lets it go on up without telling anyone.
    told: list[ToolFailure] = []
    agent = closing("per_call", "ours first", told)
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    assert "__interrupt__" in run(agent, path, question(), config)

    with pytest.raises(ValidationError):
        run(agent, path, Command(resume={"type": "maybe"}), config)

    assert told == []
    snapshot = agent.get_state(config)
    assert snapshot.values.get("tool_failures", []) == []
    assert sum(len(task.interrupts) for task in snapshot.tasks) == 1  # still pending


def no_details(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
    return f"`{failure.tool}` was not run; ask the user what to do instead."


def test_a_persons_rejection_is_the_same_failure_wherever_it_is_written(
    mode: Mode, path: Path, order: str
) -> None:
    # Batched review answers in its hook after the model; per-call review as the call
    # runs, inside or outside this middleware. Each way the model reads one error answer,
    # and each way it is a failure of the kind "inner_middleware": recorded, told, routed.
    told: list[ToolFailure] = []
    review = HumanInTheLoopMiddleware(interrupt_on={"weather": True}, interrupt_mode=mode)
    ours = ToolErrorMiddleware.from_routes(
        [Route(InnerMiddlewareError, no_details), Route(Exception, report_type_only)],
        record_failures=True,
        listeners=[told.append],
    )
    agent = reviewed(review, ours, order, CALLS[:1])

    result, asked = run_to_end(agent, path, mode, [DECISIONS["reject"]])

    assert asked == 1
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (answer.tool_call_id, answer.status) == ("w1", "error")
    assert answer.text == "`weather` was not run; ask the user what to do instead."
    records = [(f["call_id"], f["kind"], f["route"], f["outcome"]) for f in told]
    assert records == [("w1", "inner_middleware", 0, "answered")]
    assert [(f["call_id"], f["kind"]) for f in result["tool_failures"]] == [
        ("w1", "inner_middleware")
    ]


def test_a_persons_response_in_place_of_the_tool_is_no_failure(
    mode: Mode, path: Path, order: str
) -> None:
    told: list[ToolFailure] = []
    review = HumanInTheLoopMiddleware(
        interrupt_on={"weather": {"allowed_decisions": ["approve", "respond"]}},
        interrupt_mode=mode,
    )
    agent = reviewed(review, reporting(told, ErrorBudget(per_tool=1)), order, CALLS[:1])
    respond = {"type": "respond", "message": "It is sunny in Oslo."}

    result, asked = run_to_end(agent, path, mode, [respond])

    assert asked == 1
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (answer.text, answer.status) == ("It is sunny in Oslo.", "success")
    assert told == []
    assert result["tool_failures"] == []


def test_the_review_s_note_of_an_edit_that_fails_is_kept_only_with_the_review_first(
    path: Path, order: str
) -> None:
    # langchain's per-call review adds its note of an edit to the call's result; a failure
    # that goes up as an exception has none. Listed first, the review gets this
    # middleware's error message as the result and adds the note to it; listed inside it,
    # the review raises the tool's exception on, and the model reads the error alone.
    told: list[ToolFailure] = []
    agent = closing("per_call", order, told)

    result, _ = run_to_end(agent, path, "per_call", [DECISIONS["edit"]])

    w1 = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "w1"
    )
    assert w1.status == "error"
    assert "Tool `weather` failed with LookupError." in w1.text
    noted = 'Executed instead: weather with arguments {"query": "Oslo"}' in w1.text
    assert noted == (order == "review first")
    assert [(f["call_id"], f["kind"]) for f in told][:1] == [("w1", "exception")]
