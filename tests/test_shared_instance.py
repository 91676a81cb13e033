"""One middleware instance in two agents on different providers, their runs interleaved.

A module-level middleware is often listed in several agents. Here one instance serves an
agent on `ChatAnthropic` (whose API takes an image in a tool result) and one on `ChatOpenAI`
Chat Completions (whose API refuses it), both real clients talking to a loopback server of
the test's own. The handler answers a failure with a text and an image block.

Each run's outcome is fixed by its own model: the Anthropic run sends the image and ends
with the model's answer; the OpenAI run is refused at the failure, with a `TypeError`
chained to the tool's exception, before anything is sent. The tools wait on a barrier that
both runs reach only once both models have been called, so each failure comes after the
other agent's model call: the interleaving that made one run's outcome follow the model
another run called last. Runs go on threads and on asyncio tasks, many at once, and each
equals what the same run gives alone.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
from tests import _wire_anthropic, _wire_openai
from tests._agents import Agent
from tests._loopback import FINAL_ANSWER
from tests._providers import PNG, Provider, ProviderServer, chat_model, provider_script
from tests.conftest import FIGURES

pytest.importorskip("langchain_openai", reason="needs langchain-openai")
pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")

pytestmark = pytest.mark.providers

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "lookup failed; here is the page it saw."},
    {"type": "image", "base64": PNG, "mime_type": "image/png"},
]
RUNS_EACH = 6
"""Runs of each agent at once: on threads, then on asyncio tasks."""


def show_page(exc: Exception, request: ToolCallRequest) -> list[dict[str, Any]]:
    return BLOCKS


@dataclass(frozen=True)
class Outcome:
    """What a run gave: its messages, its record and its request bodies, or its refusal."""

    messages: tuple[tuple[str, object, str | None], ...] = ()
    record: tuple[tuple[tuple[str, object], ...], ...] = ()
    sent_results: tuple[tuple[object, bool | None], ...] = ()
    refusal: tuple[str, str, str] | None = None


def failing_lookup(wait: threading.Barrier | None, await_: asyncio.Barrier | None) -> BaseTool:
    """`lookup`, which fails once every run of the batch has reached it (if `wait` is given)."""

    def lookup(record_id: int) -> str:
        if wait is not None:
            wait.wait(timeout=30)
        raise KeyError(record_id)

    async def alookup(record_id: int) -> str:
        if await_ is not None:
            await asyncio.wait_for(await_.wait(), timeout=30)
        raise KeyError(record_id)

    return StructuredTool.from_function(
        lookup, coroutine=alookup, name="lookup", description="Look up a record by its id."
    )


SHARED = ToolErrorMiddleware(show_page, budget=ErrorBudget(per_tool=5), record_failures=True)
"""The one instance every agent of this module lists."""


def fingerprint(value: object, seen: frozenset[int] = frozenset()) -> object:
    """What `value` holds, as far as a run could change it: the package's own objects by
    their attributes (slots included), containers by their items, anything else by identity.
    """
    if id(value) in seen:
        return ("cycle", id(value))
    seen = seen | {id(value)}
    if isinstance(value, dict):
        items = cast("dict[object, object]", value)
        return ("dict", tuple((repr(k), fingerprint(v, seen)) for k, v in items.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        members = cast("Collection[object]", value)  # what isinstance leaves unknown
        return (type(members).__name__, tuple(fingerprint(m, seen) for m in members))
    module = type(value).__module__
    if module.startswith(("_langchain_tool_errors", "langchain_tool_errors")):
        names = [*getattr(value, "__dict__", {})]
        names += [n for c in type(value).__mro__ for n in getattr(c, "__slots__", ())]
        fields = sorted({n for n in names if hasattr(value, n) and not n.startswith("__")})
        return (module, tuple((n, fingerprint(getattr(value, n), seen)) for n in fields))
    return ("object", id(value))


BEFORE_ANY_RUN = fingerprint(SHARED)
"""The instance as built, before any agent ran: every run must leave it exactly so."""


def agent_of(model: BaseChatModel, tool: BaseTool) -> Agent:
    middleware: list[AgentMiddleware[Any, Any, Any]] = [SHARED]
    agent: Agent = create_agent(model, tools=[tool], middleware=middleware)
    return agent


def _sent_results(
    provider: Provider, bodies: Sequence[dict[str, Any]]
) -> tuple[tuple[object, bool | None], ...]:
    """The tool results the model's requests carried: the content, and Anthropic's flag."""
    if provider == "openai":
        return tuple(
            (result["content"], None)
            for body in bodies
            for result in _wire_openai.tool_results("chat_completions", body)
        )
    return tuple(
        (block["content"], block["is_error"])
        for body in bodies
        for block in _wire_anthropic.tool_results(body)
    )


def outcome_of(result: dict[str, Any] | BaseException, provider: Provider, sent: Any) -> Outcome:
    results = _sent_results(provider, sent)
    if isinstance(result, BaseException):
        cause = result.__cause__
        return Outcome(
            sent_results=results,
            refusal=(type(result).__name__, str(result), type(cause).__name__),
        )
    messages: list[BaseMessage] = result["messages"]
    return Outcome(
        messages=tuple(
            (
                type(message).__name__,
                message.content,
                message.status if isinstance(message, ToolMessage) else None,
            )
            for message in messages
        ),
        record=tuple(tuple(sorted(entry.items())) for entry in result.get("tool_failures", [])),
        sent_results=results,
    )


def run_sync(server: ProviderServer, provider: Provider, wait: threading.Barrier | None) -> Outcome:
    mount = server.mount(provider_script(provider))
    agent = agent_of(chat_model(provider, mount.url, timeout=10), failing_lookup(wait, None))
    try:
        result: dict[str, Any] | BaseException = agent.invoke(
            {"messages": [HumanMessage("Show record 7.")]}
        )
    except TypeError as exc:
        result = exc
    return outcome_of(result, provider, [recorded.json() for recorded in mount.requests()])


async def run_async(
    server: ProviderServer, provider: Provider, wait: asyncio.Barrier | None
) -> Outcome:
    mount = server.mount(provider_script(provider))
    agent = agent_of(chat_model(provider, mount.url, timeout=10), failing_lookup(None, wait))
    try:
        result: dict[str, Any] | BaseException = await agent.ainvoke(
            {"messages": [HumanMessage("Show record 7.")]}
        )
    except TypeError as exc:
        result = exc
    return outcome_of(result, provider, [recorded.json() for recorded in mount.requests()])


PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")


@pytest.fixture(scope="module")
def alone(provider_server: ProviderServer) -> dict[Provider, Outcome]:
    """Each agent's run with nothing else running: what every interleaved run must equal."""
    outcomes: dict[Provider, Outcome] = {p: run_sync(provider_server, p, None) for p in PROVIDERS}
    for provider in PROVIDERS:
        in_async = asyncio.run(run_async(provider_server, provider, None))
        assert in_async == outcomes[provider]
    return outcomes


