"""Test-run plumbing: the figures the suite measures, printed at the end of the run."""

from __future__ import annotations

import pytest

FIGURES: list[str] = []
"""Lines the tests add (table sizes, example counts, static cases), printed after the results."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section("figures")
        for line in FIGURES:
            terminalreporter.write_line(line)
