"""The ready-made safe handlers, and what they keep away from the model."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from unittest import mock

import langsmith
import pytest
from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt.tool_node import ToolCallRequest

# langsmith annotates `tracing_context`'s `parent` as a bare `Mapping`, which pyright strict
# reports as partially unknown.
from langsmith.run_helpers import tracing_context  # pyright: ignore[reportUnknownVariableType]

from langchain_tool_errors import (
    AOnError,
    InvalidArguments,
    Route,
    ToolErrorMiddleware,
    UnknownTool,
)
from langchain_tool_errors.handlers import (
    LOGGER,
    alog_handled,
    log_handled,
    report_invalid_fields,
    report_known_tools,
    report_messages_of,
    report_type_only,
)
from tests._agents import Path, build_agent, call, echo_tool, failing_tool, run, tool_messages

SECRETS = ("hunter2", "db-7.internal.example.com", "/etc/payments/credentials.yaml")
LEAKY = ConnectionError(
    "connect to postgres://admin:hunter2@db-7.internal.example.com:5432 failed "
    "(config /etc/payments/credentials.yaml)"
)


class NotFoundError(ToolException):
    """A ToolException subclass, whose messages are also written for the model."""


def test_report_type_only_names_the_tool_and_type_and_nothing_else(path: Path) -> None:
    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(report_type_only)],
        [call("search", "c1", query="card 4111")],
    )

    result = run(agent, path)

    message = tool_messages(result)["c1"]
    assert message.content == "Tool `search` failed with ConnectionError."
    assert message.status == "error"
    _assert_no_secrets(result["messages"])


MESSAGES_OF = {
    "listed type passes its message": (
        ToolException("No results; try fewer keywords."),
        "Tool `search` failed: No results; try fewer keywords.",
    ),
    "subclass of a listed type passes its message": (
        NotFoundError("No such city."),
        "Tool `search` failed: No such city.",
    ),
    "other types get the type only": (LEAKY, "Tool `search` failed with ConnectionError."),
    "empty message gets the type only": (
        ToolException(),
        "Tool `search` failed with ToolException.",
    ),
}


@pytest.mark.parametrize(("error", "expected"), MESSAGES_OF.values(), ids=MESSAGES_OF.keys())
def test_report_messages_of_passes_only_the_listed_types_messages(
    path: Path, error: Exception, expected: str
) -> None:
    agent = build_agent(
        [failing_tool("search", error)],
        [ToolErrorMiddleware(report_messages_of(ToolException))],
        [call("search", "c1")],
    )

    result = run(agent, path)

    assert tool_messages(result)["c1"].content == expected
    _assert_no_secrets(result["messages"])


def test_report_messages_of_names_itself_after_its_types() -> None:
    assert "report_messages_of(ToolException, KeyError)" in repr(
        report_messages_of(ToolException, KeyError)
    )


@pytest.mark.parametrize(
    ("types", "error"),
    [((), ValueError), (("ToolException",), TypeError), ((KeyboardInterrupt,), TypeError)],
    ids=["no types", "a string", "not an Exception subclass"],
)
def test_report_messages_of_refuses_what_is_not_exception_types(
    types: tuple[Any, ...], error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"exception.type") as raised:
        report_messages_of(*types)

    if error is TypeError:
        assert "`exception_types`" in str(raised.value)  # the argument, by its name


def test_log_handled_logs_the_traceback_and_no_request_payload(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(log_handled(report_type_only))],
        [call("search", "c1", query="card 4111")],
    )

    with caplog.at_level(logging.WARNING, logger=LOGGER.name):
        result = run(agent, path)

    [record] = [r for r in caplog.records if r.name == "langchain_tool_errors"]
    assert record.levelno == logging.WARNING
    exc_info = record.exc_info
    assert isinstance(exc_info, tuple)
    assert exc_info[0] is ConnectionError
    assert exc_info[1] is LEAKY
    assert exc_info[2] is LEAKY.__traceback__
    assert record.getMessage() == (
        "tool 'search' (call c1) failed with ConnectionError; "
        "the model was sent the handler's content"
    )
    assert "Traceback" in caplog.text
    assert "hunter2" in caplog.text
    assert tool_messages(result)["c1"].content == "Tool `search` failed with ConnectionError."


def test_alog_handled_logs_on_the_async_path(caplog: pytest.LogCaptureFixture) -> None:
    async def safe(exc: Exception, request: ToolCallRequest) -> str:
        return report_type_only(exc, request)

    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(aon_error=alog_handled(safe))],
        [call("search", "c1")],
    )

    with caplog.at_level(logging.WARNING, logger=LOGGER.name):
        result = run(agent, "async")

    assert len([r for r in caplog.records if r.name == LOGGER.name]) == 1
    assert tool_messages(result)["c1"].content == "Tool `search` failed with ConnectionError."


def test_alog_handled_refuses_a_wrapped_handler_that_returns_no_awaitable_chained() -> None:
    def not_async(exc: Exception, request: ToolCallRequest) -> str:
        return "sync text"

    unchecked: Any = not_async  # as code that skips the type checker passes it
    wrapped: AOnError[str] = alog_handled(unchecked)
    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(aon_error=wrapped)],
        [call("search", "c1")],
    )

    with pytest.raises(TypeError, match="`aon_error` must return an awaitable") as raised:
        run(agent, "async")

    assert raised.value.__cause__ is LEAKY


def test_nothing_is_logged_unless_asked(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(report_type_only)],
        [call("search", "c1")],
    )

    with caplog.at_level(logging.DEBUG, logger=LOGGER.name):
        run(agent, path)

    assert [r for r in caplog.records if r.name == LOGGER.name] == []


def test_declined_exceptions_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    def decline(exc: Exception, request: ToolCallRequest) -> str | None:
        return None

    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(log_handled(decline))],
        [call("search", "c1")],
    )

    with caplog.at_level(logging.DEBUG, logger=LOGGER.name), pytest.raises(ConnectionError):
        run(agent, "sync")

    assert [r for r in caplog.records if r.name == LOGGER.name] == []


WRAPPERS: dict[str, Callable[[Any], object]] = {
    "log_handled": log_handled,
    "alog_handled": alog_handled,
}


@pytest.mark.parametrize("name", WRAPPERS)
@pytest.mark.parametrize(
    ("handler", "shown"), [(None, "None (NoneType)"), ("report", "'report' (str)")]
)
def test_the_log_wrappers_refuse_what_is_not_a_handler(
    name: str, handler: object, shown: str
) -> None:
    with pytest.raises(TypeError) as raised:
        WRAPPERS[name](handler)

    message = str(raised.value)
    assert message.startswith(f"{name}() wraps a handler")
    assert f"got {shown}" in message
    assert f"{name}(report_type_only)" in message


def test_log_handled_refuses_an_async_handler() -> None:
    async def safe(exc: Exception, request: ToolCallRequest) -> str:
        return "x"

    with pytest.raises(TypeError, match="alog_handled"):
        log_handled(safe)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]


def test_disclosure_nothing_secret_reaches_the_model_or_the_middleware_span(path: Path) -> None:
    client: Any = mock.create_autospec(langsmith.Client, instance=True)
    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(report_messages_of(ToolException))],
        [call("search", "c1", query="card 4111")],
    )

    with tracing_context(enabled=True, client=client, project_name="test"):
        result = run(agent, path)

    _assert_no_secrets(result["messages"])
    hook = f"ToolErrorMiddleware.{'wrap' if path == 'sync' else 'awrap'}_tool_call"
    created: list[Any] = client.create_run.call_args_list
    updated: list[Any] = client.update_run.call_args_list
    spans = [c.kwargs for c in created if c.kwargs.get("name") == hook]
    assert len(spans) == 1
    assert spans[0]["inputs"] == {}
    ends = [c.kwargs for c in updated if c.args and c.args[0] == spans[0]["id"]]
    ends += [c.kwargs for c in updated if c.kwargs.get("run_id") == spans[0]["id"]]
    assert ends, "the span's end (its outputs) was recorded"
    for span in spans + ends:
        text = repr(span)
        assert "card 4111" not in text
        for secret in SECRETS:
            assert secret not in text


def _assert_no_secrets(messages: list[BaseMessage]) -> None:
    text = repr([m.content for m in messages])
    for secret in SECRETS:
        assert secret not in text


def test_alog_handled_lets_what_its_handler_declines_propagate_unlogged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def decline(exc: Exception, request: ToolCallRequest) -> str | None:
        return None

    agent = build_agent(
        [failing_tool("search", LEAKY)],
        [ToolErrorMiddleware(aon_error=alog_handled(decline))],
        [call("search", "c1")],
    )

    with (
        caplog.at_level(logging.DEBUG, logger=LOGGER.name),
        pytest.raises(ConnectionError) as raised,
    ):
        run(agent, "async")

    assert raised.value is LEAKY
    assert [r for r in caplog.records if r.name == LOGGER.name] == []


def _lookup_tool() -> BaseTool:
    """A tool whose two arguments are both `int`s."""

    def lookup(record_id: int, page: int) -> str:
        return f"record {record_id}, page {page}"

    return StructuredTool.from_function(lookup, description="Look a record up.")


NOT_AN_INT = "Input should be a valid integer, unable to parse string as an integer"


def test_report_invalid_fields_names_each_wrong_argument_and_what_it_expects(path: Path) -> None:
    agent = build_agent(
        [_lookup_tool()],
        [ToolErrorMiddleware.from_routes([Route(InvalidArguments, report_invalid_fields)])],
        [call("lookup", "c1", record_id="A-17", page="two")],
    )

    message = tool_messages(run(agent, path))["c1"]

    assert message.content == (
        f"The arguments of `lookup` do not fit its schema: `record_id`: {NOT_AN_INT}; "
        f"`page`: {NOT_AN_INT}. Fix them and call it again."
    )
    assert message.status == "error"


def test_report_known_tools_names_the_missing_tool_and_every_tool_of_the_agent(
    path: Path,
) -> None:
    agent = build_agent(
        [echo_tool("lookup"), echo_tool("search")],
        [ToolErrorMiddleware.from_routes([Route(UnknownTool, report_known_tools)])],
        [call("lookkup", "c1", query="x")],
    )

    message = tool_messages(run(agent, path))["c1"]

    assert message.content == (
        "There is no tool `lookkup`. The tools you can call are `lookup`, `search`."
    )
    assert message.status == "error"
