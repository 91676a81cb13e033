"""What the provider tests share: the tool that fails and the handlers that answer it, the
four ways a run is driven, the real `ChatOpenAI` and `ChatAnthropic` on the loopback, and
the loopback server of a module's runs, where each run mounts its script at a path of its
own.

The provider classes are imported where a model is built, not here, so that a test whose
integration is not installed is skipped (by its module's `pytest.importorskip`, or by the
builder's), never failed at import.

`kept_as_written` makes the one test every provider module runs as it is, on its own class.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeVar

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages.content import FileContentBlock, ImageContentBlock, TextContentBlock
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import StreamMode
from pydantic import SecretStr

from langchain_tool_errors import OnError, ToolErrorContent, ToolErrorMiddleware
from tests import _wire_anthropic, _wire_openai
from tests._agents import Agent, Path, question, run, tool_messages
from tests._loopback import Loopback, Recorded, Reply, Respond
from tests._wire_openai import Api

if TYPE_CHECKING:
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

HANDLER_TEXT = "lookup failed with KeyError; try another id."
"""What `explain` answers every failure with."""

SEVEN: Mapping[str, object] = {"record_id": 7}
"""The arguments the scripted model calls `lookup` with, unless a test says otherwise."""

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
"""A 1x1 PNG, in base64."""

PDF = b"%PDF-1.0\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"
"""A tiny PDF."""
PDF_B64 = base64.b64encode(PDF).decode()

TEXT: TextContentBlock = {"type": "text", "text": "T"}
IMAGE: ImageContentBlock = {"type": "image", "base64": PNG, "mime_type": "image/png"}
IMAGE_URL: ImageContentBlock = {"type": "image", "url": "https://example.com/a.png"}
FILE: FileContentBlock = {"type": "file", "base64": PDF_B64, "mime_type": "application/pdf"}
"""The standard content blocks a handler answers with: text, a PNG in base64 or by URL, and
a PDF in base64."""


# --- the tool and the handlers ----------------------------------------------------------------


def lookup(record_id: int) -> str:
    """Look a record up by its id."""
    raise KeyError(record_id)


def lookup_tool() -> BaseTool:
    """`lookup`, the agents' one tool: it fails with `KeyError` for every id."""
    return StructuredTool.from_function(lookup, name="lookup")


def explain(exc: Exception, request: ToolCallRequest) -> str:
    """The handler: `HANDLER_TEXT` for every failure."""
    return HANDLER_TEXT


_ContentT = TypeVar("_ContentT", bound=ToolErrorContent)
_ErrorT = TypeVar("_ErrorT", bound=BaseException)


def answering(content: _ContentT) -> Callable[[Exception, ToolCallRequest], _ContentT]:
    """A handler that answers every failure with `content` (ours, or langchain's own)."""

    def handler(exc: Exception, request: ToolCallRequest) -> _ContentT:
        return content

    return handler


class Prefix(Enum):
    """The `error_prefix` option left out, so the middleware's default applies."""

    DEFAULT = "default"


PrefixOption = str | None | Literal[Prefix.DEFAULT]


def with_prefix(
    handler: OnError[ToolErrorContent], prefix: PrefixOption
) -> ToolErrorMiddleware[ToolErrorContent, Exception, Any]:
    """Our middleware with `handler`, and `error_prefix=prefix` unless it is the default."""
    if prefix is Prefix.DEFAULT:
        return ToolErrorMiddleware(handler)
    return ToolErrorMiddleware(handler, error_prefix=prefix)


# --- the agent and how a run is driven --------------------------------------------------------

Mode = Literal["sync", "async", "sync streaming", "async streaming"]
MODES: tuple[Mode, ...] = ("sync", "async", "sync streaming", "async streaming")

ONE_ROUND: RunnableConfig = {"recursion_limit": 8}
"""A run takes 3 steps (model, tools, model); a script that never answers fails at once
instead of running to `create_agent`'s own limit of 9,999."""


def path_of(mode: Mode) -> Path:
    """The execution path a mode runs on."""
    return "sync" if mode.startswith("sync") else "async"


def streamed(mode: Mode) -> bool:
    """Whether a mode streams."""
    return mode.endswith("streaming")


class StreamingAgent(Agent, Protocol):
    """A compiled agent as these tests drive it, its `stream` and `astream` included."""

    def stream(
        self, input: InputAgentState, config: RunnableConfig, /, *, stream_mode: list[StreamMode]
    ) -> Iterator[Any]:
        """Run the agent on the sync path, yielding `(mode, part)` pairs."""
        ...

    def astream(
        self, input: InputAgentState, config: RunnableConfig, /, *, stream_mode: list[StreamMode]
    ) -> AsyncIterator[Any]:
        """Run the agent on the async path, yielding `(mode, part)` pairs."""
        ...


