"""`ChatGoogleGenerativeAI` over loopback HTTP: what the Gemini API is sent for a failed call.

The integration (langchain-google-genai, through the google-genai SDK) turns a `ToolMessage`
into a `functionResponse` part of a `user` turn, `{"name": ..., "response": {...}}`, and
drops `status`: a str content goes as `{"output": <text>}`, or as the object itself when
the text is a JSON object, which is how the API's own `error` key can be reached. So the
middleware sends this class an error message's text as `{"error": <text>}`, which the
integration passes on as the response itself: Gemini's own error key, with the handler's
text exactly. Content blocks go as `output`, so they get the prefix.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware

from langchain_tool_errors import ToolErrorMiddleware
from tests import _providers
from tests._agents import tool_messages
from tests._loopback import Recorded, Reply, Respond
from tests._providers import Mode, Mount, ProviderServer
from tests._wire_google import MODEL, script, sent_result, streams

pytest.importorskip("langchain_google_genai", reason="needs langchain-google-genai")

from langchain_google_genai import ChatGoogleGenerativeAI

pytestmark = pytest.mark.providers

PNG_BYTES = base64.b64decode(_providers.PNG)
IMAGE_PATH = "/a.png"
"""Where the mount serves `PNG` to a GET: the image a content block gives by URL."""


@pytest.fixture(scope="module")
def server(provider_server: ProviderServer) -> Mount:
    """One mount for the module, where the model calls `lookup` with record 7."""
    return provider_server.mount(_serving_png(script(_providers.SEVEN)))


def _serving_png(respond: Respond) -> Respond:
    def serve(recorded: Recorded) -> Reply:
        if (recorded.method, recorded.path) == ("GET", IMAGE_PATH):
            return Reply(PNG_BYTES, headers={"content-type": "image/png"})
        return respond(recorded)

    return serve


def gemini(url: str, *, streaming: bool) -> ChatGoogleGenerativeAI:
    """The real chat model class on the loopback: dummy key, one attempt, a short timeout."""
    return ChatGoogleGenerativeAI(
        model=MODEL,
        google_api_key="test",
        base_url=url,
        vertexai=False,  # whatever GOOGLE_GENAI_USE_VERTEXAI says: the Developer API
        max_retries=1,  # the SDK's attempts, the first included: no retry
        timeout=5,
        streaming=streaming,  # True: the client calls `streamGenerateContent?alt=sse`
    )


def run(
    server: Mount, middleware: AgentMiddleware[Any, Any, Any], mode: Mode
) -> tuple[dict[str, Any], list[Recorded]]:
    """A real agent at `server`; its result and the requests `server` got meanwhile."""
    agent = _providers.agent_on(gemini(server.url, streaming=_providers.streamed(mode)), middleware)
    return _providers.invoked(server, agent, mode)


test_the_agent_state_keeps_the_message_as_the_handler_wrote_it = _providers.kept_as_written(
    lambda server, middleware, mode: run(server.mount(script(_providers.SEVEN)), middleware, mode)
)


def error_part(error: str) -> dict[str, object]:
    """A `functionResponse` part for `lookup` whose response is `{"error": error}`."""
    return {"functionResponse": {"name": "lookup", "response": {"error": error}}}


def output_part(output: object) -> dict[str, object]:
    """A `functionResponse` part for `lookup` whose response is `{"output": output}`."""
    return {"functionResponse": {"name": "lookup", "response": {"output": output}}}


@pytest.mark.parametrize("mode", _providers.MODES)
def test_the_failed_call_is_sent_in_geminis_error_key_exactly(server: Mount, mode: Mode) -> None:
    _, requests = run(server, ToolErrorMiddleware(_providers.explain), mode)

    assert sent_result(requests) == [error_part(_providers.HANDLER_TEXT)]


@pytest.mark.parametrize(
    ("mode", "streamed"),
    [("sync", False), ("async", False), ("sync streaming", True), ("async streaming", True)],
)
def test_each_mode_uses_its_endpoint(server: Mount, mode: Mode, streamed: bool) -> None:
    _, requests = run(server, ToolErrorMiddleware(_providers.explain), mode)

    assert [streams(recorded) for recorded in requests] == [streamed, streamed]
    assert [recorded.headers["x-goog-api-key"] for recorded in requests] == ["test", "test"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_error_tool_node_writes_is_sent_in_the_error_key_too(
    provider_server: ProviderServer, mode: Mode
) -> None:
    invalid = provider_server.mount(script({"record_id": "abc"}))
    result, requests = run(invalid, ToolErrorMiddleware(_providers.explain), mode)

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert sent_result(requests) == [error_part(message.text)]


@pytest.mark.parametrize("mode", _providers.MODES)
def test_without_a_prefix_the_handlers_text_is_sent_as_written(server: Mount, mode: Mode) -> None:
    _, requests = run(server, ToolErrorMiddleware(_providers.explain, error_prefix=None), mode)

    assert sent_result(requests) == [output_part(_providers.HANDLER_TEXT)]


def test_another_prefix_leaves_a_text_in_the_error_key_unprefixed(server: Mount) -> None:
    _, requests = run(
        server, ToolErrorMiddleware(_providers.explain, error_prefix="Tool error: "), "sync"
    )

    assert sent_result(requests) == [error_part(_providers.HANDLER_TEXT)]


def _inline(data: bytes, mime_type: str) -> dict[str, object]:
    """An `inlineData` part as the SDK writes it: URL-safe base64, `mime_type` in snake case."""
    encoded = base64.urlsafe_b64encode(data).decode()
    return {"inlineData": {"data": encoded, "mime_type": mime_type}}


Block = dict[str, object]
TEXT: Block = {"type": "text", "text": "T"}
PNG_BLOCK: Block = {"type": "image", "base64": _providers.PNG, "mime_type": "image/png"}
URL_BLOCK: Block = {"type": "image", "url": IMAGE_PATH}
"""Its `url` is a path: the test puts the loopback's address in front of it."""
PDF_BLOCK: Block = {"type": "file", "base64": _providers.PDF_B64, "mime_type": "application/pdf"}

