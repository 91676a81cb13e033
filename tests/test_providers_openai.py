"""`ChatOpenAI` over loopback HTTP: what an error `ToolMessage` becomes in its requests.

Both of its APIs, Chat Completions (the default) and Responses (`use_responses_api=True`),
run against `tests/_wire_openai.py` on 127.0.0.1, on every execution path. Neither API has
an error field for a tool result (`{"role": "tool", "tool_call_id", "content"}`,
`{"type": "function_call_output", "call_id", "output"}`), so `status="error"` is lost on the
wire and the middleware marks the content the model reads with `"Error: "`, once.
"""

from __future__ import annotations

import asyncio
import base64
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import BaseMessage, ContentBlock, ToolMessage
from langchain_core.messages.content import (
    FileContentBlock,
    ImageContentBlock,
    TextContentBlock,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import StreamMode
from pydantic import SecretStr

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Agent, question
from tests._loopback import Loopback, Recorded, Reply, Respond
from tests._wire_openai import (
    APIS,
    CALL_ID,
    ENDPOINTS,
    FINAL_ANSWER,
    Api,
    script,
    tool_result,
    tool_results,
)

pytest.importorskip("langchain_openai", reason="the provider tests need `pip install -e '.[dev]'`")

from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import BaseChatOpenAI

pytestmark = pytest.mark.providers

HANDLED = "lookup failed with KeyError; try another id."
SEVEN: Mapping[str, object] = {"record_id": 7}

Mode = Literal["invoke", "ainvoke", "stream", "astream"]
MODES: tuple[Mode, ...] = ("invoke", "ainvoke", "stream", "astream")
STREAMING: frozenset[Mode] = frozenset({"stream", "astream"})
BOUNDED: RunnableConfig = {"recursion_limit": 8}
"""A run needs 3 steps (model, tools, model): a script that never answers fails fast."""
PLACES: dict[Api, str] = {"chat_completions": "messages", "responses": "input"}
"""The body's list that carries the conversation, tool results included."""


class StreamingAgent(Agent, Protocol):
    """A compiled agent's `stream` and `astream` too, as these tests call them."""

    def stream(
        self,
        input: InputAgentState,
        config: RunnableConfig,
        /,
        *,
        stream_mode: Sequence[StreamMode],
    ) -> Iterator[Any]:
        """Stream the run on the sync path."""
        ...

    def astream(
        self,
        input: InputAgentState,
        config: RunnableConfig,
        /,
        *,
        stream_mode: Sequence[StreamMode],
    ) -> AsyncIterator[Any]:
        """Stream the run on the async path."""
        ...


def _lookup(record_id: int) -> str:
    raise KeyError(record_id)


LOOKUP: BaseTool = StructuredTool.from_function(
    _lookup, name="lookup", description="Look up a record by its id."
)


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return HANDLED


@dataclass(frozen=True)
class Run:
    """What one agent run left: the agent's messages and the requests the server recorded."""

    messages: list[BaseMessage]
    requests: list[Recorded]

    def tool_message(self) -> ToolMessage:
        [message] = [m for m in self.messages if isinstance(m, ToolMessage)]
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


def chat_model(base_url: str, api: Api) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-4o-mini",
        base_url=base_url,
        api_key=SecretStr("sk-test"),
        max_retries=0,
        timeout=5,
        use_responses_api=api == "responses",
    )


