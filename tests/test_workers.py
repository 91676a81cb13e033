"""Many worker processes, one PostgreSQL: runs taken from a queue, faults injected.

Worker processes (`tests/_workers.py`) take runs from a `runs` table kept in the same
PostgreSQL database as the checkpoints, claimed with `SELECT ... FOR UPDATE SKIP LOCKED`
under a lease, a thread's runs in order; half of them run `agent.invoke` on `PostgresSaver`,
half `agent.ainvoke` on `AsyncPostgresSaver`. Every run is a script drawn from a seed (which
calls the scripted model makes, which of them fail and how), carried in the run's input, so
what happens depends on the run and never on the worker.

The expected outcome of every run is computed here, independently of the workers: each
distinct script sequence is run once alone, in this process, on an `InMemorySaver`, and each
run's result in PostgreSQL (its outcome, the stop's text, its messages, the budget counts,
the stops, the record) and each thread's final checkpoint must equal it exactly, with the
thread's own id in place of the reference thread's. Faults: workers killed with SIGKILL
before, during and after a failure is handled (the run is retried from its last checkpoint
by another worker once the lease expires), an interrupt resumed on another worker,
and PostgreSQL restarted under load; and, in this process, a database that fails at each
one of a thread's writes in turn. (A run cancelled mid-step is tests/test_cancelled.py's.)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from typing_extensions import override

from langchain_tool_errors import ToolFailure
from tests._postgres import Postgres
from tests._processes import ROOT
from tests._savers import Watching
from tests._workers import (
    MARKERS_ENV,
    QUEUE_TABLE,
    Agent,
    Json,
    StopNotSaved,
    build_agent,
    drive_async,
    drive_sync,
    input_text,
    plain,
    with_replies_numbered,
)
from tests.conftest import FIGURES

pytestmark = pytest.mark.workers

SEED = 20_341
ACTIONS = ("ok", "value", "key", "conn", "invalid", "unknown", "reported")
WEIGHTS = (5, 2, 1, 3, 2, 1, 2)
THREAD_ID = re.compile(r"th\d{3}")
RECORD_KEYS = ("call_id", "tool", "kind", "error_type", "route", "outcome")

Plan = list[dict[str, Any]]


def thread_name(index: int) -> str:
    return f"th{index:03d}"


def random_plan(rng: random.Random) -> Plan:
    """One run's script: 1 to 3 model replies of 1 to 3 calls, sometimes a malformed call
    beside them, sometimes a call that interrupts for approval."""
    steps: Plan = []
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        calls = [{"do": rng.choices(ACTIONS, WEIGHTS)[0]} for _ in range(rng.randint(1, 3))]
        steps.append({"calls": calls, "malformed": rng.random() < 0.12})
    if rng.random() < 0.1:
        rng.choice(steps)["calls"].append({"do": "approve"})
    return steps


def random_plans(seed: int, template: int, runs: int) -> list[Plan]:
    rng = random.Random(f"{seed}/{template}")
    return [random_plan(rng) for _ in range(runs)]


# ---------------------------------------------------------------------------- the model


def _ignore(failure: ToolFailure) -> None:
    del failure


def reference(plans: Sequence[Plan], thread: str) -> tuple[list[Json], Json]:
    """Each run's final result, and the thread's final state, run alone in this process."""
    agent = build_agent(InMemorySaver(), _ignore)
    results: list[Json] = []
    for run, plan in enumerate(plans):
        text = input_text(thread, run, plan)
        result = drive_sync(agent, thread, text)
        while result["outcome"] == "paused":
            result = drive_sync(agent, thread, text)
        results.append(result)
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    return results, final_state(agent.get_state(config).values)


def final_state(values: dict[str, Any]) -> Json:
    return plain(with_replies_numbered(values, values.get("messages", [])))


def as_thread(value: Json, thread: str) -> Json:
    """`value` with `thread`'s id written as `<thread>`; no other thread's id may be in it."""
    text = json.dumps(value, sort_keys=True)
    assert set(THREAD_ID.findall(text)) <= {thread}, f"another thread's id in {thread}'s state"
    result: Json = json.loads(text.replace(thread, "<thread>"))
    return result


def answered_once(messages: Sequence[Json]) -> None:
    """Every call the model made (malformed ones included) has exactly one answer."""
    calls = [c[2] for m in messages if m["type"] == "ai" for c in m["tool_calls"]]
    calls += [c[2] for m in messages if m["type"] == "ai" for c in m["invalid_tool_calls"]]
    answers = Counter(m["tool_call_id"] for m in messages if m["type"] == "tool")
    assert len(calls) == len(set(calls))
    assert answers == Counter(calls), "a call without exactly one answer"


def record_of(result: Json) -> list[tuple[Any, ...]]:
    failures: list[Json] = result["values"].get("tool_failures", [])
    return [tuple(f[key] for key in RECORD_KEYS) for f in failures]


# ---------------------------------------------------------------------------- the queue


class Cluster:
    """A database with the checkpoint tables and the queue, and the worker processes."""

    def __init__(self, uri: str, logs: Path, markers: Path | None = None) -> None:
        self.uri, self.logs, self.markers = uri, logs, markers
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.paths: dict[str, str] = {}
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
        with psycopg.connect(uri, autocommit=True) as connection:
            connection.execute(QUEUE_TABLE)

    def enqueue(self, threads: dict[str, tuple[list[Plan], str | None]]) -> None:
        """Each thread's runs, in order; the path named (if any) takes each first attempt."""
        rows = [
            (thread, run, input_text(thread, run, plan), path)
            for thread, (plans, path) in threads.items()
            for run, plan in enumerate(plans)
        ]
        with psycopg.connect(self.uri, autocommit=True) as connection:
            connection.cursor().executemany(
                "INSERT INTO runs (thread_id, seq, input, first_path) VALUES (%s, %s, %s, %s)",
                rows,
            )

    def start(self, path: str) -> str:
        name = f"w{len(self.workers)}"
        env = dict(os.environ)
        if self.markers is not None:
            env[MARKERS_ENV] = str(self.markers)
        with (self.logs / f"stderr-{name}.txt").open("wb") as stderr:
            self.workers[name] = subprocess.Popen(
                [sys.executable, "-m", "tests._workers", self.uri, path, name, str(self.logs)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        self.paths[name] = path
        return name

    def left(self) -> int:
        with psycopg.connect(self.uri, autocommit=True) as connection:
            row = connection.execute(
                "SELECT count(*) FROM runs WHERE status NOT IN ('done', 'cancelled')"
            ).fetchone()
        assert row is not None
        count: int = row[0]
        return count

    def wait(self, timeout: float, tick: Callable[[], None] = lambda: None) -> None:
        """Until every run is done and every worker has exited."""
        deadline = time.monotonic() + timeout
        while any(w.poll() is None for w in self.workers.values()):
            tick()
            assert time.monotonic() < deadline, f"{self.left()} runs left after {timeout}s"
            time.sleep(0.2)
        crashed = {n: w.returncode for n, w in self.workers.items() if w.returncode not in (0, -9)}
        if crashed:  # the whole traceback: an assertion's message would be cut short
            pytest.fail(f"workers ended with {crashed}:\n{self.stderr(*crashed)}")
        assert self.left() == 0, self.stderr(*self.workers)

    def stderr(self, *names: str) -> str:
        """The end of what the workers named wrote to stderr (a traceback, if one crashed)."""
        return "\n".join(
            f"{name}: {(self.logs / f'stderr-{name}.txt').read_text()[-6000:]}" for name in names
        )

    def stop(self) -> None:
        for worker in self.workers.values():
            if worker.poll() is None:
                worker.kill()
                worker.wait(30)

    def rows(self) -> dict[tuple[str, int], dict[str, Any]]:
        with psycopg.connect(self.uri, autocommit=True) as connection:
            cursor = connection.execute("SELECT * FROM runs")
            names = [column.name for column in cursor.description or ()]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return {(row["thread_id"], row["seq"]): row for row in rows}

    def final_states(self, threads: Sequence[str]) -> dict[str, Json]:
        with PostgresSaver.from_conn_string(self.uri) as saver:
            agent = build_agent(saver, _ignore)
            return {
                t: final_state(agent.get_state({"configurable": {"thread_id": t}}).values)
                for t in threads
            }

    def next_nodes(self, thread: str) -> tuple[str, ...]:
        """What the thread's last saved checkpoint runs next."""
        with PostgresSaver.from_conn_string(self.uri) as saver:
            agent = build_agent(saver, _ignore)
            return agent.get_state({"configurable": {"thread_id": thread}}).next

    def told(self) -> list[dict[str, Any]]:
        """Every line the listeners wrote, in every worker."""
        lines: list[dict[str, Any]] = []
        for log in sorted(self.logs.glob("listener-*.jsonl")):
            lines += [json.loads(line) for line in log.read_text().splitlines()]
        return lines

    def errors(self) -> list[str]:
        lines: list[str] = []
        for log in sorted(self.logs.glob("errors-*.log")):
            lines += log.read_text().splitlines()
        return lines


@pytest.fixture
def cluster(postgres: Postgres, tmp_path: Path) -> Iterator[Cluster]:
    markers = tmp_path / "markers"
    markers.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    started = Cluster(postgres.new_database(), logs, markers)
    try:
        yield started
    finally:
        started.stop()


def check_against_model(
    cluster: Cluster,
    plans: dict[str, list[Plan]],
    template_of: dict[str, str],
) -> tuple[dict[tuple[str, int], Json], dict[tuple[str, int], dict[str, Any]]]:
    """Every run's result and every thread's final checkpoint equal the in-process model's.

    `template_of` names, for each thread, the thread whose reference run stands for it
    (threads with the same scripts but their own ids). Returns the results and the rows.
    """
    expected: dict[str, tuple[list[Json], Json]] = {}
    for template in template_of.values():
        if template not in expected:
            runs, final = reference(plans[template], template)
            expected[template] = (
                [as_thread(r, template) for r in runs],
                as_thread(final, template),
            )
    rows = cluster.rows()
    finals = cluster.final_states(list(plans))
    results: dict[tuple[str, int], Json] = {}
    for thread, template in template_of.items():
        runs, final = expected[template]
        for run, want in enumerate(runs):
            got = json.loads(rows[(thread, run)]["result"])
            assert as_thread(got, thread) == want, (thread, run)
            results[(thread, run)] = got
        state = as_thread(finals[thread], thread)
        assert state == final, thread
        answered_once(state["messages"])
    return results, rows


# ---------------------------------------------------------------------------- the tests

THREADS, TEMPLATES, RUNS = 50, 10, 10


def test_many_workers_share_one_postgres_and_match_the_model(cluster: Cluster) -> None:
    started = time.monotonic()
    threads = [thread_name(i) for i in range(THREADS)]
    template_of = {t: thread_name(i % TEMPLATES) for i, t in enumerate(threads)}
    # Each script sequence runs on two threads whose runs start on the sync path, and two
    # on the async path; all four must end as its one reference run does.
    path_of = {t: ("sync", "async")[(i // TEMPLATES) % 2] for i, t in enumerate(threads)}
    plans = {t: random_plans(SEED, int(template_of[t][2:]), RUNS) for t in threads}
    cluster.enqueue({t: (plans[t], path_of[t]) for t in threads})
    for path in ("sync", "async", "sync", "async"):
        cluster.start(path)
    cluster.wait(timeout=300)
    elapsed = time.monotonic() - started

    results, rows = check_against_model(cluster, plans, template_of)

    # Every failure kept in a run's record was told to a listener exactly once, and
    # nothing else was told (no fault here, so nothing was told twice).
    recorded = Counter(r for result in results.values() for r in record_of(result))
    told = Counter(tuple(line[k] for k in RECORD_KEYS) for line in cluster.told())
    assert told == recorded
    assert cluster.errors() == []
    # Every run was taken once, by a worker on its thread's path (a resume by any worker).
    for (thread, _), row in rows.items():
        claims: list[Json] = row["history"]
        assert [c["attempt"] for c in claims] == list(range(1, len(claims) + 1))
        assert claims[0]["path"] == path_of[thread]
        assert [c["phase"] for c in claims] == ["input"] + ["resume"] * (len(claims) - 1)
        # An interrupt raised on one worker is resumed on another, its record going on.
        workers = [c["worker"] for c in claims]
        assert all(a != b for a, b in itertools.pairwise(workers))
    resumed = [row for row in rows.values() if len(row["history"]) > 1]
    # Those runs' records hold failures told on the worker that paused them: the record
    # (and the counts, compared above) went on from one worker to the next.
    teller = {line["call_id"]: line["pid"] for line in cluster.told()}
    continued = [
        row
        for row in resumed
        if any(
            str(teller[r[0]]) == row["history"][0]["worker"].split(":")[1]
            for r in record_of(json.loads(row["result"]))
        )
    ]
    assert len(continued) >= 3, len(continued)
    outcomes = Counter(result["outcome"] for result in results.values())
    kinds = Counter(r[2] for r in recorded)
    settled = Counter(r[5] for r in recorded)
    # The seed must exercise every path of the middleware the test claims to cover.
    assert outcomes["stopped"] >= 20, outcomes
    assert outcomes["ok"] >= 100, outcomes
    assert len(resumed) >= 4, len(resumed)
    assert set(kinds) == {
        "exception",
        "invalid_arguments",
        "unknown_tool",
        "tool_reported",
        "malformed_call",
    }, kinds
    assert {"answered", "told", "stopped"} <= set(settled), settled
    paths = Counter(c["path"] for row in rows.values() for c in row["history"])
    FIGURES.append(
        f"workers: 4 processes (2 sync PostgresSaver, 2 async AsyncPostgresSaver), {THREADS} "
        f"threads, {len(rows)} runs ({outcomes['ok']} ok, {outcomes['stopped']} stopped by "
        f"a budget; {len(resumed)} interrupts resumed on another worker, {len(continued)} with "
        f"failures recorded before the pause; claims by path "
        f"{dict(paths)}), {sum(recorded.values())} failures recorded and told once each, "
        f"all equal to the in-process model; {elapsed:.0f}s"
    )


KILL_POINTS: dict[str, Plan] = {
    # The tool is running; it has not raised yet: before the failure is handled.
    "tool": [
        {"calls": [{"do": "value", "block": "tool"}, {"do": "invalid"}]},
        {"calls": [{"do": "conn"}]},
    ],
    # The route's handler is running: during the handling.
    "handler": [
        {"calls": [{"do": "key", "block": "handler"}, {"do": "reported"}]},
        {"calls": [{"do": "ok"}]},
    ],
    # The listener has been told: the failure is settled, its step not yet saved.
    "listener": [
        {"calls": [{"do": "value", "block": "listener"}, {"do": "unknown"}]},
        {"calls": [{"do": "value"}]},
    ],
    # The next model call: after the failures were handled and their step saved.
    "model": [
        {"calls": [{"do": "conn"}, {"do": "invalid"}], "malformed": True},
        {"calls": [{"do": "ok"}], "block_model": True},
    ],
    # During the handling of the failure that spends a "tell" budget, and a "stop" one.
    "handler-told": [
        {"calls": [{"do": "conn"}, {"do": "conn"}]},
        {"calls": [{"do": "conn", "block": "handler"}]},
    ],
    "handler-stop": [
        {"calls": [{"do": "value"}, {"do": "key"}, {"do": "value"}]},
        {"calls": [{"do": "value", "block": "handler"}]},
    ],
}
KILL_CASES = [
    (point, path)
    for point in KILL_POINTS
    for path in (("sync", "async") if point in ("tool", "handler", "listener", "model") else ())
] + [("handler-told", "async"), ("handler-stop", "sync")]


def test_a_worker_killed_before_during_and_after_a_failure_is_retried_from_its_checkpoint(
    cluster: Cluster,
) -> None:
    started = time.monotonic()
    assert cluster.markers is not None
    threads = {thread_name(i): case for i, case in enumerate(KILL_CASES)}
    rng = random.Random(SEED + 1)
    plans = {t: [KILL_POINTS[point], random_plan(rng)] for t, (point, _) in threads.items()}
    for second in (p[1] for p in plans.values()):  # no interrupt: only the kills here
        for step in second:
            step["calls"] = [c for c in step["calls"] if c["do"] != "approve"] or [{"do": "ok"}]
    cluster.enqueue({t: (plans[t], path) for t, (_, path) in threads.items()})
    for path in ("sync", "async", "sync", "async"):
        cluster.start(path)
    killed: dict[str, tuple[int, str]] = {}  # thread -> (pid, path)

    def kill_blocked() -> None:
        for reached in sorted(cluster.markers.glob("*.reached")) if cluster.markers else []:
            thread = reached.name[:5]
            if thread in killed:
                continue
            # Steps are saved in the background (durability "async"), in order: once the
            # step before the model call is saved, so are the failures' steps before it.
            if threads[thread][0] == "model" and cluster.next_nodes(thread) != ("model",):
                continue
            pid = int(reached.read_text())
            os.kill(pid, signal.SIGKILL)
            path = threads[thread][1]
            killed[thread] = (pid, path)
            name = next(n for n, w in cluster.workers.items() if w.pid == pid)
            cluster.workers[name].wait(10)
            live = [n for n, w in cluster.workers.items() if w.poll() is None]
            if len(live) < 3 or all(cluster.paths[n] != path for n in live):
                cluster.start(path)

    cluster.wait(timeout=180, tick=kill_blocked)
    elapsed = time.monotonic() - started

    results, rows = check_against_model(cluster, plans, {t: t for t in plans})
    told = Counter(line["call_id"] for line in cluster.told())
    assert set(killed) == set(threads), "every blocking point was reached and killed"
    lines: list[str] = []
    for thread, (point, path) in threads.items():
        claims: list[Json] = rows[(thread, 0)]["history"]
        pid, _ = killed[thread]
        # The killed worker had it; another took it once its lease expired, attempt 2.
        assert claims[0]["worker"].endswith(f":{pid}")
        assert claims[0]["path"] == path
        assert [c["attempt"] for c in claims] == [1, 2]
        assert claims[1]["worker"] != claims[0]["worker"]
        assert rows[(thread, 0)]["attempt"] == 2
        # Every failure of the run, the one the kill interrupted included, is counted and
        # recorded exactly once (the counts and the whole run are equal to the model above).
        record = record_of(results[(thread, 0)])
        ids = [r[0] for r in record]
        assert ids, record
        assert len(ids) == len(set(ids)), record
        blocked = next((r[0] for r in record if ".B" in r[0]), ids[0] if point == "model" else None)
        assert blocked is not None
        # Told as the failure settled, before its step was saved: a worker killed in the
        # listener has it told again by the next attempt (twice in all). Killed before it
        # was told (in the tool, the handler) or once its step was saved (the model's next
        # call), it is told once.
        assert told[blocked] == (2 if point == "listener" else 1), (point, path)
        lines.append(f"{point}/{path}: told {told[blocked]}x")
    FIGURES.append(
        f"SIGKILL: {len(killed)} workers killed (tool before raising, handler, listener, "
        "next model call after a handled failure, on both paths; a handler spending a "
        "'tell' and a 'stop' budget); each run retried by another worker (attempt 2) from "
        f"its checkpoint, counted and recorded once; listener {', '.join(lines)}; "
        f"{elapsed:.0f}s"
    )


def test_postgres_restarted_under_load(cluster: Cluster, postgres: Postgres) -> None:
    started = time.monotonic()
    threads = [thread_name(i) for i in range(12)]
    plans = {t: random_plans(SEED + 2, i, 3) for i, t in enumerate(threads)}
    cluster.enqueue({t: (plans[t], ("sync", "async")[i % 2]) for i, t in enumerate(threads)})
    for path in ("sync", "async", "sync", "async"):
        cluster.start(path)
    restarted = False
    try:
        deadline = time.monotonic() + 120
        while cluster.left() > 24:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        met = len(cluster.errors())
        postgres.stop("immediate")  # an abort: what was not committed is lost
        restarted = True
        # Down until a worker has met it (a database error in its log), for at most 5 s: a
        # worker between runs may not touch the server at all, and the test's checks hold
        # either way.
        deadline = time.monotonic() + 5
        while len(cluster.errors()) == met and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        postgres.start()  # also when the test failed: the session's server must answer
    cluster.wait(timeout=180)
    elapsed = time.monotonic() - started

    results, rows = check_against_model(cluster, plans, {t: t for t in plans})
    again = sum(1 for row in rows.values() for c in row["history"] if c["attempt"] > 1)
    errors = cluster.errors()
    assert restarted
    assert errors, "the workers saw the restart"
    assert all("lost the lease" not in e for e in errors), errors
    FIGURES.append(
        f"PostgreSQL restarted under load: {len(rows)} runs on 12 threads, 4 workers; "
        f"{len(errors)} database errors met, {again} claims retried a run; every result "
        f"and final state equal to the model ({len(results)}); {elapsed:.0f}s"
    )


class FailsOnce(Watching, InMemorySaver):
    """A saver whose database fails once: at its `at`-th write (a checkpoint or a step's
    writes), or where `_due` says."""

    def __init__(self, at: int = 0) -> None:
        # InMemorySaver's `factory` parameter is an untyped defaultdict factory.
        super().__init__()  # pyright: ignore[reportUnknownMemberType]
        self.at = at
        self.written = 0
        self.failed = False

    def _due(self, checkpoint: Checkpoint | None) -> bool:
        """Whether this write, the `written`-th (a checkpoint's or else a step's), fails."""
        return self.written == self.at

    @override
    def saving(self, checkpoint: Checkpoint | None, writes: Sequence[tuple[str, Any]]) -> None:
        self.written += 1
        if not self.failed and self._due(checkpoint):
            self.failed = True
            raise psycopg.OperationalError("server closed the connection unexpectedly")


class LosesTheStop(FailsOnce):
    """A saver whose database fails once, as it saves the checkpoint that holds a stop."""

    @override
    def _due(self, checkpoint: Checkpoint | None) -> bool:
        return checkpoint is not None and bool(
            checkpoint["channel_values"].get("tool_error_budget_stops")
        )


FAULT_PLANS: list[Plan] = [
    # Five failures in two steps: the per-run limit of 4 stops the run in the tools step.
    [
        {"calls": [{"do": "conn"}, {"do": "value"}, {"do": "key"}], "malformed": False},
        {"calls": [{"do": "conn"}, {"do": "invalid"}], "malformed": False},
    ],
    # An interrupt resumed, a malformed call, and a tool a "tell" route budget closes.
    [
        {"calls": [{"do": "approve"}, {"do": "reported"}], "malformed": True},
        {"calls": [{"do": "reported"}, {"do": "ok"}], "malformed": False},
    ],
    # Four failures in the tools step, then a malformed call that stops the run after the
    # model.
    [
        {"calls": [{"do": "key"}, {"do": "value"}, {"do": "key"}, {"do": "conn"}]},
        {"calls": [{"do": "ok"}], "malformed": True},
    ],
]


def drive(agent: Agent, thread: str, text: str, path: str) -> Json:
    """One attempt at a run, on the path the test names, as a worker makes it."""
    if path == "sync":
        return drive_sync(agent, thread, text)
    return asyncio.run(drive_async(agent, thread, text))


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_stop_whose_checkpoint_was_lost_is_handed_back_and_raised_again(path: str) -> None:
    # What PostgreSQL restarted under load met: the step that spent the budget wrote its
    # answers and the stop, its checkpoint was lost, the next step raised the stop. The
    # thread shows the stop (its writes are saved) but no step left: the worker hands the
    # run back, and the run again ends where the model's does.
    plan = FAULT_PLANS[0]
    thread = thread_name(900)
    text = input_text(thread, 0, plan)
    saver = LosesTheStop()
    agent = build_agent(saver, _ignore)

    with pytest.raises(StopNotSaved):
        drive(agent, thread, text, path)
    assert saver.failed
    again = drive(agent, thread, text, path)
    (want,), _ = reference([plan], thread)
    assert want["outcome"] == "stopped"
    assert want["next"] == ["model"]  # the stop is raised as the model call starts
    assert again == want


def run_as_a_worker(agent: Agent, thread: str, plans: Sequence[Plan], path: str) -> list[Json]:
    """Each run to its end as the workers take it: handed back on a database error."""
    results: list[Json] = []
    for run, plan in enumerate(plans):
        text = input_text(thread, run, plan)
        for _ in range(5):
            try:
                result = drive(agent, thread, text, path)
            except (psycopg.Error, StopNotSaved):
                continue  # handed back: the next attempt goes on from the last checkpoint
            if result["outcome"] != "paused":  # a pause is resumed by the next attempt
                results.append(result)
                break
        else:
            pytest.fail(f"run {run} of {thread} did not end in 5 attempts")
    return results


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_database_failure_at_any_one_write_leaves_every_run_as_the_model_has_it(
    path: str,
) -> None:
    # Every write of the three runs fails in its turn, one per pass: a checkpoint or a
    # step's writes, saved as the step runs or while the next one does. Each pass's runs
    # and final state equal the reference run's, as the many-worker tests check under load.
    thread = thread_name(901)
    runs, final = reference(FAULT_PLANS, thread)
    assert [r["outcome"] for r in runs] == ["stopped", "ok", "stopped"]
    clean = FailsOnce()
    assert run_as_a_worker(build_agent(clean, _ignore), thread, FAULT_PLANS, path) == runs
    failed_at: list[int] = []
    for at in range(1, clean.written + 1):
        saver = FailsOnce(at)
        agent = build_agent(saver, _ignore)
        assert run_as_a_worker(agent, thread, FAULT_PLANS, path) == runs, at
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        assert final_state(agent.get_state(config).values) == final, at
        failed_at += [at] if saver.failed else []
    assert failed_at == list(range(1, clean.written + 1))
    FIGURES.append(
        f"a database failure at each one of {clean.written} writes ({path}): every run and "
        "the thread's final state equal the model"
    )
