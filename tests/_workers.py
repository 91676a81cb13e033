"""A worker process of the many-workers tests: it takes runs from a queue kept in PostgreSQL.

    python -m tests._workers URI PATH NAME LOGDIR

PATH is `sync` (`agent.invoke` on `PostgresSaver`) or `async` (`agent.ainvoke` on
`AsyncPostgresSaver`). The queue is the `runs` table of the same database (`QUEUE_TABLE`),
as LangGraph's server keeps its runs: a run is claimed with `SELECT ... FOR UPDATE SKIP
LOCKED` under a lease that a heartbeat thread renews while the worker is alive, and a run's
thread takes its next run only once this one is done (or cancelled). A run whose lease
expired (its worker was killed) is claimed again, `attempt` + 1, and goes on from its
thread's last checkpoint: it is sent its input only if the checkpoint does not hold it yet;
otherwise a pending interrupt is resumed, and anything else goes on with `invoke(None,
config)`: what is left of the run runs (a run that had ended runs nothing and is read back;
one a budget stopped raises its stop again).

Each run's input is a `HumanMessage` whose content is the run's script as JSON: the scripted
model reads it, so what the model does depends on the run and never on the worker. The
worker's one middleware instance serves every run; its listener appends a JSON line per
failure to `LOGDIR/listener-NAME-PID.jsonl`, and anything unexpected (a database error, a
lost lease) goes to `LOGDIR/errors-NAME-PID.log`.

With `LTE_WORKER_MARKERS` set to a directory, a call whose id holds `.B<point>` blocks at
that point (the tool, the handler, the listener, the model's next reply, or `cancel` in the
tool) the first time it gets there: it writes `<id>.<point>.reached` (holding its pid) and
sleeps until the test kills it. Every later attempt passes through.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, LiteralString, NoReturn, Protocol, TypeAlias, cast

import psycopg

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, StateSnapshot, interrupt
from psycopg.rows import DictRow, dict_row
from typing_extensions import TypedDict

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    MalformedToolCall,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
    ToolReportedError,
    UnknownTool,
)
from langchain_tool_errors.handlers import (
    report_invalid_fields,
    report_kind_only,
    report_known_tools,
    report_type_only,
)
from langchain_tool_errors.testing import Repeat, ScriptedChatModel

Json: TypeAlias = Any
"""A value decoded from JSON (or about to be encoded)."""

LEASE_SECONDS = 5.0
"""How long a claim lasts without a heartbeat; the heartbeat renews it every second."""

RESUME_VALUE = "yes"
"""What every interrupt is resumed with."""

MARKERS_ENV = "LTE_WORKER_MARKERS"

QUEUE_TABLE = """
CREATE TABLE runs (
    id serial PRIMARY KEY,
    thread_id text NOT NULL,
    seq int NOT NULL,
    input text NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    phase text NOT NULL DEFAULT 'input',
    attempt int NOT NULL DEFAULT 0,
    leased_by text,
    lease_until timestamptz,
    first_path text,
    avoid text,
    history jsonb NOT NULL DEFAULT '[]'::jsonb,
    result text,
    UNIQUE (thread_id, seq)
)
"""
"""The queue: `status` is pending, running, done or cancelled; `phase` is input or resume
(a run paused by an interrupt); `first_path` lets only a worker on that path take a run's
first attempt; `avoid` names a worker that must not take it (the one it paused on);
`history` has one entry per claim; `result` is JSON text (jsonb refuses the NUL
characters the budget counts' keys hold)."""

_CLAIM: LiteralString = """
UPDATE runs SET status = 'running', attempt = attempt + 1, leased_by = %(me)s,
    lease_until = clock_timestamp() + make_interval(secs => %(lease)s),
    history = history || jsonb_build_array(jsonb_build_object(
        'worker', %(me)s, 'path', %(path)s, 'phase', phase, 'attempt', attempt + 1))
WHERE id = (
    SELECT r.id FROM runs r
    WHERE (r.status = 'pending' OR (r.status = 'running' AND r.lease_until < clock_timestamp()))
      AND (r.avoid IS NULL OR r.avoid <> %(me)s)
      AND (r.first_path IS NULL OR r.attempt > 0 OR r.first_path = %(path)s)
      AND NOT EXISTS (
          SELECT 1 FROM runs p
          WHERE p.thread_id = r.thread_id AND p.seq < r.seq
            AND p.status NOT IN ('done', 'cancelled'))
    ORDER BY r.seq, r.id
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, thread_id, seq, input, phase, attempt
"""


# ---------------------------------------------------------------------------- blocking


def block_point(key: str, point: str) -> None:
    """Block forever the first time `key` reaches `point`, if markers are on and it asks to."""
    markers = os.environ.get(MARKERS_ENV)
    if not markers or f".B{point}" not in key:
        return
    directory = Path(markers)
    try:
        claim = os.open(directory / f"{key}.{point}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # a later attempt: go on
    os.close(claim)
    pending = directory / f"{key}.{point}.tmp"
    pending.write_text(str(os.getpid()))
    pending.rename(directory / f"{key}.{point}.reached")
    while True:
        time.sleep(0.5)


# ---------------------------------------------------------------------------- the agent


def _tools() -> list[BaseTool]:
    def lookup(tag: str, do: str) -> str:
        block_point(tag, "tool")
        block_point(tag, "cancel")
        if do == "value":
            msg = f"bad value in {tag}"
            raise ValueError(msg)
        if do == "key":
            raise KeyError(tag)
        if do == "conn":
            msg = f"service down for {tag}"
            raise ConnectionError(msg)
        return f"found {tag}"

    def measure(tag: str, n: int) -> str:
        return f"measured {n} for {tag}"

    def report(tag: str) -> str:
        msg = f"report failed for {tag}"
        raise ToolException(msg)

    def approve(tag: str) -> str:
        answer: object = interrupt({"approve": tag})
        return f"{tag} approved: {answer}"

    reporting = StructuredTool.from_function(report, name="report", description="reports")
    reporting.handle_tool_error = True
    return [
        StructuredTool.from_function(lookup, name="lookup", description="looks up"),
        StructuredTool.from_function(measure, name="measure", description="measures"),
        reporting,
        StructuredTool.from_function(approve, name="approve", description="asks a human"),
    ]


def _call(do: str, call_id: str) -> ToolCall:
    if do == "invalid":
        return ToolCall(name="measure", args={"tag": call_id, "n": "many"}, id=call_id)
    if do == "unknown":
        return ToolCall(name="lookkup", args={"tag": call_id}, id=call_id)
    if do == "reported":
        return ToolCall(name="report", args={"tag": call_id}, id=call_id)
    if do == "approve":
        return ToolCall(name="approve", args={"tag": call_id}, id=call_id)
    return ToolCall(name="lookup", args={"tag": call_id, "do": do}, id=call_id)


def call_id(thread: str, run: int, step: int, index: int, block: str | None) -> str:
    """The id of a scripted call; it carries its thread, so a leak shows in the state."""
    suffix = f".B{block}" if block else ""
    return f"{thread}.r{run}.s{step}.c{index}{suffix}"


def _human_index(messages: Sequence[BaseMessage]) -> int:
    return max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))


def reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The scripted model: the next step of the script in the run's input.

    The input is the last `HumanMessage`: `{"thread", "run", "plan"}`, where each step of
    the plan is `{"calls": [{"do", "block"}...], "malformed": bool, "block_model": bool}`.
    The step played is the number of model replies since that input.
    """
    start = _human_index(messages)
    spec: Json = json.loads(str(messages[start].content))
    thread: str = spec["thread"]
    run: int = spec["run"]
    plan: list[Json] = spec["plan"]
    step = sum(isinstance(m, AIMessage) for m in messages[start:])
    if step >= len(plan):
        return AIMessage(f"done: {thread} run {run}")
    if plan[step].get("block_model"):
        block_point(f"{thread}.r{run}.s{step}.Bmodel", "model")
    calls = [
        _call(c["do"], call_id(thread, run, step, i, c.get("block")))
        for i, c in enumerate(plan[step]["calls"])
    ]
    malformed: list[InvalidToolCall] = []
    if plan[step].get("malformed"):
        bad = call_id(thread, run, step, len(calls), None)
        malformed.append(
            InvalidToolCall(
                name="lookup",
                args=f'{{"tag": "{bad}", "do":',
                id=bad,
                error="truncated",
                type="invalid_tool_call",
            )
        )
    return AIMessage("", tool_calls=calls, invalid_tool_calls=malformed)


def no_record(exc: KeyError, request: ToolCallRequest) -> str:
    """The `KeyError` route's handler."""
    block_point(str(request.tool_call["id"]), "handler")
    return "There is no such record."


