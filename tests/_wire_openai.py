"""OpenAI's two chat APIs on the loopback server: Chat Completions and Responses, each whole
or streamed over server-sent events, in the smallest subset that `langchain_openai.ChatOpenAI`
and the `openai` SDK read.

The script answers a request that carries no tool result yet with one call of a tool, and
any later request with a final text answer. It tells the two apart by the body (a `tool`
message, or a `function_call_output` input item), never by counting, so the sync, async and
streaming paths all run on one script. A body asking for `"stream": true` gets the same
answer as an event stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast

from tests._loopback import FINAL_ANSWER as FINAL_ANSWER  # read from here by test_readme.py
from tests._loopback import Recorded, Reply, Respond

Api = Literal["chat_completions", "responses"]
APIS: tuple[Api, ...] = ("chat_completions", "responses")

ENDPOINTS: dict[Api, str] = {
    "chat_completions": "/v1/chat/completions",
    "responses": "/v1/responses",
}
"""The path each API posts to, under the client's `base_url`, `<loopback url>/v1`."""

MODEL = "gpt-4o-mini"
CALL_ID = "call_1"
"""The id of the model's one tool call: the `tool_call_id` / `call_id` of its result."""


def script(args: Mapping[str, object], tool: str = "lookup") -> Respond:
    """The model's side: call `tool` with `args`; once a tool result is sent, answer."""
    arguments = json.dumps(dict(args))

    def respond(recorded: Recorded) -> Reply:
        api = api_of(recorded.path)
        body: dict[str, Any] = recorded.json()
        answered = tool_results(api, body) != []
        streamed = body.get("stream") is True
        if api == "chat_completions":
            message = _chat_answer() if answered else _chat_call(tool, arguments)
            if streamed:
                return _sse([*_chat_chunks(message), "[DONE]"])
            return Reply.of_json(_chat_completion(message))
        item = _responses_answer() if answered else _responses_call(tool, arguments)
        if streamed:
            return _sse(_responses_events(item))
        return Reply.of_json(_response(item))

    return respond


def api_of(path: str) -> Api:
    """The API a request went to, from its path (anything else fails the script)."""
    for api, endpoint in ENDPOINTS.items():
        if path == endpoint:
            return api
    raise ValueError(f"not an OpenAI chat endpoint: {path}")


def tool_results(api: Api, body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool results a request body carries, at the place its API puts them.

    Chat Completions: the `messages[*]` with `"role": "tool"` (`tool_call_id`, `content`).
    Responses: the `input[*]` items with `"type": "function_call_output"` (`call_id`,
    `output`).
    """
    if api == "chat_completions":
        messages = cast("list[dict[str, Any]]", body["messages"])
        return [message for message in messages if message.get("role") == "tool"]
    items = cast("list[dict[str, Any]]", body["input"])
    return [item for item in items if item.get("type") == "function_call_output"]


def tool_result(api: Api, content: object) -> dict[str, object]:
    """The result of the model's one call as its API carries it, with `content`."""
    if api == "chat_completions":
        return {"role": "tool", "tool_call_id": CALL_ID, "content": content}
    return {"type": "function_call_output", "call_id": CALL_ID, "output": content}


def _sse(events: Iterable[object]) -> Reply:
    """Server-sent events, one `data:` line each: JSON, or a str as it is (`[DONE]`)."""
    chunks = [
        f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode()
        for event in events
    ]
    return Reply(chunks, headers={"content-type": "text/event-stream"})


# Chat Completions: the answer is `choices[0].message`; streamed, `choices[0].delta` chunks
# and then `data: [DONE]`. The client reads no `object`, `created` or `index` of a choice,
# nor a tool call's `type`, so they are left out.


def _chat_call(tool: str, arguments: str) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": CALL_ID, "function": {"name": tool, "arguments": arguments}}],
    }


def _chat_answer() -> dict[str, object]:
    return {"role": "assistant", "content": FINAL_ANSWER}


def _finish_reason(message: Mapping[str, object]) -> str:
    return "tool_calls" if "tool_calls" in message else "stop"


def _chat_completion(message: Mapping[str, object]) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "model": MODEL,
        "choices": [{"message": dict(message), "finish_reason": _finish_reason(message)}],
    }


def _chat_chunks(message: Mapping[str, object]) -> list[dict[str, object]]:
    """The message as one delta, then a last chunk with the finish reason.

    A streamed tool call carries its `index`, by which the client joins the pieces of one
    call (here there is one piece; without an index it would still parse).
    """
    delta = dict(message)
    if "tool_calls" in delta:
        calls = cast("list[dict[str, object]]", delta["tool_calls"])
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
    return [
        {"model": MODEL, "choices": [{"delta": delta}]},
        {"model": MODEL, "choices": [{"delta": {}, "finish_reason": _finish_reason(message)}]},
    ]


# Responses: the answer is the `output[*]` items; streamed, `response.*` events, each with its
# `type` in the data (the client reads no `event:` line), ending in `response.completed`.


def _responses_call(tool: str, arguments: str) -> dict[str, object]:
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": CALL_ID,
        "name": tool,
        "arguments": arguments,
    }


def _responses_answer() -> dict[str, object]:
    return {
        "type": "message",
        "id": "msg_1",
        "content": [{"type": "output_text", "text": FINAL_ANSWER}],
    }


def _response(item: Mapping[str, object]) -> dict[str, object]:
    # The response's id becomes the AIMessage's id: were the two alike, the agent's state
    # would replace the message with the tool call by the one with the answer.
    return {"id": f"resp_{item['id']}", "model": MODEL, "output": [dict(item)]}


def _responses_events(item: Mapping[str, object]) -> list[dict[str, object]]:
    """The item as it streams: a function call is added with empty arguments, which then
    arrive as a delta; a message's text arrives as a delta; `response.completed` ends."""
    parts: list[dict[str, object]]
    if item["type"] == "function_call":
        parts = [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "arguments": ""},
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "item_id": item["id"],
                "delta": item["arguments"],
            },
        ]
    else:
        parts = [
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "delta": FINAL_ANSWER,
            }
        ]
    return [*parts, {"type": "response.completed", "response": _response(item)}]
