"""Which model asked for a tool call, so a handler's blocks are checked at the failure itself.

A handler's content blocks must be ones the provider of the model that asked for the call
takes in a tool result. The tools run in a step after the model's, perhaps in another
process, and a tool call's request does not name the model. So the model-call hook notes,
by the id of each reply that asks for tools, the provider of the model that wrote it; a
failure finds the reply that holds its call among the run's own messages and checks the
handler's blocks against that reply's provider.

Nothing here is one run's state: an entry says what one reply is, and replies have ids of
their own (langchain gives each reply a fresh one unless the provider did). The check before
each model call, against the model about to be called, runs whatever this holds, so an
entry only makes a refusal come earlier, chained to the tool's exception. A reply this
process never saw (the run went on in another process), an entry evicted from the bounded
memo, and an id two different models' replies share are all checked at the next model call
instead: one run is never refused for another run's model.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Any, Final

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.providers import Provider

_AMBIGUOUS: Final = object()
"""An id that two replies from models of different classes share: no provider is known."""

_KEPT = 4096
"""Replies remembered per process, the latest kept: a failure comes a step after its reply."""


class _Replies:
    """The provider of each recent reply that asked for tools, by the reply's id."""

    __slots__ = ("_kept", "_lock")

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Provider | object] = OrderedDict()
        self._lock = Lock()

    def note(self, reply_id: str, provider: Provider) -> None:
        with self._lock:
            known = self._kept.get(reply_id, provider)
            same = known is provider or (
                isinstance(known, Provider)
                and known.name == provider.name
                and known.taken == provider.taken
            )
            self._kept[reply_id] = provider if same else _AMBIGUOUS
            self._kept.move_to_end(reply_id)
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)

    def get(self, reply_id: str) -> Provider | None:
        with self._lock:
            known = self._kept.get(reply_id)
        return known if isinstance(known, Provider) else None


_REPLIES = _Replies()


def note_replies(
    response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any], provider: Provider
) -> None:
    """Remember `provider` for each reply in `response` that asks for tools.

    Every provider is noted, those that take every block too, so that a reply id another
    model's reply shares is known to be ambiguous.
    """
    if isinstance(response, ExtendedModelResponse):
        response = response.model_response
    replies = [response] if isinstance(response, AIMessage) else response.result
    for reply in replies:
        if isinstance(reply, AIMessage) and reply.tool_calls and reply.id is not None:
            _REPLIES.note(reply.id, provider)


def asked_by(request: ToolCallRequest) -> Provider | None:
    """The provider of the model whose reply holds `request`'s call, where it is known."""
    reply, _ = last_reply(request.state)  # the tools run on the model's last reply
    if reply is None or reply.id is None:
        return None
    call_id = request.tool_call.get("id")
    if all(call.get("id") != call_id for call in reply.tool_calls):
        return None
    return _REPLIES.get(reply.id)
