"""Ollama's chat API on the loopback server, streamed as newline-delimited JSON, in the
smallest subset `langchain_ollama.ChatOllama` and the `ollama` client read.

The client posts to `<base_url>/api/chat`, and `ChatOllama` always asks for the stream
(`"stream": true`, on `invoke` as well: its `_generate` adds the streamed chunks up), so the
script answers only that way, and answers any other request with an error the client raises.
It answers a request that carries no tool result yet with one call of `lookup`, and any
later request with a final text answer, telling the two apart by the body (a `tool`
message), never by counting.

Each line is an `ollama.ChatResponse`, which the client validates: `message` (with its
`role`) is required on every line, even the last. The client reads `done` (the last line
carries the generation info) and `model`; Ollama's timings and token counts, and
`created_at`, are optional and left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from tests._loopback import FINAL_ANSWER, Recorded, Reply

ENDPOINT = "/api/chat"
"""The path the client posts to, under the `base_url` `<loopback>`."""

MODEL = "llama-test"


def script(args: Mapping[str, object]) -> Callable[[Recorded], Reply]:
    """The model's side: call `lookup` with `args`, then, once a tool result is sent, answer."""

    def respond(recorded: Recorded) -> Reply:
        if recorded.path != ENDPOINT:
            return Reply.of_json({"error": f"no route {recorded.path}"}, 404)
        body: dict[str, Any] = recorded.json()
        if not recorded.asks_to_stream():
            return Reply.of_json({"error": "this script answers only `stream: true`"}, 400)
        if tool_results(body):
            message: dict[str, object] = {"role": "assistant", "content": FINAL_ANSWER}
        else:
            call = {"function": {"name": "lookup", "arguments": dict(args)}}
            message = {"role": "assistant", "content": "", "tool_calls": [call]}
        return Reply.of_lines(
            [
                {"model": MODEL, "message": message, "done": False},
                {
                    "model": MODEL,
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                },
            ]
        )

    return respond


def tool_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool results a request body carries: `messages[*]` with `"role": "tool"`."""
    messages = cast("list[dict[str, Any]]", body["messages"])
    return [message for message in messages if message["role"] == "tool"]


def tool_result(content: str, *, images: list[str] | None = None) -> dict[str, object]:
    """A tool result as the client sends it: no call id, no error field, images if any."""
    result: dict[str, object] = {"role": "tool", "content": content}
    if images:
        result["images"] = images
    return result
