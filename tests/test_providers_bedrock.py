"""Amazon Bedrock over loopback HTTP: what each langchain-aws class sends for a failed call.

- `ChatBedrockConverse` (the Converse API) turns a `ToolMessage` into a `toolResult` block
  of a `user` message, `{"toolUseId": ..., "content": [{"text": ...}], "status": "error"}`:
  it keeps the flag, so the middleware sends the handler's text as it is.
- The legacy `ChatBedrock` with an Anthropic model (the InvokeModel API, whose body is
  Anthropic's Messages format) turns it into `{"type": "tool_result", "tool_use_id": ...,
  "content": ...}` and never writes `is_error`: the flag is dropped, so the text is marked.

Neither class has an async implementation of its own: `ainvoke` runs the sync botocore
client on langchain-core's executor (`BaseChatModel._agenerate`, and `_astream` pulling the
sync `_stream` one chunk at a time), so the async rows go through the same requests.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import ContentBlock
from langchain_core.messages.content import (
    FileContentBlock,
    ImageContentBlock,
    TextContentBlock,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import SecretStr

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Agent, question, tool_messages
from tests._loopback import Loopback, Recorded, Reply, Respond
from tests._wire_bedrock import (
    CONVERSE_CALL_ID,
    INVOKE_CALL_ID,
    MODEL,
    operation,
    script,
    tool_results,
)

pytest.importorskip("langchain_aws", reason="needs langchain-aws")

from langchain_aws import ChatBedrock, ChatBedrockConverse

pytestmark = pytest.mark.providers

HANDLER_TEXT = "lookup failed with KeyError; try another id."
REGION = "us-east-1"
DUMMY = SecretStr("test")
ONE_ROUND: RunnableConfig = {"recursion_limit": 10}
"""Ample for a call, its result and the answer; a script that never sees the result fails
fast with `GraphRecursionError` instead of looping up to langgraph's default of 10,007."""

Api = Literal["converse", "invoke"]
APIS: tuple[Api, ...] = ("converse", "invoke")
"""`ChatBedrockConverse` on the Converse API, and `ChatBedrock` on InvokeModel."""

Mode = Literal["sync", "async", "sync streaming", "async streaming"]
MODES: tuple[Mode, ...] = ("sync", "async", "sync streaming", "async streaming")

OPERATIONS: dict[tuple[Api, bool], str] = {
    ("converse", False): "converse",
    ("converse", True): "converse-stream",
    ("invoke", False): "invoke",
    ("invoke", True): "invoke-with-response-stream",
}
"""The last segment of `/model/<model id>/<operation>`, by API and whether the model streams."""


def lookup(record_id: int) -> str:
    """Look a record up by its id."""
    raise KeyError(record_id)


def lookup_tool() -> BaseTool:
    return StructuredTool.from_function(lookup, name="lookup")


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return HANDLER_TEXT


def bedrock(
    api: Api, url: str, *, streaming: bool, converse: bool = False
) -> ChatBedrockConverse | ChatBedrock:
    """The real chat model class on the loopback: dummy keys, no retry, a short timeout.

    `max_retries=0` and `timeout=5` become the clients' botocore `Config` (no retries,
    5 s to connect and to read). `converse=True` puts `ChatBedrock` on the Converse API.
    """
    if api == "converse":
        return ChatBedrockConverse(
            model=MODEL,
            base_url=url,
            region_name=REGION,
            aws_access_key_id=DUMMY,
            aws_secret_access_key=DUMMY,
            max_retries=0,
            timeout=5,
            streaming=streaming,
        )
    return ChatBedrock(
        model=MODEL,
        endpoint_url=url,
        region=REGION,
        aws_access_key_id=DUMMY,
        aws_secret_access_key=DUMMY,
        max_retries=0,
        timeout=5,
        streaming=streaming,
        beta_use_converse_api=converse,
    )


