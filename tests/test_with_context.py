"""`SummarizationMiddleware` and `ContextEditingMiddleware` beside this middleware.

Both shrink what the model reads; neither touches the record or a budget's counts, which
live in state channels of their own. Summarization replaces old messages in the state with
a summary, so failures whose messages are gone are still in `result["tool_failures"]` and
still spend the budget; the error messages it keeps stay error messages and are sent
marked. Its summary model is called directly, not through the agent's model-call hooks, so
it reads failed results as plain text (marking never reaches it).

Context editing changes only what is sent: the state keeps every message. A cleared error
result keeps `status="error"`; whether it is sent marked depends on the order: with the
editing listed before ours (outside it) ours marks the placeholder, with it listed after
ours the placeholder replaces our mark.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Path, call, echo_tool, explaining, failing_tool, run, tool_messages
from tests._composing import ORDERS, Order, Plan, agent_of, calls, message_rows, stacked

HANDLED = "search failed with LookupError"
CLOSED = "`{tool}` is closed for this run after {count} failures."
SUMMARY = "The user asked to search; the search tool kept failing."
PLACEHOLDER = "[cleared]"


def ours(budget: ErrorBudget) -> ToolErrorMiddleware:
    return ToolErrorMiddleware(explaining, budget=budget, record_failures=True)


def outcomes(result: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    failures: list[ToolFailure] = result["tool_failures"]
    return [(f["call_id"], f["kind"], f["outcome"]) for f in failures]


class Summarizer:
    """The summary model's only reply, SUMMARY; it keeps every prompt it was given."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        self.prompts.append(messages[-1].text)
        return AIMessage(SUMMARY)

    def model(self) -> ScriptedChatModel:
        return ScriptedChatModel(script=[Repeat(self)])


def summarizing(summarizer: Summarizer) -> SummarizationMiddleware:
    # Before the fourth model call the state holds 7 messages: the question, then three
    # calls and their failures. The first two calls and their failures are summarized.
    return SummarizationMiddleware(
        summarizer.model(), trigger=("messages", 6), keep=("messages", 2)
    )


def four_failing_searches() -> Plan:
    return Plan(*(calls(call("search", f"s{i}")) for i in range(4)), AIMessage("done"))


Summarized = tuple[Plan, Summarizer, dict[str, Any]]
"""A summarized run: the agent model's plan, the summary model, and the run's result."""


def run_summarized(path: Path, order: Order) -> Summarized:
    plan, summarizer = four_failing_searches(), Summarizer()
    budget = ErrorBudget(per_tool=3, when_spent="tell", message=CLOSED)
    agent = agent_of(
        plan,
        [failing_tool("search", LookupError("index offline"))],
        stacked(order, summarizing(summarizer), ours(budget)),
    )
    return plan, summarizer, run(agent, path)


@pytest.fixture(params=ORDERS)
def summarized(request: pytest.FixtureRequest, path: Path) -> Summarized:
    """Four failing searches, summarization listed outside ours or inside it."""
    return run_summarized(path, request.param)


def test_after_summarization_the_record_has_every_failure_and_the_budget_kept_counting(
    summarized: Summarized,
) -> None:
    _, summarizer, result = summarized

    assert len(summarizer.prompts) == 1
    assert list(tool_messages(result)) == ["s2", "s3"]  # s0 and s1 were summarized away
    assert outcomes(result) == [
        ("s0", "exception", "answered"),
        ("s1", "exception", "answered"),
        ("s2", "exception", "answered"),
        ("s3", "exception", "told"),  # the fourth failure, though only one is in the state
    ]
    closed = tool_messages(result)["s3"]
    assert (closed.text, closed.status) == (
        "`search` is closed for this run after 4 failures.",
        "error",
    )


def test_an_error_message_summarization_keeps_stays_an_error_and_is_sent_marked(
    summarized: Summarized,
) -> None:
    plan, _, result = summarized

    kept = tool_messages(result)["s2"]
    assert (kept.text, kept.status) == (HANDLED, "error")
    after_summary = plan.sent[3]
    assert isinstance(after_summary[0], HumanMessage)
    assert SUMMARY in after_summary[0].text
    assert message_rows(plan.tool_messages_sent(4)) == [("s2", "Error: " + HANDLED, "error")]


def test_the_summary_model_reads_failed_results_as_plain_text(path: Path) -> None:
    _, summarizer, _ = run_summarized(path, "theirs outside")

    [prompt] = summarizer.prompts
    assert prompt.count(HANDLED) == 2  # the two failures summarized
    assert "Error: " + HANDLED not in prompt  # not marked: our hook never sees this call
    assert "status" not in prompt  # and the flag is not in the text


def clearing() -> ContextEditingMiddleware:
    # Clear every tool result but the two most recent, before every model call.
    return ContextEditingMiddleware(
        edits=[ClearToolUsesEdit(trigger=0, keep=2, placeholder=PLACEHOLDER)]
    )


def run_cleared(path: Path, order: Order) -> tuple[Plan, dict[str, Any]]:
    # Three turns, each a failing search beside a successful echo; then the answer.
    plan = Plan(
        *(calls(call("search", f"s{i}"), call("echo", f"e{i}", query="hi")) for i in range(3)),
        AIMessage("done"),
    )
    budget = ErrorBudget(per_tool=2, when_spent="tell", message=CLOSED)
    tools = [failing_tool("search", LookupError("index offline")), echo_tool()]
    agent = agent_of(plan, tools, stacked(order, clearing(), ours(budget)))
    return plan, run(agent, path)


@pytest.mark.parametrize(
    ("order", "cleared_error"),
    [("theirs outside", "Error: " + PLACEHOLDER), ("ours outside", PLACEHOLDER)],
)
def test_a_cleared_error_result_keeps_its_status_and_is_marked_only_with_the_editing_outside(
    path: Path, order: Order, cleared_error: str
) -> None:
    plan, _ = run_cleared(path, order)

    closed = "Error: `search` is closed for this run after 3 failures."
    assert message_rows(plan.tool_messages_sent(4)) == [
        ("s0", cleared_error, "error"),
        ("e0", PLACEHOLDER, "success"),
        ("s1", cleared_error, "error"),
        ("e1", PLACEHOLDER, "success"),
        ("s2", closed, "error"),
        ("e2", "echo: hi", "success"),
    ]


@pytest.mark.parametrize("order", ORDERS)
def test_context_editing_leaves_the_state_the_record_and_the_budget_as_they_were(
    path: Path, order: Order
) -> None:
    _, result = run_cleared(path, order)

    messages = tool_messages(result)
    assert [(m.tool_call_id, m.text, m.status) for m in messages.values()] == [
        ("s0", HANDLED, "error"),
        ("e0", "echo: hi", "success"),
        ("s1", HANDLED, "error"),
        ("e1", "echo: hi", "success"),
        ("s2", "`search` is closed for this run after 3 failures.", "error"),
        ("e2", "echo: hi", "success"),
    ]
    assert outcomes(result) == [
        ("s0", "exception", "answered"),
        ("s1", "exception", "answered"),
        ("s2", "exception", "told"),
    ]
