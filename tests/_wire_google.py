"""The Gemini Developer API's `generateContent`, as langchain-google-genai reads it, on loopback.

`ChatGoogleGenerativeAI` talks to it through the google-genai SDK over REST:
`POST /<version>/models/<model>:generateContent` answers with one JSON body, and
`POST /<version>/models/<model>:streamGenerateContent?alt=sse` with server-sent events, one
`GenerateContentResponse` each. The SDK's default version segment is `v1` (google-genai
3.6.1; `GOOGLE_GENAI_API_VERSION` or the model's `api_version` changes it), so the script
matches the endings only. A reply holds what the client reads: `candidates[].content.parts[]`
(a `functionCall` with `name` and `args`, or a `text`) and the candidate's `finishReason`.
A tool result comes back as a `functionResponse` part in a `user` turn of `contents`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests._loopback import Recorded, Reply, Respond

MODEL = "gemini-2.5-flash"
"""A model before Gemini 3, so the integration adds no thought-signature placeholder."""

GENERATE = f"/models/{MODEL}:generateContent"
STREAM = f"/models/{MODEL}:streamGenerateContent?alt=sse"

FINAL_TEXT = "done"
"""The model's answer once it has read a tool result."""


def script(args: Mapping[str, object]) -> Respond:
    """Answer a request with no tool result by calling `lookup` with `args`, else with text.

    Which reply is due is read from the request body, so the sync, async and streaming
    paths all get the same conversation.
    """

    def respond(recorded: Recorded) -> Reply:
        if not is_model_call(recorded):
            raise LookupError(f"no model at {recorded.method} {recorded.path}")
        if function_responses(recorded.json()):
            part: dict[str, object] = {"text": FINAL_TEXT}
        else:
            part = {"functionCall": {"name": "lookup", "args": dict(args)}}
        payload = {"candidates": [{"content": {"parts": [part]}, "finishReason": "STOP"}]}
        if streams(recorded):
            return Reply.of_events([payload])
        return Reply.of_json(payload)

    return respond


def is_model_call(recorded: Recorded) -> bool:
    """Whether the request is a `generateContent` call, streamed or not."""
    return recorded.method == "POST" and recorded.path.endswith((GENERATE, STREAM))


def streams(recorded: Recorded) -> bool:
    """Whether the request went to the streaming endpoint."""
    return recorded.path.endswith(STREAM)


def sent_result(requests: Sequence[Recorded]) -> list[Any]:
    """The parts of the tool-result turn in the model's second call (the first has none);
    the requests' other calls, the image downloads, left out."""
    first, second = [recorded for recorded in requests if is_model_call(recorded)]
    assert not function_responses(first.json())
    return tool_result_turn(second.json())


def tool_result_turn(body: Mapping[str, Any]) -> list[Any]:
    """The parts of the one turn of `contents` that carries `functionResponse` parts."""
    [turn] = [content for content in body["contents"] if _function_responses_of(content)]
    assert turn["role"] == "user"
    parts: list[Any] = turn["parts"]
    return parts


def function_responses(body: Mapping[str, Any]) -> list[Any]:
    """Every `functionResponse` in the request's `contents`, in order."""
    return [
        response for content in body["contents"] for response in _function_responses_of(content)
    ]


def _function_responses_of(content: Mapping[str, Any]) -> list[Any]:
    parts: list[Mapping[str, Any]] = content.get("parts", [])
    return [part["functionResponse"] for part in parts if "functionResponse" in part]