class Bedrock:
    """The module's one loopback server and its models; each run gives it its own script.

    A server per test cost ~0.5 s at shutdown (`serve_forever` polls twice a second) and a
    model per test ~0.3 s (each of its two boto3 clients parses botocore's endpoint data
    anew), so the module has one server, one model per configuration (the agents bind the
    tools on their own copies), and each run reads its own slice of the recorded requests.
    """

    def __init__(self) -> None:
        self.loopback = Loopback(self._answer)
        self.respond: Respond = script()
        self._models: dict[tuple[Api, bool, bool], ChatBedrockConverse | ChatBedrock] = {}

    def _answer(self, recorded: Recorded) -> Reply:
        return self.respond(recorded)

    def model(
        self, api: Api, *, streaming: bool, converse: bool = False
    ) -> ChatBedrockConverse | ChatBedrock:
        """The model for this configuration, built on first use."""
        key = (api, streaming, converse)
        if key not in self._models:
            self._models[key] = bedrock(
                api, self.loopback.url, streaming=streaming, converse=converse
            )
        return self._models[key]

    def agent(
        self,
        middleware: AgentMiddleware[Any, Any, Any] | None,
        api: Api,
        *,
        streaming: bool = False,
        converse: bool = False,
    ) -> Agent:
        """A real agent with the tool `lookup` and `middleware`, on this configuration's model."""
        model = self.model(api, streaming=streaming, converse=converse)
        agent: Agent = create_agent(
            model, tools=[lookup_tool()], middleware=[middleware] if middleware else []
        )
        return agent

    def run(
        self,
        middleware: AgentMiddleware[Any, Any, Any],
        api: Api,
        mode: Mode,
        *,
        args: Mapping[str, object] | None = None,
        converse: bool = False,
    ) -> tuple[dict[str, Any], list[Recorded]]:
        """A real agent on the loopback: the model calls `lookup` with `args`, then answers.

        Returns the agent's result and the requests of this run, in order.
        """
        self.respond = script(args)
        start = len(self.loopback.requests)
        agent = self.agent(middleware, api, streaming=mode.endswith("streaming"), converse=converse)
        if mode.startswith("sync"):
            result = agent.invoke(question(), ONE_ROUND)
        else:
            result = asyncio.run(agent.ainvoke(question(), ONE_ROUND))
        return result, self.loopback.requests[start:]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bedrock]:
    """The module's server, with the machine's AWS setup out of the clients' reach.

    No profile, config or credentials file, bearer key, endpoint or retry setting from the
    environment: the models see only the dummy keys, region and options they are given.
    """
    empty = tmp_path_factory.mktemp("aws")
    with pytest.MonkeyPatch.context() as env:
        for name in (
            "AWS_PROFILE",
            "AWS_DEFAULT_PROFILE",
            "AWS_BEARER_TOKEN_BEDROCK",
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
            "AWS_MAX_ATTEMPTS",
            "AWS_RETRY_MODE",
        ):
            env.delenv(name, raising=False)
        env.setenv("AWS_CONFIG_FILE", str(empty / "config"))
        env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty / "credentials"))
        bedrock_server = Bedrock()
        with bedrock_server.loopback:
            yield bedrock_server


def sent_result(requests: Sequence[Recorded]) -> Any:
    """The one tool result in the model's second request (the first carries none)."""
    first, second = requests
    assert tool_results(first.json()) == []
    [result] = tool_results(second.json())
    return result


def flagged(text: str) -> dict[str, object]:
    """A Converse `toolResult` for the call, of one text block, with the error flag."""
    return with_content("converse", [{"text": text}])


def unflagged(content: object) -> dict[str, object]:
    """An Anthropic `tool_result` block for the call: ChatBedrock writes no `is_error`."""
    return with_content("invoke", content)


