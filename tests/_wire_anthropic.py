"""Anthropic's Messages API on the loopback server, whole or streamed over server-sent
events, in the smallest subset `langchain_anthropic.ChatAnthropic` and the `anthropic` SDK
read.

The client posts to `<base_url>/v1/messages`. The script answers a request that carries no
tool result yet with one `tool_use` of `lookup`, and any later request with a final text
answer. It tells the two apart by the body (a `tool_result` block in a `user` turn), never
by counting, so the sync, async and streaming paths all run on one script.

What is left out, because neither reads it: the message's `id`, `type` and `role`, and the
`content_block_stop`, `message_stop` and `ping` events of a stream. What is kept, because
the client needs it: `usage` (the integration reads it as an attribute, and the SDK, which
builds its models without validation, leaves a missing one unset), each event's `type`
(the SDK picks the event's class by it) and its `event:` line (the SDK drops an event
without a name).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from tests._loopback import FINAL_ANSWER, Recorded, Reply

ENDPOINT = "/v1/messages"
"""The path the client posts to, under the `base_url` `<loopback>`."""

MODEL = "claude-test"
TOOL_USE_ID = "toolu_lookup_1"
"""The id of the model's one `tool_use` (the `tool_use_id` of its `tool_result`)."""


def script(args: Mapping[str, object]) -> Callable[[Recorded], Reply]:
    """The model's side: call `lookup` with `args`, then, once a tool result is sent, answer."""

    def respond(recorded: Recorded) -> Reply:
        if recorded.path != ENDPOINT:
            error = {"type": "not_found_error", "message": f"no route {recorded.path}"}
            return Reply.of_json({"type": "error", "error": error}, 404)
        body: dict[str, Any] = recorded.json()
        if tool_results(body):
            block: dict[str, object] = {"type": "text", "text": FINAL_ANSWER}
        else:
            block = {"type": "tool_use", "id": TOOL_USE_ID, "name": "lookup", "input": dict(args)}
        if body.get("stream"):
            return _sse(_events(block))
        return Reply.of_json(_message(block))

    return respond


def tool_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks a request body carries: `messages[*].content[*]` of `user` turns."""
    messages = cast("list[dict[str, Any]]", body["messages"])
    return [
        block
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in cast("list[dict[str, Any]]", message["content"])
        if block.get("type") == "tool_result"
    ]


def tool_result(content: object, *, is_error: bool = True) -> dict[str, object]:
    """The `tool_result` block for the model's one call, as the API expects it."""
    return {
        "type": "tool_result",
        "tool_use_id": TOOL_USE_ID,
        "content": content,
        "is_error": is_error,
    }


def _stop_reason(block: Mapping[str, object]) -> str:
    return "tool_use" if block["type"] == "tool_use" else "end_turn"


def _message(block: Mapping[str, object]) -> dict[str, object]:
    """A whole answer: one content block."""
    return {
        "model": MODEL,
        "content": [block],
        "stop_reason": _stop_reason(block),
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _events(block: Mapping[str, object]) -> list[dict[str, object]]:
    """The same answer as a stream: the block opens empty and its content comes as a delta."""
    opened: dict[str, object] = {**block}
    if block["type"] == "tool_use":
        opened["input"] = dict[str, object]()  # empty, as the API opens it
        delta: dict[str, object] = {
            "type": "input_json_delta",
            "partial_json": json.dumps(block["input"]),
        }
    else:
        opened["text"] = ""
        delta = {"type": "text_delta", "text": block["text"]}
    return [
        {"type": "message_start", "message": {"model": MODEL}},
        {"type": "content_block_start", "index": 0, "content_block": opened},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(block)},
            "usage": {"output_tokens": 1},
        },
    ]


def _sse(events: Iterable[Mapping[str, object]]) -> Reply:
    """Server-sent events, each named on an `event:` line by its `type`."""
    chunks = [f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events]
    return Reply(chunks, headers={"content-type": "text/event-stream"})
