"""The record of a run's failures and the listeners, through real agents on both paths."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import warnings
from collections.abc import Callable, Generator, Sequence
from pathlib import Path as FilePath
from typing import Any, cast

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, Overwrite, interrupt
from typing_extensions import override

from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    InvalidArguments,
    MalformedToolCall,
    ReportedFailure,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import (
    Agent,
    Path,
    Ready,
    agent_of,
    build_agent,
    call,
    echo_tool,
    failing_tool,
    question,
    reporting,
    run,
    tool_messages,
)
from tests._wrapping import Around, AroundToolCalls, ToolResult
from tests.conftest import FIGURES

UntypedMiddleware: Any = ToolErrorMiddleware

RECORD_KEYS = {"middleware", "tool", "call_id", "kind", "error_type", "route", "outcome"}
"""The keys of every entry of the record, and no others."""


def turns(*plans: Sequence[str]) -> list[Any]:
    """A script: one model turn per plan, calling the tools it names, then a final answer."""
    return [
        AIMessage("", tool_calls=[call(name, f"t{turn}-{i}") for i, name in enumerate(plan)])
        for turn, plan in enumerate(plans)
    ] + [AIMessage("done")]


def reporting_tool() -> BaseTool:
    """A tool that answers its own failure (`handle_tool_error=True`)."""

    def archive(record_id: int) -> str:
        """Archive a record."""
        raise ToolException("archive is read-only")

    return StructuredTool.from_function(archive, handle_tool_error=True)


def summary(result: dict[str, Any]) -> list[tuple[str, str, str, str, int | None]]:
    failures: list[ToolFailure] = result["tool_failures"]
    return [(f["tool"], f["kind"], f["error_type"], f["outcome"], f["route"]) for f in failures]


def recording(**options: Any) -> ToolErrorMiddleware:
    middleware: ToolErrorMiddleware = UntypedMiddleware(
        report_type_only, record_failures=True, **options
    )
    return middleware


def test_the_output_holds_every_kind_of_failure_of_the_run(path: Path) -> None:
    malformed = AIMessage(
        "",
        invalid_tool_calls=[
            InvalidToolCall(name="echo", args="{", id="cut", error="eof", type="invalid_tool_call")
        ],
    )
    script = [
        AIMessage(
            "",
            tool_calls=[
                call("search", "a", query="x"),
                call("nowhere", "b"),
                call("echo", "c", query=["not", "a", "str"]),
                call("archive", "d", record_id=7),
                call("echo", "e", query="fine"),
            ],
        ),
        malformed,
        AIMessage("done"),
    ]
    tools = [failing_tool("search", ConnectionError("down")), echo_tool(), reporting_tool()]
    agent = agent_of(tools, [recording()], script)

    result = run(agent, path)

    assert sorted(summary(result)) == sorted(
        [
            ("search", "exception", "ConnectionError", "answered", 0),
            ("nowhere", "unknown_tool", "langchain_tool_errors.UnknownTool", "answered", None),
            (
                "echo",
                "invalid_arguments",
                "langchain_tool_errors.InvalidArguments",
                "answered",
                None,
            ),
            (
                "archive",
                "tool_reported",
                "langchain_tool_errors.ToolReportedError",
                "answered",
                None,
            ),
            ("echo", "malformed_call", "langchain_tool_errors.MalformedToolCall", "answered", None),
        ]
    )
    by_call = {f["call_id"]: f for f in result["tool_failures"]}
    assert set(by_call) == {"a", "b", "c", "d", "cut"}  # the call that succeeded is not in it
    assert {f["middleware"] for f in result["tool_failures"]} == {"ToolErrorMiddleware"}
    FIGURES.append(f"record ({path}): 5 failures of 5 kinds in one run's output")


def test_a_record_names_the_route_that_took_each_failure(path: Path) -> None:
    def rewrite(failure: ReportedFailure, request: ToolCallRequest) -> str:
        return "rewritten"

    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, report_type_only),
            Route(InvalidArguments, rewrite),
            Route(Exception, report_type_only),
        ],
        record_failures=True,
        name="routed",
    )
    tools = [
        failing_tool("lookup", KeyError("k")),
        failing_tool("fetch", TimeoutError("t")),
        echo_tool(),
    ]
    script = [
        AIMessage(
            "",
            tool_calls=[call("lookup", "1"), call("fetch", "2"), call("echo", "3", query=[1])],
        ),
        AIMessage("done"),
    ]

    result = run(agent_of(tools, [middleware], script), path)

    routes = {f["call_id"]: (f["route"], f["error_type"]) for f in result["tool_failures"]}
    assert routes == {
        "1": (0, "KeyError"),
        "2": (2, "TimeoutError"),
        "3": (1, "langchain_tool_errors.InvalidArguments"),
    }
    assert tool_messages(result)["3"].text == "rewritten"
    assert {f["middleware"] for f in result["tool_failures"]} == {"routed"}


def test_the_record_holds_no_message_and_no_argument(path: Path) -> None:
    error = KeyError("secret-token-123")
    agent = build_agent(
        [failing_tool("search", error)], [recording()], [call("search", "s", query="secret-arg")]
    )

    result = run(agent, path)

    [failure] = result["tool_failures"]
    assert "secret" not in repr(failure)
    assert set(failure) == RECORD_KEYS
    assert failure["error_type"] == "KeyError"


def test_an_exception_type_is_named_with_its_module(path: Path) -> None:
    agent = build_agent(
        [failing_tool("ask", ToolException("x")), failing_tool("run", TimeoutError())],
        [recording()],
        [call("ask", "a"), call("run", "b")],
    )

    result = run(agent, path)

    types = {f["tool"]: f["error_type"] for f in result["tool_failures"]}
    assert types == {"ask": "langchain_core.tools.base.ToolException", "run": "TimeoutError"}


FRESH_TYPES = [
    ("QuotaError", "billing.errors", "billing.errors.QuotaError"),
    ("Probe", "builtins", "Probe"),
    ("PrivateProbe", "_langchain_tool_errors.failures", "langchain_tool_errors.PrivateProbe"),
]


@pytest.mark.parametrize(
    ("name", "module", "named"), FRESH_TYPES, ids=["module", "builtin", "ours"]
)
def test_a_type_is_named_by_its_module_the_first_time_and_after(
    path: Path, name: str, module: str, named: str
) -> None:
    # A class made here, so no record has named it before (names are cached by class).
    cls = type(name, (Exception,), {"__module__": module})
    agent = build_agent(
        [failing_tool("first", cls("x")), failing_tool("again", cls("y"))],
        [recording()],
        [call("first", "a"), call("again", "b")],
    )

    result = run(agent, path)

    assert [f["error_type"] for f in result["tool_failures"]] == [named, named]


def test_parallel_failures_in_one_step_are_all_kept_in_call_order(path: Path) -> None:
    names = [f"tool{i}" for i in range(20)]
    tools = [failing_tool(name, LookupError(name)) for name in names]
    agent = build_agent(tools, [recording()], [call(name, name) for name in names])

    result = run(agent, path)

    # They settle in any order; the record keeps the order of the model's calls.
    assert [f["call_id"] for f in result["tool_failures"]] == names
    FIGURES.append(f"record ({path}): 20 parallel failures in one step, 20 records")


class Settling:
    """Tools that fail in a forced order, each only once the listeners were told of the one
    before it: which call settles first is decided by events, not by how long each takes."""

    def __init__(self, order: Sequence[str]) -> None:
        self.told: list[ToolFailure] = []
        self._told = {name: threading.Event() for name in order}
        self._after = dict(zip(order[1:], order, strict=False))

    def tool(self, name: str) -> BaseTool:
        """A tool that fails with `LookupError(name)` once its predecessor was told."""

        def run_tool(query: str = "") -> str:
            before = self._after.get(name)
            if before is not None and not self._told[before].wait(timeout=30):
                msg = f"{name}: the listeners were never told of {before}"
                raise TimeoutError(msg)
            raise LookupError(name)

        return StructuredTool.from_function(run_tool, name=name, description=f"{name} (waits)")

    def listener(self, failure: ToolFailure) -> None:
        """Note the failure, and let the call that waits for it settle."""
        self.told.append(failure)
        self._told[failure["tool"]].set()


def test_the_record_keeps_call_order_and_listeners_are_told_as_calls_settle(path: Path) -> None:
    names = ["slowest", "slow", "quick"]
    settling = Settling(names[::-1])  # quick settles first, then slow, then slowest
    agent = build_agent(
        [settling.tool(name) for name in names],
        [recording(listeners=[settling.listener])],
        [call(name, name) for name in names],
    )

    result = run(agent, path)

    assert [f["call_id"] for f in result["tool_failures"]] == names
    assert [f["error_type"] for f in result["tool_failures"]] == ["LookupError"] * 3
    assert [f["call_id"] for f in settling.told] == names[::-1]


def test_each_run_on_a_thread_has_its_own_record(path: Path) -> None:
    agent = agent_of(
        [failing_tool("search", LookupError("x"))],
        [recording()],
        [*turns(["search"], ["search"])[:2], AIMessage("first"), *turns(["search"])],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    first = run(agent, path, {"messages": [HumanMessage("one")]}, config)
    second = run(agent, path, {"messages": [HumanMessage("two")]}, config)

    assert [f["call_id"] for f in first["tool_failures"]] == ["t0-0", "t1-0"]
    assert [f["call_id"] for f in second["tool_failures"]] == ["t0-0"]


def test_an_empty_record_written_adds_nothing_and_only_an_overwrite_empties_it() -> None:
    agent = agent_of(
        [failing_tool("search", LookupError("x"))],
        [recording()],
        turns(["search"]),
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    first = run(agent, "sync", question(), config)
    [record] = first["tool_failures"]
    graph: Any = agent  # the Protocol has no `get_state`/`update_state`; the graph has

    graph.update_state(config, {"tool_failures": []})
    kept = graph.get_state(config).values["tool_failures"]
    graph.update_state(config, {"tool_failures": [record]})
    added = graph.get_state(config).values["tool_failures"]
    graph.update_state(config, {"tool_failures": Overwrite([])})
    emptied = graph.get_state(config).values["tool_failures"]

    assert (kept, added, emptied) == ([record], [record, record], [])


def test_a_run_with_no_failure_has_an_empty_record(path: Path) -> None:
    agent = build_agent([echo_tool()], [recording()], [call("echo", "e", query="hi")])

    assert run(agent, path)["tool_failures"] == []


def stream_updates(agent: Agent, path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each node's update of a run, as `stream(stream_mode="updates")` shows them."""
    streaming: Any = agent  # the Protocol has no `stream`; the compiled graph has

    async def collect() -> list[Any]:
        return [chunk async for chunk in streaming.astream(question(), stream_mode="updates")]

    chunks: list[dict[str, Any]] = (
        list(streaming.stream(question(), stream_mode="updates"))
        if path == "sync"
        else asyncio.run(collect())
    )
    return [(node, update or {}) for chunk in chunks for node, update in chunk.items()]