def unavailable(exc: ConnectionError, request: ToolCallRequest) -> str:
    """The `ConnectionError` route's handler."""
    block_point(str(request.tool_call["id"]), "handler")
    return "The service did not answer; try once more."


def any_error(exc: Exception, request: ToolCallRequest) -> str:
    """The last route's handler: the type only."""
    block_point(str(request.tool_call["id"]), "handler")
    return report_type_only(exc, request)


def middleware(listener: Callable[[ToolFailure], None]) -> ToolErrorMiddleware[Any, Any, Any]:
    """The worker's one middleware: a route per kind, "tell" route budgets, a "stop" budget."""
    return ToolErrorMiddleware.from_routes(
        [
            Route(InvalidArguments, report_invalid_fields),
            Route(UnknownTool, report_known_tools),
            Route(MalformedToolCall, report_kind_only),
            Route(
                ToolReportedError,
                report_kind_only,
                budget=ErrorBudget(per_tool=1, when_spent="tell"),
            ),
            Route(KeyError, no_record),
            Route(ConnectionError, unavailable, budget=ErrorBudget(per_tool=2, when_spent="tell")),
            Route(Exception, any_error),
        ],
        budget=ErrorBudget(per_tool=3, per_run=4, when_spent="stop"),
        record_failures=True,
        listeners=[listener],
    )


class Agent(Protocol):
    """What the workers use of a compiled agent (pyright strict reads `Command` as unknown)."""

    def invoke(
        self, input: InputAgentState | Command[Any] | None, config: RunnableConfig, /
    ) -> dict[str, Any]: ...

    async def ainvoke(
        self, input: InputAgentState | Command[Any] | None, config: RunnableConfig, /
    ) -> dict[str, Any]: ...

    def get_state(self, config: RunnableConfig, /) -> StateSnapshot: ...

    async def aget_state(self, config: RunnableConfig, /) -> StateSnapshot: ...


def build_agent(
    checkpointer: BaseCheckpointSaver[Any], listener: Callable[[ToolFailure], None]
) -> Agent:
    """The agent every worker (and the in-process reference) runs."""
    model = ScriptedChatModel(script=[Repeat(reply)])
    agent: Agent = create_agent(
        model, tools=_tools(), middleware=[middleware(listener)], checkpointer=checkpointer
    )
    return agent


def input_text(thread: str, run: int, plan: Json) -> str:
    """A run's input: its script, as JSON."""
    return json.dumps({"thread": thread, "run": run, "plan": plan}, sort_keys=True)


# ---------------------------------------------------------------------------- a run


Decision: TypeAlias = tuple[Literal["send"], InputAgentState | Command[Any] | None]


def decide(state: StateSnapshot, text: str) -> Decision:
    """How a run goes on from its thread's last checkpoint, as LangGraph's server re-runs it."""
    messages: list[BaseMessage] = list(state.values.get("messages", []))
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    if not humans or humans[-1].content != text:
        first: InputAgentState = {"messages": [HumanMessage(text)]}
        return ("send", first)  # the input never reached a checkpoint
    if any(task.interrupts for task in state.tasks):
        return ("send", Command(resume=RESUME_VALUE))
    # From the last checkpoint, with its saved writes: whatever is left of the run (a
    # thread that already ended runs nothing). `state.next` cannot tell: it leaves out the
    # tasks whose writes were saved, so a checkpoint whose step finished before the next
    # checkpoint was written shows no next node although the run is not over.
    return ("send", None)


def plain(value: object) -> Json:
    """`value` as JSON: messages as their visible parts, everything else as it is."""
    if isinstance(value, BaseMessage):
        message: dict[str, Json] = {"type": value.type, "content": plain(value.content)}
        if isinstance(value, AIMessage):
            message["tool_calls"] = [
                [c["name"], plain(c["args"]), c["id"]] for c in value.tool_calls
            ]
            message["invalid_tool_calls"] = [
                [c["name"], c["args"], c["id"], c["error"]] for c in value.invalid_tool_calls
            ]
        if isinstance(value, ToolMessage):
            message["tool_call_id"] = value.tool_call_id
            message["status"] = value.status
            message["name"] = value.name
        return message
    if isinstance(value, dict):
        items = cast("dict[object, object]", value)
        return {str(k): plain(v) for k, v in items.items()}
    if isinstance(value, (list, tuple)):
        elements = cast("Sequence[object]", value)
        return [plain(v) for v in elements]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


