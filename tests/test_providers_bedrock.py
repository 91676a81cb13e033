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
import hashlib
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import ContentBlock
from pydantic import SecretStr

from langchain_tool_errors import ToolErrorMiddleware
from tests import _providers
from tests._agents import question, tool_messages
from tests._loopback import Recorded, Reply, Respond
from tests._providers import Mode, Mount, Prefix, ProviderServer, StreamingAgent
from tests._wire_bedrock import APIS, MODEL, Api, operation, script, tool_result, tool_results

pytest.importorskip("langchain_aws", reason="needs langchain-aws")

from langchain_aws import ChatBedrock, ChatBedrockConverse

pytestmark = pytest.mark.providers

REGION = "us-east-1"
DUMMY = SecretStr("test")

OPERATIONS: dict[tuple[Api, bool], str] = {
    ("converse", False): "converse",
    ("converse", True): "converse-stream",
    ("invoke", False): "invoke",
    ("invoke", True): "invoke-with-response-stream",
}
"""The last segment of `/model/<model id>/<operation>`, by API and whether the model streams."""


def bedrock(
    api: Api, url: str, *, streaming: bool, converse: bool = False
) -> ChatBedrockConverse | ChatBedrock:
    """The real chat model class on the loopback: dummy keys, no retry, a short timeout.

    `max_retries=0` and `timeout=5` become the clients' botocore `Config` (no retries,
    5 s to connect and to read). `converse=True` puts `ChatBedrock` on the Converse API.
    The two classes name the endpoint and the region each their own way.
    """
    options: dict[str, object] = {
        "model": MODEL,
        "aws_access_key_id": DUMMY,
        "aws_secret_access_key": DUMMY,
        "max_retries": 0,
        "timeout": 5,
        "streaming": streaming,
    }
    if api == "converse":
        return ChatBedrockConverse.model_validate(
            {**options, "base_url": url, "region_name": REGION}
        )
    return ChatBedrock.model_validate(
        {**options, "endpoint_url": url, "region": REGION, "beta_use_converse_api": converse}
    )


class Bedrock:
    """The module's models, on one mount of the provider server; each run sets its script.

    A model per test cost ~0.3 s (each of its two boto3 clients parses botocore's endpoint
    data anew), so the module has one model per configuration (the agents bind the tools on
    their own copies), and each run reads its own slice of the mount's requests.
    """

    def __init__(self, mount: Mount) -> None:
        self.mount = mount
        self._models: dict[tuple[Api, bool, bool], ChatBedrockConverse | ChatBedrock] = {}

    def model(
        self, api: Api, *, streaming: bool, converse: bool = False
    ) -> ChatBedrockConverse | ChatBedrock:
        """The model for this configuration, built on first use."""
        key = (api, streaming, converse)
        if key not in self._models:
            self._models[key] = bedrock(api, self.mount.url, streaming=streaming, converse=converse)
        return self._models[key]

    def agent(
        self,
        middleware: AgentMiddleware[Any, Any, Any] | None,
        api: Api,
        *,
        streaming: bool = False,
        converse: bool = False,
    ) -> StreamingAgent:
        """A real agent with the tool `lookup` and `middleware`, on this configuration's model."""
        return _providers.agent_on(
            self.model(api, streaming=streaming, converse=converse), middleware
        )

    def run(
        self,
        middleware: AgentMiddleware[Any, Any, Any],
        api: Api,
        mode: Mode,
        *,
        args: Mapping[str, object] = _providers.SEVEN,
        converse: bool = False,
    ) -> tuple[dict[str, Any], list[Recorded]]:
        """A real agent on the loopback: the model calls `lookup` with `args`, then answers.

        A streaming mode builds the model with `streaming=True`. Returns the agent's result
        and the requests of this run, in order.
        """
        self.mount.respond = script(args)
        agent = self.agent(middleware, api, streaming=_providers.streamed(mode), converse=converse)
        return _providers.invoked(self.mount, agent, mode)

    def refused(
        self,
        middleware: AgentMiddleware[Any, Any, Any] | None,
        api: Api,
        error: type[Exception],
        match: str | None = None,
        respond: Respond | None = None,
    ) -> tuple[Exception, list[Recorded]]:
        """A run (`invoke`) that must raise `error`: what it raised, and the requests of the
        run; the model's side is `respond`, or calls `lookup` and then answers."""
        self.mount.respond = respond or script()
        return _providers.refused(self.mount, self.agent(middleware, api), error, match)


