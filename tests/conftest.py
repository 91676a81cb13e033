"""Test-run plumbing: the figures the suite measures, printed at the end of the run, the
server tests skipped where the LangGraph server cannot be installed, and the servers the
tests share (PostgreSQL for the session, a provider loopback for a module) and the two
execution paths every test that takes `path` runs on."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests._agents import PATHS, Path
from tests._postgres import Postgres, started_postgres
from tests._providers import ProviderServer

FIGURES: list[str] = []
"""Lines the tests add (table sizes, example counts, static cases), printed after the results."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section("figures")
        for line in FIGURES:
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the server tests where `langgraph-cli[inmem]` is not installed (Python 3.15)."""
    if importlib.util.find_spec("langgraph_api") is not None:
        return
    skip = pytest.mark.skip(
        reason="langgraph-cli[inmem] is not installed: it has no wheels for this Python"
    )
    for item in items:
        if item.get_closest_marker("server") is not None:
            item.add_marker(skip)


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> Path:
    """The execution path a test runs on: a test that takes `path` runs on both, sync
    (`invoke`) and async (`ainvoke`), unless it names its paths itself (`parametrize`)."""
    chosen: Path = request.param
    return chosen


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A PostgreSQL server of the session's own (see tests/_postgres.py); each test that
    needs a clean one takes `postgres.new_database()`."""
    yield from started_postgres()


@pytest.fixture(scope="module")
def provider_server() -> Iterator[ProviderServer]:
    """The loopback server of a module's provider tests (see tests/_providers.py); each run
    mounts its own script at a path of its own."""
    with ProviderServer() as server:
        yield server
