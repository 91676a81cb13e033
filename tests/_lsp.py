"""A small Language Server Protocol client over stdio, to ask a real server what an IDE shows.

It speaks just enough LSP for the IDE tests: initialize a workspace, open one document, and
send requests (signature help, hover, completion). Requests the server sends back (for its
configuration, progress tokens, capability registration) get a neutral answer, as an
editor with default settings would give.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TIMEOUT = 120.0
"""Seconds to wait for one answer; a cold server indexes langchain first."""


class LanguageServer:
    """One language server process with a workspace and one open document.

    Example:
        ```python
        with LanguageServer(["pyright-langserver", "--stdio"], root) as server:
            server.open(path, text)
            help = server.request("textDocument/signatureHelp", server.position(path, 3, 10))
        ```
    """

    def __init__(
        self,
        command: Sequence[str],
        root: Path,
        *,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self._root = root
        self._settings = settings or {}
        self._process = subprocess.Popen(
            list(command),
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_forever, daemon=True)
        self._reader.start()

    def __enter__(self) -> LanguageServer:
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self._root.as_uri(),
                "workspaceFolders": [{"uri": self._root.as_uri(), "name": self._root.name}],
                "capabilities": {
                    "textDocument": {
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "signatureHelp": {
                            "signatureInformation": {
                                "documentationFormat": ["markdown", "plaintext"],
                                "parameterInformation": {"labelOffsetSupport": True},
                                "activeParameterSupport": True,
                            },
                            "contextSupport": True,
                        },
                        "completion": {
                            "completionItem": {
                                "documentationFormat": ["markdown", "plaintext"],
                                "resolveSupport": {"properties": ["documentation", "detail"]},
                            }
                        },
                    },
                    "workspace": {"configuration": True, "workspaceFolders": True},
                },
                "initializationOptions": self._settings,
            },
        )
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self._send({"jsonrpc": "2.0", "method": "exit"})
            self._process.wait(timeout=10)
        except (OSError, queue.Empty, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()

    def open(self, path: Path, text: str) -> None:
        """Open `path` with `text` as its content, as an editor does for an unsaved buffer."""
        self._send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": path.as_uri(),
                        "languageId": "python",
                        "version": 1,
                        "text": text,
                    }
                },
            }
        )

    @staticmethod
    def position(path: Path, line: int, character: int) -> dict[str, Any]:
        """The parameters of a request at a zero-based line and character of `path`."""
        return {
            "textDocument": {"uri": path.as_uri()},
            "position": {"line": line, "character": character},
        }

    def request(self, method: str, params: object, *, timeout: float = TIMEOUT) -> Any:
        """Send a request and return its result (raises `RuntimeError` on an LSP error)."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            answers: queue.Queue[dict[str, Any]] = queue.Queue()
            self._answers[ident] = answers
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        answer = answers.get(timeout=timeout)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result")

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def _read_forever(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = stdout.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message: dict[str, Any] = json.loads(stdout.read(length))
            if "method" in message and "id" in message:
                self._answer_server(message)
            elif "id" in message and message["id"] in self._answers:
                self._answers[message["id"]].put(message)

    def _answer_server(self, message: dict[str, Any]) -> None:
        result: object = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message["params"]["items"]]
        elif message["method"] == "workspace/workspaceFolders":
            result = [{"uri": self._root.as_uri(), "name": self._root.name}]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
