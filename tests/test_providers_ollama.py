"""`ChatOllama` over loopback HTTP: what Ollama's chat API is sent for a failed call.

The integration (langchain-ollama, through the ollama client) sends a `ToolMessage` as
`messages[i] = {"role": "tool", "content": <text>}`: it drops `status` (the API has no
error field), and the client's `Message` model drops the `tool_call_id` too. So the
middleware marks the error messages it sends to this class with the prefix. `ChatOllama`
always streams: every mode posts `"stream": true` to `/api/chat` and reads NDJSON.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import ContentBlock

from langchain_tool_errors import ToolErrorContent, ToolErrorMiddleware
from tests import _providers
from tests._agents import tool_messages
from tests._loopback import Recorded
from tests._providers import Mode, Prefix, PrefixOption, ProviderServer
from tests._wire_ollama import ENDPOINT, MODEL, script, tool_result, tool_results

pytest.importorskip("langchain_ollama", reason="needs langchain-ollama")

from langchain_ollama import ChatOllama

pytestmark = pytest.mark.providers


def ollama(url: str) -> ChatOllama:
    """The real chat model class on the loopback, with a short timeout.

    No key (a local Ollama has none) and no retries (neither the client nor the
    integration retries).
    """
    return ChatOllama(model=MODEL, base_url=url, client_kwargs={"timeout": 5})


run = _providers.OnLoopback(script, ollama).run
"""A real agent on the class (see `OnLoopback.run`): its result, and the requests sent."""

test_the_agent_state_keeps_the_message_as_the_handler_wrote_it = _providers.kept_as_written(run)


def sent_result(requests: Sequence[Recorded]) -> Any:
    """The message that answers the model's call, in its second request (the last message)."""
    first, second = requests
    assert tool_results(first.json()) == []
    messages: list[Any] = second.json()["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "tool"]
    return messages[2]


@pytest.mark.parametrize("mode", _providers.MODES)
def test_the_failed_call_is_sent_with_the_prefix_once(
    provider_server: ProviderServer, mode: Mode
) -> None:
    _, requests = run(provider_server, ToolErrorMiddleware(_providers.explain), mode)

    # Every mode streams, `invoke` included: ChatOllama always asks for the stream.
    assert [(recorded.method, recorded.path) for recorded in requests] == [("POST", ENDPOINT)] * 2
    assert [recorded.asks_to_stream() for recorded in requests] == [True, True]
    assert sent_result(requests) == tool_result("Error: " + _providers.HANDLER_TEXT)


@pytest.mark.parametrize("mode", _providers.MODES)
def test_an_error_tool_node_writes_is_sent_with_the_prefix(
    provider_server: ProviderServer, mode: Mode
) -> None:
    result, requests = run(
        provider_server, ToolErrorMiddleware(_providers.explain), mode, {"record_id": "abc"}
    )

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert sent_result(requests) == tool_result("Error: " + message.text)


@pytest.mark.parametrize(
    ("prefix", "content", "sent"),
    [
        pytest.param(
            Prefix.DEFAULT,
            _providers.HANDLER_TEXT,
            "Error: " + _providers.HANDLER_TEXT,
            id="default prefix",
        ),
        pytest.param(
            None, _providers.HANDLER_TEXT, _providers.HANDLER_TEXT, id="error_prefix=None"
        ),
        pytest.param(
            "Tool error: ",
            _providers.HANDLER_TEXT,
            "Tool error: " + _providers.HANDLER_TEXT,
            id="error_prefix='Tool error: '",
        ),
        pytest.param(
            Prefix.DEFAULT, "Error: no such record", "Error: no such record", id="already marked"
        ),
    ],
)
def test_the_prefix_option_chooses_the_mark(
    provider_server: ProviderServer, prefix: PrefixOption, content: str, sent: str
) -> None:
    _, requests = run(
        provider_server, _providers.with_prefix(_providers.answering(content), prefix), "sync"
    )

    assert sent_result(requests) == tool_result(sent)


@pytest.mark.parametrize(
    ("content", "sent"),
    [
        pytest.param([{"type": "text", "text": "T"}], tool_result("\nError: T"), id="text first"),
        pytest.param(
            [
                {"type": "image", "base64": _providers.PNG, "mime_type": "image/png"},
                {"type": "text", "text": "T"},
            ],
            tool_result("\nError: \nT", images=[_providers.PNG]),
            id="image first",
        ),
    ],
)
def test_block_content_is_marked_in_a_first_text_block(
    provider_server: ProviderServer, content: ToolErrorContent, sent: dict[str, object]
) -> None:
    """The integration joins text blocks with a newline before each, so the mark follows one."""
    _, requests = run(
        provider_server,
        _providers.with_prefix(_providers.answering(content), Prefix.DEFAULT),
        "sync",
    )

    assert sent_result(requests) == sent


@pytest.mark.parametrize(
    ("content", "outcome"),
    [
        pytest.param([{"type": "text", "text": "T"}], tool_result("\nT"), id="text"),
        pytest.param(
            [
                {"type": "text", "text": "T"},
                {"type": "image", "base64": _providers.PNG, "mime_type": "image/png"},
            ],
            tool_result("\nT", images=[_providers.PNG]),
            id="text and base64 png",
        ),
        pytest.param(
            [{"type": "image", "url": "https://example.com/a.png"}],
            ValueError("Image data only supported through in-line base64 format."),
            id="image url",
        ),
        pytest.param(
            [{"type": "file", "base64": _providers.PDF_B64, "mime_type": "application/pdf"}],
            ValueError("Blocks of type file not supported."),
            id="base64 pdf",
        ),
    ],
)
def test_content_blocks_are_flattened_or_refused_before_sending(
    provider_server: ProviderServer,
    content: list[ContentBlock],
    outcome: dict[str, object] | ValueError,
) -> None:
    """Measured: text joins `content`, a base64 image goes to `images`, the rest raises.

    The handler runs in langchain's own `ToolErrorMiddleware`, which marks and checks
    nothing, so what shows is the integration's own behaviour; ours raises its own
    `TypeError` for the blocks refused here (`test_blocks_ollama_refuses_are_not_sent`).
    """
    middleware = LangchainToolErrorMiddleware(_providers.answering(content))
    if isinstance(outcome, dict):
        _, requests = run(provider_server, middleware, "sync")
        assert sent_result(requests) == outcome
        return
    match = f"^{re.escape(str(outcome))}"
    _, requests = provider_server.refused(
        script(_providers.SEVEN), ollama, middleware, ValueError, match
    )
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
            [{"type": "file", "base64": _providers.PDF_B64, "mime_type": "application/pdf"}],
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
    provider_server: ProviderServer, content: ToolErrorContent, kind: str, prefix: PrefixOption
) -> None:
    """Our middleware checks an error message before each model call: the integration takes
    no image by URL and no file, so the run raises `TypeError` naming the call, the block
    and the class (not the client's `ValueError`), with the prefix on or off, and the
    request with the tool result is never sent."""
    middleware = _providers.with_prefix(_providers.answering(content), prefix)
    error, requests = provider_server.refused(
        script(_providers.SEVEN), ollama, middleware, TypeError
    )

    named = ("`lookup`", f"{kind} block", OLLAMA_CLASS)
    assert [part for part in named if part not in str(error)] == []
    [first] = requests  # the model's call; nothing after it
    assert tool_results(first.json()) == []
