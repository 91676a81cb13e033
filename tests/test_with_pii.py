"""`PIIMiddleware(apply_to_tool_results=True)` beside this middleware: personal data in an
error message.

The PII middleware rewrites the tool messages of the last step in the agent's state before
the next model call, error messages included: it keeps `status="error"`, so ours still
marks them, and the model reads the redacted text marked. This holds for a handler's text
quoting the exception and for `ToolNode`'s answer quoting the arguments, in either list
order (its hook runs before the model node; ours wraps the model call). The record and
listeners never hold a message or an argument, so they hold no personal data either way.
With `strategy="block"` the run stops before the model reads anything; that error is not a
tool failure and passes ours by, and the checkpoint keeps the record of the step before.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, PIIDetectionError, PIIMiddleware
from langchain_core.messages import AIMessage, InvalidToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, run, tool_messages
from tests._composing import Plan, agent_of, calls, message_rows

Order = Literal["pii outside", "ours outside"]
ORDERS: tuple[Order, ...] = ("pii outside", "ours outside")
Strategy = Literal["redact", "hash", "mask"]
EMAIL = "alice@example.com"
OTHER_EMAIL = "bob@example.org"


def _account(owner: str) -> str:
    raise LookupError(f"no account for {owner}")


def _lookup(record_id: int) -> str:
    return f"record {record_id}"


def tools() -> list[BaseTool]:
    return [
        StructuredTool.from_function(_account, name="account", description="An account."),
        StructuredTool.from_function(_lookup, name="lookup", description="A record."),
    ]


def quoting(exc: Exception, request: ToolCallRequest) -> str:
    """An unsafe handler: it quotes the exception, personal data and all."""
    return f"account failed: {exc}"


def stacked(
    order: Order, pii: PIIMiddleware, mine: ToolErrorMiddleware
) -> list[AgentMiddleware[Any, Any, Any]]:
    return [pii, mine] if order == "pii outside" else [mine, pii]


def plan() -> Plan:
    # One call whose exception quotes an email, one whose invalid argument is an email.
    return Plan(
        calls(
            call("account", "quoted", owner=EMAIL),
            call("lookup", "invalid", record_id=OTHER_EMAIL),
        ),
        AIMessage("done"),
    )


def on_tool_results(strategy: Literal[Strategy, "block"]) -> PIIMiddleware:
    return PIIMiddleware(
        "email", strategy=strategy, apply_to_input=False, apply_to_tool_results=True
    )


@pytest.mark.parametrize("order", ORDERS)
def test_the_model_reads_a_redacted_error_message_still_marked_as_an_error(
    path: Path, order: Order
) -> None:
    script = plan()
    mine = ToolErrorMiddleware(quoting, record_failures=True)
    agent = agent_of(script, tools(), stacked(order, on_tool_results("redact"), mine))

    result = run(agent, path)

    quoted = "account failed: no account for [REDACTED_EMAIL]"
    invalid = tool_messages(result)["invalid"].text
    assert invalid.startswith(
        "Error invoking tool 'lookup' with kwargs {'record_id': '[REDACTED_EMAIL]'}"
    )
    # The state holds the redacted copies, each still an error.
    assert message_rows(list(tool_messages(result).values())) == [
        ("quoted", quoted, "error"),
        ("invalid", invalid, "error"),
    ]
    # The model reads them redacted and marked; ToolNode's text begins "Error invoking",
    # not with the mark, so it is marked too.
    assert message_rows(script.tool_messages_sent(2)) == [
        ("quoted", "Error: " + quoted, "error"),
        ("invalid", "Error: " + invalid, "error"),
    ]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(
    ("strategy", "replacement"),
    [("redact", "[REDACTED_EMAIL]"), ("hash", "<email_hash:"), ("mask", "@****.")],
)
def test_no_strategy_lets_the_address_through_and_the_record_never_had_it(
    path: Path, order: Order, strategy: Strategy, replacement: str
) -> None:
    script, told = plan(), list[ToolFailure]()
    mine = ToolErrorMiddleware(quoting, record_failures=True, listeners=[told.append])
    agent = agent_of(script, tools(), stacked(order, on_tool_results(strategy), mine))

    result = run(agent, path)

    for message in script.tool_messages_sent(2):
        assert message.status == "error"
        assert message.text.startswith("Error: ")
        assert replacement in message.text
        assert EMAIL not in message.text
        assert OTHER_EMAIL not in message.text
    failures: list[ToolFailure] = result["tool_failures"]
    assert [(f["call_id"], f["kind"]) for f in failures] == [
        ("quoted", "exception"),
        ("invalid", "invalid_arguments"),
    ]
    assert sorted(f["call_id"] or "" for f in told) == ["invalid", "quoted"]
    for kept in (repr(failures), repr(told)):
        assert "example" not in kept
        assert "alice" not in kept


@pytest.mark.parametrize("order", ORDERS)
def test_a_blocking_pii_middleware_stops_the_run_and_the_checkpoint_keeps_the_record(
    path: Path, order: Order
) -> None:
    script, checkpointer = plan(), InMemorySaver()
    mine = ToolErrorMiddleware(quoting, record_failures=True)
    agent = agent_of(script, tools(), stacked(order, on_tool_results("block"), mine), checkpointer)
    config: RunnableConfig = {"configurable": {"thread_id": f"pii-{order}-{path}"}}

    with pytest.raises(PIIDetectionError):
        run(agent, path, config=config)

    assert len(script.sent) == 1  # the model never read the failures
    saved = checkpointer.get(config)
    assert saved is not None
    failures: list[ToolFailure] = saved["channel_values"]["tool_failures"]
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in failures] == [
        ("quoted", "exception", "answered"),
        ("invalid", "invalid_arguments", "answered"),
    ]
    assert "example" not in repr(failures)


@pytest.mark.parametrize("order", ORDERS)
def test_a_reply_of_only_malformed_calls_sent_back_is_redacted_in_either_order(
    path: Path, order: Order
) -> None:
    # Ours meets such a reply in the model call's own step and sends it back through the
    # graph: the PII middleware's hook after the model reads it, wherever it is listed.
    pii = PIIMiddleware("email", strategy="redact", apply_to_output=True)
    mine = ToolErrorMiddleware(report_type_only, listeners=[lambda failure: None])
    cut = InvalidToolCall(
        name="lookup", args='{"record_id": ', id="cut", error="cut", type="invalid_tool_call"
    )
    model = ScriptedChatModel(
        script=[AIMessage(f"writing to {EMAIL}", invalid_tool_calls=[cut]), AIMessage("done")]
    )
    agent: Agent = create_agent(model, tools=tools(), middleware=stacked(order, pii, mine))

    result = run(agent, path)

    first = next(m for m in result["messages"] if isinstance(m, AIMessage))
    assert first.invalid_tool_calls  # the reply, sent back: the model was called again
    assert result["messages"][-1].text == "done"
    assert EMAIL not in first.text
