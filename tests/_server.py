"""A real LangGraph API server (`langgraph dev`) on loopback, started and stopped by the tests.

The server runs in a process group of its own, which `stop` ends (TERM, then KILL) and then
checks is empty, so no process outlives the tests. Its HTTP(S) proxy is a local `Recorder`:
any client in the server that tries to reach another host goes there instead, and the
tests assert that it saw no one. Tracing, the CLI's analytics and the server's check for a
newer release (which the recorder caught asking pypi.org) are off.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph_sdk import get_client

from tests._processes import ROOT, free_port, stop_group, wait_for_ok
from tests.conftest import FIGURES

SERVER_DIR = ROOT / "tests" / "server"
LOOPBACK = "127.0.0.1,localhost"


@dataclass
class Recorder:
    """A listener on loopback that records the first line of every connection, then closes it."""

    port: int = 0
    """Where it listens, once started."""
    seen: list[str] = field(default_factory=list[str])

    def start(self) -> None:
        """Listen on a port of its own choosing, in a daemon thread."""
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        threading.Thread(target=self._serve, args=(listener,), daemon=True).start()

    def _serve(self, listener: socket.socket) -> None:
        with listener:
            while True:
                connection, _ = listener.accept()
                with connection:
                    connection.settimeout(2)
                    try:
                        first = connection.recv(512).split(b"\r\n", 1)[0]
                    except OSError:
                        first = b"(nothing sent)"
                    self.seen.append(first.decode("latin-1"))


@dataclass
class Server:
    """A running `langgraph dev`: where it listens, its log, and how to stop it."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path
    handler_log: Path
    proxy: Recorder

    def stop(self) -> None:
        """End the server's whole process group; fail if any process of it is left."""
        stop_group(self.process)


def serve_for_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The `server` fixture's body: start, yield, and always stop and check, even on failure.

    While it runs, this process reaches loopback directly, whatever proxy it is given.
    """
    with pytest.MonkeyPatch.context() as patch:
        for name in ("NO_PROXY", "no_proxy"):
            patch.setenv(name, ",".join(filter(None, [os.environ.get(name), LOOPBACK])))
        running = start(tmp_path_factory.mktemp("langgraph-server"))
        try:
            yield running
        finally:
            running.stop()
    assert running.proxy.seen == [], f"the server tried to leave the machine: {running.proxy.seen}"
    FIGURES.append("LangGraph server: stopped, no process left, no outbound connection tried")


def start(directory: Path) -> Server:
    """Start `langgraph dev` on a free loopback port and wait until it answers `/ok`."""
    proxy = Recorder()
    proxy.start()
    port = free_port()
    log = directory / "server.log"
    handler_log = directory / "handler.log"
    handler_log.touch()
    proxy_url = f"http://127.0.0.1:{proxy.port}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))},
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",  # else the server asks pypi.org for its latest release
        "TOOL_ERRORS_HANDLER_LOG": str(handler_log),
        **{name: proxy_url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")},
        **{name.lower(): proxy_url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")},
        "NO_PROXY": LOOPBACK,
        "no_proxy": LOOPBACK,
    }
    command = [
        str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser", "--no-reload",
        "--host", "127.0.0.1", "--port", str(port), "--config", "langgraph.json",
    ]  # fmt: skip
    # The server keeps its state (`.langgraph_api/`) in its working directory and resolves
    # the config's paths from there: run it in `directory`, on copies of the two files.
    for name in ("langgraph.json", "graph.py"):
        shutil.copy(SERVER_DIR / name, directory / name)
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=directory, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    server = Server(process, f"http://127.0.0.1:{port}", log, handler_log, proxy)
    wait_for_ok(process, server.url, log, timeout=90)
    return server


Json = dict[str, Any]


def _json(value: object) -> Json:
    assert isinstance(value, dict), f"expected a JSON object, got {value!r}"
    return cast(Json, value)


class Api:
    """The SDK calls the tests make, typed as the JSON the server sends.

    `langgraph_sdk`'s annotations leave some types unparameterised (`list[dict]`), which
    pyright strict reports as partially unknown; this class is the one place that meets
    them, and it checks the shape of everything that comes back.
    """

    def __init__(self, url: str) -> None:
        # `Any`: the SDK's partially unknown annotations stop here; every result is checked.
        self.client: Any = get_client(url=url, api_key=None)

    async def new_thread(self) -> str:
        """Create a thread; its id."""
        thread = _json(await self.client.threads.create())
        return str(thread["thread_id"])

    async def wait(self, thread_id: str, graph: str = "agent", **run: Any) -> Json:
        """Start a run of a served graph (`input=` or `command=`) and wait for its final state."""
        return _json(await self.client.runs.wait(thread_id, graph, **run))

    async def stream_updates(self, thread_id: str, **run: Any) -> AsyncIterator[tuple[str, Json]]:
        """Run the agent, yielding each `updates` event's node and update as it arrives."""
        async for part in self.client.runs.stream(thread_id, "agent", stream_mode="updates", **run):
            if part.event == "updates":
                for node, update in _json(part.data).items():
                    yield node, _json(update)

    async def run_statuses(self, thread_id: str) -> list[str]:
        """The status of each run of the thread."""
        return [str(_json(run)["status"]) for run in await self.client.runs.list(thread_id)]

    async def messages(self, thread_id: str) -> list[Json]:
        """The thread's messages, as checkpointed."""
        state = _json(await self.client.threads.get_state(thread_id))
        return [_json(message) for message in _json(state["values"])["messages"]]

    async def values(self, thread_id: str) -> Json:
        """The thread's state values, as checkpointed."""
        state = _json(await self.client.threads.get_state(thread_id))
        return _json(state["values"])

    async def close(self) -> None:
        """Close the HTTP connections."""
        await self.client.aclose()