@pytest.mark.parametrize("budgeted", [False, True])
def test_a_streams_updates_hold_only_records_counts_and_marks(path: Path, budgeted: bool) -> None:
    options: dict[str, Any] = {"budget": ErrorBudget(per_tool=5)} if budgeted else {}
    agent = agent_of(
        [failing_tool("search", LookupError("x"))],
        [recording(**options)],
        turns(["search", "search"]),
    )

    updates = stream_updates(agent, path)

    starts = [update for node, update in updates if node.endswith(".before_agent")]
    assert starts == [
        {
            "tool_failures": Overwrite([]),
            "tool_error_settled": Overwrite({}),
            "tool_error_budget_counts": Overwrite({}),
            "tool_error_budget_stops": Overwrite({}),
        }
        if budgeted
        else {"tool_failures": Overwrite([]), "tool_error_settled": Overwrite({})}
    ]
    # Each answered call is marked as settled (by its step, the reply's id, and its call
    # id), so that no hook before the model takes its answer for one written elsewhere.
    marks = [
        key.split("\x00")
        for _, update in updates
        if not isinstance(update.get("tool_error_settled"), Overwrite)
        for key in update.get("tool_error_settled", {})
    ]
    assert sorted(call_id for _, call_id in marks) == ["t0-0", "t0-1"]
    assert all(step for step, _ in marks)  # the replies' ids
    records = [
        f
        for _, update in updates
        if not isinstance(update.get("tool_failures"), Overwrite)
        for f in update.get("tool_failures", ())
    ]
    assert sorted((f["call_id"], f["outcome"]) for f in records) == [
        ("t0-0", "answered"),
        ("t0-1", "answered"),
    ]
    counts = [
        update["tool_error_budget_counts"]
        for _, update in updates
        if "tool_error_budget_counts" in update
        and not isinstance(update["tool_error_budget_counts"], Overwrite)
    ]
    assert all(isinstance(value, int) for count in counts for value in count.values())
    assert sum(count.get("ToolErrorMiddleware\x00search", 0) for count in counts) == (
        2 if budgeted else 0
    )


