"""Two `langhost` servers (langgraph-runtime-pg) over one PostgreSQL and one Redis, for the tests.

`langhost` serves the LangGraph API on PostgreSQL, with Redis for its run queue's signals;
two processes over one database share threads, checkpoints and the queue. It pins
`langgraph-api` 0.11.1, which cannot sit beside the dev environment's newer one, so it gets
a virtual environment of its own, built on first use under the user's cache directory
(`python -m venv`, `pip install langhost==...`, this project editable, `pip check`) and kept
there, keyed by the versions, this interpreter and this checkout. Redis is Debian's
`redis-server`, started by the test on a free loopback port, with nothing saved to disk.

Where the environment cannot be built or `redis-server` is missing, the tests skip outside
CI, with the commands in the reason; where `CI` is set (`.ci/run` sets it), that is an
error, so CI never passes by skipping.

Every process started here runs in a session of its own and is ended in `finally` (TERM,
then KILL), with a check that none of its group is left. The servers' HTTP(S) proxy is a
local `Recorder`, as for `langgraph dev`: the tests assert that nothing tried to leave the
machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from tests._processes import ROOT, free_port, stop_group, wait_for_ok
from tests._server import LOOPBACK, Api, Json, Recorder

LANGHOST = "0.11.1.post1"
"""The `langhost` release the tests serve with (it pulls langgraph-runtime-pg of that version)."""

SERVER_DIR = ROOT / "tests" / "server_pg"
INSTALL = (
    "apt-get install -y redis-server  # and access to the package index for: "
    f"pip install langhost=={LANGHOST}  (the test builds its own venv under ~/.cache)"
)
"""What these tests need, named in the skip reason."""


class Unavailable(Exception):
    """Something the tests need cannot be had here; the message says what and why."""


def require(
    build: Callable[[], Path],
    environ: Mapping[str, str] = os.environ,
    which: Callable[[str], str | None] = shutil.which,
) -> Path:
    """`build()` (the langhost environment), or a skip (outside CI) or error (in CI).

    Args:
        build: Makes (or finds) the langhost environment; raises `Unavailable` if it cannot.
        environ: The environment; a non-empty `CI` makes anything missing an error.
        which: Looks a program up on PATH, as `shutil.which` does.

    Raises:
        pytest.skip.Exception: Outside CI, when `redis-server` is missing or `build` raises
            `Unavailable`; the reason says what and names the install commands.
        RuntimeError: In CI, in the same cases, with the same message.
    """
    try:
        if which("redis-server") is None:
            raise Unavailable("redis-server not found on PATH")
        return build()
    except Unavailable as missing:
        message = f"{missing}; these tests need: {INSTALL}"
        if environ.get("CI"):
            raise RuntimeError(f"{message} (CI is set, so the langhost tests must run)") from None
        pytest.skip(message)


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def venv_path() -> Path:
    """Where the langhost environment of this interpreter and checkout is kept."""
    python = f"py{sys.version_info.major}{sys.version_info.minor}"
    # Its editable install follows the source; a change of the checkout's place or of the
    # project's dependencies needs a new one.
    with (ROOT / "pyproject.toml").open("rb") as file:
        dependencies = tomllib.load(file)["project"]["dependencies"]
    identity = "\0".join([str(ROOT), *map(str, dependencies)])
    key = hashlib.sha256(identity.encode()).hexdigest()[:12]
    return _cache_home() / "langchain-tool-errors" / f"langhost-{LANGHOST}-{python}-{key}"


def _run(command: list[str], log: list[str], timeout: float) -> None:
    log.append("$ " + " ".join(command))
    try:
        done = subprocess.run(
            command, capture_output=True, encoding="utf-8", check=False, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as failed:
        raise Unavailable(f"{' '.join(command)} failed: {failed}") from failed
    log.append(done.stdout[-2000:] + done.stderr[-2000:])
    if done.returncode != 0:
        tail = "\n".join(log)[-4000:]
        raise Unavailable(f"{' '.join(command)} exited with {done.returncode}:\n{tail}")


def langhost_venv() -> Path:
    """The langhost environment, built now unless a complete one is kept; its directory.

    A venv's scripts name its interpreter by path, so it is built in place, under a lock
    (two test runs at once build it once), and marked complete last: a build cut short is
    removed and made again.

    Raises:
        Unavailable: A step of the build failed (the message has its output).
    """
    target = venv_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "complete").exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        log: list[str] = []
        python = str(target / "bin" / "python")
        pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input"]
        _run([sys.executable, "-m", "venv", str(target)], log, timeout=120)
        _run([*pip, "install", f"langhost=={LANGHOST}"], log, timeout=900)
        _run([*pip, "install", "-e", str(ROOT)], log, timeout=600)
        _run([*pip, "check"], log, timeout=120)
        (target / "complete").write_text("\n".join(log), encoding="utf-8")
    return target


def _spawn(
    command: list[str], cwd: Path, env: Mapping[str, str], log: Path
) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        return subprocess.Popen(
            command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`redis-server` on a free loopback port, saving nothing; the process and its URI."""
    port = free_port()
    log = directory / "redis.log"
    command = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--daemonize", "no", "--dir", str(directory),
    ]  # fmt: skip
    process = _spawn(command, directory, os.environ, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                if connection.recv(64).startswith(b"+PONG"):
                    return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.1)
    stop_group(process)
    raise RuntimeError(f"redis-server did not answer PING within 30 s:\n{log.read_text()}")


