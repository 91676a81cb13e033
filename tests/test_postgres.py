"""A budget's stop and a "tell" budget in a real PostgreSQL checkpointer, and the checkpoint
format of everything the middleware writes to the state (issue 34, items 5 and 6).

A stop keeps its step: the stopped step's failures and the stop are in the checkpointed
record, every call of the step (a failing one, and a succeeding one beside it) is answered
once, and the thread's next input reaches the model with every tool call paired with its
result. That is proven where it matters, in the request body a real `ChatOpenAI` (Chat
Completions) and `ChatAnthropic` send over loopback HTTP, on `PostgresSaver` (`invoke`),
`AsyncPostgresSaver` (`ainvoke`) and `InMemorySaver` (both).

The checkpoint format: an agent whose state holds every kind of failure, the told, answered
and stopped outcomes, the budget counts, the stop, the settled marks and error messages
with list content is run in one process and read back in another, with
`LANGGRAPH_STRICT_MSGPACK=true` (read by langgraph at import time, hence the processes) and
without it, from PostgreSQL and SQLite: every value comes back equal and of the same type.

Run as a module, this file is the two halves of that test (see `main`).
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import logging
import pickle
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path as FilePath
from typing import Any, Literal, cast

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, ToolCallLimitMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.content import TextContentBlock, create_text_block
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import override

from _langchain_tool_errors.state import BudgetStop
from _langchain_tool_errors.stopping import stopped_answer
from langchain_tool_errors import (
    ErrorBudget,
    ReportedFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, echo_tool, failing_tool
from tests._loopback import Loopback, Recorded, Reply, Respond
from tests._postgres import Postgres
from tests._processes import run_python
from tests._providers import PROVIDERS, Provider, chat_model
from tests._savers import Watching
from tests.conftest import FIGURES

Saver = Literal["postgres", "memory"]
SAVERS: tuple[Saver, ...] = ("postgres", "memory")

CONFIG: RunnableConfig = {"configurable": {"thread_id": "issue-34"}}
MIDDLEWARE = "ToolErrorMiddleware"
"""The default name of the middleware: the key of its stop in the state."""
ERROR = LookupError("no such city")
NEXT_INPUT = "and now?"
"""The thread's next input, after the stop: the request that carries it is checked."""
FINAL = "done"


def fine(query: str = "") -> str:
    return f"fine {query}"


def tools() -> list[BaseTool]:
    """`bad`, which always raises `ERROR`, and `ok_tool`, which always works."""
    ok = StructuredTool.from_function(fine, name="ok_tool", description="always works")
    return [failing_tool("bad", ERROR), ok]


def stopping_middleware() -> ToolErrorMiddleware[Any, Any, Any]:
    """A budget that stops at the second failure of a tool, with the record kept."""
    return ToolErrorMiddleware(
        report_type_only, budget=ErrorBudget(per_tool=1), record_failures=True
    )


def budgeted_agent(model: BaseChatModel, saver: BaseCheckpointSaver[str]) -> Agent:
    agent: Agent = create_agent(
        model, tools=tools(), middleware=[stopping_middleware()], checkpointer=saver
    )
    return agent


def values_of(agent: Agent) -> dict[str, Any]:
    values: dict[str, Any] = agent.get_state(CONFIG).values
    return values


async def avalues_of(agent: Agent) -> dict[str, Any]:
    graph: Any = agent
    snapshot: Any = await graph.aget_state(CONFIG)
    values: dict[str, Any] = snapshot.values
    return values


def answers(messages: Sequence[BaseMessage]) -> Counter[str]:
    """How many tool messages answer each call id."""
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


