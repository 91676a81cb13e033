"""`ChatOpenAI` over loopback HTTP: what an error `ToolMessage` becomes in its requests.

Both of its APIs, Chat Completions (the default) and Responses (`use_responses_api=True`),
run against `tests/_wire_openai.py` on 127.0.0.1, on every execution path. Neither API has
an error field for a tool result (`{"role": "tool", "tool_call_id", "content"}`,
`{"type": "function_call_output", "call_id", "output"}`), so `status="error"` is lost on the
wire and the middleware marks the content the model reads with `"Error: "`, once.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import BaseMessage, ContentBlock, ToolMessage

from langchain_tool_errors import ToolErrorMiddleware
from tests import _providers
from tests._agents import tool_messages
from tests._loopback import FINAL_ANSWER, Recorded
from tests._providers import Mode, Prefix, ProviderServer
from tests._wire_openai import APIS, CALL_ID, ENDPOINTS, Api, script, tool_result, tool_results

pytest.importorskip("langchain_openai", reason="the provider tests need `pip install -e '.[dev]'`")

from langchain_openai.chat_models.base import BaseChatOpenAI

pytestmark = pytest.mark.providers

PLACES: dict[Api, str] = {"chat_completions": "messages", "responses": "input"}
"""The body's list that carries the conversation, tool results included."""


@dataclass(frozen=True)
class Run:
    """What one agent run left: the agent's messages and the requests the server recorded."""

    messages: list[BaseMessage]
    requests: list[Recorded]

    def tool_message(self) -> ToolMessage:
        [message] = tool_messages({"messages": self.messages}).values()
        return message

    def sent_result(self, api: Api) -> dict[str, Any]:
        """The tool result of the second (and last) model request, at its API's place:
        `messages[2]` (Chat Completions) or `input[2]` (Responses), after the question and
        the model's call; the first request has the question only."""
        first, second = (recorded.json() for recorded in self.requests)
        conversation: list[dict[str, Any]] = second[PLACES[api]]
        assert (len(first[PLACES[api]]), len(conversation)) == (1, 3)
        assert tool_results(api, second) == [conversation[2]]
        return conversation[2]


def run(
    server: ProviderServer,
    api: Api,
    middleware: AgentMiddleware[Any, Any, Any],
    mode: Mode = "sync",
    args: Mapping[str, object] = _providers.SEVEN,
) -> Run:
    """Run a real agent on `ChatOpenAI` until its final answer, the model calling `lookup`
    with `args` first; streamed with "messages", so the model streams too."""
    result, requests = server.run(
        script(args), lambda url: _providers.chat_openai(url, api), middleware, mode
    )
    return Run(result["messages"], requests)


