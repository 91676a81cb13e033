"""Child processes of the tests: this interpreter run afresh, and servers in process groups
of their own, on a free loopback port, stopped group and all."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root: the child's working directory."""


def run_python(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python *args` from the repository root, output captured as UTF-8 text.

    The interpreter's own bin directory leads PATH, so tools installed beside it (pyright's
    node wrapper looks up `python`) resolve to this environment. `env` adds variables to
    the child's environment, never to this process's.
    """
    bin_dir = str(Path(sys.executable).parent)
    child_env = {
        **os.environ,
        **(env or {}),
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=child_env,
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=timeout,
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Reaches a server on loopback directly, whatever proxy this machine configures."""


def wait_for_ok(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    """Wait until the server `process` answers `url/ok`; if it exits first or does not answer
    within `timeout` seconds, stop its group and raise, with the end of its `log`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = log.read_text(encoding="utf-8", errors="replace")[-4000:]
            raise RuntimeError(f"{url}: the server exited with {process.returncode}:\n{output}")
        try:
            with DIRECT.open(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    stop_group(process)
    output = log.read_text(encoding="utf-8", errors="replace")[-4000:]
    raise RuntimeError(f"{url}: the server did not answer /ok within {timeout} s:\n{output}")


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """End a child's whole process group (TERM, then KILL); fail if any process of it is left."""
    group = process.pid  # the leader of its own session and group
    for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _group_alive(group, process):
            time.sleep(0.1)
        if not _group_alive(group, process):
            break
    process.wait(timeout=5)
    assert not _group_alive(group, process), f"processes of group {group} outlived their leader"


def _group_alive(group: int, leader: subprocess.Popen[bytes]) -> bool:
    """Whether any process of the group is left; the leader is reaped once it has exited
    (an exited child not yet waited for is a zombie, still a member of its group, so
    `killpg(group, 0)` would answer until the whole grace had passed)."""
    leader.poll()
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