def calls_made(messages: Sequence[BaseMessage]) -> list[str]:
    return [str(c["id"]) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


# The provider's side: the model calls `bad`; then `bad` and `ok_tool` in parallel; then, in
# any later request, answers. It tells the turns apart by the assistant turns in the body.

CALL_IDS = {"b0": "call_b0", "b1": "call_b1", "ok1": "call_ok1"}


def planned_calls(turn: int) -> list[tuple[str, str, dict[str, object]]]:
    """The calls the model makes at its `turn`-th reply of the thread: (name, id, args)."""
    if turn == 0:
        return [("bad", CALL_IDS["b0"], {"query": "x"})]
    if turn == 1:
        return [
            ("bad", CALL_IDS["b1"], {"query": "x"}),
            ("ok_tool", CALL_IDS["ok1"], {"query": "y"}),
        ]
    return []


def openai_reply(body: Mapping[str, Any]) -> Reply:
    """A Chat Completions answer: `choices[0].message`, the calls or the final text."""
    messages = cast("list[dict[str, Any]]", body["messages"])
    turn = sum(m["role"] == "assistant" for m in messages)
    planned = planned_calls(turn)
    message: dict[str, object] = {"role": "assistant", "content": None if planned else FINAL}
    if planned:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for n, i, a in planned
        ]
    finish = "tool_calls" if planned else "stop"
    # A distinct id per reply: the AIMessage's id, which the state's reducer keys on.
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return Reply.of_json({"id": f"chatcmpl-{turn}", "model": "gpt-4o-mini", "choices": [choice]})


