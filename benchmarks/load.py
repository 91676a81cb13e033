"""Throughput under load over PostgreSQL, with this middleware against none (issue 34).

Run: `.venv/bin/python benchmarks/load.py` (add `--quick` for a short, noisy run; `--help`
for the options). It needs Debian's PostgreSQL (`initdb`, `pg_ctl`) and
`langgraph-checkpoint-postgres`, as the PostgreSQL tests do.

It starts a PostgreSQL cluster of its own in a temporary directory (as `tests/_postgres.py`
does), then N worker processes (default 4). Each runs real `create_agent` agents checkpointed
by a `PostgresSaver`, one new thread per run, two variants taking turns (A B B A ...), so
drift in the machine's speed hits both alike:

- ours: `ToolErrorMiddleware(budget=ErrorBudget(per_tool=...), record_failures=True)`;
- none: no middleware at all.

In each run the model (offline, scripted) sleeps a realistic time before each reply and
calls a tool that fails at a fixed rate. The tool reports its own failures
(`handle_tool_error=True`, as MCP tools do), so the run without middleware goes on too and
both variants do the same work: ours counts and records each failure, none does not. The
budget is never spent.

Printed: runs per second of each variant with all workers together, the ratio, and how
much lower ours is (the issue's target: at most 2%); then the checkpoint bytes each
variant leaves in PostgreSQL per thread (`checkpoints`, `checkpoint_blobs`,
`checkpoint_writes`), and what the middleware adds per failure. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any, Literal, Protocol

Variant = Literal["ours", "none"]
VARIANTS: tuple[Variant, ...] = ("ours", "none")


@dataclass(frozen=True)
class Options:
    """What a run of the benchmark does (the command line's options)."""

    workers: int
    seconds: float
    model_ms: float
    turns: int
    calls: int
    failure_rate: float

    @property
    def calls_per_run(self) -> int:
        """Tool calls in one run."""
        return self.turns * self.calls

    def fails(self, index: int, rate: float | None = None) -> bool:
        """Whether the run's call number `index` fails: evenly spread, at the fixed rate."""
        r = self.failure_rate if rate is None else rate
        return int((index + 1) * r) > int(index * r)

    def failures_per_run(self, rate: float | None = None) -> int:
        """Failing tool calls in one run."""
        return sum(self.fails(i, rate) for i in range(self.calls_per_run))


# PostgreSQL of the benchmark's own: the logic of tests/_postgres.py, without pytest.


def _binaries() -> Path:
    found = shutil.which("pg_ctl")
    if found is not None and shutil.which("initdb") is not None:
        return Path(found).parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_ctl").exists() and (candidate / "initdb").exists():
            return candidate
    raise SystemExit("PostgreSQL's initdb and pg_ctl were not found: apt-get install -y postgresql")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def started_postgres() -> Generator[str]:
    """A fresh cluster in a temporary directory, as `postgres` when root; its URI."""
    binaries = _binaries()
    as_postgres = os.geteuid() == 0
    directory = Path(tempfile.mkdtemp(prefix="lte-load-"))
    if as_postgres:
        shutil.chown(directory, "postgres", "postgres")
    port = _free_port()
    data = directory / "data"

    def run(*args: str) -> None:
        command = [str(binaries / args[0]), *args[1:]]
        if as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, encoding="utf-8", check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}")

    run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
    options = (
        f"-p {port} -c listen_addresses=127.0.0.1 -k {directory} "
        "-c max_connections=100 -c fsync=off -c full_page_writes=off"
    )
    run("pg_ctl", "-D", str(data), "-o", options, "-l", str(directory / "log"), "-w", "start")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        try:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(directory, ignore_errors=True)


# The agents.


class Agent(Protocol):
    """What the benchmark uses of a compiled agent."""

    def invoke(self, input: dict[str, Any], config: dict[str, Any], /) -> dict[str, Any]:
        """Run the agent to its final answer."""
        ...


