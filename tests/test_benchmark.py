"""The benchmark runs and prints every figure (its timings are printed, never asserted)."""

from __future__ import annotations

import pytest

from tests._postgres import Postgres
from tests._processes import run_python
from tests.conftest import FIGURES


def test_the_overhead_benchmark_runs_and_reports_every_target() -> None:
    done = run_python("benchmarks/overhead.py", "--quick")

    assert done.returncode == 0, done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("met", "MISSED"))]
    # One verdict a target: the plain paths (5), a success and a handled failure with each
    # of 7 features (14), the async path with all three (2), and the agent turns (4).
    assert len(verdicts) == 25
    figures = (
        "success path",
        "handled-error path",
        "20 routes",
        "a budget",
        "a 'tell' budget",
        "a consecutive budget",
        "an 'interrupt' budget",
        "a route for repeats",
        "a record",
        "a listener",
        "agent turn",
        "repair= checks them",
        "errors marked",
        "none failing",
        "import beyond",
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


@pytest.mark.workers
def test_the_load_benchmark_runs_over_postgresql_and_reports_the_ratio_and_the_bytes(
    postgres: Postgres,
) -> None:
    # The fixture only proves PostgreSQL's programs are here (or skips, naming the
    # install); the benchmark starts a cluster of its own, as a user runs it.
    done = run_python("benchmarks/load.py", "--quick", timeout=300)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    [rates] = [line for line in lines if line.startswith("runs per second")]
    ours, none, ratio = (float(figure) for figure in rates.split()[-3:])
    assert ours > 0
    assert none > 0
    assert abs(ratio - ours / none) < 0.01
    assert any(line.startswith("throughput with the middleware:") for line in lines)
    [added] = [line for line in lines if line.startswith("checkpoint bytes the middleware adds")]
    assert "per failure:" in added
    figures = " ".join(rates.split()), " ".join(added.split())
    FIGURES.append(f"load benchmark (--quick): {figures[0]}; {figures[1]}")