def test_without_record_failures_the_output_has_no_record(path: Path) -> None:
    seen: list[ToolFailure] = []
    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [ToolErrorMiddleware(report_type_only, listeners=[seen.append])],
        [call("search", "s")],
    )

    result = run(agent, path)

    assert "tool_failures" not in result
    assert [f["outcome"] for f in seen] == ["answered"]


def test_a_tell_budget_records_told_and_a_stop_budget_tells_the_listeners_stopped(
    path: Path,
) -> None:
    told_seen: list[ToolFailure] = []
    tell = recording(
        budget=ErrorBudget(per_tool=1, when_spent="tell"), listeners=[told_seen.append]
    )
    result = run(
        agent_of([failing_tool("svc", LookupError("x"))], [tell], turns(["svc"], ["svc"])), path
    )
    assert [f["outcome"] for f in result["tool_failures"]] == ["answered", "told"]
    assert told_seen == result["tool_failures"]

    stopped_seen: list[ToolFailure] = []
    stop = recording(budget=ErrorBudget(per_tool=1), listeners=[stopped_seen.append])
    agent = agent_of([failing_tool("svc", LookupError("x"))], [stop], turns(["svc"], ["svc"]))
    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path)
    assert [(f["call_id"], f["outcome"]) for f in stopped_seen] == [
        ("t0-0", "answered"),
        ("t1-0", "stopped"),
    ]


def test_a_budget_stopping_the_run_at_a_malformed_call_tells_the_listeners(path: Path) -> None:
    seen: list[ToolFailure] = []
    malformed = [
        AIMessage(
            "",
            # A valid call beside it keeps the run going (a reply with none ends it).
            tool_calls=[call("echo", f"ok{i}", query="fine")],
            invalid_tool_calls=[
                InvalidToolCall(
                    name="echo", args="{", id=f"cut{i}", error="eof", type="invalid_tool_call"
                )
            ],
        )
        for i in range(3)
    ]
    middleware = recording(budget=ErrorBudget(per_run=2), listeners=[seen.append])
    agent = agent_of([echo_tool()], [middleware], [*malformed, AIMessage("done")])

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path)

    assert [(f["call_id"], f["kind"], f["outcome"]) for f in seen] == [
        ("cut0", "malformed_call", "answered"),
        ("cut1", "malformed_call", "answered"),
        ("cut2", "malformed_call", "stopped"),
    ]


