"""The benchmark runs and prints every figure (its timings are printed, never asserted)."""

from __future__ import annotations

from tests._processes import run_python


def test_the_overhead_benchmark_runs_and_reports_every_target() -> None:
    done = run_python("benchmarks/overhead.py", "--quick")

    assert done.returncode == 0, done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("met", "MISSED"))]
    assert len(verdicts) == 9
    for figure in ("success path", "handled-error path", "1,001-name filter", "agent turn"):
        assert figure in done.stdout
