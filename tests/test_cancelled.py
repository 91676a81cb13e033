"""A run cancelled in the middle of its tools step, and the thread's next input.

The cancelled step is never saved: LangGraph drops what its calls did when the next input
arrives, so the model's reply keeps calls without answers, which OpenAI's and Anthropic's
APIs refuse. The model-call hook sends each such call an error answer of its own, right
after its reply's other answers, so the thread goes on. Proven through the real
`ChatOpenAI` and `ChatAnthropic` over loopback HTTP, on an `InMemorySaver` and on
PostgreSQL, with a run cancelled as a server cancels one (its asyncio task) and one stopped
by `KeyboardInterrupt` on the sync path.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Literal, Protocol

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import StateSnapshot

from _langchain_tool_errors.unfinished import UNFINISHED_TEXT, with_every_call_answered
from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, call
from tests._loopback import FINAL_ANSWER
from tests._postgres import Postgres
from tests._providers import PROVIDERS, Mount, Provider, ProviderServer, chat_model, provider_script

pytest.importorskip("langchain_openai", reason="needs langchain-openai")
pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")


Saver = Literal["memory", "postgres"]
CONFIG: RunnableConfig = {"configurable": {"thread_id": "cancelled"}}
TWO_CALLS = AIMessage(
    "", tool_calls=[call("lookup", "c-fail", record_id=1), call("lookup", "c-hang", record_id=2)]
)
"""The reply of the cancelled step: one call that fails at once, one that hangs."""


# --- which messages a request is sent -------------------------------------------------------


def unfinished(call_id: str) -> ToolMessage:
    return ToolMessage(
        UNFINISHED_TEXT.format(tool="lookup"), tool_call_id=call_id, name="lookup", status="error"
    )


def test_every_call_answered_copies_nothing() -> None:
    messages: list[AnyMessage] = [
        HumanMessage("go"),
        TWO_CALLS,
        ToolMessage("a", tool_call_id="c-fail"),
        ToolMessage("b", tool_call_id="c-hang"),
        AIMessage("done"),
    ]

    assert with_every_call_answered(messages) is None


def test_an_unanswered_call_is_answered_after_its_replys_answers() -> None:
    answered = ToolMessage("a", tool_call_id="c-fail")
    later = HumanMessage("and now?")

    sent = with_every_call_answered([HumanMessage("go"), TWO_CALLS, answered, later])

    assert sent is not None
    assert [type(m).__name__ for m in sent] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert sent[2] is answered
    assert sent[3] == unfinished("c-hang")
    assert sent[4] is later
    assert "`lookup` did not finish" in unfinished("c-hang").text


def test_calls_left_at_the_end_are_answered_and_a_call_without_id_is_left() -> None:
    no_id = AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": None}])
    sent = with_every_call_answered([HumanMessage("go"), no_id, TWO_CALLS])

    assert sent is not None
    assert sent[3:] == [unfinished("c-fail"), unfinished("c-hang")]


def test_calls_left_in_two_replies_are_each_answered_in_their_place() -> None:
    # Two cancelled steps on one thread: the answers given to the first stay when the
    # second's are added, in the middle and at the end of the conversation.
    first = AIMessage("", tool_calls=[call("lookup", "c-1", record_id=1)])
    second = AIMessage("", tool_calls=[call("lookup", "c-2", record_id=2)])
    third = AIMessage("", tool_calls=[call("lookup", "c-3", record_id=3)])
    again, once_more = HumanMessage("again"), HumanMessage("once more")

    sent = with_every_call_answered([HumanMessage("go"), first, again, second, once_more, third])

    assert sent is not None
    assert sent[1:] == [
        first,
        unfinished("c-1"),
        again,
        second,
        unfinished("c-2"),
        once_more,
        third,
        unfinished("c-3"),
    ]


# --- a real agent, cancelled, then the next input -------------------------------------------


class Hanging:
    """`lookup`: record 1 fails at once; record 2 waits until the run is cancelled; any other
    is found."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.areached = asyncio.Event()

    def tool(self) -> BaseTool:
        def lookup(record_id: int) -> str:
            if record_id == 1:
                raise KeyError(record_id)
            if record_id != 2:
                return f"record {record_id}"
            self.reached.set()
            raise KeyboardInterrupt  # the user pressed Ctrl-C while it ran

        async def alookup(record_id: int) -> str:
            if record_id == 1:
                raise KeyError(record_id)
            if record_id != 2:
                return f"record {record_id}"
            self.areached.set()
            await asyncio.sleep(60)  # cancelled long before
            return "never"

        return StructuredTool.from_function(
            lookup, coroutine=alookup, name="lookup", description="Look up a record by its id."
        )


class Thread(Agent, Protocol):
    """An agent whose thread's saved state the tests read back on the async path too."""

    async def aget_state(self, config: RunnableConfig, /) -> StateSnapshot:
        """The thread's last saved state, on the async path."""
        ...