def anthropic_reply(body: Mapping[str, Any]) -> Reply:
    """A Messages API answer: `tool_use` blocks, or a text block."""
    messages = cast("list[dict[str, Any]]", body["messages"])
    turn = sum(m["role"] == "assistant" for m in messages)
    planned = planned_calls(turn)
    blocks: list[dict[str, object]] = [
        {"type": "tool_use", "id": i, "name": n, "input": a} for n, i, a in planned
    ] or [{"type": "text", "text": FINAL}]
    return Reply.of_json(
        {
            "model": "claude-test",
            "content": blocks,
            "stop_reason": "tool_use" if planned else "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


def respond(provider: Provider) -> Respond:
    def answer(recorded: Recorded) -> Reply:
        body: dict[str, Any] = recorded.json()
        return openai_reply(body) if provider == "openai" else anthropic_reply(body)

    return answer


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A Messages API turn's content blocks (none when its content is a plain string)."""
    content: object = message["content"]
    return cast("list[dict[str, Any]]", content) if isinstance(content, list) else []


def pairing(provider: Provider, body: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The tool call ids a request body carries, and the ids of the results that answer
    them, each result taken only where the provider requires it: right after its call.

    Chat Completions: the `tool` messages that follow an assistant message with
    `tool_calls`. Messages API: the `tool_result` blocks of the `user` turn right after an
    assistant turn with `tool_use` blocks.
    """
    messages = cast("list[dict[str, Any]]", body["messages"])
    made: list[str] = []
    answered: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if provider == "openai":
            tool_calls = cast("list[dict[str, Any]]", message.get("tool_calls") or [])
            ids = [str(c["id"]) for c in tool_calls]
            following = messages[index + 1 : index + 1 + len(ids)]
            answered += [str(m["tool_call_id"]) for m in following if m["role"] == "tool"]
        else:
            ids = [str(b["id"]) for b in _blocks(message) if b["type"] == "tool_use"]
            after = messages[index + 1 : index + 2]
            if ids and after:
                results = [b for b in _blocks(after[0]) if b["type"] == "tool_result"]
                answered += [str(b["tool_use_id"]) for b in results]
        made += ids
    return made, answered


def assert_stopped_step_kept(values: Mapping[str, Any], spent: ToolErrorBudgetExceeded) -> None:
    """The stopped step is in the checkpoint: its failures, the stop, every call answered."""
    assert (spent.tool, spent.count, spent.limit, spent.scope) == ("bad", 2, 1, "tool")
    failures: list[ToolFailure] = values["tool_failures"]
    assert [(f["call_id"], f["tool"], f["outcome"]) for f in failures] == [
        (CALL_IDS["b0"], "bad", "answered"),
        (CALL_IDS["b1"], "bad", "stopped"),
    ]
    messages: list[BaseMessage] = values["messages"]
    assert calls_made(messages) == list(CALL_IDS.values())
    assert answers(messages) == dict.fromkeys(CALL_IDS.values(), 1)
    by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert (by_id[CALL_IDS["ok1"]].text, by_id[CALL_IDS["ok1"]].status) == ("fine y", "success")
    stop: BudgetStop = values["tool_error_budget_stops"][MIDDLEWARE]
    assert (stop["tool"], stop["count"], stop["limit"], stop["call_id"]) == (
        "bad",
        2,
        1,
        CALL_IDS["b1"],
    )
    stopping = by_id[CALL_IDS["b1"]]
    assert stopping.status == "error"
    assert stopping.text == stopped_answer(stop, CALL_IDS["b1"], "bad").text


def assert_next_input_paired(
    provider: Provider, loopback: Loopback, result: Mapping[str, Any]
) -> None:
    """The next input's first request pairs every call with exactly one result, in place."""
    bodies: list[dict[str, Any]] = loopback.bodies()
    assert len(bodies) == 3  # two model calls in the stopped run, one for the next input
    [first_of_next] = [b for b in bodies if NEXT_INPUT in json.dumps(b)]
    assert first_of_next is bodies[2]
    made, answered = pairing(provider, first_of_next)
    assert made == list(CALL_IDS.values())
    assert sorted(answered) == sorted(made)
    assert Counter(answered) == dict.fromkeys(made, 1)
    assert result["messages"][-1].text == FINAL
    assert result["tool_failures"] == []  # the new input started a new run


def run_sync_thread(provider: Provider, saver: Saver, postgres: Postgres | None) -> None:
    with Loopback(respond(provider)) as loopback:
        if saver == "memory":
            memory = InMemorySaver()
            agent = budgeted_agent(chat_model(provider, loopback.url), memory)
            with pytest.raises(ToolErrorBudgetExceeded) as raised:
                agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
            assert_stopped_step_kept(values_of(agent), raised.value)
            result = agent.invoke({"messages": [HumanMessage(NEXT_INPUT)]}, CONFIG)
        else:
            assert postgres is not None
            from langgraph.checkpoint.postgres import PostgresSaver

            uri = postgres.new_database()
            with PostgresSaver.from_conn_string(uri) as checkpointer:
                checkpointer.setup()
                agent = budgeted_agent(chat_model(provider, loopback.url), checkpointer)
                with pytest.raises(ToolErrorBudgetExceeded) as raised:
                    agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
            # Read back, and go on, over a new connection with a new agent.
            with PostgresSaver.from_conn_string(uri) as fresh:
                agent = budgeted_agent(chat_model(provider, loopback.url), fresh)
                assert_stopped_step_kept(values_of(agent), raised.value)
                result = agent.invoke({"messages": [HumanMessage(NEXT_INPUT)]}, CONFIG)
        assert_next_input_paired(provider, loopback, result)


async def run_async_thread(provider: Provider, saver: Saver, postgres: Postgres | None) -> None:
    with Loopback(respond(provider)) as loopback:
        if saver == "memory":
            memory = InMemorySaver()
            agent = budgeted_agent(chat_model(provider, loopback.url), memory)
            with pytest.raises(ToolErrorBudgetExceeded) as raised:
                await agent.ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
            assert_stopped_step_kept(await avalues_of(agent), raised.value)
            result = await agent.ainvoke({"messages": [HumanMessage(NEXT_INPUT)]}, CONFIG)
        else:
            assert postgres is not None
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            uri = postgres.new_database()
            async with AsyncPostgresSaver.from_conn_string(uri) as checkpointer:
                await checkpointer.setup()
                agent = budgeted_agent(chat_model(provider, loopback.url), checkpointer)
                with pytest.raises(ToolErrorBudgetExceeded) as raised:
                    await agent.ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
            async with AsyncPostgresSaver.from_conn_string(uri) as fresh:
                agent = budgeted_agent(chat_model(provider, loopback.url), fresh)
                assert_stopped_step_kept(await avalues_of(agent), raised.value)
                result = await agent.ainvoke({"messages": [HumanMessage(NEXT_INPUT)]}, CONFIG)
        assert_next_input_paired(provider, loopback, result)


@pytest.fixture
def maybe_postgres(request: pytest.FixtureRequest, saver: Saver) -> Postgres | None:
    """The session's PostgreSQL server for the PostgreSQL cases; none for memory."""
    if saver == "memory":
        return None
    server: Postgres = request.getfixturevalue("postgres")
    return server


@pytest.mark.providers
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stopped_thread_goes_on_with_every_call_paired_in_the_providers_request(
    provider: Provider, path: Path, saver: Saver, maybe_postgres: Postgres | None
) -> None:
    if path == "sync":
        run_sync_thread(provider, saver, maybe_postgres)
    else:
        asyncio.run(run_async_thread(provider, saver, maybe_postgres))
    checkpointer = {
        ("postgres", "sync"): "PostgresSaver",
        ("postgres", "async"): "AsyncPostgresSaver",
    }.get((saver, path), "InMemorySaver")
    FIGURES.append(
        f"stop then next input ({provider}, {path} path, {checkpointer}): 3 calls of the "
        "stopped thread each paired with one result in the provider's request"
    )


# The stopping failure on the exception: `ToolErrorBudgetExceeded.failure` (issue 34).


def scripted_stop(checkpointer: BaseCheckpointSaver[str]) -> Agent:
    script: list[Any] = [
        AIMessage("", tool_calls=[call("bad", "b0")]),
        AIMessage("", tool_calls=[call("bad", "b1"), call("ok_tool", "ok1", query="y")]),
        AIMessage(FINAL),
    ]
    return budgeted_agent(ScriptedChatModel(script=script), checkpointer)


def test_the_stop_carries_the_stopping_entry_of_the_checkpointed_record(
    postgres: Postgres,
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    uri = postgres.new_database()
    with PostgresSaver.from_conn_string(uri) as checkpointer:
        checkpointer.setup()
        with pytest.raises(ToolErrorBudgetExceeded) as raised:
            scripted_stop(checkpointer).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    with PostgresSaver.from_conn_string(uri) as fresh:
        failures: list[ToolFailure] = values_of(scripted_stop(fresh))["tool_failures"]
    [stopped] = [f for f in failures if f["outcome"] == "stopped"]
    assert stopped["call_id"] == "b1"
    assert raised.value.failure == stopped


# A "tell" budget: one text for the whole run.

TELL_SCRIPT = [
    AIMessage("", tool_calls=[call("bad", "b0")]),
    AIMessage("", tool_calls=[call("bad", "b1"), call("bad", "b2")]),  # both over the limit
    AIMessage("", tool_calls=[call("bad", "b3")]),  # later calls: the tool is closed
    AIMessage("", tool_calls=[call("bad", "b4"), call("ok_tool", "ok4")]),
    AIMessage(FINAL),
]
CLOSED = ["b1", "b2", "b3", "b4"]


def telling_agent(checkpointer: BaseCheckpointSaver[str]) -> Agent:
    middleware = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, when_spent="tell"),
        record_failures=True,
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=list(TELL_SCRIPT)),
        tools=tools(),
        middleware=[middleware],
        checkpointer=checkpointer,
    )
    return agent


def assert_one_text_for_the_closed_tool(values: Mapping[str, Any]) -> None:
    messages: list[BaseMessage] = values["messages"]
    assert answers(messages) == dict.fromkeys(["b0", *CLOSED, "ok4"], 1)
    by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    failures: list[ToolFailure] = values["tool_failures"]
    assert [(f["call_id"], f["outcome"]) for f in failures] == [
        ("b0", "answered"),
        ("b1", "told"),
        ("b2", "told"),
    ]
    assert by_id["ok4"].text == "fine "
    told = by_id["b1"]
    assert told.status == "error"
    assert "`bad`" in told.text
    assert told.text != by_id["b0"].text
    texts = {call_id: by_id[call_id].content for call_id in CLOSED}
    assert texts == dict.fromkeys(CLOSED, told.content), texts


def test_a_tool_closed_by_tell_gets_one_text_for_the_whole_run(
    path: Path, postgres: Postgres
) -> None:
    uri = postgres.new_database()
    if path == "sync":
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(uri) as checkpointer:
            checkpointer.setup()
            result = telling_agent(checkpointer).invoke({"messages": [HumanMessage("go")]}, CONFIG)
        with PostgresSaver.from_conn_string(uri) as fresh:
            values = values_of(telling_agent(fresh))
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async def both() -> tuple[dict[str, Any], dict[str, Any]]:
            async with AsyncPostgresSaver.from_conn_string(uri) as checkpointer:
                await checkpointer.setup()
                done = await telling_agent(checkpointer).ainvoke(
                    {"messages": [HumanMessage("go")]}, CONFIG
                )
            async with AsyncPostgresSaver.from_conn_string(uri) as fresh:
                return done, await avalues_of(telling_agent(fresh))

        result, values = asyncio.run(both())

    assert result["messages"][-1].text == FINAL
    assert_one_text_for_the_closed_tool(values)
    FIGURES.append(f"tell on PostgreSQL ({path} path): 4 answers of a closed tool, one text")


# The checkpoint format, in two processes: `python -m tests.test_postgres write|read ...`.

FORMAT_KEYS = (
    "messages",
    "tool_failures",
    "tool_error_budget_counts",
    "tool_error_budget_stops",
    "tool_error_settled",
)
"""The state the middleware writes (and the messages, where its answers are)."""


def _lookup(record_id: int) -> str:
    return f"record {record_id}"


def _reported(query: str = "") -> str:
    raise ToolException("the service reported a failure")


def _declined(query: str = "") -> str:
    raise ValueError(query)


def blocks(exc: Exception, request: ToolCallRequest) -> list[TextContentBlock]:
    name = request.tool_call["name"]
    return [create_text_block(f"`{name}` failed"), create_text_block(type(exc).__name__)]


def type_only(exc: Exception, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} failed with {type(exc).__name__}"


def decline(exc: ValueError, request: ToolCallRequest) -> str | None:
    return None


def describe(failure: ReportedFailure, request: ToolCallRequest) -> str:
    return f"{failure.tool} failed"


def malformed(call_id: str) -> dict[str, Any]:
    return {"name": "lookup", "args": '{"record_id": 1', "id": call_id, "error": None}


def format_agent(checkpointer: BaseCheckpointSaver[str]) -> Agent:
    """An agent whose checkpoint holds everything the middleware writes.

    `inner` records every kind (an exception, invalid arguments, an unknown tool, a tool's
    own report, a malformed call, a limit's block), answers `bad` with list content until
    its route's "tell" budget closes it, declines a `ValueError` (which `outer` answers),
    and stops the run at its eighth failure.
    """
    failing: list[BaseTool] = [
        failing_tool("bad", ERROR),
        StructuredTool.from_function(_lookup, name="lookup", description="a record"),
        StructuredTool.from_function(
            _reported, name="reported", description="reports", handle_tool_error=True
        ),
        StructuredTool.from_function(_declined, name="declined", description="declined"),
        echo_tool("limited"),
    ]
    inner = ToolErrorMiddleware.from_routes(
        [
            Route(LookupError, blocks, budget=ErrorBudget(per_tool=1, when_spent="tell")),
            Route(ValueError, decline),
            Route(ReportedFailure, describe),
            Route(Exception, type_only),
        ],
        budget=ErrorBudget(per_run=7),
        record_failures=True,
        name="inner",
    )
    outer = ToolErrorMiddleware(type_only, record_failures=True, name="outer")
    limit = ToolCallLimitMiddleware(tool_name="limited", run_limit=1, exit_behavior="continue")
    first = AIMessage(
        "",
        tool_calls=[
            call("bad", "b0"),
            call("lookup", "v0", record_id="A-17"),
            call("nope", "u0"),
            call("reported", "r0"),
            call("declined", "d0"),
            call("limited", "l0"),
        ],
        invalid_tool_calls=[malformed("m0")],
    )
    script: list[Any] = [
        first,
        AIMessage("", tool_calls=[call("limited", "l1"), call("bad", "b1")]),
        AIMessage("", tool_calls=[call("bad", "b2"), call("lookup", "v1", record_id="B")]),
        AIMessage(FINAL),
    ]
    middleware: list[AgentMiddleware[Any, Any, Any]] = [outer, inner, limit]
    agent: Agent = create_agent(
        ScriptedChatModel(script=script),
        tools=failing,
        middleware=middleware,
        checkpointer=checkpointer,
    )
    return agent


def _kept(channel_values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(channel_values[key]) for key in FORMAT_KEYS if key in channel_values}


_IN_MEMORY: dict[str, Any] = {}
"""The writer's values: the last checkpoint a saver was given to write, before serializing."""


def _remember(checkpoint: Checkpoint) -> None:
    _IN_MEMORY.clear()
    _IN_MEMORY.update(_kept(checkpoint["channel_values"]))


class _Warnings(logging.Handler):
    """Keeps the serializer's warnings: a type blocked, or allowed only with a warning."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    @override
    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class _Remembering(Watching):
    """Keeps the last checkpoint it is given in `_IN_MEMORY`, as the writer had it."""

    @override
    def saving(self, checkpoint: Checkpoint | None, writes: Sequence[tuple[str, Any]]) -> None:
        if checkpoint is not None:
            _remember(checkpoint)


def _write_postgres(uri: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    class Recording(_Remembering, PostgresSaver):
        pass

    with Recording.from_conn_string(uri) as checkpointer:
        checkpointer.setup()
        _run_format_agent(checkpointer)


def _write_sqlite(file: str) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    class Recording(_Remembering, SqliteSaver):
        pass

    with Recording.from_conn_string(file) as checkpointer:
        _run_format_agent(checkpointer)


def _run_format_agent(checkpointer: BaseCheckpointSaver[str]) -> None:
    with pytest.raises(ToolErrorBudgetExceeded):
        format_agent(checkpointer).invoke({"messages": [HumanMessage("go")]}, CONFIG)


def _read(checkpointer: BaseCheckpointSaver[str]) -> dict[str, Any]:
    """The thread as a fresh saver reads it: the state's values, and the raw checkpoint."""
    values = values_of(format_agent(checkpointer))
    stored = checkpointer.get_tuple(CONFIG)
    assert stored is not None
    return {
        "values": {key: values[key] for key in FORMAT_KEYS if key in values},
        "channel_values": _kept(stored.checkpoint["channel_values"]),
    }


def _read_postgres(uri: str) -> dict[str, Any]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(uri) as checkpointer:
        return _read(checkpointer)


def _read_sqlite(file: str) -> dict[str, Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(file) as checkpointer:
        return _read(checkpointer)


def main(argv: Sequence[str]) -> int:
    """`write STORE TARGET OUT`: run the format agent on a new thread, and pickle to OUT the
    values it wrote, as they were in memory. `read STORE TARGET OUT`: read the thread back
    with a fresh saver, and pickle what came back. STORE is `postgres` (TARGET a URI) or
    `sqlite` (TARGET a file). Pickle, not the checkpointer's serializer, carries them.
    """
    phase, store, target, out = argv
    warnings = _Warnings()
    logging.getLogger("langgraph").addHandler(warnings)
    payload: dict[str, Any]
    if phase == "write":
        (_write_postgres if store == "postgres" else _write_sqlite)(target)
        payload = {"values": dict(_IN_MEMORY)}
    else:
        payload = (_read_postgres if store == "postgres" else _read_sqlite)(target)
    payload["warnings"] = warnings.lines
    # langgraph reads LANGGRAPH_STRICT_MSGPACK once, at import: what this process ran with.
    serde = importlib.import_module("langgraph.checkpoint.serde._msgpack")
    payload["strict"] = serde.STRICT_MSGPACK_ENABLED is True
    FilePath(out).write_bytes(pickle.dumps(payload))
    return 0


def _mapping(value: object) -> Mapping[Any, Any] | None:
    return cast("Mapping[Any, Any]", value) if isinstance(value, dict) else None


def _sequence(value: object) -> Sequence[Any] | None:
    return cast("Sequence[Any]", value) if isinstance(value, (list, tuple)) else None


def differences(expected: object, actual: object, where: str = "") -> list[str]:
    """Where `actual` differs from `expected`, in value or in type, at any depth."""
    if type(expected) is not type(actual):
        return [f"{where}: {type(expected).__name__} came back as {type(actual).__name__}"]
    ours = _mapping(expected)
    if ours is not None:
        theirs = cast("Mapping[Any, Any]", actual)
        if ours.keys() != theirs.keys():
            return [f"{where}: keys {sorted(ours)} came back as {sorted(theirs)}"]
        return [d for k in ours for d in differences(ours[k], theirs[k], f"{where}[{k!r}]")]
    ours_seq = _sequence(expected)
    if ours_seq is not None:
        theirs_seq = cast("Sequence[Any]", actual)
        if len(ours_seq) != len(theirs_seq):
            return [f"{where}: {len(ours_seq)} items came back as {len(theirs_seq)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(ours_seq, theirs_seq, strict=True))
            for d in differences(a, b, f"{where}[{i}]")
        ]
    if isinstance(expected, BaseMessage):
        theirs_message = cast("BaseMessage", actual)
        found = differences(expected.content, theirs_message.content, f"{where}.content")
        if isinstance(expected, AIMessage):
            theirs_ai = cast("AIMessage", actual)
            found += differences(expected.tool_calls, theirs_ai.tool_calls, f"{where}.tool_calls")
        if not found and expected != actual:
            found.append(f"{where}: {expected!r} came back as {actual!r}")
        return found
    return [] if expected == actual else [f"{where}: {expected!r} came back as {actual!r}"]


def assert_everything_is_written(values: Mapping[str, Any]) -> None:
    """The scenario's state holds every thing the test is about."""
    failures: list[ToolFailure] = values["tool_failures"]
    assert {f["outcome"] for f in failures} == {"answered", "told", "stopped"}
    assert {f["kind"] for f in failures} == {
        "exception",
        "invalid_arguments",
        "unknown_tool",
        "tool_reported",
        "inner_middleware",
        "malformed_call",
    }
    assert {f["middleware"] for f in failures} == {"inner", "outer"}
    assert values["tool_error_budget_counts"]
    assert set(values["tool_error_budget_stops"]) == {"inner"}
    assert values["tool_error_settled"]
    errors = [m for m in values["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert any(isinstance(m.content, list) for m in errors)
    assert any(isinstance(m.content, str) for m in errors)


def test_a_difference_in_type_is_found_where_the_values_look_alike() -> None:
    message = ToolMessage([{"type": "text", "text": "x"}], tool_call_id="c", status="error")
    as_dict = message.model_dump()

    assert differences({"m": [message]}, {"m": [message.model_copy()]}) == []
    assert differences({"m": [message]}, {"m": [as_dict]}) == [
        "['m'][0]: ToolMessage came back as dict"
    ]
    assert differences({"n": 1}, {"n": 1.0}) == ["['n']: int came back as float"]
    assert differences({"c": {"a": 1}}, {"c": {"a": 2}}) == ["['c']['a']: 1 came back as 2"]


Store = Literal["postgres", "sqlite"]


@pytest.fixture
def store_target(request: pytest.FixtureRequest, store: Store, tmp_path: FilePath) -> str:
    if store == "sqlite":
        return str(tmp_path / "checkpoints.sqlite")
    server: Postgres = request.getfixturevalue("postgres")
    return server.new_database()


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "default"])
@pytest.mark.parametrize("store", ["postgres", "sqlite"])
def test_everything_the_middleware_writes_comes_back_as_the_same_types(
    store: Store, strict: bool, store_target: str, tmp_path: FilePath
) -> None:
    env = {"LANGGRAPH_STRICT_MSGPACK": "true" if strict else "false"}
    written, read = tmp_path / "written.pickle", tmp_path / "read.pickle"
    for phase, out in (("write", written), ("read", read)):
        done = run_python(
            "-m", "tests.test_postgres", phase, store, store_target, str(out), env=env, timeout=180
        )
        assert done.returncode == 0, done.stderr

    expected: dict[str, Any] = pickle.loads(written.read_bytes())
    came_back: dict[str, Any] = pickle.loads(read.read_bytes())
    assert (expected["strict"], came_back["strict"]) == (strict, strict)
    in_memory: dict[str, Any] = expected["values"]
    assert_everything_is_written(in_memory)
    assert set(in_memory) == set(FORMAT_KEYS)
    assert differences(in_memory, came_back["values"]) == []
    assert differences(in_memory, came_back["channel_values"]) == []
    assert [w for w in came_back["warnings"] if "eserializ" in w] == []
    mode = "strict" if strict else "default"
    FIGURES.append(
        f"checkpoint format ({store}, {mode} msgpack): {len(in_memory['tool_failures'])} record "
        f"entries, {len(in_memory['messages'])} messages, counts, stop and settled marks read "
        "back in a fresh process, equal and of the same types"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