class Server:
    """The module's loopback server, where each run has a path prefix `/run<n>` of its own.

    With it a run has its own script and its own base URL, `<loopback url>/run<n>/v1`:
    `ChatOpenAI` caches its HTTP clients by base URL, and an async one used again after its
    event loop closed fails ("Event loop is closed"). One server for every run, because
    closing one takes up to half a second (`serve_forever` polls for shutdown).
    """

    def __init__(self) -> None:
        self._scripts: dict[str, Respond] = {}
        self.loopback = Loopback(self._respond)

    def run(
        self,
        api: Api,
        middleware: AgentMiddleware[Any, Any, Any],
        mode: Mode = "invoke",
        args: Mapping[str, object] = SEVEN,
    ) -> Run:
        """Run a real agent on `ChatOpenAI` until its final answer, the model calling
        `lookup` with `args` first."""
        prefix, agent = self._agent(api, middleware, args)
        messages = _drive(agent, mode)
        return Run(messages, self._requests(prefix))

    def refused(
        self, api: Api, middleware: AgentMiddleware[Any, Any, Any]
    ) -> tuple[TypeError, list[Recorded]]:
        """Run a real agent (`invoke`) that must raise `TypeError`: the error, and the
        requests the server recorded for the run."""
        prefix, agent = self._agent(api, middleware, SEVEN)
        with pytest.raises(TypeError) as raised:
            _drive(agent, "invoke")
        return raised.value, self._requests(prefix)

    def _agent(
        self, api: Api, middleware: AgentMiddleware[Any, Any, Any], args: Mapping[str, object]
    ) -> tuple[str, StreamingAgent]:
        """A new run's path prefix, and its agent on a `ChatOpenAI` of that base URL."""
        prefix = f"/run{len(self._scripts)}"
        self._scripts[prefix] = script(args)
        model = chat_model(f"{self.loopback.url}{prefix}/v1", api)
        agent: StreamingAgent = create_agent(model, tools=[LOOKUP], middleware=[middleware])
        return prefix, agent

    def _requests(self, prefix: str) -> list[Recorded]:
        """The requests of the run with this path prefix, in order, without the prefix."""
        return [
            replace(r, path=r.path.removeprefix(prefix))
            for r in self.loopback.requests
            if r.path.startswith(f"{prefix}/")
        ]

    def _respond(self, recorded: Recorded) -> Reply:
        prefix, slash, path = recorded.path.partition("/v1/")
        return self._scripts[prefix](replace(recorded, path=slash + path))


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    scripted = Server()
    with scripted.loopback:
        yield scripted


def _drive(agent: StreamingAgent, mode: Mode) -> list[BaseMessage]:
    """The agent's final messages; streamed with "messages" so the model streams too."""
    if mode == "invoke":
        state = agent.invoke(question(), BOUNDED)
    elif mode == "ainvoke":
        state = asyncio.run(agent.ainvoke(question(), BOUNDED))
    else:
        modes: list[StreamMode] = ["messages", "values"]
        if mode == "stream":
            parts = list(agent.stream(question(), BOUNDED, stream_mode=modes))
        else:
            parts = asyncio.run(_collect(agent.astream(question(), BOUNDED, stream_mode=modes)))
        assert any(kind == "messages" for kind, _ in parts)
        state = [payload for kind, payload in parts if kind == "values"][-1]
    messages: list[BaseMessage] = state["messages"]
    return messages


async def _collect(parts: AsyncIterator[Any]) -> list[Any]:
    return [part async for part in parts]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_model_reads_the_handlers_error_marked_once(
    server: Server, api: Api, mode: Mode
) -> None:
    result = server.run(api, ToolErrorMiddleware(explain), mode)

    assert [r.path for r in result.requests] == [ENDPOINTS[api]] * 2
    assert [r.json()["stream"] for r in result.requests] == [mode in STREAMING] * 2
    assert result.sent_result(api) == tool_result(api, "Error: " + HANDLED)
    assert result.messages[-1].text == FINAL_ANSWER


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_the_agents_state_keeps_the_message_as_the_handler_wrote_it(
    server: Server, api: Api, mode: Mode
) -> None:
    message = server.run(api, ToolErrorMiddleware(explain), mode).tool_message()

    assert (message.content, message.status, message.tool_call_id) == (HANDLED, "error", CALL_ID)


@pytest.mark.parametrize("api", APIS)
def test_an_error_toolnode_writes_for_invalid_arguments_is_marked_too(
    server: Server, api: Api
) -> None:
    result = server.run(api, ToolErrorMiddleware(explain), args={"record_id": "abc"})

    written = result.tool_message()
    assert written.status == "error"
    assert written.text.startswith("Error invoking tool 'lookup' with kwargs {'record_id': 'abc'}")
    assert result.sent_result(api) == tool_result(api, "Error: " + written.text)


