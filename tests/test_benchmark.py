"""The benchmark runs and prints every figure (its timings are printed, never asserted)."""

from __future__ import annotations

import pytest

from tests._processes import run_python


def test_the_overhead_benchmark_runs_and_reports_every_target() -> None:
    done = run_python("benchmarks/overhead.py", "--quick")

    assert done.returncode == 0, done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("met", "MISSED"))]
    assert len(verdicts) == 30
    figures = (
        "success path",
        "handled-error path",
        "20 routes",
        "a budget",
        "a record",
        "a listener",
        "agent turn",
        "errors marked",
        "none failing",
    )
    for figure in figures:
        assert figure in done.stdout


@pytest.mark.static
def test_the_type_checking_cost_benchmark_times_both_checkers_on_clean_modules() -> None:
    done = run_python("benchmarks/typecheck_cost.py", "--quick", timeout=600)

    assert done.returncode == 0, done.stderr
    for checker in ("mypy --strict, cold cache", "pyright strict"):
        [line] = [line for line in done.stdout.splitlines() if line.startswith(checker)]
        assert "errors reported" not in line, line