def build_agents(options: Options, checkpointer: Any, rate: float | None = None) -> dict[str, Any]:
    """One agent of each variant on `checkpointer`, the model sleeping `model_ms`."""
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import AIMessage, BaseMessage, ToolCall
    from langchain_core.tools import StructuredTool, ToolException

    from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
    from langchain_tool_errors.handlers import report_type_only
    from langchain_tool_errors.testing import Repeat, ScriptedChatModel

    def fetch(n: int) -> str:
        if options.fails(n, rate):
            raise ToolException(f"upstream refused request {n}")
        return f"result {n}"

    tool = StructuredTool.from_function(
        fetch, name="fetch", description="fetches a page", handle_tool_error=True
    )

    def reply(messages: Sequence[BaseMessage]) -> AIMessage:
        time.sleep(options.model_ms / 1000)
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= options.turns:
            return AIMessage("done")
        first = turn * options.calls
        calls = [
            ToolCall(name="fetch", args={"n": n}, id=f"c{n}", type="tool_call")
            for n in range(first, first + options.calls)
        ]
        return AIMessage("", tool_calls=calls)

    model = ScriptedChatModel(script=[Repeat(reply)])
    ours = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=options.calls_per_run),  # never spent
        record_failures=True,
    )
    stacks: dict[str, list[AgentMiddleware[Any, Any, Any]]] = {"ours": [ours], "none": []}
    return {
        name: create_agent(model, tools=[tool], middleware=stack, checkpointer=checkpointer)
        for name, stack in stacks.items()
    }


def _run(agent: Agent, thread: str) -> None:
    result = agent.invoke(
        {"messages": [("user", "fetch the pages")]}, {"configurable": {"thread_id": thread}}
    )
    assert result["messages"][-1].content == "done", result["messages"][-1]


def worker(index: int, options: Options, uri: str, barrier: Barrier, results: Any) -> None:
    """One worker process: warm up, wait for the others, then run the variants in turn."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(uri) as checkpointer:
        agents: dict[str, Agent] = build_agents(options, checkpointer)
        for name in VARIANTS:  # imports, caches and the connection warmed for both
            _run(agents[name], f"warm-{name}-{index}")
        barrier.wait()
        durations: dict[str, list[float]] = {name: [] for name in VARIANTS}
        end = time.perf_counter() + options.seconds
        pair = 0
        while time.perf_counter() < end:
            order = VARIANTS if pair % 2 == 0 else VARIANTS[::-1]
            for name in order:
                start = time.perf_counter()
                _run(agents[name], f"{name}-{index}-{pair}")
                durations[name].append(time.perf_counter() - start)
            pair += 1
    results.put((index, durations))


# The checkpoint bytes.

BYTES = """
SELECT split_part(thread_id, '-', 1) AS variant, part, count(DISTINCT thread_id), count(*),
    sum(size)
FROM (
    SELECT thread_id, 'checkpoints' AS part,
        octet_length(checkpoint::text) + octet_length(metadata::text) AS size
    FROM checkpoints
    UNION ALL
    SELECT thread_id, 'checkpoint_blobs', coalesce(octet_length(blob), 0) FROM checkpoint_blobs
    UNION ALL
    SELECT thread_id, 'checkpoint_writes', octet_length(blob) FROM checkpoint_writes
) AS stored
WHERE thread_id LIKE %s
GROUP BY 1, 2
"""
"""Bytes stored by variant and table: the checkpoints' JSON, the channel blobs, the writes."""

PARTS = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


@dataclass(frozen=True)
class Stored:
    """The mean of a variant's threads: bytes and rows of each table."""

    bytes: dict[str, float]
    rows: dict[str, float]

    @property
    def total(self) -> float:
        """Bytes of a thread, all tables."""
        return sum(self.bytes.values())


def stored_per_thread(uri: str, prefix: str = "") -> dict[str, Stored]:
    """The mean checkpoint bytes and rows of a thread, by variant, of threads `prefix...`."""
    import psycopg

    with psycopg.connect(uri) as connection:
        rows = connection.execute(BYTES, (f"{prefix}%",)).fetchall()
    found: dict[str, Stored] = {}
    for variant, part, threads, count, size in rows:
        name = str(variant)[len(prefix) :]
        kept = found.setdefault(name, Stored({}, {}))
        kept.bytes[str(part)] = int(size) / int(threads)
        kept.rows[str(part)] = int(count) / int(threads)
    return found


def measure_zero_failures(options: Options, uri: str, runs: int) -> dict[str, Stored]:
    """Bytes per thread of each variant when no call fails: the fixed part of the overhead."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(uri) as checkpointer:
        agents: dict[str, Agent] = build_agents(options, checkpointer, rate=0.0)
        for number in range(runs):
            for name in VARIANTS:
                _run(agents[name], f"clean{name}-{number}")
    return stored_per_thread(uri, "clean")


def throughput(durations: Sequence[dict[str, list[float]]], name: str) -> float:
    """Runs per second of a variant with every worker together: each worker's rate, summed."""
    return sum(len(d[name]) / sum(d[name]) for d in durations if d[name])