@pytest.fixture(scope="module")
def server(
    provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Bedrock]:
    """The module's models, with the machine's AWS setup out of the clients' reach.

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
        yield Bedrock(provider_server.mount(script()))


def sent_result(requests: Sequence[Recorded]) -> Any:
    """The one tool result in the model's second request (the first carries none)."""
    first, second = requests
    assert tool_results(first.json()) == []
    [result] = tool_results(second.json())
    return result


def flagged(text: str) -> dict[str, object]:
    """A Converse `toolResult` for the call, of one text block, with the error flag."""
    return tool_result("converse", [{"text": text}])


def unflagged(content: object) -> dict[str, object]:
    """An Anthropic `tool_result` block for the call: ChatBedrock writes no `is_error`."""
    return tool_result("invoke", content)


@pytest.mark.parametrize("mode", _providers.MODES)
@pytest.mark.parametrize(
    ("api", "message"),
    [
        pytest.param(
            "converse",
            {"role": "user", "content": [{"toolResult": flagged(_providers.HANDLER_TEXT)}]},
            id="converse: flagged, as written",
        ),
        pytest.param(
            "invoke",
            {"role": "user", "content": [unflagged("Error: " + _providers.HANDLER_TEXT)]},
            id="invoke: no flag, marked",
        ),
    ],
)
def test_the_failed_call_is_sent_flagged_or_marked_once(
    server: Bedrock, api: Api, message: dict[str, object], mode: Mode
) -> None:
    _, requests = server.run(ToolErrorMiddleware(_providers.explain), api, mode)

    # The conversation: the question, the model's call, the tool's result.
    assert requests[1].json()["messages"][2] == message


