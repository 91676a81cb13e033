"""`ChatAnthropic` over loopback HTTP: what the Messages API is sent for a failed call.

The integration (langchain-anthropic, through the anthropic SDK) turns a `ToolMessage` into
a `tool_result` block of a `user` turn, `messages[i].content[j] = {"type": "tool_result",
"tool_use_id": ..., "content": ..., "is_error": <status == "error">}`: it keeps the error
flag, so the middleware sends the content as the handler wrote it, with no prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from langchain_tool_errors import ToolErrorContent, ToolErrorMiddleware
from tests import _providers
from tests._agents import tool_messages
from tests._loopback import Recorded
from tests._providers import Mode, Prefix, PrefixOption, ProviderServer
from tests._wire_anthropic import ENDPOINT, script, tool_result, tool_results

pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")

pytestmark = pytest.mark.providers


run = _providers.OnLoopback(script, _providers.chat_anthropic).run
"""A real agent on the class (see `OnLoopback.run`): its result, and the requests sent."""

test_the_agent_state_keeps_the_message_as_the_handler_wrote_it = _providers.kept_as_written(run)


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
def test_the_failed_call_is_sent_flagged_with_the_handlers_text(
    provider_server: ProviderServer, mode: Mode, streamed: bool
) -> None:
    _, requests = run(provider_server, ToolErrorMiddleware(_providers.explain), mode)

    assert [(recorded.method, recorded.path) for recorded in requests] == [("POST", ENDPOINT)] * 2
    assert [recorded.asks_to_stream() for recorded in requests] == [streamed, streamed]
    assert sent_turn(requests) == {
        "role": "user",
        "content": [tool_result(_providers.HANDLER_TEXT)],
    }


@pytest.mark.parametrize("mode", _providers.MODES)
def test_an_error_tool_node_writes_is_sent_flagged_and_unmarked(
    provider_server: ProviderServer, mode: Mode
) -> None:
    result, requests = run(
        provider_server, ToolErrorMiddleware(_providers.explain), mode, {"record_id": "abc"}
    )

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
        pytest.param(_providers.HANDLER_TEXT, _providers.HANDLER_TEXT, id="str"),
        pytest.param(
            [{"type": "text", "text": "T"}], [{"type": "text", "text": "T"}], id="text block"
        ),
    ],
)
def test_no_prefix_option_marks_a_flagged_result(
    provider_server: ProviderServer, prefix: PrefixOption, content: ToolErrorContent, sent: object
) -> None:
    _, requests = run(
        provider_server, _providers.with_prefix(_providers.answering(content), prefix), "sync"
    )

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
                {"type": "image", "base64": _providers.PNG, "mime_type": "image/png"},
            ],
            [
                {"type": "text", "text": "T"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": _providers.PNG},
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
            [{"type": "file", "base64": _providers.PDF_B64, "mime_type": "application/pdf"}],
            [
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": _providers.PDF_B64,
                    },
                }
            ],
            id="base64 pdf",
        ),
    ],
)
def test_content_blocks_are_sent_as_anthropic_blocks_in_the_tool_result(
    provider_server: ProviderServer, content: ToolErrorContent, sent: object
) -> None:
    """Measured: each block becomes the Messages API's own block inside `tool_result.content`."""
    _, requests = run(
        provider_server, _providers.with_prefix(_providers.answering(content), None), "sync"
    )

    assert sent_turn(requests)["content"] == [tool_result(sent)]