SETTLED = "tool_error_settled"
"""The state key of the marks that name each answered call by its step and its id."""


def with_replies_numbered(
    values: Mapping[str, Any], messages: Sequence[BaseMessage]
) -> dict[str, Any]:
    """`values` with each reply's id in the settled marks written as the reply's place.

    A mark names its step by the reply's message id, which each model call makes afresh, so
    a worker's run and the reference run of the same script differ there only; the reply's
    place among the thread's replies is what they share.
    """
    marks: object = values.get(SETTLED)
    if not isinstance(marks, dict):
        return dict(values)
    replies = [m for m in messages if isinstance(m, AIMessage)]
    places = {m.id: f"<reply {n}>" for n, m in enumerate(replies) if m.id}
    renamed = {
        "\x00".join(places.get(part, part) for part in str(key).split("\x00")): value
        for key, value in cast("dict[object, object]", marks).items()
    }
    return {**values, SETTLED: renamed}


def snapshot(state: StateSnapshot, text: str, outcome: str, error: str | None) -> Json:
    """What a run left in its thread: its outcome, and the state from its input on."""
    values = dict(state.values)
    messages: list[BaseMessage] = list(values.pop("messages", []))
    start = next(
        (i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and m.content == text),
        len(messages),
    )
    return {
        "outcome": outcome,
        "error": error,
        "messages_before": start,
        "messages": plain(messages[start:]),
        "values": plain(with_replies_numbered(values, messages)),
        "next": sorted(state.next),
        "interrupts": [plain(i.value) for task in state.tasks for i in task.interrupts],
    }


class StopNotSaved(Exception):
    """A run raised its stop, but the thread's checkpoint does not hold it: run it again.

    With LangGraph's default durability (`"async"`), a step is written while the next one
    runs, and the stop is raised by the next one. When the database fails during that write,
    LangGraph drops the write's error because the run already ends with the stop: the
    caller has `ToolErrorBudgetExceeded`, the thread stays at the step before. The worker
    treats it as the database error it is and hands the run back, as it does any other.

    The thread's state can show the stop all the same: the step's own writes are saved
    apart from its checkpoint, and the state read back applies them. What tells is that
    no step is left to run, where a saved stop leaves the hook that raises it.
    """


def _ended(state: StateSnapshot, text: str, stopped: ToolErrorBudgetExceeded | None) -> Json:
    if stopped is not None:
        if not state.values.get("tool_error_budget_stops") or not state.next:
            raise StopNotSaved(f"{stopped.failure} is not in the thread's checkpoint")
        # The message as the budget wrote it: whether the tool's exception is chained to it
        # depends on the process that raises it, which a retried run changes.
        message: str = stopped.args[0]
        return snapshot(state, text, "stopped", f"{type(stopped).__name__}: {message}")
    paused = any(task.interrupts for task in state.tasks)
    return snapshot(state, text, "paused" if paused else "ok", None)


def drive_sync(agent: Agent, thread: str, text: str) -> Json:
    """Run (or go on with) one run on the sync path; its snapshot once it ends or pauses."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    _, payload = decide(agent.get_state(config), text)
    stopped: ToolErrorBudgetExceeded | None = None
    try:
        agent.invoke(payload, config)
    except ToolErrorBudgetExceeded as spent:
        stopped = spent
    return _ended(agent.get_state(config), text, stopped)


async def drive_async(agent: Agent, thread: str, text: str) -> Json:
    """Run (or go on with) one run on the async path; its snapshot once it ends or pauses."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    _, payload = decide(await agent.aget_state(config), text)
    stopped: ToolErrorBudgetExceeded | None = None
    try:
        await agent.ainvoke(payload, config)
    except ToolErrorBudgetExceeded as spent:
        stopped = spent
    return _ended(await agent.aget_state(config), text, stopped)


# ---------------------------------------------------------------------------- the queue


class Claimed:
    """A run this worker holds the lease of."""

    def __init__(self, row: tuple[Any, ...]) -> None:
        self.id: int = row[0]
        self.thread: str = row[1]
        self.seq: int = row[2]
        self.text: str = row[3]
        self.phase: str = row[4]
        self.attempt: int = row[5]