def with_content(api: Api, content: object) -> dict[str, object]:
    """The tool result for the call as each API spells it, with this `content`."""
    if api == "converse":
        return {"toolUseId": CONVERSE_CALL_ID, "content": content, "status": "error"}
    return {"type": "tool_result", "tool_use_id": INVOKE_CALL_ID, "content": content}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("api", "message"),
    [
        pytest.param(
            "converse",
            {"role": "user", "content": [{"toolResult": flagged(HANDLER_TEXT)}]},
            id="converse: flagged, as written",
        ),
        pytest.param(
            "invoke",
            {"role": "user", "content": [unflagged("Error: " + HANDLER_TEXT)]},
            id="invoke: no flag, marked",
        ),
    ],
)
def test_the_failed_call_is_sent_flagged_or_marked_once(
    server: Bedrock, api: Api, message: dict[str, object], mode: Mode
) -> None:
    _, requests = server.run(ToolErrorMiddleware(explain), api, mode)

    # The conversation: the question, the model's call, the tool's result.
    assert requests[1].json()["messages"][2] == message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_each_mode_uses_its_endpoint(server: Bedrock, api: Api, mode: Mode) -> None:
    _, requests = server.run(ToolErrorMiddleware(explain, error_prefix=None), api, mode)

    endpoint = (
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/"
        + OPERATIONS[api, mode.endswith("streaming")]
    )
    assert [(recorded.method, recorded.path) for recorded in requests] == [("POST", endpoint)] * 2
    for recorded in requests:  # signed (SigV4) with the dummy key, for the region given
        day = recorded.headers["x-amz-date"][:8]
        assert recorded.headers["authorization"].startswith(
            f"AWS4-HMAC-SHA256 Credential=test/{day}/{REGION}/bedrock/aws4_request, "
        )


@pytest.mark.parametrize("mode", ["async", "async streaming"])
@pytest.mark.parametrize("api", APIS)
def test_the_async_path_runs_the_sync_client_on_another_thread(
    server: Bedrock, api: Api, mode: Mode
) -> None:
    """langchain-core's default `_agenerate` / `_astream` hand the sync calls to its executor."""
    streaming = mode.endswith("streaming")
    agent = server.agent(ToolErrorMiddleware(explain), api, streaming=streaming)
    senders: list[int] = []

    def before_send(**kwargs: object) -> None:
        senders.append(threading.get_ident())

    async def run_on_the_loop() -> int:
        await agent.ainvoke(question(), ONE_ROUND)
        return threading.get_ident()

    server.respond = script()
    events = server.model(api, streaming=streaming).client.meta.events
    events.register("before-send.bedrock-runtime", before_send)
    try:
        loop = asyncio.run(run_on_the_loop())
    finally:
        events.unregister("before-send.bedrock-runtime", before_send)

    assert len(senders) == 2
    assert loop not in senders


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_agent_state_keeps_the_message_as_the_handler_wrote_it(
    server: Bedrock, api: Api, mode: Mode
) -> None:
    result, _ = server.run(ToolErrorMiddleware(explain), api, mode)

    [message] = tool_messages(result).values()
    assert (message.content, message.status) == (HANDLER_TEXT, "error")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("api", APIS)
def test_an_error_tool_node_writes_is_sent_flagged_or_marked(
    server: Bedrock, api: Api, mode: Mode
) -> None:
    middleware = ToolErrorMiddleware(explain)
    result, requests = server.run(middleware, api, mode, args={"record_id": "abc"})

    [message] = tool_messages(result).values()
    assert message.status == "error"
    assert message.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    expected = flagged(message.text) if api == "converse" else unflagged("Error: " + message.text)
    assert sent_result(requests) == expected


@pytest.mark.parametrize(
    ("api", "prefix", "handler_text", "sent"),
    [
        pytest.param(
            "converse", None, HANDLER_TEXT, flagged(HANDLER_TEXT), id="converse, unmarked: flagged"
        ),
        pytest.param(
            "converse",
            "Tool error: ",
            HANDLER_TEXT,
            flagged(HANDLER_TEXT),
            id="converse, another prefix: flagged, not marked",
        ),
        pytest.param(
            "invoke", None, HANDLER_TEXT, unflagged(HANDLER_TEXT), id="invoke, unmarked: as written"
        ),
        pytest.param(
            "invoke",
            "Tool error: ",
            HANDLER_TEXT,
            unflagged("Tool error: " + HANDLER_TEXT),
            id="invoke, another prefix",
        ),
        pytest.param(
            "invoke",
            "Error: ",
            "Error: record 7 is gone",
            unflagged("Error: record 7 is gone"),
            id="invoke, already marked: not twice",
        ),
    ],
)
def test_the_error_prefix_option_decides_the_mark(
    server: Bedrock, api: Api, prefix: str | None, handler_text: str, sent: dict[str, object]
) -> None:
    def handler(exc: Exception, request: ToolCallRequest) -> str:
        return handler_text

    _, requests = server.run(ToolErrorMiddleware(handler, error_prefix=prefix), api, "sync")

    assert sent_result(requests) == sent