def test_alone_each_run_follows_its_own_model(alone: dict[Provider, Outcome]) -> None:
    anthropic, openai = alone["anthropic"], alone["openai"]

    assert anthropic.refusal is None
    assert anthropic.messages[2] == ("ToolMessage", BLOCKS, "error")
    assert anthropic.messages[-1] == ("AIMessage", FINAL_ANSWER, None)
    assert [dict(entry)["outcome"] for entry in anthropic.record] == ["answered"]
    assert len(anthropic.sent_results) == 1  # the image went to Anthropic, flagged
    assert anthropic.sent_results[0][1] is True

    assert openai.refusal is not None
    kind, message, cause = openai.refusal
    assert (kind, cause) == ("TypeError", "KeyError")  # at the failure, chained to the tool's
    assert "`lookup`" in message
    assert "image/base64" in message
    assert "use_responses_api=True" in message
    assert openai.sent_results == ()  # nothing sent after the failure


def test_runs_on_threads_each_equal_their_run_alone(
    provider_server: ProviderServer, alone: dict[Provider, Outcome]
) -> None:
    barrier = threading.Barrier(2 * RUNS_EACH)
    jobs: list[Provider] = [p for _ in range(RUNS_EACH) for p in PROVIDERS]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(run_sync, provider_server, p, barrier) for p in jobs]
        outcomes: list[tuple[Provider, Outcome]] = [
            (p, future.result(timeout=60)) for p, future in zip(jobs, futures, strict=True)
        ]

    assert all(outcome == alone[p] for p, outcome in outcomes)
    assert fingerprint(SHARED) == BEFORE_ANY_RUN  # no run left anything on the instance
    FIGURES.append(
        f"shared instance: {2 * RUNS_EACH} runs on threads, Anthropic and OpenAI, each equal "
        "to its run alone"
    )


def test_runs_on_asyncio_tasks_each_equal_their_run_alone(
    provider_server: ProviderServer, alone: dict[Provider, Outcome]
) -> None:
    async def main() -> list[tuple[Provider, Outcome]]:
        barrier = asyncio.Barrier(2 * RUNS_EACH)
        jobs: list[Provider] = [p for _ in range(RUNS_EACH) for p in PROVIDERS]
        outcomes = await asyncio.gather(*(run_async(provider_server, p, barrier) for p in jobs))
        return list(zip(jobs, outcomes, strict=True))

    outcomes = asyncio.run(main())

    assert all(outcome == alone[p] for p, outcome in outcomes)
    assert fingerprint(SHARED) == BEFORE_ANY_RUN


def test_the_fingerprint_sees_a_value_a_run_would_leave_on_the_instance() -> None:
    middleware = ToolErrorMiddleware(show_page, budget=ErrorBudget(per_tool=5))
    before = fingerprint(middleware)
    middleware.__dict__["_provider"] = "ChatOpenAI"  # what the instance once kept per call

    assert fingerprint(middleware) != before
