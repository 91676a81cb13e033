"""The safe-messages guide's table: what a handler for exceptions leaves disclosed, and the
route that closes each, through real `create_agent` agents on both paths.

Every failure carries one secret where the guide says it leaks: in the values the model
sent, in a tool's own error text, in an exception's message. With
`ToolErrorMiddleware(report_type_only)` alone the model reads it where the guide says it
does; with the guide's `safe` middleware, no answer holds it, for every kind of failure.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware, ToolRetryMiddleware
from langchain_core.messages import AIMessage, InvalidToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from langchain_tool_errors import (
    InnerMiddlewareError,
    InvalidArguments,
    Route,
    ToolErrorMiddleware,
    ToolReportedError,
)
from langchain_tool_errors.handlers import report_invalid_fields, report_kind_only, report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, question, run
from tests._composing import Flaky

SECRET = "s3cr3t-7731"


def reporting_tool() -> BaseTool:
    """`report`: reports its own failure, a `ToolException` whose message holds the secret."""

    def report(query: str) -> str:
        raise ToolException(f"the database at {SECRET} refused the query")

    return StructuredTool.from_function(
        report, name="report", description="reports its failures", handle_tool_error=True
    )


def typed_tool() -> BaseTool:
    """`lookup`: takes an `int`; the model sends the secret instead."""

    def lookup(record_id: int) -> str:
        return f"record {record_id}"

    return StructuredTool.from_function(lookup, name="lookup", description="a record by id")


def safe() -> ToolErrorMiddleware[Any, Any, Any]:
    """The guide's middleware, as written there."""
    built: ToolErrorMiddleware[Any, Any, Any] = ToolErrorMiddleware.from_routes(
        [
            Route(InvalidArguments, report_invalid_fields),
            Route((ToolReportedError, InnerMiddlewareError), report_kind_only),
            Route(Exception, report_type_only),
        ]
    )
    return built


def answers(outer: AgentMiddleware[Any, Any, Any], path: Path) -> dict[str, str]:
    """What the model read for each call: one step with every kind of failure.

    The invalid arguments, a tool reporting its own failure, the retry middleware's answer
    (inside `outer`), a tool the agent lacks and a malformed call, each with the secret.
    """
    # create_agent's `checkpointer` parameter is partially unknown in pyright strict.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    retried = Flaky(failures=5, secret=SECRET)
    malformed = InvalidToolCall(
        type="invalid_tool_call",
        name="lookup",
        args=f'{{"record_id": "{SECRET}',
        id="m1",
        error=None,
    )
    reply = AIMessage(
        "",
        tool_calls=[
            call("lookup", "v1", record_id=SECRET),
            call("report", "r1", query="q"),
            call("fetch", "f1", query="q"),
            call("lokup", "u1", record_id=SECRET),
        ],
        invalid_tool_calls=[malformed],
    )
    retry = ToolRetryMiddleware(
        max_retries=1, tools=["fetch"], initial_delay=0, jitter=False, on_failure="continue"
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply, AIMessage("done")]),
        tools=[typed_tool(), reporting_tool(), retried.tool()],
        middleware=[outer, retry],
    )
    result = run(agent, path, question())
    return {m.tool_call_id: m.text for m in result["messages"] if isinstance(m, ToolMessage)}


def test_a_handler_for_exceptions_alone_leaves_what_the_guide_names_disclosed(path: Path) -> None:
    read = answers(ToolErrorMiddleware(report_type_only), path)

    assert SECRET in read["v1"]  # the values sent, quoted by ToolNode
    assert SECRET in read["r1"]  # the tool's own text
    # The retry middleware quotes the exception, as the guide shows.
    assert read["f1"].startswith("Tool 'fetch' failed after 2 attempts with TimeoutError: ")
    assert SECRET in read["f1"]
    # An unknown tool is answered with the agent's tools, a malformed call with a fixed text.
    assert SECRET not in read["u1"]
    assert "lookup" in read["u1"]
    assert SECRET not in read["m1"]


def test_the_guides_safe_middleware_sends_no_error_text_and_no_value_sent(path: Path) -> None:
    read = answers(safe(), path)

    assert set(read) == {"v1", "r1", "f1", "u1", "m1"}
    assert all(SECRET not in text for text in read.values()), read
    assert "`record_id`" in read["v1"]  # the field, and what it expects
    assert "valid integer" in read["v1"]
    assert read["r1"].startswith("Tool `report` failed (")
    assert read["f1"].startswith("Tool `fetch` failed (")
