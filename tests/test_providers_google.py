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

import asyncio
import base64
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Agent, question, tool_messages
from tests._loopback import Loopback, Recorded, Reply, Respond
from tests._wire_google import (
    MODEL,
    function_responses,
    is_model_call,
    script,
    streams,
    tool_result_turn,
)

pytest.importorskip("langchain_google_genai", reason="needs langchain-google-genai")

from langchain_google_genai import ChatGoogleGenerativeAI

pytestmark = pytest.mark.providers

HANDLER_TEXT = "lookup failed with KeyError; try another id."

Mode = Literal["sync", "async", "sync streaming", "async streaming"]
MODES: tuple[Mode, ...] = ("sync", "async", "sync streaming", "async streaming")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG."""

PDF = b"%PDF-1.0\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"
"""A tiny PDF."""

IMAGE_PATH = "/a.png"
"""Where the loopback serves `PNG` to a GET: the image a content block gives by URL."""


@pytest.fixture(scope="module")
def server() -> Iterator[Loopback]:
    """One server for the module (the model calls `lookup` with record 7), closed at its end."""
    with Loopback(_serving_png(script({"record_id": 7}))) as loopback:
        yield loopback


def _serving_png(respond: Respond) -> Respond:
    def serve(recorded: Recorded) -> Reply:
        if (recorded.method, recorded.path) == ("GET", IMAGE_PATH):
            return Reply(PNG, headers={"content-type": "image/png"})
        return respond(recorded)

    return serve


def lookup(record_id: int) -> str:
    """Look a record up by its id."""
    raise KeyError(record_id)


def lookup_tool() -> BaseTool:
    return StructuredTool.from_function(lookup, name="lookup")


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return HANDLER_TEXT


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


def agent_of(
    model: ChatGoogleGenerativeAI, middleware: ToolErrorMiddleware[Any, Any, Any]
) -> Agent:
    agent: Agent = create_agent(model, tools=[lookup_tool()], middleware=[middleware])
    return agent


def run(
    server: Loopback, middleware: ToolErrorMiddleware[Any, Any, Any], mode: Mode
) -> tuple[dict[str, Any], list[Recorded]]:
    """A real agent on `server`; its result and the requests `server` got meanwhile."""
    start = len(server.requests)
    agent = agent_of(gemini(server.url, streaming=mode.endswith("streaming")), middleware)
    if mode.startswith("sync"):
        result = agent.invoke(question())
    else:
        result = asyncio.run(agent.ainvoke(question()))
    return result, server.requests[start:]


def sent_result(requests: Sequence[Recorded]) -> list[Any]:
    """The parts of the tool-result turn in the model's second request (the only one)."""
    first, second = [recorded for recorded in requests if is_model_call(recorded)]
    assert not function_responses(first.json())
    return tool_result_turn(second.json())


def error_part(error: str) -> dict[str, object]:
    """A `functionResponse` part for `lookup` whose response is `{"error": error}`."""
    return {"functionResponse": {"name": "lookup", "response": {"error": error}}}


def output_part(output: object) -> dict[str, object]:
    """A `functionResponse` part for `lookup` whose response is `{"output": output}`."""
    return {"functionResponse": {"name": "lookup", "response": {"output": output}}}


@pytest.mark.parametrize("mode", MODES)
def test_the_failed_call_is_sent_in_geminis_error_key_exactly(server: Loopback, mode: Mode) -> None:
    _, requests = run(server, ToolErrorMiddleware(explain), mode)

    assert sent_result(requests) == [error_part(HANDLER_TEXT)]


@pytest.mark.parametrize(
    ("mode", "streamed"),
    [("sync", False), ("async", False), ("sync streaming", True), ("async streaming", True)],
)
def test_each_mode_uses_its_endpoint(server: Loopback, mode: Mode, streamed: bool) -> None:
    _, requests = run(server, ToolErrorMiddleware(explain), mode)

    assert [streams(recorded) for recorded in requests] == [streamed, streamed]
    assert [recorded.headers["x-goog-api-key"] for recorded in requests] == ["test", "test"]


@pytest.mark.parametrize("mode", MODES)
def test_the_agent_state_keeps_the_message_as_the_handler_wrote_it(
    server: Loopback, mode: Mode
) -> None:
    result, _ = run(server, ToolErrorMiddleware(explain), mode)

    [message] = tool_messages(result).values()
    assert (message.content, message.status) == (HANDLER_TEXT, "error")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_error_tool_node_writes_is_sent_in_the_error_key_too(mode: Mode) -> None:
    with Loopback(script({"record_id": "abc"})) as invalid:
        result, requests = run(invalid, ToolErrorMiddleware(explain), mode)

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert sent_result(requests) == [error_part(message.text)]


@pytest.mark.parametrize("mode", MODES)
def test_without_a_prefix_the_handlers_text_is_sent_as_written(
    server: Loopback, mode: Mode
) -> None:
    _, requests = run(server, ToolErrorMiddleware(explain, error_prefix=None), mode)

    assert sent_result(requests) == [output_part(HANDLER_TEXT)]


def test_another_prefix_leaves_a_text_in_the_error_key_unprefixed(server: Loopback) -> None:
    _, requests = run(server, ToolErrorMiddleware(explain, error_prefix="Tool error: "), "sync")

    assert sent_result(requests) == [error_part(HANDLER_TEXT)]


def _inline(data: bytes, mime_type: str) -> dict[str, object]:
    """An `inlineData` part as the SDK writes it: URL-safe base64, `mime_type` in snake case."""
    encoded = base64.urlsafe_b64encode(data).decode()
    return {"inlineData": {"data": encoded, "mime_type": mime_type}}


Block = dict[str, object]
TEXT: Block = {"type": "text", "text": "T"}
PNG_BLOCK: Block = {
    "type": "image",
    "base64": base64.b64encode(PNG).decode(),
    "mime_type": "image/png",
}
URL_BLOCK: Block = {"type": "image", "url": IMAGE_PATH}
"""Its `url` is a path: the test puts the loopback's address in front of it."""
PDF_BLOCK: Block = {
    "type": "file",
    "base64": base64.b64encode(PDF).decode(),
    "mime_type": "application/pdf",
}

BLOCK_CASES: list[tuple[str, list[Block], list[object]]] = [
    ("text", [TEXT], [output_part([TEXT])]),
    ("text and base64 image", [TEXT, PNG_BLOCK], [_inline(PNG, "image/png"), output_part([TEXT])]),
    ("image by URL", [URL_BLOCK], [_inline(PNG, "image/png"), output_part([])]),
    ("base64 PDF file", [PDF_BLOCK], [_inline(PDF, "application/pdf"), output_part([])]),
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
    server: Loopback, blocks: list[Block], parts: list[object]
) -> None:
    content = _with_address(blocks, server.url)

    def handler(exc: Exception, request: ToolCallRequest) -> Sequence[Mapping[str, object]]:
        return content

    _, requests = run(server, ToolErrorMiddleware(handler, error_prefix=None), "sync")

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
    server: Loopback, blocks: list[Block], output: list[Block]
) -> None:
    def handler(exc: Exception, request: ToolCallRequest) -> Sequence[Mapping[str, object]]:
        return blocks

    _, requests = run(server, ToolErrorMiddleware(handler), "sync")

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
    server: Loopback, prefix: str | None, response: dict[str, object]
) -> None:
    def handler(exc: Exception, request: ToolCallRequest) -> str:
        return ERROR_OBJECT

    _, requests = run(server, ToolErrorMiddleware(handler, error_prefix=prefix), "sync")

    assert sent_result(requests) == [{"functionResponse": {"name": "lookup", "response": response}}]