def test_chat_bedrock_on_the_converse_api_sends_the_flag_and_no_mark(server: Bedrock) -> None:
    """`ChatBedrock(beta_use_converse_api=True)` hands each call to a `ChatBedrockConverse`.

    Its request keeps the flag, so the text is sent as the handler wrote it: never marked
    twice, once by the flag and once by the prefix.
    """
    _, requests = server.run(ToolErrorMiddleware(explain), "invoke", "sync", converse=True)

    assert [operation(recorded) for recorded in requests] == ["converse", "converse"]
    assert sent_result(requests) == flagged(HANDLER_TEXT)


@pytest.mark.parametrize("api", APIS)
def test_a_server_error_is_not_retried(server: Bedrock, api: Api) -> None:
    def fail(recorded: Recorded) -> Reply:
        return Reply.of_json({"__type": "InternalServerException", "message": "boom"}, 500)

    server.respond = fail
    start = len(server.loopback.requests)
    with pytest.raises(Exception, match=r"\(reached max retries: 0\): boom") as raised:
        server.agent(None, api).invoke(question(), ONE_ROUND)

    assert type(raised.value).__name__ == "InternalServerException"  # botocore's, untyped
    requests = server.loopback.requests[start:]
    assert [recorded.headers["amz-sdk-request"] for recorded in requests] == ["attempt=1; max=1"]


PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
"""A 1x1 PNG, in base64."""

PDF = b"%PDF-1.0\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"
"""A tiny PDF."""
PDF_B64 = base64.b64encode(PDF).decode()

Block = dict[str, object]
"""A block of a request as the integration sends it."""
TEXT: TextContentBlock = {"type": "text", "text": "T"}
PNG_BLOCK: ImageContentBlock = {"type": "image", "base64": PNG_B64, "mime_type": "image/png"}
URL_BLOCK: ImageContentBlock = {"type": "image", "url": "https://example.com/a.png"}
PDF_BLOCK: FileContentBlock = {"type": "file", "base64": PDF_B64, "mime_type": "application/pdf"}

CONVERSE_TEXT: Block = {"text": "T"}
CONVERSE_IMAGE: Block = {"image": {"format": "png", "source": {"bytes": PNG_B64}}}
CONVERSE_PDF: Block = {
    "document": {
        "format": "pdf",
        "source": {"bytes": PDF_B64},
        # The block has no name: langchain-aws names it by its bytes, and warns.
        "name": hashlib.sha256(PDF).hexdigest()[:12],
    }
}
NO_FILENAME = "Bedrock Converse may require a filename for file inputs."


class Raises:
    """The integration raises this before it sends the request with the tool result."""

    def __init__(self, error: type[Exception], match: str) -> None:
        self.error = error
        self.match = match


BLOCK_CASES: list[
    tuple[str, Api, list[ContentBlock], Sequence[Mapping[str, object]] | Raises, tuple[str, ...]]
] = [
    ("text", "converse", [TEXT], [CONVERSE_TEXT], ()),
    ("text", "invoke", [TEXT], [TEXT], ()),
    ("text and base64 image", "converse", [TEXT, PNG_BLOCK], [CONVERSE_TEXT, CONVERSE_IMAGE], ()),
    ("text and base64 image", "invoke", [TEXT, PNG_BLOCK], [TEXT, PNG_BLOCK], ()),
    (
        "image by URL",
        "converse",
        [URL_BLOCK],
        Raises(ValueError, r"^Image data only supported through in-line base64 format\."),
        (),
    ),
    ("image by URL", "invoke", [URL_BLOCK], [URL_BLOCK], ()),
    ("base64 PDF file", "converse", [PDF_BLOCK], [CONVERSE_PDF], (NO_FILENAME,)),
    ("base64 PDF file", "invoke", [PDF_BLOCK], [PDF_BLOCK], ()),
]
"""Handler content → the tool result's `content` (or what is raised) and any `UserWarning`.

Measured through langchain's own `ToolErrorMiddleware`, which marks and checks nothing, so
each row is what the integration itself does; ours sends none of the rows an API refuses
(`test_blocks_the_api_refuses_are_not_sent`). Converse translates the standard blocks into
its own (`text`, `image`, `document`, bytes in base64), refuses an image by URL before
sending, and names a nameless document by a hash of its bytes. ChatBedrock passes the blocks
inside a `tool_result` through as langchain wrote them, keys and all; only text is valid
there.
"""