def test_a_declined_or_unrouted_exception_is_told_as_propagated(path: Path) -> None:
    def declines(exc: Exception, request: ToolCallRequest) -> str | None:
        return None

    seen: list[ToolFailure] = []
    middleware = ToolErrorMiddleware.from_routes(
        [Route(ValueError, declines, tools=["a"])], listeners=[seen.append]
    )
    declined = ValueError("bad")
    for tool, error in (("a", declined), ("b", ValueError("other tool"))):
        agent = build_agent([failing_tool(tool, error)], [middleware], [call(tool, tool)])
        with pytest.raises(ValueError, match=r"bad|other tool") as raised:
            run(agent, path)
        assert raised.value is error

    assert [(f["tool"], f["route"], f["outcome"]) for f in seen] == [
        ("a", 0, "propagated"),
        ("b", None, "propagated"),
    ]


def test_a_failure_of_a_call_the_model_gave_no_id_is_told_with_call_id_none(path: Path) -> None:
    # No message can answer a call without an id, so the failure goes on up (chained to a
    # ValueError naming the tool): listeners are told of it, with `call_id` None.
    error = KeyError("x")
    tool_call = call("search", "c1")
    tool_call["id"] = None
    seen: list[ToolFailure] = []
    agent = build_agent(
        [failing_tool("search", error)], [recording(listeners=[seen.append])], [tool_call]
    )

    with pytest.raises(ValueError, match="`search` has no id") as raised:
        run(agent, path)

    assert raised.value.__cause__ is error
    assert [(f["tool"], f["call_id"], f["kind"], f["outcome"]) for f in seen] == [
        ("search", None, "exception", "propagated")
    ]


def test_the_record_survives_an_interrupt_and_a_resume_by_another_agent(
    path: Path, tmp_path: FilePath
) -> None:
    def approve(action: str = "") -> str:
        return f"approved by {interrupt({'approve': action})}"

    def agent(checkpointer: BaseCheckpointSaver[str]) -> Agent:
        # A new agent and middleware: only the checkpoint holds the first failure.
        tools = [
            failing_tool("weather", LookupError("x")),
            StructuredTool.from_function(approve, name="approve", description="asks"),
        ]
        return agent_of(
            tools,
            [recording()],
            turns(["weather"], ["approve"], ["weather"]),
            checkpointer=checkpointer,
        )

    config: RunnableConfig = {"configurable": {"thread_id": "approval"}}
    database = str(tmp_path / "checkpoints.sqlite")
    if path == "async":
        pytest.importorskip("aiosqlite")
    with SqliteSaver.from_conn_string(database) as checkpointer:
        paused = agent(checkpointer).invoke({"messages": [HumanMessage("go")]}, config)
    assert "__interrupt__" in paused
    assert [f["call_id"] for f in paused["tool_failures"]] == ["t0-0"]

    if path == "sync":
        with SqliteSaver.from_conn_string(database) as checkpointer:
            resumed = agent(checkpointer).invoke(Command(resume="bob"), config)
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async def resume() -> dict[str, Any]:
            async with AsyncSqliteSaver.from_conn_string(database) as saver:
                return await agent(saver).ainvoke(Command(resume="bob"), config)

        resumed = asyncio.run(resume())

    assert [f["call_id"] for f in resumed["tool_failures"]] == ["t0-0", "t2-0"]
    FIGURES.append(f"record ({path}): kept across an interrupt, resumed by a new agent (SQLite)")


def test_two_recording_middleware_each_name_themselves(path: Path) -> None:
    outer = recording(name="outer")
    inner = recording(name="inner")
    agent = build_agent(
        [failing_tool("search", LookupError("x"))], [outer, inner], [call("search", "s")]
    )

    result = run(agent, path)

    # The inner one answered the exception; the outer one saw the inner one's answer.
    assert sorted((f["middleware"], f["kind"]) for f in result["tool_failures"]) == [
        ("inner", "exception"),
        ("outer", "inner_middleware"),
    ]


# Listeners.


def test_listeners_are_told_in_order_each_with_its_own_copy(path: Path) -> None:
    order: list[str] = []

    def first(failure: ToolFailure) -> None:
        order.append("first")
        failure["tool"] = "tampered"

    async def second(failure: ToolFailure) -> None:
        await asyncio.sleep(0)
        order.append(f"second saw {failure['tool']}")

    def third(failure: ToolFailure) -> None:
        order.append(f"third saw {failure['tool']}")

    listeners: list[Callable[[ToolFailure], Any]] = [first, third]
    if path == "async":
        listeners.insert(1, second)
    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [recording(listeners=listeners)],
        [call("search", "s")],
    )

    result = run(agent, path)

    expected = ["first", "second saw search", "third saw search"]
    assert order == (expected if path == "async" else [expected[0], expected[2]])
    assert result["tool_failures"][0]["tool"] == "search"


