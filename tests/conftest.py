"""Test-run plumbing: the static checks' summary printed at the end of the run."""

from __future__ import annotations

import pytest

STATIC_SUMMARY: list[str] = []
"""Lines the static checks add, printed after the test results."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if STATIC_SUMMARY:
        terminalreporter.section("static guarantees")
        for line in STATIC_SUMMARY:
            terminalreporter.write_line(line)
