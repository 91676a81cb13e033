"""Amazon Bedrock's runtime API on the loopback, in the subset langchain-aws reads.

Two APIs, told apart by the request path (`/model/<model id>/<operation>`):
- Converse (`ChatBedrockConverse`): `converse` answers JSON, `converse-stream` AWS's binary
  event stream, one frame per event (`messageStart`, `contentBlockDelta`, `messageStop`, ...),
  each frame's payload the event's JSON.
- InvokeModel (the legacy `ChatBedrock`, with an Anthropic model): the body is Anthropic's
  Messages format; `invoke` answers it as JSON, `invoke-with-response-stream` as an event
  stream of `chunk` events whose `bytes` is one base64-encoded Anthropic stream event.

The script answers the first model request with a call of `lookup`, and any request that
already carries a tool result (`toolResult` / `tool_result`) with the final text.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from tests._loopback import Recorded, Reply, Respond

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
"""A Claude model id: ChatBedrockConverse streams for it, and ChatBedrock formats for Anthropic."""

CONVERSE_CALL_ID = "tooluse_1"
INVOKE_CALL_ID = "toolu_1"
FINAL_TEXT = "done"

EVENT_STREAM = "application/vnd.amazon.eventstream"


def frame(event_type: str, payload: object) -> bytes:
    """One event-stream message: prelude (lengths + CRC32), string headers, JSON payload, CRC32.

    botocore's parser reads `:message-type` (an `event`, not an error) and `:event-type` (the
    member of the stream's union the payload fills); it checks both CRCs.
    """
    body = json.dumps(payload).encode()
    headers = b"".join(
        bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
        for name, value in ((b":message-type", b"event"), (b":event-type", event_type.encode()))
    )
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


def event_stream(events: Iterable[tuple[str, object]]) -> Reply:
    """An event-stream reply: the frames in one body with a `content-length`.

    Not one chunk a frame: `ChatBedrock` stops reading at `message_stop` and closes the
    response, and the chunked encoding's unread terminator then resets the connection under
    the server's next read (a traceback from its thread, though the run is fine).
    """
    return Reply(
        b"".join(frame(event_type, payload) for event_type, payload in events),
        headers={"content-type": EVENT_STREAM},
    )


def operation(recorded: Recorded) -> str:
    """The operation a request calls: `converse`, `converse-stream`, `invoke`, ..."""
    return recorded.path.rsplit("/", 1)[-1]


def script(args: Mapping[str, object] | None = None) -> Respond:
    """Both APIs: first a call of `lookup` with `args` (default `{"record_id": 7}`), then text."""
    call_args: dict[str, object] = dict(args) if args is not None else {"record_id": 7}

    def respond(recorded: Recorded) -> Reply:
        body: dict[str, Any] = recorded.json()
        answered = tool_results(body) != []
        match operation(recorded):
            case "converse":
                return Reply.of_json(_converse(answered, call_args))
            case "converse-stream":
                return event_stream(_converse_events(answered, call_args))
            case "invoke":
                return Reply.of_json(_invoke(answered, call_args))
            case "invoke-with-response-stream":
                return event_stream(
                    ("chunk", {"bytes": base64.b64encode(json.dumps(event).encode()).decode()})
                    for event in _invoke_events(answered, call_args)
                )
            case other:
                raise ValueError(f"no such operation on the loopback: {other}")

    return respond


Api = Literal["converse", "invoke"]
APIS: tuple[Api, ...] = ("converse", "invoke")
"""`ChatBedrockConverse` on the Converse API, and `ChatBedrock` on InvokeModel."""


def tool_result(api: Api, content: object) -> dict[str, object]:
    """The result of the model's one call as each API spells it, with `content`: Converse's
    `toolResult` keeps the error flag; InvokeModel's `tool_result` block has none."""
    if api == "converse":
        return {"toolUseId": CONVERSE_CALL_ID, "content": content, "status": "error"}
    return {"type": "tool_result", "tool_use_id": INVOKE_CALL_ID, "content": content}


def tool_results(body: Mapping[str, Any]) -> list[Any]:
    """Every tool result in a request body, in order, as its API spells it.

    Converse: the `toolResult` object of a content block (`{"toolResult": {...}}`) of a
    `user` message. InvokeModel (Anthropic's Messages format): a `{"type": "tool_result"}`
    block of a `user` message's content (which may also be a plain str).
    """
    return [
        block.get("toolResult", block)
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if "toolResult" in block or block.get("type") == "tool_result"
    ]


def _converse(answered: bool, args: dict[str, object]) -> dict[str, Any]:
    # langchain-aws pops `usage` (a KeyError without it); `stopReason` is the API's own.
    if answered:
        content: dict[str, Any] = {"text": FINAL_TEXT}
        stop = "end_turn"
    else:
        content = {"toolUse": {"toolUseId": CONVERSE_CALL_ID, "name": "lookup", "input": args}}
        stop = "tool_use"
    return {
        "output": {"message": {"role": "assistant", "content": [content]}},
        "stopReason": stop,
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }


def _converse_events(answered: bool, args: dict[str, object]) -> list[tuple[str, object]]:
    # Without `messageStop` langchain-aws raises "Incomplete Bedrock response stream".
    if answered:
        blocks: list[tuple[str, object]] = [
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": FINAL_TEXT}}),
        ]
        stop = "end_turn"
    else:
        start = {"toolUse": {"toolUseId": CONVERSE_CALL_ID, "name": "lookup"}}
        delta = {"toolUse": {"input": json.dumps(args)}}
        blocks = [
            ("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": delta}),
        ]
        stop = "tool_use"
    return [
        ("messageStart", {"role": "assistant"}),
        *blocks,
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": stop}),
    ]


def _invoke(answered: bool, args: dict[str, object]) -> dict[str, Any]:
    if answered:
        block: dict[str, Any] = {"type": "text", "text": FINAL_TEXT}
    else:
        block = {"type": "tool_use", "id": INVOKE_CALL_ID, "name": "lookup", "input": args}
    return {"content": [block], "stop_reason": "end_turn" if answered else "tool_use"}


def _invoke_events(answered: bool, args: dict[str, object]) -> list[dict[str, Any]]:
    # The events langchain-aws reads: it stops at `message_stop`, reads `content_block` of
    # every `content_block_start` (text or tool), and ignores `content_block_stop`.
    if answered:
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": FINAL_TEXT}
    else:
        block = {"type": "tool_use", "id": INVOKE_CALL_ID, "name": "lookup", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
    return [
        {"type": "message_start"},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn" if answered else "tool_use"}},
        {"type": "message_stop"},
    ]
