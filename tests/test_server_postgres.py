"""Agents with this middleware on two LangGraph API server processes over one PostgreSQL.

`langhost` (langgraph-runtime-pg) serves tests/server_pg/graph.py twice, as servers "a" and
"b" over one database and one Redis: they share threads, checkpoints and the run queue, so a
run created through one may execute on either. The tests drive them only over HTTP, through
`langgraph_sdk`, and tell which process ran what from the lines the graph's tools and
handler append (`<what> <call id> server=<name> attempt=<n>`). To make "the other process"
certain, the process that ran the first part is killed before the second part is asked of
the survivor: whatever carries over, carries over in PostgreSQL.

The servers' environment is built on first use (see tests/_server_postgres.py); without it
or without `redis-server`, the server tests skip outside CI and fail in CI, a decision the
first tests here check without a server.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests._postgres import Postgres
from tests._server import LOOPBACK, Json
from tests._server_postgres import (
    INSTALL,
    Cluster,
    PgApi,
    Unavailable,
    langhost_cluster,
    langhost_venv,
    require,
)
from tests.conftest import FIGURES

# Environments outside CI: no `CI`, or an empty one; in CI: `.ci/run` sets CI=1.
NOT_CI = [pytest.param({}, id="CI unset"), pytest.param({"CI": ""}, id="CI empty")]
IN_CI = [pytest.param({"CI": "1"}, id="CI=1"), pytest.param({"CI": "true"}, id="CI=true")]
REDIS = {"redis-server": "/usr/bin/redis-server"}


def built() -> Path:
    return Path("/cache/langhost")


def cannot_build() -> Path:
    raise Unavailable("pip install langhost==0.11.1.post1 exited with 1")


MISSING = [
    pytest.param({}, built, "redis-server not found on PATH", id="no redis-server"),
    pytest.param(REDIS, cannot_build, "pip install langhost", id="langhost not installable"),
]


@pytest.mark.parametrize("environ", NOT_CI)
@pytest.mark.parametrize(("installed", "build", "missing"), MISSING)
def test_without_redis_or_langhost_outside_ci_the_tests_skip_naming_the_install_commands(
    environ: dict[str, str], installed: dict[str, str], build: Callable[[], Path], missing: str
) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        require(build, environ, installed.get)

    assert missing in str(skipped.value)
    assert INSTALL in str(skipped.value)


@pytest.mark.parametrize("environ", IN_CI)
@pytest.mark.parametrize(("installed", "build", "missing"), MISSING)
def test_without_redis_or_langhost_in_ci_the_tests_fail_naming_what_is_missing(
    environ: dict[str, str], installed: dict[str, str], build: Callable[[], Path], missing: str
) -> None:
    with pytest.raises(RuntimeError, match="CI is set") as failed:
        require(build, environ, installed.get)

    assert missing in str(failed.value)
    assert INSTALL in str(failed.value)


@pytest.mark.parametrize("environ", [*NOT_CI, *IN_CI])
def test_with_redis_and_langhost_the_tests_run_in_and_outside_ci(environ: dict[str, str]) -> None:
    assert require(built, environ, REDIS.get) == Path("/cache/langhost")


@pytest.fixture(scope="module")
def langhost() -> Path:
    """The langhost environment (built on first use), or a skip outside CI.

    Its environment takes minutes to build for each Python, and the servers are the same
    on every one, so CI runs these tests on Python 3.11 only (the Quick start's run, whose
    environment the lowest versions' run reuses); the middleware's own runtime on every
    Python is proven by the other tests.
    """
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the langhost server tests run on Python 3.11 only (see the fixture)")
    return require(langhost_venv)


@pytest.fixture
def cluster(
    langhost: Path, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cluster]:
    for name in ("NO_PROXY", "no_proxy"):  # this process reaches the servers directly
        monkeypatch.setenv(name, LOOPBACK)
    with langhost_cluster(langhost, postgres.new_database(), tmp_path) as running:
        yield running


@pytest_asyncio.fixture
async def apis(cluster: Cluster) -> AsyncIterator[dict[str, PgApi]]:
    connections = {name: PgApi(server.url) for name, server in cluster.servers.items()}
    try:
        yield connections
    finally:
        for connection in connections.values():
            await connection.close()


def ask(text: str) -> Json:
    return {"messages": [{"role": "user", "content": text}]}


def tool_messages(values: Json) -> list[tuple[str, str, str]]:
    """Each tool message's call id, status and content."""
    return [
        (m["tool_call_id"], m["status"], m["content"])
        for m in values["messages"]
        if m["type"] == "tool"
    ]


def record(values: Json) -> list[tuple[str, str, str, str]]:
    """The thread's record of failures: call id, kind, error type, outcome of each."""
    failures: list[Json] = values["tool_failures"]
    return [(f["call_id"], f["kind"], f["error_type"], f["outcome"]) for f in failures]


async def within(call: Awaitable[Json], seconds: float = 90) -> Json:
    """What `call` returns, or a failure after `seconds` (a run that never ends)."""
    return await asyncio.wait_for(call, seconds)


def server_of(line: str) -> str:
    """The server an event line names."""
    found = re.search(r" server=(\w+) ", line)
    assert found is not None, line
    return found.group(1)


async def wait_for_events(cluster: Cluster, count: int, timeout: float = 60) -> list[str]:
    """The event lines, once there are at least `count` of them."""
    deadline = time.monotonic() + timeout
    while len(lines := cluster.event_lines()) < count:
        assert time.monotonic() < deadline, f"only {lines} after {timeout} s"
        await asyncio.sleep(0.1)
    return lines


@pytest.mark.server
@pytest.mark.asyncio
async def test_an_interrupt_on_one_server_is_resumed_through_the_other_and_the_record_goes_on(
    cluster: Cluster, apis: dict[str, PgApi]
) -> None:
    thread = await apis["a"].new_thread()

    paused = await within(apis["a"].wait(thread, "recorded", input=ask("look it up")))

    assert [i["value"] for i in paused["__interrupt__"]] == [{"approve": "refund"}]
    handled = ("rec1-0", "error", "No record 'missing-r' (call rec1-0).")
    assert tool_messages(paused) == [handled]
    first = [("rec1-0", "exception", "KeyError", "answered")]
    assert record(paused) == first
    ran = server_of(cluster.event_lines()[0])  # the queue chose which process ran it
    survivor = cluster.other(ran).name
    assert cluster.event_lines() == [
        f"handled rec1-0 server={ran} attempt=1",
        f"approve refund server={ran} attempt=1",
    ]
    assert record(await apis[survivor].values(thread)) == first  # the thread, read via the other

    cluster.servers[ran].kill()  # nothing of the pause is left in a live process
    done = await within(apis[survivor].wait(thread, "recorded", command={"resume": "yes"}))

    [_, _, told] = tool_messages(done)
    assert tool_messages(done)[:2] == [handled, ("rec1-1", "success", "refund: yes")]
    assert told[:2] == ("rec1-2", "error")
    assert told[2] != "No record 'missing-r' (call rec1-2)."  # the budget's text, not the handler's
    # The budget of one failure per tool, spent on the first process, is spent on the second.
    both = [*first, ("rec1-2", "exception", "KeyError", "told")]
    assert record(done) == both
    assert record(await apis[survivor].values(thread)) == both
    assert done["messages"][-1]["content"] == "done"
    assert cluster.event_lines()[2:] == [
        f"approve refund server={survivor} attempt=1",  # the tool runs again on resume
        f"handled rec1-2 server={survivor} attempt=1",
    ]
    assert await apis[survivor].run_statuses(thread) == ["success", "success"]
    FIGURES.append(
        f"langhost: 2 servers over one PostgreSQL; interrupt on {ran} (then SIGKILLed) resumed "
        f"through {survivor}; the record and the error budget went on there"
    )


@pytest.mark.server
@pytest.mark.asyncio
async def test_a_run_of_a_killed_server_is_finished_by_the_other_with_its_failure_once(
    cluster: Cluster, apis: dict[str, PgApi]
) -> None:
    thread = await apis["a"].new_thread()
    run_id = await apis["a"].create_run(thread, "failover", input=ask("hold it"))
    first, holding = await wait_for_events(cluster, 2)
    ran = server_of(first)
    survivor = cluster.other(ran)
    assert [first, holding] == [
        f"handled fo1-0 server={ran} attempt=1",
        f"hold held-f server={ran} attempt=1",
    ]

    killed = time.monotonic()
    cluster.servers[ran].kill()  # mid-run, in the `hold` tool, after the failure was handled
    cluster.release.touch()
    values = await within(apis[survivor.name].join(thread, run_id))
    took = time.monotonic() - killed

    # The second attempt went on from the last checkpoint: the failing call was not run again.
    assert cluster.event_lines()[2:] == [f"hold held-f server={survivor.name} attempt=2"]
    assert tool_messages(values) == [
        ("fo1-0", "error", "No record 'missing-f' (call fo1-0)."),
        ("fo1-1", "success", "held held-f"),
    ]
    assert record(values) == [("fo1-0", "exception", "KeyError", "answered")]
    assert record(await apis[survivor.name].values(thread)) == record(values)
    assert values["messages"][-1]["content"] == "done"
    assert (await apis[survivor.name].run(thread, run_id))["status"] == "success"
    swept = survivor.log.read_text(encoding="utf-8", errors="replace")
    assert "Swept stale run" in swept
    FIGURES.append(
        f"langhost: failover after SIGKILL of {ran}: {survivor.name} finished the run as "
        f"attempt 2, {took:.1f} s after the kill; its failure handled and recorded once"
    )
