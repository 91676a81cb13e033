"""The benchmark runs and prints every figure (its timings are printed, never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_overhead_benchmark_runs_and_reports_every_target() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/overhead.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("met", "MISSED"))]
    assert len(verdicts) == 8
    for figure in ("success path", "handled-error path", "1,001-name filter", "agent turn"):
        assert figure in done.stdout