@pytest.mark.parametrize("mode", _providers.MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_model_reads_the_handlers_error_marked_once(
    provider_server: ProviderServer, api: Api, mode: Mode
) -> None:
    result = run(provider_server, api, ToolErrorMiddleware(_providers.explain), mode)

    assert [r.path for r in result.requests] == [ENDPOINTS[api]] * 2
    assert [r.json()["stream"] for r in result.requests] == [_providers.streamed(mode)] * 2
    assert result.sent_result(api) == tool_result(api, "Error: " + _providers.HANDLER_TEXT)
    assert result.messages[-1].text == FINAL_ANSWER


@pytest.mark.parametrize("mode", _providers.MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_agents_state_keeps_the_message_as_the_handler_wrote_it(
    provider_server: ProviderServer, api: Api, mode: Mode
) -> None:
    message = run(
        provider_server, api, ToolErrorMiddleware(_providers.explain), mode
    ).tool_message()

    assert (message.content, message.status, message.tool_call_id) == (
        _providers.HANDLER_TEXT,
        "error",
        CALL_ID,
    )


@pytest.mark.parametrize("api", APIS)
def test_an_error_toolnode_writes_for_invalid_arguments_is_marked_too(
    provider_server: ProviderServer, api: Api
) -> None:
    result = run(
        provider_server, api, ToolErrorMiddleware(_providers.explain), args={"record_id": "abc"}
    )

    written = result.tool_message()
    assert written.status == "error"
    assert written.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert result.sent_result(api) == tool_result(api, "Error: " + written.text)


@pytest.mark.parametrize(
    ("handler_text", "error_prefix", "sent"),
    [
        (_providers.HANDLER_TEXT, None, _providers.HANDLER_TEXT),
        (_providers.HANDLER_TEXT, "Tool error: ", "Tool error: " + _providers.HANDLER_TEXT),
        ("Error: " + _providers.HANDLER_TEXT, "Error: ", "Error: " + _providers.HANDLER_TEXT),
    ],
    ids=["prefix-off", "own-prefix", "already-prefixed"],
)
@pytest.mark.parametrize("api", APIS)
def test_the_prefix_option_decides_the_mark(
    provider_server: ProviderServer,
    api: Api,
    handler_text: str,
    error_prefix: str | None,
    sent: str,
) -> None:
    middleware = ToolErrorMiddleware(_providers.answering(handler_text), error_prefix=error_prefix)
    result = run(provider_server, api, middleware)

    assert result.sent_result(api) == tool_result(api, sent)
    assert result.tool_message().content == handler_text


# Content blocks: what the integration itself makes of a handler's blocks, measured through
# langchain's own `ToolErrorMiddleware` (which checks nothing); then what ours refuses to send.

BLOCKS: dict[str, list[ContentBlock]] = {
    "text": [_providers.TEXT],
    "text+image": [_providers.TEXT, _providers.IMAGE],
    "image-url": [_providers.IMAGE_URL],
    "file": [_providers.FILE],
}
PNG_URL = f"data:image/png;base64,{_providers.PNG}"
PDF_URL = f"data:application/pdf;base64,{_providers.PDF_B64}"
NO_FILENAME = "OpenAI may require a filename for file uploads."
"""The start of the warning `ChatOpenAI` gives for a file block without a filename."""


SENT_FOR_BLOCKS: list[tuple[Api, str, list[dict[str, object]], list[str]]] = [
    ("chat_completions", "text", [{"type": "text", "text": "T"}], []),
    (
        "chat_completions",
        "text+image",
        [{"type": "text", "text": "T"}, {"type": "image_url", "image_url": {"url": PNG_URL}}],
        [],
    ),
    (
        "chat_completions",
        "image-url",
        [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
        [],
    ),
    (
        "chat_completions",
        "file",
        [{"type": "file", "file": {"file_data": PDF_URL, "filename": "LC_AUTOGENERATED"}}],
        [NO_FILENAME],
    ),
    ("responses", "text", [{"type": "input_text", "text": "T"}], []),
    (
        "responses",
        "text+image",
        [{"type": "input_text", "text": "T"}, {"type": "input_image", "image_url": PNG_URL}],
        [],
    ),
    (
        "responses",
        "image-url",
        [{"type": "input_image", "image_url": "https://example.com/a.png"}],
        [],
    ),
    (
        "responses",
        "file",
        [{"type": "input_file", "file_data": PDF_URL, "filename": "LC_AUTOGENERATED"}],
        [NO_FILENAME],
    ),
]
"""Measured: (API, case of `BLOCKS`, what the tool result carries, warnings given).

Which of these the real APIs accept, by the `openai` SDK's request types: a Chat Completions
tool message's `content` is a string or text parts only (`ChatCompletionToolMessageParam`),
so only "text" is valid there; a Responses `function_call_output`'s `output` is a string or
`input_text` / `input_image` / `input_file` parts, so all four are valid there.
"""


@pytest.mark.parametrize(
    ("api", "case", "sent", "warned"),
    SENT_FOR_BLOCKS,
    ids=[f"{api}-{case}" for api, case, *_ in SENT_FOR_BLOCKS],
)
def test_what_chatopenai_sends_for_a_handlers_content_blocks(
    provider_server: ProviderServer,
    api: Api,
    case: str,
    sent: list[dict[str, object]],
    warned: list[str],
) -> None:
    """Measured: every block reaches the wire, converted to the API's own part types (Chat
    Completions accepts only text parts in a tool message; the Responses API accepts text,
    image and file parts in a `function_call_output`).

    The handler runs in langchain's own `ToolErrorMiddleware`, which marks nothing and
    checks nothing, so what shows is the integration's own behaviour: ours refuses to send
    the blocks Chat Completions does not take (see the test after this one).
    """
    blocks = BLOCKS[case]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(
            provider_server, api, LangchainToolErrorMiddleware(_providers.answering(blocks))
        )

    assert result.sent_result(api) == tool_result(api, sent)
    assert [str(w.message)[: len(NO_FILENAME)] for w in caught] == warned
    assert result.tool_message().content == blocks


OPENAI_CLASS = f"{BaseChatOpenAI.__module__}.{BaseChatOpenAI.__qualname__}"
"""The class our middleware names for `ChatOpenAI`: the base class of both its APIs."""


@pytest.mark.parametrize(
    ("case", "kind", "prefix_off"),
    [
        pytest.param("text+image", "image/base64", False, id="text+image"),
        pytest.param("image-url", "image/url", False, id="image-url"),
        pytest.param("file", "file/base64", False, id="file"),
        pytest.param("image-url", "image/url", True, id="image-url, error_prefix=None"),
    ],
)
def test_chat_completions_is_not_sent_blocks_its_tool_messages_refuse(
    provider_server: ProviderServer, case: str, kind: str, prefix_off: bool
) -> None:
    """A Chat Completions tool message takes text parts only, so the run raises `TypeError`
    naming the call, the block and the class, and pointing to the Responses API, with the
    prefix on or off. The middleware has called this model already, so it refuses the
    handler's blocks at the failure itself, chained to the tool's exception. The server saw
    the first request only: the one with the tool result was never sent."""
    middleware = _providers.with_prefix(
        _providers.answering(BLOCKS[case]), None if prefix_off else Prefix.DEFAULT
    )
    error, requests = provider_server.refused(
        script(_providers.SEVEN), _providers.chat_openai, middleware, TypeError
    )

    named = ("`lookup`", f"{kind} block", OPENAI_CLASS, "ChatOpenAI(use_responses_api=True)")
    assert [part for part in named if part not in str(error)] == []
    assert isinstance(error.__cause__, KeyError)
    assert [r.path for r in requests] == [ENDPOINTS["chat_completions"]]
    assert tool_results("chat_completions", requests[0].json()) == []


RESPONSES_SENT = [
    (case, sent, warned) for api, case, sent, warned in SENT_FOR_BLOCKS if api == "responses"
]


@pytest.mark.parametrize(
    ("case", "sent", "warned"), RESPONSES_SENT, ids=[case for case, *_ in RESPONSES_SENT]
)
def test_the_responses_api_is_sent_the_blocks_through_our_middleware(
    provider_server: ProviderServer, case: str, sent: list[dict[str, object]], warned: list[str]
) -> None:
    """A Responses `function_call_output` takes images and files, so our middleware sends
    them: no `TypeError`, and with the prefix off the wire carries what the integration
    sends through langchain's own class, `input_image` and `input_file` parts included."""
    middleware = ToolErrorMiddleware(_providers.answering(BLOCKS[case]), error_prefix=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(provider_server, "responses", middleware)

    assert result.sent_result("responses") == tool_result("responses", sent)
    assert [str(w.message)[: len(NO_FILENAME)] for w in caught] == warned


MARKED_BLOCKS: list[tuple[Api, str, list[dict[str, object]]]] = [
    (
        "responses",
        "text+image",
        [
            {"type": "input_text", "text": "Error: T"},
            {"type": "input_image", "image_url": PNG_URL},
        ],
    ),
    (
        "responses",
        "image-url",
        [
            {"type": "input_text", "text": "Error: "},
            {"type": "input_image", "image_url": "https://example.com/a.png"},
        ],
    ),
]


@pytest.mark.parametrize(
    ("api", "case", "sent"),
    MARKED_BLOCKS,
    ids=[f"{api}-{case}" for api, case, _ in MARKED_BLOCKS],
)
def test_content_blocks_are_marked_in_their_first_text_block(
    provider_server: ProviderServer, api: Api, case: str, sent: list[dict[str, object]]
) -> None:
    """The first text block gets the prefix; blocks that start with another kind get a
    text block `"Error: "` before them. (Chat Completions refuses these blocks: see above.)"""
    result = run(provider_server, api, ToolErrorMiddleware(_providers.answering(BLOCKS[case])))

    assert result.sent_result(api) == tool_result(api, sent)