def parse(argv: Sequence[str]) -> Options:
    """The options from the command line."""
    parser = argparse.ArgumentParser(description="Throughput under load over PostgreSQL.")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (4)")
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds (60)")
    parser.add_argument(
        "--model-ms", type=float, default=50.0, help="the model's time per reply, ms (50)"
    )
    parser.add_argument("--turns", type=int, default=4, help="model turns with tool calls (4)")
    parser.add_argument("--calls", type=int, default=2, help="parallel tool calls a turn (2)")
    parser.add_argument(
        "--failure-rate", type=float, default=0.25, help="share of tool calls that fail (0.25)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 workers, 3 seconds, a 5 ms model: a smoke run"
    )
    args = parser.parse_args(argv)
    if args.quick:
        return Options(2, 3.0, 5.0, args.turns, args.calls, args.failure_rate)
    return Options(
        args.workers, args.seconds, args.model_ms, args.turns, args.calls, args.failure_rate
    )


def main(argv: Sequence[str] = sys.argv[1:]) -> int:
    """Start PostgreSQL and the workers, and print the figures."""
    options = parse(argv)
    failures = options.failures_per_run()
    print(
        f"{options.workers} workers, {options.seconds:g} s, model {options.model_ms:g} ms a "
        f"reply, {options.turns} turns of {options.calls} calls, {failures} of "
        f"{options.calls_per_run} calls failing a run; Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs"
    )
    with started_postgres() as uri:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(uri) as checkpointer:
            checkpointer.setup()
        context = multiprocessing.get_context("spawn")
        barrier = context.Barrier(options.workers)
        results = context.Queue()
        processes = [
            context.Process(target=worker, args=(i, options, uri, barrier, results))
            for i in range(options.workers)
        ]
        for process in processes:
            process.start()
        collected = [results.get(timeout=options.seconds + 300) for _ in processes]
        for process in processes:
            process.join()
        durations: list[dict[str, list[float]]] = [d for _, d in sorted(collected)]
        stored = stored_per_thread(uri)
        clean = measure_zero_failures(options, uri, runs=3)

    rates = {name: throughput(durations, name) for name in VARIANTS}
    runs = {name: sum(len(d[name]) for d in durations) for name in VARIANTS}
    ratio = rates["ours"] / rates["none"]
    print(f"{'':<44}{'ours':>10}{'none':>10}{'ratio':>8}")
    print(
        f"{'runs per second, all workers':<44}{rates['ours']:>10.2f}{rates['none']:>10.2f}"
        f"{ratio:>8.3f}"
    )
    print(f"{'runs timed':<44}{runs['ours']:>10}{runs['none']:>10}")
    lower = 1 - ratio
    verdict = "within" if lower <= 0.02 else "over"
    change = f"{lower:.1%} lower" if lower >= 0 else f"{-lower:.1%} higher"
    print(f"throughput with the middleware: {change} than none ({verdict} the 2% target)")
    ours, none = stored["ours"], stored["none"]
    print(f"{'checkpoint bytes per thread':<44}{ours.total:>10.0f}{none.total:>10.0f}"
          f"{ours.total / none.total:>8.3f}")  # fmt: skip
    for part in PARTS:
        print(
            f"{f'  {part} (rows {ours.rows[part]:.0f} / {none.rows[part]:.0f})':<44}"
            f"{ours.bytes[part]:>10.0f}{none.bytes[part]:>10.0f}"
        )
    clean_ours, clean_none = clean["ours"].total, clean["none"].total
    print(f"{'  the same, no call failing':<44}{clean_ours:>10.0f}{clean_none:>10.0f}"
          f"{clean_ours / clean_none:>8.3f}")  # fmt: skip
    added = ours.total - none.total
    fixed = clean_ours - clean_none
    per_failure = added / failures if failures else float("nan")
    marginal = (added - fixed) / failures if failures else float("nan")
    print(
        f"checkpoint bytes the middleware adds per failure: {per_failure:.0f} "
        f"({added:.0f} a thread / {failures} failures)"
    )
    print(
        f"  of which {fixed:.0f} a thread even with no failure (its extra steps), "
        f"and {marginal:.0f} for each failure"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
