"""`ChatAnthropic` over loopback HTTP: what the Messages API is sent for a failed call.

The integration (langchain-anthropic, through the anthropic SDK) turns a `ToolMessage` into
a `tool_result` block of a `user` turn, `messages[i].content[j] = {"type": "tool_result",
"tool_use_id": ..., "content": ..., "is_error": <status == "error">}`: it keeps the error
flag, so the middleware sends the content as the handler wrote it, with no prefix.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, Literal, Protocol

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import StreamMode

from langchain_tool_errors import OnError, ToolErrorContent, ToolErrorMiddleware
from tests._agents import Agent, question, tool_messages
from tests._loopback import Loopback, Recorded
from tests._wire_anthropic import ENDPOINT, MODEL, script, streams, tool_result, tool_results

pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")

from langchain_anthropic import ChatAnthropic

pytestmark = pytest.mark.providers

HANDLER_TEXT = "lookup failed with KeyError; try another id."

Mode = Literal["sync", "async", "sync streaming", "async streaming"]
MODES: tuple[Mode, ...] = ("sync", "async", "sync streaming", "async streaming")

LIMIT: RunnableConfig = {"recursion_limit": 8}
"""A run takes 3 steps (model, tools, model); a script that never answers fails at once
instead of running to `create_agent`'s own limit of 9,999."""

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG, base64."""

PDF = base64.b64encode(
    b"%PDF-1.0\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"
).decode()
"""A tiny PDF, base64."""


class Prefix(Enum):
    """The `error_prefix` option left out, so the middleware's default applies."""

    DEFAULT = "default"


PrefixOption = str | None | Literal[Prefix.DEFAULT]


class StreamingAgent(Agent, Protocol):
    """A compiled agent as these tests drive it, streaming included."""

    def stream(
        self,
        input: InputAgentState,
        config: RunnableConfig | None = None,
        *,
        stream_mode: Sequence[StreamMode],
    ) -> Iterator[Any]:
        """Run the agent on the sync path, yielding `(mode, part)` pairs."""
        ...

    def astream(
        self,
        input: InputAgentState,
        config: RunnableConfig | None = None,
        *,
        stream_mode: Sequence[StreamMode],
    ) -> AsyncIterator[Any]:
        """Run the agent on the async path, yielding `(mode, part)` pairs."""
        ...


def lookup(record_id: int) -> str:
    """Look a record up by its id."""
    raise KeyError(record_id)


def lookup_tool() -> BaseTool:
    return StructuredTool.from_function(lookup, name="lookup")


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return HANDLER_TEXT


def answering(content: ToolErrorContent) -> OnError[ToolErrorContent]:
    """A handler that answers every failure with `content`."""

    def handler(exc: Exception, request: ToolCallRequest) -> ToolErrorContent:
        return content

    return handler


def middleware(
    handler: OnError[ToolErrorContent], prefix: PrefixOption
) -> ToolErrorMiddleware[ToolErrorContent, Exception, Any]:
    if prefix is Prefix.DEFAULT:
        return ToolErrorMiddleware(handler)
    return ToolErrorMiddleware(handler, error_prefix=prefix)


def claude(url: str) -> ChatAnthropic:
    """The real chat model class on the loopback: dummy key, no retries, a short timeout."""
    # Validated from the keywords users write: `model`, `base_url`, `api_key` and `timeout`
    # are pydantic aliases, which the checkers do not see in the generated `__init__`.
    return ChatAnthropic.model_validate(
        {
            "model": MODEL,
            "base_url": url,
            "api_key": "sk-ant-test",
            "max_retries": 0,
            "timeout": 5,
        }
    )


def agent_of(
    model: ChatAnthropic, tool_middleware: ToolErrorMiddleware[Any, Any, Any]
) -> StreamingAgent:
    """A real `create_agent` agent with the one tool, `lookup`, and the middleware."""
    agent: StreamingAgent = create_agent(model, tools=[lookup_tool()], middleware=[tool_middleware])
    return agent


def run(
    tool_middleware: ToolErrorMiddleware[Any, Any, Any],
    mode: Mode,
    *,
    args: Mapping[str, object] | None = None,
) -> tuple[dict[str, Any], list[Recorded]]:
    """A real agent on the loopback: the model calls `lookup` with `args`, then answers.

    The streaming modes stream the model's tokens (`stream_mode="messages"`, which makes the
    client ask for the streamed answer) and the state, whose last value is the result.
    Returns the agent's result and the requests to the model, in order.
    """
    with Loopback(script(args if args is not None else {"record_id": 7})) as loopback:
        agent = agent_of(claude(loopback.url), tool_middleware)
        if mode == "sync":
            result = agent.invoke(question(), LIMIT)
        elif mode == "async":
            result = asyncio.run(agent.ainvoke(question(), LIMIT))
        elif mode == "sync streaming":
            result = _last_value(
                list(agent.stream(question(), LIMIT, stream_mode=["messages", "values"]))
            )
        else:
            result = _last_value(asyncio.run(_collect(agent)))
        requests = list(loopback.requests)
    return result, requests