def agent_of(
    model: BaseChatModel, tool: BaseTool, checkpointer: BaseCheckpointSaver[Any]
) -> Thread:
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3), record_failures=True)
    ]
    agent: Thread = create_agent(
        model, tools=[tool], middleware=middleware, checkpointer=checkpointer
    )
    return agent


def paired(provider: Provider, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The call ids of the request's assistant turns, and the ids its tool results answer."""
    calls: list[str] = []
    results: list[str] = []
    messages: list[dict[str, Any]] = body["messages"]
    for message in messages:
        if provider == "openai":
            tool_calls: list[dict[str, Any]] = message.get("tool_calls") or []
            calls += [str(c["id"]) for c in tool_calls]
            if message["role"] == "tool":
                results.append(str(message["tool_call_id"]))
            continue
        content: object = message["content"]
        blocks: list[dict[str, Any]] = content if isinstance(content, list) else []  # pyright: ignore[reportUnknownVariableType]
        calls += [str(b["id"]) for b in blocks if b.get("type") == "tool_use"]
        results += [str(b["tool_use_id"]) for b in blocks if b.get("type") == "tool_result"]
    return calls, results


@asynccontextmanager
async def checkpointer_of(saver: Saver, postgres: Postgres | None) -> AsyncGenerator[Any]:
    if saver == "memory":
        yield InMemorySaver()
        return
    assert postgres is not None
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(postgres.new_database()) as checkpointer:
        await checkpointer.setup()
        yield checkpointer


@pytest.fixture
def mounts(provider_server: ProviderServer) -> dict[Provider, Mount]:
    """A mount of each provider, whose model answers once the thread is taken up again."""
    return {p: provider_server.mount(provider_script(p, {"record_id": 3})) for p in PROVIDERS}


def left_unanswered_in_the_thread(state: StateSnapshot) -> None:
    """The answers sent for the unfinished calls were sent only: the saved thread still
    holds the cancelled reply's calls, and no message answers them."""
    messages: list[AnyMessage] = state.values["messages"]
    calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert calls == ["c-fail", "c-hang"]
    assert answered == []


def checked(provider: Provider, mount: Mount) -> None:
    """The next input's request: every call paired with one result, the unfinished ones'
    saying so; the model answered."""
    body: dict[str, Any] = mount.requests()[0].json()
    calls, results = paired(provider, body)
    assert calls == ["c-fail", "c-hang"]
    assert Counter(results) == {"c-fail": 1, "c-hang": 1}
    sent = str(body["messages"])
    assert "`lookup` did not finish" in sent


@pytest.mark.providers
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("saver", ["memory", "postgres"])
def test_a_cancelled_async_run_leaves_a_thread_the_provider_takes(
    provider: Provider,
    saver: Saver,
    mounts: dict[Provider, Mount],
    request: pytest.FixtureRequest,
) -> None:
    postgres: Postgres | None = request.getfixturevalue("postgres") if saver == "postgres" else None
    hanging = Hanging()

    async def main() -> tuple[dict[str, Any], StateSnapshot]:
        async with checkpointer_of(saver, postgres) as checkpointer:
            scripted = ScriptedChatModel(script=[TWO_CALLS, AIMessage("unreachable")])
            first = agent_of(scripted, hanging.tool(), checkpointer)
            task = asyncio.ensure_future(first.ainvoke({"messages": [HumanMessage("go")]}, CONFIG))
            await asyncio.wait_for(hanging.areached.wait(), 30)
            task.cancel()  # as a server cancels a run whose client went away
            with pytest.raises(asyncio.CancelledError):
                await task

            model = chat_model(provider, mounts[provider].url, timeout=10)
            second = agent_of(model, hanging.tool(), checkpointer)
            result = await second.ainvoke({"messages": [HumanMessage("and now?")]}, CONFIG)
            return result, await second.aget_state(CONFIG)

    result, state = asyncio.run(main())

    checked(provider, mounts[provider])
    left_unanswered_in_the_thread(state)
    assert result["tool_failures"] == []  # the cancelled run's failure is not counted anew
    final: AIMessage = result["messages"][-1]
    assert final.text == FINAL_ANSWER


@pytest.mark.providers
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_sync_run_stopped_by_keyboard_interrupt_leaves_a_thread_the_provider_takes(
    provider: Provider, mounts: dict[Provider, Mount]
) -> None:
    hanging = Hanging()
    checkpointer = InMemorySaver()
    scripted = ScriptedChatModel(script=[TWO_CALLS, AIMessage("unreachable")])
    first = agent_of(scripted, hanging.tool(), checkpointer)
    with pytest.raises(KeyboardInterrupt):
        first.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert hanging.reached.is_set()

    model = chat_model(provider, mounts[provider].url, timeout=10)
    second = agent_of(model, hanging.tool(), checkpointer)
    second.invoke({"messages": [HumanMessage("and now?")]}, CONFIG)

    checked(provider, mounts[provider])
    left_unanswered_in_the_thread(second.get_state(CONFIG))
