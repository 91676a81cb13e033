"""A provider's API on 127.0.0.1: records every request, answers from the test's script.

The provider tests point a real chat model class at it by its base URL or endpoint option,
with a dummy key, so the request bodies the integration builds can be read back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from typing_extensions import override


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body, parsed as JSON."""
        return json.loads(self.body)

    def asks_to_stream(self) -> bool:
        """Whether the JSON body asks for the streamed answer (`"stream": true`, as the
        OpenAI, Anthropic and Ollama APIs spell it)."""
        body: dict[str, Any] = self.json()
        return body.get("stream") is True


@dataclass(frozen=True)
class Reply:
    """What the server answers: a whole body, or chunks sent as they come (streaming)."""

    body: bytes | Iterable[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})

    @classmethod
    def of_json(cls, payload: object, status: int = 200) -> Reply:
        """A JSON body."""
        return cls(json.dumps(payload).encode(), status)

    @classmethod
    def of_events(cls, events: Iterable[object]) -> Reply:
        """A server-sent event stream, one `data:` line per JSON event."""
        chunks = [f"data: {json.dumps(event)}\n\n".encode() for event in events]
        return cls(chunks, headers={"content-type": "text/event-stream"})

    @classmethod
    def of_lines(cls, lines: Iterable[object]) -> Reply:
        """Newline-delimited JSON, one object a chunk."""
        chunks = [(json.dumps(line) + "\n").encode() for line in lines]
        return cls(chunks, headers={"content-type": "application/x-ndjson"})


FINAL_ANSWER = "record 7 could not be read"
"""What each provider's script answers once it is sent a tool result."""

Respond = Callable[[Recorded], Reply]
"""The test's script: the reply to a request (it may look at what was recorded so far)."""


class Loopback:
    """An HTTP server on a free port of 127.0.0.1, for the length of a `with` block."""

    def __init__(self, respond: Respond) -> None:
        self.requests: list[Recorded] = []
        self._respond = respond
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """The server's base URL, `http://127.0.0.1:<port>`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests so far, in order."""
        with self._lock:
            return [recorded.json() for recorded in self.requests if recorded.body]

    def _record(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
        return self._respond(recorded)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                body = self._body()
                recorded = Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                try:
                    reply = loopback._record(recorded)
                except Exception as exc:  # the script failed: say so to the client
                    reply = Reply.of_json({"error": f"{type(exc).__name__}: {exc}"}, 500)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if isinstance(reply.body, bytes):
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in _nonempty(reply.body):
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            def _body(self) -> bytes:
                if self.headers.get("transfer-encoding", "").lower() != "chunked":
                    length = int(self.headers.get("content-length") or 0)
                    return self.rfile.read(length) if length else b""
                parts: list[bytes] = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(parts)

            do_GET = do_POST = do_PUT = _answer

            @override
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reads `requests`, not the log."""

        return Handler


def _nonempty(chunks: Iterable[bytes]) -> Iterator[bytes]:
    return (chunk for chunk in chunks if chunk)