def test_a_listener_that_raises_is_logged_and_changes_nothing(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(failure: ToolFailure) -> None:
        raise RuntimeError("listener bug")

    async def abroken(failure: ToolFailure) -> None:
        raise RuntimeError("async listener bug")

    after: list[ToolFailure] = []
    listeners: list[Callable[[ToolFailure], Any]] = [broken, after.append]
    if path == "async":
        listeners.insert(1, abroken)
    tools = [failing_tool("search", LookupError("x"))]
    calls = [call("search", "s")]
    quiet = run(build_agent(tools, [ToolErrorMiddleware(report_type_only)], calls), path)

    with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
        result = run(build_agent(tools, [recording(listeners=listeners)], calls), path)

    assert [m.text for m in result["messages"]] == [m.text for m in quiet["messages"]]
    assert len(after) == 1  # the listeners after the broken one were still told
    raised = [r for r in caplog.records if r.exc_info is not None]
    assert [str(r.exc_info[1]) for r in raised if r.exc_info] == (
        ["listener bug", "async listener bug"] if path == "async" else ["listener bug"]
    )
    assert all("search" in r.getMessage() and "(call s," in r.getMessage() for r in raised)
    assert all("exception" in r.getMessage() and "answered" in r.getMessage() for r in raised)
    names = ["broken", "abroken"] if path == "async" else ["broken"]
    assert all(name in r.getMessage() for r, name in zip(raised, names, strict=True))
    assert [r.exc_info[0] for r in raised if r.exc_info] == [RuntimeError] * len(names)
    assert "listener bug" not in " ".join(m.text for m in result["messages"])


class Pending:
    """An awaitable that is not a coroutine, which knows whether it was closed or awaited."""

    def __init__(self) -> None:
        self.closed = False
        self.awaited = False

    def close(self) -> None:
        self.closed = True

    def __await__(self) -> Generator[None, None, None]:
        self.awaited = True
        yield from ()


def test_an_async_listener_on_the_sync_path_has_its_awaitable_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pending = Pending()

    def alert(failure: ToolFailure) -> Pending:
        return pending

    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [UntypedMiddleware(report_type_only, listeners=[alert])],
        [call("search", "s1")],
    )

    with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
        run(agent, "sync")

    assert (pending.closed, pending.awaited) == (True, False)
    assert len(caplog.records) == 1


def test_an_async_listener_on_the_sync_path_may_return_an_awaitable_with_no_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[ToolFailure] = []

    def alert(failure: ToolFailure) -> Ready:
        return Ready("never awaited")

    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [UntypedMiddleware(report_type_only, listeners=[alert, told.append])],
        [call("search", "s1")],
    )

    with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
        result = run(agent, "sync")

    assert tool_messages(result)["s1"].status == "error"
    assert [f["call_id"] for f in told] == ["s1"]
    assert len(caplog.records) == 1


def test_what_a_sync_listener_returns_is_ignored(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[ToolFailure] = []

    def returns_a_value(failure: ToolFailure) -> int:
        return 7

    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [UntypedMiddleware(report_type_only, listeners=[returns_a_value, told.append])],
        [call("search", "s1")],
    )

    with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
        run(agent, path)

    assert [f["call_id"] for f in told] == ["s1"]
    assert caplog.records == []


def test_an_async_listener_on_the_sync_path_is_not_run_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[ToolFailure] = []

    async def alert(failure: ToolFailure) -> None:
        ran.append(failure)

    agent = build_agent(
        [failing_tool("search", LookupError("x"))],
        [ToolErrorMiddleware(report_type_only, listeners=[alert])],
        [call("search", "s1")],
    )

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "coroutine was never awaited"
        with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
            result = run(agent, "sync")
        gc.collect()

    assert ran == []
    assert tool_messages(result)["s1"].status == "error"
    [logged] = caplog.records
    message = logged.getMessage()
    assert "alert" in message
    assert "search" in message
    assert "exception" in message  # the kind
    assert "s1" in message
    assert "ainvoke" in message  # the fix


def test_listeners_do_not_touch_the_success_path(path: Path) -> None:
    seen: list[ToolFailure] = []
    agent = build_agent(
        [echo_tool()], [recording(listeners=[seen.append])], [call("echo", "e", query="hi")]
    )

    result = run(agent, path)

    assert seen == []
    assert tool_messages(result)["e"].text == "echo: hi"


def test_a_middleware_with_neither_keeps_the_plain_class() -> None:
    assert type(ToolErrorMiddleware(report_type_only)) is ToolErrorMiddleware
    assert type(recording()) is not ToolErrorMiddleware
    assert type(ToolErrorMiddleware(report_type_only, listeners=[print])) is not ToolErrorMiddleware