async def _collect(agent: StreamingAgent) -> list[Any]:
    return [
        part async for part in agent.astream(question(), LIMIT, stream_mode=["messages", "values"])
    ]


def _last_value(parts: Sequence[Any]) -> dict[str, Any]:
    values: list[dict[str, Any]] = [part for mode, part in parts if mode == "values"]
    assert any(mode == "messages" for mode, _ in parts)  # the model's tokens were streamed
    return values[-1]


def sent_turn(requests: Sequence[Recorded]) -> Any:
    """The turn that answers the model's call, in its second request (the last turn)."""
    first, second = requests
    assert tool_results(first.json()) == []
    messages: list[Any] = second.json()["messages"]
    assert len(messages) == 3  # the question, the model's call, and this answer
    return messages[2]


@pytest.mark.parametrize(
    ("mode", "streamed"),
    [("sync", False), ("async", False), ("sync streaming", True), ("async streaming", True)],
)
def test_the_failed_call_is_sent_flagged_with_the_handlers_text(mode: Mode, streamed: bool) -> None:
    _, requests = run(ToolErrorMiddleware(explain), mode)

    assert [(recorded.method, recorded.path) for recorded in requests] == [("POST", ENDPOINT)] * 2
    assert [streams(recorded) for recorded in requests] == [streamed, streamed]
    assert sent_turn(requests) == {"role": "user", "content": [tool_result(HANDLER_TEXT)]}


@pytest.mark.parametrize("mode", MODES)
def test_the_agent_state_keeps_the_message_as_the_handler_wrote_it(mode: Mode) -> None:
    result, _ = run(ToolErrorMiddleware(explain), mode)

    [message] = tool_messages(result).values()
    assert (message.content, message.status) == (HANDLER_TEXT, "error")


@pytest.mark.parametrize("mode", MODES)
def test_an_error_tool_node_writes_is_sent_flagged_and_unmarked(mode: Mode) -> None:
    result, requests = run(ToolErrorMiddleware(explain), mode, args={"record_id": "abc"})

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert sent_turn(requests)["content"] == [tool_result(message.text)]


@pytest.mark.parametrize(
    "prefix",
    [
        pytest.param(Prefix.DEFAULT, id="default prefix"),
        pytest.param(None, id="error_prefix=None"),
        pytest.param("Tool error: ", id="error_prefix='Tool error: '"),
    ],
)
@pytest.mark.parametrize(
    ("content", "sent"),
    [
        pytest.param(HANDLER_TEXT, HANDLER_TEXT, id="str"),
        pytest.param(
            [{"type": "text", "text": "T"}], [{"type": "text", "text": "T"}], id="text block"
        ),
    ],
)
def test_no_prefix_option_marks_a_flagged_result(
    prefix: PrefixOption, content: ToolErrorContent, sent: object
) -> None:
    _, requests = run(middleware(answering(content), prefix), "sync")

    assert sent_turn(requests)["content"] == [tool_result(sent)]


@pytest.mark.parametrize(
    ("content", "sent"),
    [
        pytest.param(
            [{"type": "text", "text": "T"}],
            [{"type": "text", "text": "T"}],
            id="text",
        ),
        pytest.param(
            [
                {"type": "text", "text": "T"},
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
            ],
            [
                {"type": "text", "text": "T"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
            ],
            id="text and base64 png",
        ),
        pytest.param(
            [{"type": "image", "url": "https://example.com/a.png"}],
            [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}],
            id="image url",
        ),
        pytest.param(
            [{"type": "file", "base64": PDF, "mime_type": "application/pdf"}],
            [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                }
            ],
            id="base64 pdf",
        ),
    ],
)
def test_content_blocks_are_sent_as_anthropic_blocks_in_the_tool_result(
    content: ToolErrorContent, sent: object
) -> None:
    """Measured: each block becomes the Messages API's own block inside `tool_result.content`."""
    _, requests = run(middleware(answering(content), None), "sync")

    assert sent_turn(requests)["content"] == [tool_result(sent)]