@pytest.mark.parametrize(
    ("api", "blocks", "content", "warned"),
    [
        pytest.param(api, blocks, content, warned, id=f"{api}: {case}")
        for case, api, blocks, content, warned in BLOCK_CASES
    ],
)
def test_content_blocks_are_sent_as_measured(
    server: Bedrock,
    api: Api,
    blocks: list[ContentBlock],
    content: Sequence[Mapping[str, object]] | Raises,
    warned: tuple[str, ...],
) -> None:
    """The integration's own behaviour: the handler runs in langchain's `ToolErrorMiddleware`."""

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    middleware = LangchainToolErrorMiddleware(handler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if isinstance(content, Raises):
            server.respond = script()
            start = len(server.loopback.requests)
            with pytest.raises(content.error, match=content.match):
                server.agent(middleware, api).invoke(question(), ONE_ROUND)
            # The model's call went out; the request with the tool result never did.
            assert len(server.loopback.requests[start:]) == 1
        else:
            _, requests = server.run(middleware, api, "sync")
            assert sent_result(requests) == with_content(api, content)

    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == len(warned)
    assert all(map(str.startswith, messages, warned))


CLASSES: dict[Api, str] = {
    "converse": f"{ChatBedrockConverse.__module__}.{ChatBedrockConverse.__qualname__}",
    "invoke": f"{ChatBedrock.__module__}.{ChatBedrock.__qualname__}",
}
"""The class our middleware names in its `TypeError`, by API."""


@pytest.mark.parametrize(
    ("api", "blocks", "kind", "prefix_off"),
    [
        pytest.param("invoke", [TEXT, PNG_BLOCK], "image/base64", False, id="invoke: text+image"),
        pytest.param("invoke", [URL_BLOCK], "image/url", False, id="invoke: image by URL"),
        pytest.param("invoke", [PDF_BLOCK], "file/base64", False, id="invoke: base64 PDF file"),
        pytest.param("converse", [URL_BLOCK], "image/url", False, id="converse: image by URL"),
        pytest.param(
            "invoke", [URL_BLOCK], "image/url", True, id="invoke: image by URL, error_prefix=None"
        ),
    ],
)
def test_blocks_the_api_refuses_are_not_sent(
    server: Bedrock, api: Api, blocks: list[ContentBlock], kind: str, prefix_off: bool
) -> None:
    """Our middleware checks an error message before each model call. ChatBedrock passes
    media blocks on unconverted, which Anthropic's API refuses; Converse takes no image by
    URL. So the run raises `TypeError` naming the call, the block and the class, with the
    prefix on or off, and the request with the tool result is never sent."""

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    middleware = (
        ToolErrorMiddleware(handler, error_prefix=None)
        if prefix_off
        else ToolErrorMiddleware(handler)
    )
    server.respond = script()
    start = len(server.loopback.requests)
    with pytest.raises(TypeError) as raised:
        server.agent(middleware, api).invoke(question(), ONE_ROUND)

    named = ("`lookup`", f"{kind} block", CLASSES[api])
    assert [part for part in named if part not in str(raised.value)] == []
    [first] = server.loopback.requests[start:]  # the model's call; nothing after it
    assert tool_results(first.json()) == []


@pytest.mark.parametrize(
    ("api", "blocks", "content"),
    [
        pytest.param("converse", [TEXT], [CONVERSE_TEXT], id="converse: flagged, not marked"),
        pytest.param("invoke", [TEXT], [{"type": "text", "text": "Error: T"}], id="invoke: text"),
    ],
)
def test_blocks_are_sent_marked_where_the_flag_is_dropped(
    server: Bedrock, api: Api, blocks: list[ContentBlock], content: list[Block]
) -> None:
    """Only text: ChatBedrock's API takes no other block (see the test above)."""

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    _, requests = server.run(ToolErrorMiddleware(handler), api, "sync")

    assert sent_result(requests) == with_content(api, content)