@pytest.mark.parametrize("mode", _providers.MODES)
@pytest.mark.parametrize("api", APIS)
def test_each_mode_uses_its_endpoint(server: Bedrock, api: Api, mode: Mode) -> None:
    _, requests = server.run(ToolErrorMiddleware(_providers.explain, error_prefix=None), api, mode)

    endpoint = (
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/"
        + OPERATIONS[api, _providers.streamed(mode)]
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
    streaming = _providers.streamed(mode)
    agent = server.agent(ToolErrorMiddleware(_providers.explain), api, streaming=streaming)
    senders: list[int] = []

    def before_send(**kwargs: object) -> None:
        senders.append(threading.get_ident())

    async def run_on_the_loop() -> int:
        await agent.ainvoke(question(), _providers.ONE_ROUND)
        return threading.get_ident()

    server.mount.respond = script()
    events = server.model(api, streaming=streaming).client.meta.events
    events.register("before-send.bedrock-runtime", before_send)
    try:
        loop = asyncio.run(run_on_the_loop())
    finally:
        events.unregister("before-send.bedrock-runtime", before_send)

    assert len(senders) == 2
    assert loop not in senders


@pytest.mark.parametrize("mode", _providers.MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_agent_state_keeps_the_message_as_the_handler_wrote_it(
    server: Bedrock, api: Api, mode: Mode
) -> None:
    result, _ = server.run(ToolErrorMiddleware(_providers.explain), api, mode)

    [message] = tool_messages(result).values()
    assert (message.content, message.status) == (_providers.HANDLER_TEXT, "error")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("api", APIS)
def test_an_error_tool_node_writes_is_sent_flagged_or_marked(
    server: Bedrock, api: Api, mode: Mode
) -> None:
    middleware = ToolErrorMiddleware(_providers.explain)
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
            "converse",
            None,
            _providers.HANDLER_TEXT,
            flagged(_providers.HANDLER_TEXT),
            id="converse, unmarked: flagged",
        ),
        pytest.param(
            "converse",
            "Tool error: ",
            _providers.HANDLER_TEXT,
            flagged(_providers.HANDLER_TEXT),
            id="converse, another prefix: flagged, not marked",
        ),
        pytest.param(
            "invoke",
            None,
            _providers.HANDLER_TEXT,
            unflagged(_providers.HANDLER_TEXT),
            id="invoke, unmarked: as written",
        ),
        pytest.param(
            "invoke",
            "Tool error: ",
            _providers.HANDLER_TEXT,
            unflagged("Tool error: " + _providers.HANDLER_TEXT),
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
    middleware = ToolErrorMiddleware(_providers.answering(handler_text), error_prefix=prefix)
    _, requests = server.run(middleware, api, "sync")

    assert sent_result(requests) == sent


def test_chat_bedrock_on_the_converse_api_sends_the_flag_and_no_mark(server: Bedrock) -> None:
    """`ChatBedrock(beta_use_converse_api=True)` hands each call to a `ChatBedrockConverse`.

    Its request keeps the flag, so the text is sent as the handler wrote it: never marked
    twice, once by the flag and once by the prefix.
    """
    _, requests = server.run(
        ToolErrorMiddleware(_providers.explain), "invoke", "sync", converse=True
    )

    assert [operation(recorded) for recorded in requests] == ["converse", "converse"]
    assert sent_result(requests) == flagged(_providers.HANDLER_TEXT)


@pytest.mark.parametrize("api", APIS)
def test_a_server_error_is_not_retried(server: Bedrock, api: Api) -> None:
    def fail(recorded: Recorded) -> Reply:
        return Reply.of_json({"__type": "InternalServerException", "message": "boom"}, 500)

    error, requests = server.refused(
        None, api, Exception, r"\(reached max retries: 0\): boom", respond=fail
    )

    assert type(error).__name__ == "InternalServerException"  # botocore's, untyped
    assert [recorded.headers["amz-sdk-request"] for recorded in requests] == ["attempt=1; max=1"]


Block = dict[str, object]
"""A block of a request as the integration sends it."""

CONVERSE_TEXT: Block = {"text": "T"}
CONVERSE_IMAGE: Block = {"image": {"format": "png", "source": {"bytes": _providers.PNG}}}
CONVERSE_PDF: Block = {
    "document": {
        "format": "pdf",
        "source": {"bytes": _providers.PDF_B64},
        # The block has no name: langchain-aws names it by its bytes, and warns.
        "name": hashlib.sha256(_providers.PDF).hexdigest()[:12],
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
    ("text", "converse", [_providers.TEXT], [CONVERSE_TEXT], ()),
    ("text", "invoke", [_providers.TEXT], [_providers.TEXT], ()),
    (
        "text and base64 image",
        "converse",
        [_providers.TEXT, _providers.IMAGE],
        [CONVERSE_TEXT, CONVERSE_IMAGE],
        (),
    ),
    (
        "text and base64 image",
        "invoke",
        [_providers.TEXT, _providers.IMAGE],
        [_providers.TEXT, _providers.IMAGE],
        (),
    ),
    (
        "image by URL",
        "converse",
        [_providers.IMAGE_URL],
        Raises(ValueError, r"^Image data only supported through in-line base64 format\."),
        (),
    ),
    ("image by URL", "invoke", [_providers.IMAGE_URL], [_providers.IMAGE_URL], ()),
    ("base64 PDF file", "converse", [_providers.FILE], [CONVERSE_PDF], (NO_FILENAME,)),
    ("base64 PDF file", "invoke", [_providers.FILE], [_providers.FILE], ()),
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

    middleware = LangchainToolErrorMiddleware(_providers.answering(blocks))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if isinstance(content, Raises):
            _, requests = server.refused(middleware, api, content.error, content.match)
            # The model's call went out; the request with the tool result never did.
            assert len(requests) == 1
        else:
            _, requests = server.run(middleware, api, "sync")
            assert sent_result(requests) == tool_result(api, content)

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
        pytest.param(
            "invoke",
            [_providers.TEXT, _providers.IMAGE],
            "image/base64",
            False,
            id="invoke: text+image",
        ),
        pytest.param(
            "invoke", [_providers.IMAGE_URL], "image/url", False, id="invoke: image by URL"
        ),
        pytest.param(
            "invoke", [_providers.FILE], "file/base64", False, id="invoke: base64 PDF file"
        ),
        pytest.param(
            "converse", [_providers.IMAGE_URL], "image/url", False, id="converse: image by URL"
        ),
        pytest.param(
            "invoke",
            [_providers.IMAGE_URL],
            "image/url",
            True,
            id="invoke: image by URL, error_prefix=None",
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

    middleware = _providers.with_prefix(
        _providers.answering(blocks), None if prefix_off else Prefix.DEFAULT
    )
    error, requests = server.refused(middleware, api, TypeError)

    named = ("`lookup`", f"{kind} block", CLASSES[api])
    assert [part for part in named if part not in str(error)] == []
    [first] = requests  # the model's call; nothing after it
    assert tool_results(first.json()) == []


@pytest.mark.parametrize(
    ("api", "blocks", "content"),
    [
        pytest.param(
            "converse", [_providers.TEXT], [CONVERSE_TEXT], id="converse: flagged, not marked"
        ),
        pytest.param(
            "invoke", [_providers.TEXT], [{"type": "text", "text": "Error: T"}], id="invoke: text"
        ),
    ],
)
def test_blocks_are_sent_marked_where_the_flag_is_dropped(
    server: Bedrock, api: Api, blocks: list[ContentBlock], content: list[Block]
) -> None:
    """Only text: ChatBedrock's API takes no other block (see the test above)."""

    _, requests = server.run(ToolErrorMiddleware(_providers.answering(blocks)), api, "sync")

    assert sent_result(requests) == tool_result(api, content)