QUEUE_PATIENCE = 150.0
"""Seconds the queue keeps trying its database (the tests wait 180 s for every run)."""


class Queue:
    """The `runs` table, over a connection of its own that reconnects after a failure."""

    def __init__(self, uri: str, me: str, path: str, errors: Path) -> None:
        self.uri, self.me, self.path, self.errors = uri, me, path, errors
        self._connection: psycopg.Connection[tuple[Any, ...]] | None = None
        self._current: Claimed | None = None
        self._lock = threading.Lock()
        threading.Thread(target=self._beat, daemon=True).start()

    def note(self, line: str) -> None:
        """Keep something unexpected in the errors log."""
        with self.errors.open("a") as log:
            log.write(line.replace("\n", " ") + "\n")

    def _execute(self, sql: LiteralString, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        started = time.monotonic()
        while True:
            try:
                if self._connection is None or self._connection.closed:
                    self._connection = psycopg.connect(self.uri, autocommit=True, connect_timeout=5)
                cursor = self._connection.execute(sql, params)
                return cursor.fetchall() if cursor.description is not None else []
            except (psycopg.OperationalError, psycopg.InterfaceError) as error:
                waited = time.monotonic() - started
                self.note(f"queue ({waited:.1f}s): {type(error).__name__}: {error}")
                with contextlib.suppress(Exception):
                    if self._connection is not None:
                        self._connection.close()
                self._connection = None
                if waited > QUEUE_PATIENCE:
                    raise
                time.sleep(0.5)

    def claim(self) -> Claimed | None:
        """The next run this worker may take, or `None` once every run is done."""
        while True:
            rows = self._execute(_CLAIM, {"me": self.me, "path": self.path, "lease": LEASE_SECONDS})
            if rows:
                claimed = Claimed(rows[0])
                with self._lock:
                    self._current = claimed
                return claimed
            left = self._execute(
                "SELECT count(*) FROM runs WHERE status NOT IN ('done', 'cancelled')", {}
            )
            if left[0][0] == 0:
                return None
            time.sleep(0.05)

    def end(self, run: Claimed, result: Json) -> None:
        """Record a run's result, by its outcome: cancelled, paused (pending its resume), or
        done."""
        with self._lock:
            self._current = None
        outcome = result["outcome"]
        status = outcome if outcome in ("cancelled", "paused") else "done"
        paused = status == "paused"
        rows = self._execute(
            "UPDATE runs SET status = %(status)s, result = %(result)s, leased_by = NULL, "
            "lease_until = NULL, phase = CASE WHEN %(paused)s THEN 'resume' ELSE phase END, "
            "avoid = CASE WHEN %(paused)s THEN %(me)s ELSE avoid END "
            "WHERE id = %(id)s AND leased_by = %(me)s AND attempt = %(attempt)s "
            "AND status = 'running' RETURNING id",
            {
                "status": "pending" if paused else status,
                "result": json.dumps(result),
                "paused": paused,
                "me": self.me,
                "id": run.id,
                "attempt": run.attempt,
            },
        )
        if not rows:
            self.note(f"lost the lease of run {run.id} attempt {run.attempt}")

    def cancel(self, run: Claimed) -> NoReturn:
        """Record the run in hand as cancelled (the worker got SIGTERM), and exit at once."""
        self.end(run, {"outcome": "cancelled"})
        os._exit(0)

    def release(self, run: Claimed, error: BaseException) -> None:
        """Note a database error, and give the run back at once, for another attempt."""
        self.note(f"run {run.id}: {type(error).__name__}: {error}")
        with self._lock:
            self._current = None
        self._execute(
            "UPDATE runs SET status = 'pending', leased_by = NULL, lease_until = NULL "
            "WHERE id = %(id)s AND leased_by = %(me)s AND attempt = %(attempt)s",
            {"id": run.id, "me": self.me, "attempt": run.attempt},
        )

    def _beat(self) -> None:
        connection: psycopg.Connection[tuple[Any, ...]] | None = None
        while True:
            time.sleep(1.0)
            with self._lock:
                current = self._current
            if current is None:
                continue
            try:
                if connection is None or connection.closed:
                    connection = psycopg.connect(self.uri, autocommit=True, connect_timeout=2)
                connection.execute(
                    "UPDATE runs SET lease_until = clock_timestamp() + make_interval(secs => %s) "
                    "WHERE id = %s AND leased_by = %s AND attempt = %s AND status = 'running'",
                    (LEASE_SECONDS, current.id, self.me, current.attempt),
                )
            except psycopg.Error:
                with contextlib.suppress(Exception):
                    if connection is not None:
                        connection.close()
                connection = None


# ---------------------------------------------------------------------------- the worker


class RunCancelled(BaseException):
    """SIGTERM on the sync path: the run in hand is cancelled."""


def _listener(log: Path) -> Callable[[ToolFailure], None]:
    lock = threading.Lock()

    def told(failure: ToolFailure) -> None:
        line = json.dumps({"pid": os.getpid(), **failure}, sort_keys=True)
        with lock, log.open("a") as out:
            out.write(line + "\n")
        block_point(str(failure["call_id"]), "listener")

    return told


_DB_ERRORS: tuple[type[BaseException], ...] = (psycopg.Error, TimeoutError, StopNotSaved)


def _pool_errors() -> tuple[type[BaseException], ...]:
    from psycopg_pool import PoolTimeout

    return (*_DB_ERRORS, PoolTimeout)


class _PoolOptions(TypedDict, closed=True):
    kwargs: dict[str, Any]
    min_size: int
    max_size: int
    timeout: float


_POOL: _PoolOptions = {
    "kwargs": {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    "min_size": 1,
    "max_size": 4,
    "timeout": 10,
}
"""Both paths' pools: up to 4 connections, each in autocommit, with no prepared statements
(which a restarted server forgets), reading rows as dicts."""


def _check(connection: psycopg.Connection[DictRow]) -> None:
    """A pooled connection still answers (after a restart of the server, it does not)."""
    connection.execute("SELECT 1")


async def _acheck(connection: psycopg.AsyncConnection[DictRow]) -> None:
    """A pooled connection still answers (after a restart of the server, it does not)."""
    await connection.execute("SELECT 1")


def work_sync(uri: str, queue: Queue, listener: Callable[[ToolFailure], None]) -> None:
    """Take runs until none is left, each with `invoke` on `PostgresSaver`."""
    from psycopg_pool import ConnectionPool

    def cancel(signum: int, frame: object) -> None:
        raise RunCancelled

    signal.signal(signal.SIGTERM, cancel)
    errors = _pool_errors()
    with ConnectionPool[psycopg.Connection[DictRow]](uri, check=_check, **_POOL) as pool:
        agent = build_agent(PostgresSaver(pool), listener)
        while (run := queue.claim()) is not None:
            try:
                result = drive_sync(agent, run.thread, run.text)
            except RunCancelled:
                queue.cancel(run)
            except errors as error:
                queue.release(run, error)
            else:
                queue.end(run, result)


async def work_async(uri: str, queue: Queue, listener: Callable[[ToolFailure], None]) -> None:
    """Take runs until none is left, each with `ainvoke` on `AsyncPostgresSaver`."""
    from psycopg_pool import AsyncConnectionPool

    errors = _pool_errors()
    current: list[asyncio.Task[Json]] = []
    asyncio.get_running_loop().add_signal_handler(
        signal.SIGTERM, lambda: [task.cancel() for task in current]
    )
    async with AsyncConnectionPool[psycopg.AsyncConnection[DictRow]](
        uri, check=_acheck, **_POOL
    ) as pool:
        agent = build_agent(AsyncPostgresSaver(pool), listener)
        while (run := queue.claim()) is not None:
            task = asyncio.ensure_future(drive_async(agent, run.thread, run.text))
            current[:] = [task]
            try:
                result = await task
            except asyncio.CancelledError:
                queue.cancel(run)
            except errors as error:
                queue.release(run, error)
            else:
                queue.end(run, result)
            finally:
                current.clear()


def main(argv: Sequence[str]) -> int:
    uri, path, name, logdir = argv
    logs = Path(logdir)
    pid = os.getpid()
    queue = Queue(uri, f"{name}:{pid}", path, logs / f"errors-{name}-{pid}.log")
    listener = _listener(logs / f"listener-{name}-{pid}.jsonl")
    if path == "sync":
        work_sync(uri, queue, listener)
    else:
        asyncio.run(work_async(uri, queue, listener))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