def agent_on(
    model: BaseChatModel, middleware: AgentMiddleware[Any, Any, Any] | None
) -> StreamingAgent:
    """A real `create_agent` agent on `model`, with the one tool `lookup` and `middleware`."""
    agent: StreamingAgent = create_agent(
        model, tools=[lookup_tool()], middleware=[middleware] if middleware else []
    )
    return agent


def drive(agent: StreamingAgent, mode: Mode) -> dict[str, Any]:
    """Run `agent` on the question to its end: `invoke` or `ainvoke`, or, streaming, `stream`
    or `astream` of the model's tokens ("messages", which makes the client ask for the
    streamed answer) and of the state ("values"), whose last value is the result."""
    if not streamed(mode):
        return run(agent, path_of(mode), config=ONE_ROUND)
    modes: list[StreamMode] = ["messages", "values"]
    if mode == "sync streaming":
        parts = list(agent.stream(question(), ONE_ROUND, stream_mode=modes))
    else:
        parts = asyncio.run(_collected(agent.astream(question(), ONE_ROUND, stream_mode=modes)))
    assert any(kind == "messages" for kind, _ in parts)  # the model's tokens were streamed
    values: list[dict[str, Any]] = [part for kind, part in parts if kind == "values"]
    return values[-1]


async def _collected(parts: AsyncIterator[Any]) -> list[Any]:
    return [part async for part in parts]


# --- the real chat model classes --------------------------------------------------------------


def chat_openai(url: str, api: Api = "chat_completions", *, timeout: float = 5) -> ChatOpenAI:
    """The real `ChatOpenAI` at `url` on one of its APIs: dummy key, no retries (the test is
    skipped where langchain-openai is not installed)."""
    pytest.importorskip("langchain_openai", reason="needs langchain-openai")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=_wire_openai.MODEL,
        base_url=f"{url}/v1",
        api_key=SecretStr("sk-test"),
        max_retries=0,
        timeout=timeout,
        use_responses_api=api == "responses",
    )


def chat_anthropic(url: str, *, timeout: float = 5) -> ChatAnthropic:
    """The real `ChatAnthropic` at `url`: dummy key, no retries (the test is skipped where
    langchain-anthropic is not installed)."""
    pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")
    from langchain_anthropic import ChatAnthropic

    # Validated from the keywords users write: `model`, `base_url`, `api_key` and `timeout`
    # are pydantic aliases, which the checkers do not see in the generated `__init__`.
    return ChatAnthropic.model_validate(
        {
            "model": _wire_anthropic.MODEL,
            "base_url": url,
            "api_key": "sk-ant-test",
            "max_retries": 0,
            "timeout": timeout,
        }
    )


Provider = Literal["openai", "anthropic"]
"""The two providers the tests of other middleware run on: `ChatOpenAI` (Chat Completions,
which drops `status="error"`) and `ChatAnthropic` (which sends `is_error`)."""
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")


def chat_model(provider: Provider, url: str, *, timeout: float = 5) -> BaseChatModel:
    """The real chat model of `provider` at `url`: dummy key, no retries."""
    if provider == "openai":
        return chat_openai(url, timeout=timeout)
    return chat_anthropic(url, timeout=timeout)


def provider_script(provider: Provider, args: Mapping[str, object] = SEVEN) -> Respond:
    """The provider's side: call `lookup` with `args`, then answer once a tool result is sent."""
    if provider == "openai":
        return _wire_openai.script(args)
    return _wire_anthropic.script(args)


# --- the loopback server ----------------------------------------------------------------------


class Mount:
    """A path of the server, `/run<n>`, and the script that answers the requests sent there
    (a test may put another in its place)."""

    def __init__(self, loopback: Loopback, prefix: str, respond: Respond) -> None:
        self.respond = respond
        self.prefix = prefix
        self._loopback = loopback

    @property
    def url(self) -> str:
        """The base URL a model is given: the server's, and this path."""
        return self._loopback.url + self.prefix

    def requests(self) -> list[Recorded]:
        """The requests sent here so far, in order, each path without the prefix."""
        return [
            replace(recorded, path=recorded.path.removeprefix(self.prefix))
            for recorded in list(self._loopback.requests)
            if recorded.path.startswith(f"{self.prefix}/")
        ]