def test_the_options_read_back_and_show_in_the_repr() -> None:
    seen: list[ToolFailure] = []
    middleware = recording(listeners=[seen.append])

    assert middleware.record_failures is True
    assert middleware.listeners == (seen.append,)
    assert "record_failures=True" in repr(middleware)
    assert "listeners=[<built-in method append" in repr(middleware)
    plain = ToolErrorMiddleware(report_type_only)
    assert (plain.record_failures, plain.listeners) == (False, ())
    assert "record_failures" not in repr(plain)
    assert "listeners" not in repr(plain)


def test_the_repr_shows_every_option_given_together() -> None:
    middleware = ToolErrorMiddleware(
        report_type_only, error_prefix="Oops: ", record_failures=True, listeners=[print]
    )

    text = repr(middleware)

    assert (
        "error_prefix='Oops: ', record_failures=True, listeners=[<built-in function print>]" in text
    )


# The runtime twins of the static checks.


def takes_two(failure: ToolFailure, extra: int) -> None:
    pass


class TakesNothing:
    def __call__(self) -> None:
        pass


def takes_two_evaluated(failure: ToolFailure, extra: int) -> None:
    pass


# As in a module without `from __future__ import annotations`: the classes themselves.
takes_two_evaluated.__annotations__ = {"failure": ToolFailure, "extra": int, "return": None}


def takes_a_model(failure: ToolFailure, model: ScriptedChatModel) -> None:
    pass


takes_a_model.__annotations__ = {"failure": ToolFailure, "model": ScriptedChatModel}


BAD_OPTIONS: list[tuple[dict[str, Any], type[Exception], list[str]]] = [
    (
        {"record_failures": "yes"},
        TypeError,
        ["`record_failures`", "'yes'", "record_failures=True"],
    ),
    ({"record_failures": 1}, TypeError, ["`record_failures`", "1", "record_failures=True"]),
    ({"listeners": print}, TypeError, ["`listeners`", "a list", "listeners=["]),
    ({"listeners": "print"}, TypeError, ["`listeners`", "'print'"]),
    ({"listeners": [print, 3]}, TypeError, ["`listeners[1]`", "3", "callable"]),
    (
        {"listeners": [lambda: None]},
        TypeError,
        ["`listeners[0]`", "it takes ()", "1 positional argument", "ToolFailure"],
    ),
    ({"listeners": [TakesNothing()]}, TypeError, ["`listeners[0]`", "()", "ToolFailure"]),
    (
        {"listeners": [takes_two]},
        TypeError,
        ["`listeners[0]`", "as listener(failure): it takes (failure, extra).", "1 positional"],
    ),
    # Shown by their parameters alone, whatever their annotations: strings or classes.
    (
        {"listeners": [takes_two_evaluated]},
        TypeError,
        ["it takes (failure, extra).", "such as `def count(failure: ToolFailure) -> None`."],
    ),
    (
        {"listeners": [takes_a_model]},
        TypeError,
        ["it takes (failure, model).", "1 positional argument"],
    ),
]


@pytest.mark.parametrize(("options", "error", "names"), BAD_OPTIONS)
def test_bad_options_are_refused_naming_the_argument_and_the_fix(
    options: dict[str, Any], error: type[Exception], names: list[str]
) -> None:
    builds: list[Callable[[], object]] = [
        lambda: UntypedMiddleware(report_type_only, **options),
        lambda: UntypedMiddleware.from_routes([Route(Exception, report_type_only)], **options),
    ]
    for build in builds:
        with pytest.raises(error) as raised:
            build()
        for name in names:
            assert name in str(raised.value)


def test_a_listener_with_defaults_or_varargs_is_accepted() -> None:
    def with_default(failure: ToolFailure, extra: int = 0) -> None:
        pass

    def variadic(*failures: ToolFailure) -> None:
        pass

    middleware: ToolErrorMiddleware = UntypedMiddleware(
        report_type_only, listeners=(with_default, variadic, print)
    )
    assert middleware.listeners == (with_default, variadic, print)


def test_a_malformed_call_with_a_route_records_the_route(path: Path) -> None:
    def answer(failure: MalformedToolCall, request: ToolCallRequest) -> str:
        return "send it again"

    middleware = ToolErrorMiddleware.from_routes(
        [Route(Exception, report_type_only), Route(MalformedToolCall, answer)],
        record_failures=True,
    )
    malformed = AIMessage(
        "",
        invalid_tool_calls=[
            InvalidToolCall(name="echo", args="{", id="cut", error="eof", type="invalid_tool_call")
        ],
    )
    result = run(agent_of([echo_tool()], [middleware], [malformed, AIMessage("done")]), path)

    assert summary(result) == [
        ("echo", "malformed_call", "langchain_tool_errors.MalformedToolCall", "answered", 1)
    ]
    assert tool_messages(result)["cut"].text == "send it again"


