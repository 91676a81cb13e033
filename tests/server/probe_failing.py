"""A test that fails while the server runs; tests/test_server.py runs it in a child pytest.

Not collected by the suite (its name does not start with `test_`). It records the server's
process group, then fails; the parent test checks that the group is gone afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests._server import Server, serve_for_tests

server = pytest.fixture(scope="module", name="server")(serve_for_tests)


def test_fails_while_the_server_runs(server: Server) -> None:
    Path(os.environ["SERVER_PGID_FILE"]).write_text(str(server.process.pid), encoding="utf-8")
    raise AssertionError("failing on purpose, with the server up")