@dataclass
class LangHost:
    """One running `langhost serve`: its name ("a" or "b"), where it listens, its log."""

    name: str
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def kill(self) -> None:
        """SIGKILL its whole process group at once, as a crash would, and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@dataclass
class Cluster:
    """Two langhost servers over one database and one Redis, and the files the graph writes."""

    servers: dict[str, LangHost]
    events: Path
    """Lines the graph appends: `<what> <call id> server=<name> attempt=<n>`."""
    release: Path
    """The file whose existence lets the `hold` tool answer."""
    proxy: Recorder

    def event_lines(self) -> list[str]:
        """The events so far, in the order written."""
        return self.events.read_text(encoding="utf-8").splitlines()

    def other(self, name: str) -> LangHost:
        """The server that is not `name`."""
        [other] = [server for key, server in self.servers.items() if key != name]
        return other


def start_langhost(
    name: str, venv: Path, directory: Path, environ: Mapping[str, str], timeout: float = 120
) -> LangHost:
    """`langhost serve` of tests/server_pg on a free loopback port, once it answers `/ok`."""
    home = directory / f"server-{name}"
    home.mkdir()
    for file in ("langgraph.json", "graph.py"):
        shutil.copy(SERVER_DIR / file, home / file)
    port = free_port()
    log = directory / f"server-{name}.log"
    env = {**environ, "TOOL_ERRORS_SERVER": name}
    command = [
        str(venv / "bin" / "langhost"), "serve", "--host", "127.0.0.1", "--port", str(port),
        "-c", "langgraph.json", "--no-browser",
    ]  # fmt: skip
    process = _spawn(command, home, env, log)
    server = LangHost(name, process, f"http://127.0.0.1:{port}", log)
    wait_for_ok(process, server.url, log, timeout)
    return server


@contextlib.contextmanager
def langhost_cluster(
    venv: Path, database_uri: str, directory: Path
) -> Generator[Cluster, None, None]:
    """Redis, then server "a", then server "b" (one at a time: a first start sets up the
    schema), all stopped in `finally`, redis last; then no outbound connection may be seen."""
    proxy = Recorder()
    proxy.start()
    proxy_url = f"http://127.0.0.1:{proxy.port}"
    events = directory / "events.log"
    events.touch()
    release = directory / "release"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        redis, redis_uri = start_redis(directory)
        processes.append(redis)
        environ = {
            **{
                key: value
                for key, value in os.environ.items()
                if not key.startswith(("LANGSMITH_", "LANGCHAIN_"))
                and key not in ("PYTHONPATH", "VIRTUAL_ENV")
            },
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(venv),
            "DATABASE_URI": database_uri,
            "REDIS_URI": redis_uri,
            "LG_BG_JOB_HEARTBEAT": "2",  # seconds: a killed server's run is swept soon
            "LANGSMITH_TRACING": "false",
            "LANGGRAPH_NO_VERSION_CHECK": "1",
            "TOOL_ERRORS_EVENTS": str(events),
            "TOOL_ERRORS_RELEASE": str(release),
            **{name: proxy_url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")},
            **{name.lower(): proxy_url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")},
            "NO_PROXY": LOOPBACK,
            "no_proxy": LOOPBACK,
        }
        servers: dict[str, LangHost] = {}
        for name in ("a", "b"):
            servers[name] = start_langhost(name, venv, directory, environ)
            processes.append(servers[name].process)
        yield Cluster(servers, events, release, proxy)
    finally:
        for process in reversed(processes):
            stop_group(process)
    assert proxy.seen == [], f"a langhost server tried to leave the machine: {proxy.seen}"


class PgApi(Api):
    """The SDK calls of `Api`, and the background runs the failover test needs."""

    async def create_run(self, thread_id: str, graph: str, **run: Any) -> str:
        """Queue a run of a served graph; its id."""
        created = await self.client.runs.create(thread_id, graph, **run)
        assert isinstance(created, dict), created
        return str(cast(Json, created)["run_id"])

    async def join(self, thread_id: str, run_id: str) -> Json:
        """Wait for a run to finish; the thread's final state values."""
        values = await self.client.runs.join(thread_id, run_id)
        assert isinstance(values, dict), values
        return cast(Json, values)

    async def run(self, thread_id: str, run_id: str) -> Json:
        """The run, as the server keeps it (its `status`, ...)."""
        found = await self.client.runs.get(thread_id, run_id)
        assert isinstance(found, dict), found
        return cast(Json, found)