@pytest.mark.parametrize("routed", [False, True])
def test_a_reply_of_only_malformed_calls_goes_back_to_the_model_in_the_same_run(
    path: Path, routed: bool
) -> None:
    def answer(failure: MalformedToolCall, request: ToolCallRequest) -> str:
        return "send it again"

    routes: list[Route[Any]] = [Route(Exception, report_type_only)]
    if routed:
        routes.append(Route(MalformedToolCall, answer))
    middleware = ToolErrorMiddleware.from_routes(routes, record_failures=True)
    malformed = AIMessage(
        "",
        invalid_tool_calls=[
            InvalidToolCall(name="echo", args="{", id="cut", error="eof", type="invalid_tool_call")
        ],
    )
    read: list[ToolMessage] = []

    def next_reply(messages: Sequence[BaseMessage]) -> AIMessage:
        read.extend(m for m in messages if isinstance(m, ToolMessage))
        return AIMessage("done")

    agent = agent_of([echo_tool()], [middleware], [malformed, next_reply], InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    result = run(agent, path, question(), config)

    assert [(f["call_id"], f["outcome"]) for f in result["tool_failures"]] == [("cut", "answered")]
    # The model was called again in this run, and read the call's one answer.
    assert [(m.tool_call_id, m.status) for m in read] == [("cut", "error")]
    if routed:
        assert read[0].text.endswith("send it again")  # marked as an error for the model
    assert result["messages"][-1].text == "done"
    assert [m.tool_call_id for m in result["messages"] if isinstance(m, ToolMessage)] == ["cut"]


def test_an_outer_budget_counts_what_an_inner_recording_middleware_answered(path: Path) -> None:
    inner = recording(name="inner", budget=ErrorBudget(per_tool=5))
    kinds: tuple[FailureKind, ...] = ("inner_middleware",)
    outer = recording(name="outer", budget=ErrorBudget(per_tool=1, kinds=kinds))
    agent = agent_of(
        [failing_tool("svc", LookupError("x"))], [outer, inner], turns(["svc"], ["svc"], ["svc"])
    )

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    # The inner middleware answered each failure in a Command (its counts and record
    # beside the message); the outer one still read each answer, and its budget stopped
    # the run at the second.
    assert (raised.value.tool, raised.value.count, raised.value.kind) == (
        "svc",
        2,
        "inner_middleware",
    )


class Inspects(AroundToolCalls):
    """Another package's middleware that keeps what each tool call returns to it."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[ToolResult] = []

    @override
    def around(self, request: ToolCallRequest) -> Around:
        result = yield
        self.results.append(result)
        return result


def test_another_packages_middleware_outside_a_recording_one_receives_a_command(
    path: Path,
) -> None:
    spy = Inspects()
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [spy, recording()], [call("search", "c1")]
    )

    result = run(agent, path)

    [answer] = spy.results
    assert isinstance(answer, Command)
    update: dict[str, Any] = cast("dict[str, Any]", answer.update)
    [message] = update["messages"]
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.status, message.text) == (
        "c1",
        "error",
        "Tool `search` failed with KeyError.",
    )
    assert update["tool_failures"] == result["tool_failures"]
    assert [(f["call_id"], f["outcome"]) for f in update["tool_failures"]] == [("c1", "answered")]


def test_both_records_and_both_counts_are_kept_when_two_middleware_answer_one_call(
    path: Path,
) -> None:
    inner = recording(name="inner", budget=ErrorBudget(per_tool=1, when_spent="tell"))
    outer = recording(name="outer", budget=ErrorBudget(per_tool=3))
    agent = agent_of(
        [failing_tool("svc", LookupError("x"))], [outer, inner], turns(["svc"], ["svc"], ["svc"])
    )

    result = run(agent, path)

    assert [(f["middleware"], f["call_id"], f["outcome"]) for f in result["tool_failures"]] == [
        ("inner", "t0-0", "answered"),
        ("outer", "t0-0", "answered"),
        ("inner", "t1-0", "told"),
        ("outer", "t1-0", "answered"),
    ]
    # The third call was answered by the inner budget before any tool ran: the model read
    # that the tool is closed. That answer is the package's own, so neither middleware
    # counts it, though it passes the outer one's tool-call hook.
    assert "unavailable" in tool_messages(result)["t2-0"].text


def test_a_middleware_given_tools_sees_no_failure_of_other_tools(path: Path) -> None:
    for_a = recording(name="for_a", tools=["a"], budget=ErrorBudget(per_run=1))
    for_b = ToolErrorMiddleware(report_type_only, tools=["b"], name="for_b")
    agent = agent_of(
        [failing_tool("a", LookupError("a")), failing_tool("b", LookupError("b"))],
        [for_a, for_b],
        turns(["b"], ["b"], ["a"]),
    )

    result = run(agent, path)

    # for_b answered b twice; for_a neither counted (its per_run=1 would have stopped the
    # run) nor recorded those answers.
    assert summary(result) == [("a", "exception", "LookupError", "answered", 0)]


def test_a_listener_that_raises_logs_no_word_of_the_tools_exception(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(failure: ToolFailure) -> None:
        raise RuntimeError("listener bug")

    agent = build_agent(
        [failing_tool("search", KeyError("SECRET-patient-4711"))],
        [recording(listeners=[broken])],
        [call("search", "s", query="SECRET-argument")],
    )

    with caplog.at_level(logging.ERROR, logger="langchain_tool_errors"):
        run(agent, path)

    assert "listener bug" in caplog.text  # the listener's own traceback is there
    assert "SECRET" not in caplog.text  # the tool's exception is not its context


def test_the_record_is_in_the_output_schema_and_not_in_the_input_schema() -> None:
    agent = build_agent([echo_tool()], [recording()], [call("echo", "e")])
    compiled: Any = agent

    inputs = compiled.get_input_jsonschema()
    outputs = compiled.get_output_jsonschema()

    assert "tool_failures" not in inputs["properties"]
    assert "tool_failures" in outputs["properties"]
    assert set(outputs["$defs"]["ToolFailure"]["properties"]) == RECORD_KEYS


def test_a_stopped_runs_checkpoint_keeps_every_record_the_stopping_one_included(
    path: Path,
) -> None:
    seen: list[ToolFailure] = []
    middleware = recording(budget=ErrorBudget(per_tool=1), listeners=[seen.append])
    checkpointer = InMemorySaver()
    agent = agent_of(
        [failing_tool("svc", LookupError("x"))],
        [middleware],
        turns(["svc"], ["svc"]),
        checkpointer=checkpointer,
    )
    config: RunnableConfig = {"configurable": {"thread_id": "stopped"}}

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path, None, config)

    compiled: Any = agent
    values = compiled.get_state(config).values
    kept: list[ToolFailure] = values["tool_failures"]
    assert [(f["call_id"], f["outcome"]) for f in kept] == [
        ("t0-0", "answered"),
        ("t1-0", "stopped"),
    ]
    assert "the error budget stopped the run" in tool_messages(values)["t1-0"].text
    assert [(f["call_id"], f["outcome"]) for f in seen] == [
        ("t0-0", "answered"),
        ("t1-0", "stopped"),
    ]


def test_a_middleware_given_tools_records_no_exception_or_malformed_call_of_other_tools(
    path: Path,
) -> None:
    seen: list[ToolFailure] = []
    for_a = recording(tools=["a"], listeners=[seen.append])
    malformed = AIMessage(
        "",
        tool_calls=[call("b", "b1")],
        invalid_tool_calls=[
            InvalidToolCall(name="b", args="{", id="cut", error="eof", type="invalid_tool_call")
        ],
    )
    agent = agent_of([failing_tool("b", LookupError("b"))], [for_a], [malformed, AIMessage("done")])

    with pytest.raises(LookupError):
        run(agent, path)

    assert seen == []


def test_a_route_that_fails_on_a_reported_failure_is_told_as_propagated(path: Path) -> None:
    def archive(record_id: int) -> str:
        """Archive a record."""
        raise ToolException(f"record {record_id} is locked")

    def broken(failure: ReportedFailure, request: ToolCallRequest) -> str:
        raise RuntimeError("handler bug")

    seen: list[ToolFailure] = []
    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, report_type_only), Route(ReportedFailure, broken)],
        listeners=[seen.append],
    )
    reporting = StructuredTool.from_function(archive, handle_tool_error=True)
    agent = build_agent([reporting], [middleware], [call("archive", "r", record_id=7)])

    with pytest.raises(RuntimeError, match="handler bug"):
        run(agent, path)

    told = [(f["call_id"], f["tool"], f["kind"], f["route"], f["outcome"]) for f in seen]
    assert told == [("r", "archive", "tool_reported", 1, "propagated")]


def test_a_handler_that_fails_is_told_as_propagated(path: Path) -> None:
    def broken_handler(exc: Exception, request: ToolCallRequest) -> str:
        raise RuntimeError("handler bug")

    def bad_content(exc: Exception, request: ToolCallRequest) -> Any:
        return 42

    for handler, error in ((broken_handler, RuntimeError), (bad_content, TypeError)):
        seen: list[ToolFailure] = []
        middleware = ToolErrorMiddleware(handler, listeners=[seen.append])
        agent = build_agent(
            [failing_tool("search", KeyError("k"))], [middleware], [call("search", "s")]
        )

        with pytest.raises(error):
            run(agent, path)

        assert [(f["error_type"], f["route"], f["outcome"]) for f in seen] == [
            ("KeyError", 0, "propagated")
        ]


def test_error_answers_an_input_ends_with_are_the_caller_s_not_failures_of_the_run(
    path: Path,
) -> None:
    # An app that sends the whole history each time: the error answer its history ends
    # with, and the malformed call beside it, were met before this run (or are the client's
    # own), so the run that starts neither records, tells nor counts them, though no hook of
    # this run settled them.
    told: list[ToolFailure] = []
    agent = build_agent(
        [echo_tool()], [reporting(told, ErrorBudget(per_run=1))], [call("echo", "new")]
    )
    cut = InvalidToolCall(
        name="echo", args='{"text": ', id="cut", error="cut short", type="invalid_tool_call"
    )
    history: Any = {
        "messages": [
            HumanMessage("go"),
            AIMessage("", tool_calls=[call("echo", "old")], invalid_tool_calls=[cut]),
            ToolMessage("it broke", tool_call_id="old", name="echo", status="error"),
        ]
    }

    result = run(agent, path, history)

    assert result["tool_failures"] == []
    assert told == []
    assert result["messages"][-1].text == "done"  # the scripted model's reply after one