@pytest.mark.parametrize(
    ("handler_text", "error_prefix", "sent"),
    [
        (HANDLED, None, HANDLED),
        (HANDLED, "Tool error: ", "Tool error: " + HANDLED),
        ("Error: " + HANDLED, "Error: ", "Error: " + HANDLED),
    ],
    ids=["prefix-off", "own-prefix", "already-prefixed"],
)
@pytest.mark.parametrize("api", APIS)
def test_the_prefix_option_decides_the_mark(
    server: Server, api: Api, handler_text: str, error_prefix: str | None, sent: str
) -> None:
    def handler(exc: Exception, request: ToolCallRequest) -> str:
        return handler_text

    result = server.run(api, ToolErrorMiddleware(handler, error_prefix=error_prefix))

    assert result.sent_result(api) == tool_result(api, sent)
    assert result.tool_message().content == handler_text


# Content blocks: what the integration itself makes of a handler's blocks, measured through
# langchain's own `ToolErrorMiddleware` (which checks nothing); then what ours refuses to send.

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
"""A 1x1 grey PNG."""
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n").decode()

TEXT: TextContentBlock = {"type": "text", "text": "T"}
IMAGE: ImageContentBlock = {"type": "image", "base64": PNG, "mime_type": "image/png"}
IMAGE_URL: ImageContentBlock = {"type": "image", "url": "https://example.com/a.png"}
FILE: FileContentBlock = {"type": "file", "base64": PDF, "mime_type": "application/pdf"}

BLOCKS: dict[str, list[ContentBlock]] = {
    "text": [TEXT],
    "text+image": [TEXT, IMAGE],
    "image-url": [IMAGE_URL],
    "file": [FILE],
}
PNG_URL = f"data:image/png;base64,{PNG}"
PDF_URL = f"data:application/pdf;base64,{PDF}"
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
    server: Server, api: Api, case: str, sent: list[dict[str, object]], warned: list[str]
) -> None:
    """Measured: every block reaches the wire, converted to the API's own part types (Chat
    Completions accepts only text parts in a tool message; the Responses API accepts text,
    image and file parts in a `function_call_output`).

    The handler runs in langchain's own `ToolErrorMiddleware`, which marks nothing and
    checks nothing, so what shows is the integration's own behaviour: ours refuses to send
    the blocks Chat Completions does not take (see the test after this one).
    """
    blocks = BLOCKS[case]

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = server.run(api, LangchainToolErrorMiddleware(handler))

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
    server: Server, case: str, kind: str, prefix_off: bool
) -> None:
    """A Chat Completions tool message takes text parts only, so the run raises `TypeError`
    naming the call, the block and the class, and pointing to the Responses API, with the
    prefix on or off. The middleware has called this model already, so it refuses the
    handler's blocks at the failure itself, chained to the tool's exception. The server saw
    the first request only: the one with the tool result was never sent."""
    blocks = BLOCKS[case]

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    middleware = (
        ToolErrorMiddleware(handler, error_prefix=None)
        if prefix_off
        else ToolErrorMiddleware(handler)
    )
    error, requests = server.refused("chat_completions", middleware)

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
    server: Server, case: str, sent: list[dict[str, object]], warned: list[str]
) -> None:
    """A Responses `function_call_output` takes images and files, so our middleware sends
    them: no `TypeError`, and with the prefix off the wire carries what the integration
    sends through langchain's own class, `input_image` and `input_file` parts included."""
    blocks = BLOCKS[case]

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = server.run("responses", ToolErrorMiddleware(handler, error_prefix=None))

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
    server: Server, api: Api, case: str, sent: list[dict[str, object]]
) -> None:
    """The first text block gets the prefix; blocks that start with another kind get a
    text block `"Error: "` before them. (Chat Completions refuses these blocks: see above.)"""
    blocks = BLOCKS[case]

    def handler(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return blocks

    result = server.run(api, ToolErrorMiddleware(handler))

    assert result.sent_result(api) == tool_result(api, sent)