BLOCK_CASES: list[tuple[str, list[Block], list[object]]] = [
    ("text", [TEXT], [output_part([TEXT])]),
    (
        "text and base64 image",
        [TEXT, PNG_BLOCK],
        [_inline(PNG_BYTES, "image/png"), output_part([TEXT])],
    ),
    ("image by URL", [URL_BLOCK], [_inline(PNG_BYTES, "image/png"), output_part([])]),
    ("base64 PDF file", [PDF_BLOCK], [_inline(_providers.PDF, "application/pdf"), output_part([])]),
]
"""Handler content → the tool-result turn's parts, as measured: media become `inlineData`
parts before the `functionResponse` (an image given by URL is first downloaded by the
client itself), whose `output` is the list of the other blocks, as they are."""


def _one_spelling(part: object) -> object:
    """The part with an `inlineData`'s MIME type spelled `mime_type`: older google-genai SDKs
    (as in the lowest-versions CI run) write `mimeType`, which the API takes as well."""
    return json.loads(json.dumps(part).replace('"mimeType":', '"mime_type":'))


def _with_address(blocks: Sequence[Block], address: str) -> list[Block]:
    return [
        {**block, "url": f"{address}{block['url']}"} if "url" in block else block
        for block in blocks
    ]


@pytest.mark.parametrize(
    ("blocks", "parts"),
    [pytest.param(blocks, parts, id=case) for case, blocks, parts in BLOCK_CASES],
)
def test_content_blocks_are_sent_as_measured(
    server: Mount, blocks: list[Block], parts: list[object]
) -> None:
    content = _with_address(blocks, server.url)
    _, requests = run(
        server, ToolErrorMiddleware(_providers.answering(content), error_prefix=None), "sync"
    )

    assert [_one_spelling(part) for part in sent_result(requests)] == parts
    downloads = [recorded.path for recorded in requests if recorded.method == "GET"]
    assert downloads == ([IMAGE_PATH] if URL_BLOCK in blocks else [])


@pytest.mark.parametrize(
    ("blocks", "output"),
    [
        pytest.param([TEXT], [{"type": "text", "text": "Error: T"}], id="text first"),
        pytest.param([PDF_BLOCK], [{"type": "text", "text": "Error: "}], id="media only"),
    ],
)
def test_marked_blocks_reach_the_output(
    server: Mount, blocks: list[Block], output: list[Block]
) -> None:
    _, requests = run(server, ToolErrorMiddleware(_providers.answering(blocks)), "sync")

    assert sent_result(requests)[-1] == output_part(output)


ERROR_OBJECT = json.dumps({"error": "record 7 is gone"})


@pytest.mark.parametrize(
    ("prefix", "response"),
    [
        pytest.param(None, {"error": "record 7 is gone"}, id="unmarked: the API's error key"),
        pytest.param(
            "Error: ", {"error": "record 7 is gone"}, id="marked: already in the error key"
        ),
    ],
)
def test_a_json_object_text_is_sent_as_the_response_itself(
    server: Mount, prefix: str | None, response: dict[str, object]
) -> None:
    middleware = ToolErrorMiddleware(_providers.answering(ERROR_OBJECT), error_prefix=prefix)
    _, requests = run(server, middleware, "sync")

    assert sent_result(requests) == [{"functionResponse": {"name": "lookup", "response": response}}]
