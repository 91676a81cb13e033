"""The documentation site as the tests use it: built strictly, read back, served on loopback."""

from __future__ import annotations

import functools
import http.server
import threading
import time
import zlib
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import override

from tests._processes import run_python


@dataclass(frozen=True)
class Build:
    """One `mkdocs build --strict`: where the site went, what mkdocs said, how long it took."""

    site: Path
    returncode: int
    output: str
    seconds: float


def build(site: Path, config: Path | None = None) -> Build:
    """Build the site into `site` in strict mode (any warning fails the build)."""
    args = ["-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    if config is not None:
        args += ["--config-file", str(config)]
    started = time.perf_counter()
    # mkdocs-material prints a notice about its successor on every build; it is not a warning.
    done = run_python(*args, env={"NO_MKDOCS_2_WARNING": "1"})
    return Build(site, done.returncode, done.stdout + done.stderr, time.perf_counter() - started)


def inventory(site: Path) -> list[str]:
    """The names the site documents, from its Sphinx-style `objects.inv`.

    The file is four header lines, then a zlib stream of lines `name domain:role ...`.
    """
    data = (site / "objects.inv").read_bytes()
    start = 0
    for _ in range(4):
        start = data.index(b"\n", start) + 1
    lines = zlib.decompress(data[start:]).decode("utf-8").splitlines()
    return [line.split(" ", 1)[0] for line in lines if line.strip()]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files; records every path that was missing instead of logging each request."""

    missing: list[str]

    @override
    def log_message(self, format: str, *args: object) -> None:
        return None

    @override
    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            self.missing.append(self.path)
        super().send_error(code, message, explain)


@contextmanager
def served(site: Path) -> Generator[tuple[str, list[str]]]:
    """Serve `site` on a free loopback port: its base URL, and the paths requested but missing."""
    missing: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"missing": missing})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", missing
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
