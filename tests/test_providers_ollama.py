"""`ChatOllama` over loopback HTTP: what Ollama's chat API is sent for a failed call.

The integration (langchain-ollama, through the ollama client) sends a `ToolMessage` as
`messages[i] = {"role": "tool", "content": <text>}`: it drops `status` (the API has no
error field), and the client's `Message` model drops the `tool_call_id` too. So the
middleware marks the error messages it sends to this class with the prefix. `ChatOllama`
always streams: every mode posts `"stream": true` to `/api/chat` and reads NDJSON.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, Literal, Protocol

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import ContentBlock
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import StreamMode

from langchain_tool_errors import OnError, ToolErrorContent, ToolErrorMiddleware
from tests._agents import Agent, question, tool_messages
from tests._loopback import Loopback, Recorded
from tests._wire_ollama import ENDPOINT, MODEL, script, streams, tool_result, tool_results

pytest.importorskip("langchain_ollama", reason="needs langchain-ollama")

from langchain_ollama import ChatOllama

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

PDF = "JVBERi0xLjAKMSAwIG9iajw8L1R5cGUvQ2F0YWxvZy9QYWdlcyAyIDAgUj4+ZW5kb2JqCiUlRU9G"
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


def ollama(url: str) -> ChatOllama:
    """The real chat model class on the loopback, with a short timeout.

    No key (a local Ollama has none) and no retries (neither the client nor the
    integration retries).
    """
    return ChatOllama(model=MODEL, base_url=url, client_kwargs={"timeout": 5})


def agent_of(model: ChatOllama, tool_middleware: AgentMiddleware[Any, Any, Any]) -> StreamingAgent:
    """A real `create_agent` agent with the one tool, `lookup`, and the middleware."""
    agent: StreamingAgent = create_agent(model, tools=[lookup_tool()], middleware=[tool_middleware])
    return agent


def run(
    tool_middleware: AgentMiddleware[Any, Any, Any],
    mode: Mode,
    *,
    args: Mapping[str, object] | None = None,
) -> tuple[dict[str, Any], list[Recorded]]:
    """A real agent on the loopback: the model calls `lookup` with `args`, then answers.

    The streaming modes stream the model's tokens (`stream_mode="messages"`) and the state,
    whose last value is the result. Returns the agent's result and the requests to the
    model, in order.
    """
    with Loopback(script(args if args is not None else {"record_id": 7})) as loopback:
        agent = agent_of(ollama(loopback.url), tool_middleware)
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


def sent_result(requests: Sequence[Recorded]) -> Any:
    """The message that answers the model's call, in its second request (the last message)."""
    first, second = requests
    assert tool_results(first.json()) == []
    messages: list[Any] = second.json()["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "tool"]
    return messages[2]


@pytest.mark.parametrize("mode", MODES)
def test_the_failed_call_is_sent_with_the_prefix_once(mode: Mode) -> None:
    _, requests = run(ToolErrorMiddleware(explain), mode)

    # Every mode streams, `invoke` included: ChatOllama always asks for the stream.
    assert [(recorded.method, recorded.path) for recorded in requests] == [("POST", ENDPOINT)] * 2
    assert [streams(recorded) for recorded in requests] == [True, True]
    assert sent_result(requests) == tool_result("Error: " + HANDLER_TEXT)


@pytest.mark.parametrize("mode", MODES)
def test_the_agent_state_keeps_the_message_as_the_handler_wrote_it(mode: Mode) -> None:
    result, _ = run(ToolErrorMiddleware(explain), mode)

    [message] = tool_messages(result).values()
    assert (message.content, message.status) == (HANDLER_TEXT, "error")


@pytest.mark.parametrize("mode", MODES)
def test_an_error_tool_node_writes_is_sent_with_the_prefix(mode: Mode) -> None:
    result, requests = run(ToolErrorMiddleware(explain), mode, args={"record_id": "abc"})

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert sent_result(requests) == tool_result("Error: " + message.text)


@pytest.mark.parametrize(
    ("prefix", "content", "sent"),
    [
        pytest.param(Prefix.DEFAULT, HANDLER_TEXT, "Error: " + HANDLER_TEXT, id="default prefix"),
        pytest.param(None, HANDLER_TEXT, HANDLER_TEXT, id="error_prefix=None"),
        pytest.param(
            "Tool error: ",
            HANDLER_TEXT,
            "Tool error: " + HANDLER_TEXT,
            id="error_prefix='Tool error: '",
        ),
        pytest.param(
            Prefix.DEFAULT, "Error: no such record", "Error: no such record", id="already marked"
        ),
    ],
)
def test_the_prefix_option_chooses_the_mark(prefix: PrefixOption, content: str, sent: str) -> None:
    _, requests = run(middleware(answering(content), prefix), "sync")

    assert sent_result(requests) == tool_result(sent)


@pytest.mark.parametrize(
    ("content", "sent"),
    [
        pytest.param([{"type": "text", "text": "T"}], tool_result("\nError: T"), id="text first"),
        pytest.param(
            [
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
                {"type": "text", "text": "T"},
            ],
            tool_result("\nError: \nT", images=[PNG]),
            id="image first",
        ),
    ],
)
def test_block_content_is_marked_in_a_first_text_block(
    content: ToolErrorContent, sent: dict[str, object]
) -> None:
    """The integration joins text blocks with a newline before each, so the mark follows one."""
    _, requests = run(middleware(answering(content), Prefix.DEFAULT), "sync")

    assert sent_result(requests) == sent


@pytest.mark.parametrize(
    ("content", "outcome"),
    [
        pytest.param([{"type": "text", "text": "T"}], tool_result("\nT"), id="text"),
        pytest.param(
            [
                {"type": "text", "text": "T"},
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
            ],
            tool_result("\nT", images=[PNG]),
            id="text and base64 png",
        ),
        pytest.param(
            [{"type": "image", "url": "https://example.com/a.png"}],
            ValueError("Image data only supported through in-line base64 format."),
            id="image url",
        ),
        pytest.param(
            [{"type": "file", "base64": PDF, "mime_type": "application/pdf"}],
            ValueError("Blocks of type file not supported."),
            id="base64 pdf",
        ),
    ],
)
def test_content_blocks_are_flattened_or_refused_before_sending(
    content: list[ContentBlock], outcome: dict[str, object] | ValueError
) -> None:
    """Measured: text joins `content`, a base64 image goes to `images`, the rest raises.

    The handler runs in langchain's own `ToolErrorMiddleware`, which marks and checks
    nothing, so what shows is the integration's own behaviour; ours raises its own
    `TypeError` for the blocks refused here (`test_blocks_ollama_refuses_are_not_sent`).
    """

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return content

    tool_middleware = LangchainToolErrorMiddleware(handler)
    if isinstance(outcome, dict):
        _, requests = run(tool_middleware, "sync")
        assert sent_result(requests) == outcome
        return
    with Loopback(script({"record_id": 7})) as loopback:
        agent = agent_of(ollama(loopback.url), tool_middleware)
        with pytest.raises(ValueError, match=f"^{re.escape(str(outcome))}"):
            agent.invoke(question(), LIMIT)
        requests = list(loopback.requests)
    assert len(requests) == 1  # the model's call went out; the tool result never did


OLLAMA_CLASS = f"{ChatOllama.__module__}.{ChatOllama.__qualname__}"
"""The class our middleware names in its `TypeError`."""


@pytest.mark.parametrize(
    ("content", "kind", "prefix"),
    [
        pytest.param(
            [{"type": "image", "url": "https://example.com/a.png"}],
            "image/url",
            Prefix.DEFAULT,
            id="image url",
        ),
        pytest.param(
            [{"type": "file", "base64": PDF, "mime_type": "application/pdf"}],
            "file/base64",
            Prefix.DEFAULT,
            id="base64 pdf",
        ),
        pytest.param(
            [{"type": "image", "url": "https://example.com/a.png"}],
            "image/url",
            None,
            id="image url, error_prefix=None",
        ),
    ],
)
def test_blocks_ollama_refuses_are_not_sent(
    content: ToolErrorContent, kind: str, prefix: PrefixOption
) -> None:
    """Our middleware checks an error message before each model call: the integration takes
    no image by URL and no file, so the run raises `TypeError` naming the call, the block
    and the class (not the client's `ValueError`), with the prefix on or off, and the
    request with the tool result is never sent."""
    with Loopback(script({"record_id": 7})) as loopback:
        agent = agent_of(ollama(loopback.url), middleware(answering(content), prefix))
        with pytest.raises(TypeError) as raised:
            agent.invoke(question(), LIMIT)
        requests = list(loopback.requests)

    named = ("`lookup`", f"{kind} block", OLLAMA_CLASS)
    assert [part for part in named if part not in str(raised.value)] == []
    [first] = requests  # the model's call; nothing after it
    assert tool_results(first.json()) == []
