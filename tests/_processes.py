"""Running this interpreter in a child process, as the tests that need a fresh process do."""

from __future__ import annotations

import os
import subprocess
import sys
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