class ProviderServer:
    """The loopback server of a module's provider tests; each run mounts its script at a
    path of its own.

    A path per run gives each model a base URL of its own, so no HTTP client that a provider
    class caches by URL is used again after the event loop it was made on has closed ("Event
    loop is closed"); and one server serves every run, since closing one takes up to half a
    second (`serve_forever` polls for shutdown).
    """

    def __init__(self) -> None:
        self._mounts: dict[str, Mount] = {}
        self._lock = threading.Lock()
        self.loopback = Loopback(self._respond)

    def mount(self, respond: Respond) -> Mount:
        """A new path of the server, answered by `respond`."""
        with self._lock:
            prefix = f"/run{len(self._mounts)}"
            mounted = self._mounts[prefix] = Mount(self.loopback, prefix, respond)
        return mounted

    def run(
        self,
        respond: Respond,
        model: Callable[[str], BaseChatModel],
        middleware: AgentMiddleware[Any, Any, Any] | None,
        mode: Mode = "sync",
    ) -> tuple[dict[str, Any], list[Recorded]]:
        """A run in `mode` of an agent on `model(url)`, at a new mount `respond` answers: the
        agent's result, and the requests the model sent, in order."""
        mount = self.mount(respond)
        result = drive(agent_on(model(mount.url), middleware), mode)
        return result, mount.requests()

    def refused(
        self,
        respond: Respond,
        model: Callable[[str], BaseChatModel],
        middleware: AgentMiddleware[Any, Any, Any] | None,
        error: type[_ErrorT],
        match: str | None = None,
    ) -> tuple[_ErrorT, list[Recorded]]:
        """A run like `run`'s (`invoke`) that must raise `error`: what it raised, and the
        requests the model sent before."""
        mount = self.mount(respond)
        return refused(mount, agent_on(model(mount.url), middleware), error, match)

    def __enter__(self) -> Self:
        self.loopback.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.loopback.__exit__(*exc_info)

    def _respond(self, recorded: Recorded) -> Reply:
        prefix = "/" + recorded.path.split("/")[1]
        with self._lock:
            mounted = self._mounts[prefix]
        return mounted.respond(replace(recorded, path=recorded.path.removeprefix(prefix)))


@dataclass(frozen=True)
class OnLoopback:
    """A provider's chat model class on the loopback server: the script of the model's side
    (given the arguments it calls `lookup` with), and the class, built for a mount's URL."""

    script: Callable[[Mapping[str, object]], Respond]
    model: Callable[[str], BaseChatModel]

    def run(
        self,
        server: ProviderServer,
        middleware: AgentMiddleware[Any, Any, Any],
        mode: Mode,
        args: Mapping[str, object] = SEVEN,
    ) -> tuple[dict[str, Any], list[Recorded]]:
        """A real agent on the class, whose model calls `lookup` with `args`, then answers;
        the streaming modes stream the model's tokens, which makes the client ask for the
        streamed answer. The agent's result, and the requests to the model, in order."""
        return server.run(self.script(args), self.model, middleware, mode)


RunOn = Callable[[ProviderServer, AgentMiddleware[Any, Any, Any], Mode], tuple[dict[str, Any], Any]]
"""A provider module's `run`: a real agent with the middleware given, in the mode given, on
the module's class at a mount of the server; the agent's result first."""


def kept_as_written(run_on: RunOn) -> Callable[[ProviderServer, Mode], None]:
    """The test every provider module runs, on its class: whatever the class sends the model,
    the agent's state keeps the message as the handler wrote it, flagged."""

    @pytest.mark.parametrize("mode", MODES)
    def test(provider_server: ProviderServer, mode: Mode) -> None:
        result, _ = run_on(provider_server, ToolErrorMiddleware(explain), mode)

        [message] = tool_messages(result).values()
        assert (message.content, message.status) == (HANDLER_TEXT, "error")

    return test


def refused(
    mount: Mount, agent: Agent, error: type[_ErrorT], match: str | None = None
) -> tuple[_ErrorT, list[Recorded]]:
    """A run of `agent` (`invoke`), whose model is at `mount`, that must raise `error`: what
    it raised, and the requests the model sent to `mount` meanwhile."""
    start = len(mount.requests())
    with pytest.raises(error, match=match) as raised:
        agent.invoke(question(), ONE_ROUND)
    return raised.value, mount.requests()[start:]


def invoked(mount: Mount, agent: Agent, mode: Mode) -> tuple[dict[str, Any], list[Recorded]]:
    """A run of `agent`, whose model is at `mount`, with `invoke` or `ainvoke` (on a streaming
    mode the model streams by an option of its own): the agent's result, and the requests
    the model sent to `mount` meanwhile, in order."""
    start = len(mount.requests())
    result = run(agent, path_of(mode), config=ONE_ROUND)
    return result, mount.requests()[start:]
