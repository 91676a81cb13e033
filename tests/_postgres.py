"""A PostgreSQL server of the test's own: Debian's PostgreSQL, started in a temporary directory.

`initdb` makes a cluster in a fresh directory and `pg_ctl` starts it listening on 127.0.0.1
(a free port) and on a Unix socket in that directory, with trust authentication for the
`postgres` role: nothing outside the test can reach it. PostgreSQL refuses to run as root,
so when the tests run as root (as CI does) the cluster belongs to the `postgres` user and
its programs run as that user through `runuser`.

Where the programs or `langgraph-checkpoint-postgres` are missing, the tests that need them
are skipped outside CI, with the command that installs them in the reason; where `CI` is
set (`.ci/run` sets it), a missing piece is an error, so CI never passes by skipping.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests._processes import free_port

INSTALL = (
    "apt-get install -y postgresql  # Debian's PostgreSQL 15, then: "
    'pip install -e ".[test]"  # langgraph-checkpoint-postgres and psycopg'
)
"""How to get what these tests need, named in the skip reason."""


def _binaries() -> Path | None:
    """The directory of `initdb` and `pg_ctl`: on PATH, else Debian's versioned one."""
    found = shutil.which("pg_ctl")
    if found is not None and shutil.which("initdb") is not None:
        return Path(found).parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_ctl").exists() and (candidate / "initdb").exists():
            return candidate
    return None


def require_postgres(environ: Mapping[str, str] = os.environ) -> Path:
    """PostgreSQL's programs, or a skip (outside CI) or error (in CI) naming the install."""
    binaries = _binaries()
    missing: list[str] = []
    if binaries is None:
        missing.append("PostgreSQL's initdb and pg_ctl")
    if find_spec("langgraph.checkpoint.postgres") is None or find_spec("psycopg") is None:
        missing.append("langgraph-checkpoint-postgres with psycopg")
    if binaries is None or missing:
        message = f"{' and '.join(missing)} not found; install with: {INSTALL}"
        if environ.get("CI"):
            raise RuntimeError(f"{message} (CI is set, so the PostgreSQL tests must run)")
        pytest.skip(message)
    return binaries


@dataclass
class Postgres:
    """One running cluster: its directory, port, and how to stop and start it again."""

    binaries: Path
    directory: Path
    port: int
    as_postgres: bool

    def run(self, *args: str, timeout: float = 120) -> None:
        """Run one of PostgreSQL's programs (as `postgres` when we are root); error if it fails."""
        command = [str(self.binaries / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        completed = subprocess.run(
            command, capture_output=True, encoding="utf-8", check=False, timeout=timeout
        )
        if completed.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)} exited with {completed.returncode}:\n"
                f"{completed.stdout}\n{completed.stderr}"
            )

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def start(self) -> None:
        """Start the server (again) on the same port and directory; waits until it answers."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} "
            "-c max_connections=300 -c fsync=off -c full_page_writes=off"
        )
        log = self.directory / "server.log"
        self.run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(log), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: `fast` ends sessions and shuts down cleanly, `immediate` aborts.

        An abort that `pg_ctl` does not see finish within 30 s (CI met one on a loaded
        machine) is finished by killing the server's processes: what an abort loses is the
        same either way, and the test's server must come back.
        """
        try:
            self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-t", "30", "-w", "stop")
        except RuntimeError:
            if mode != "immediate":
                raise
            self.kill()

    def kill(self) -> None:
        """SIGKILL the postmaster and its children; return once none of them runs."""
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return
        postmaster = int(pid_file.read_text().split()[0])
        pids = [postmaster, *_children(postmaster)]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while any(_running(pid) for pid in pids):
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL's processes {pids} outlived SIGKILL by 30 s")
            time.sleep(0.05)
        # Dead, but a zombie where nothing reaps it (a container's PID 1 may not), and a
        # zombie's PID still answers `kill(pid, 0)`: the lock files would keep the next
        # start out, so they go with the processes.
        for lock in (pid_file, *self.directory.glob(".s.PGSQL.*")):
            lock.unlink(missing_ok=True)

    def uri(self, database: str = "postgres") -> str:
        """The connection string of a database on this server, over TCP on 127.0.0.1."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A database of its own for one test; its connection string."""
        import psycopg  # present: require_postgres checked it
        from psycopg import sql

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.uri(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.uri(name)


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (read from /proc)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name in parentheses may hold spaces: the fields follow its last ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether `pid` is alive: present in /proc and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def started_postgres() -> Iterator[Postgres]:
    """A fresh cluster for the session, removed at the end (the `postgres` fixture's body)."""
    binaries = require_postgres()
    as_postgres = os.geteuid() == 0
    directory = Path(tempfile.mkdtemp(prefix="lte-postgres-"))
    if as_postgres:
        shutil.chown(directory, "postgres", "postgres")
    server = Postgres(binaries, directory, free_port(), as_postgres)
    server.run(
        "initdb",
        "-D",
        str(server.data),
        "-U",
        "postgres",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8",
    )
    server.start()
    try:
        yield server
    finally:
        try:
            server.stop("immediate")
        finally:
            shutil.rmtree(directory, ignore_errors=True)
