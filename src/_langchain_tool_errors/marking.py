"""Marking: an error `ToolMessage` reaches every model as a failure.

Most provider integrations drop `ToolMessage.status` when they build the request. For their
models the middleware's model-call hook marks each error message, in what is sent only (the
agent's state keeps every message as it was written): in the provider's own error field
where the integration can be made to fill it, else with a prefix in front of its text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, ToolMessage

from _langchain_tool_errors.providers import Form, Provider
from _langchain_tool_errors.unfinished import with_every_call_answered

DEFAULT_ERROR_PREFIX = "Error: "
"""The mark: langchain's own tool errors (`ToolNode`'s) already begin with it."""


def prepared(
    messages: Sequence[AnyMessage], provider: Provider, prefix: str | None
) -> list[AnyMessage] | None:
    """The messages as sent to the model: each error message checked and marked.

    Returns `None` when none changes. A marked message is a copy; the originals (the
    agent's state) are left as they are.

    Raises:
        TypeError: An error message holds a content block the provider does not take in a
            tool result (its request would be refused).
    """
    form: Form | None = None if prefix is None else provider.form
    if form in (None, "flag") and provider.taken is None:
        return None  # nothing to mark, and nothing known to check
    copies: list[AnyMessage] | None = None
    for index, message in enumerate(messages):
        if not (type(message) is ToolMessage or isinstance(message, ToolMessage)):
            continue
        if message.status != "error":
            continue
        content = message.content
        if not isinstance(content, str):
            provider.require_taken(content, message)
        if form in (None, "flag") or prefix is None:
            continue
        if form == "error_key" and isinstance(content, str):
            sent: str | list[str | dict[Any, Any]] | None = _in_error_key(content)
        else:
            sent = _with_prefix(content, prefix)
        if sent is None:
            continue
        if copies is None:
            copies = list(messages)
        copies[index] = message.model_copy(update={"content": sent})
    return copies


def _in_error_key(content: str) -> str | None:
    """The text as `{"error": text}`, or `None` if it already is (another middleware's)."""
    if content.startswith('{"error": '):
        try:
            parsed: Any = json.loads(content)
            if json.dumps({"error": parsed["error"]}) == content:
                return None
        except (ValueError, TypeError, KeyError):  # not JSON, not an object, no "error"
            pass
    return json.dumps({"error": content})


def _with_prefix(
    content: str | list[str | dict[Any, Any]], prefix: str
) -> str | list[str | dict[Any, Any]] | None:
    """The content with the prefix in front of its text, or `None` if it already has it."""
    if isinstance(content, str):
        return None if content.startswith(prefix) else prefix + content
    first = content[0] if content else None
    if isinstance(first, str):
        if first.startswith(prefix):
            return None
        return [prefix + first, *content[1:]]
    if isinstance(first, dict) and first.get("type") == "text":
        text = first.get("text")
        if isinstance(text, str):
            if text.startswith(prefix):
                return None
            return [{**first, "text": prefix + text}, *content[1:]]
    return [{"type": "text", "text": prefix}, *content]


def sent(
    messages: list[AnyMessage], provider: Provider, prefix: str | None
) -> list[AnyMessage] | None:
    """What the model is sent (`None`: the messages as they are).

    Every call answered (a call a cancelled run left without an answer gets one), then
    every error message checked against the provider and marked.
    """
    answered = with_every_call_answered(messages)
    complete = messages if answered is None else answered
    marked = prepared(complete, provider, prefix)
    return answered if marked is None else marked
