"""Marking: an error `ToolMessage` reaches every model as a failure.

Most provider integrations drop `ToolMessage.status` when they build the request. For their
models the middleware's model-call hook marks each error message, in what is sent only (the
agent's state keeps every message as it was written): in the provider's own error field
where the integration can be made to fill it, else with a prefix in front of its text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from langchain_core.messages import AnyMessage, ToolMessage

DEFAULT_ERROR_PREFIX = "Error: "
"""The mark: langchain's own tool errors (`ToolNode`'s) already begin with it."""

Form: TypeAlias = Literal["flag", "error_key", "prefix"]
"""How an error message reaches a model: by the flag the integration sets itself, by the
provider's error key (a text content sent as `{"error": text}`), or marked with the prefix."""

_FORMS: dict[str, Form] = {
    # tool_result blocks carry `is_error: true`.
    "langchain_anthropic.chat_models.ChatAnthropic": "flag",
    # toolResult blocks carry `status: "error"`.
    "langchain_aws.chat_models.bedrock_converse.ChatBedrockConverse": "flag",
    # A text that is a JSON object is sent as the functionResponse's `response` itself,
    # where Gemini reads an `error` key as the call's error (any other text is `output`).
    "langchain_google_genai.chat_models.ChatGoogleGenerativeAI": "error_key",
}
"""The chat model classes (and their subclasses) that do not take the prefix, by name."""

_CONVERSE_WHEN_ASKED = "langchain_aws.chat_models.bedrock.ChatBedrock"
"""Legacy Bedrock: its own request drops the flag, but with `beta_use_converse_api=True` it
hands every call to a `ChatBedrockConverse`, whose request keeps it."""

_known: dict[type, Form] = {}
_asked: dict[type, bool] = {}


def form_for(model: object) -> Form:
    """How requests built by `model` tell the provider that a tool result is an error.

    Known by its class and the class's bases, by their qualified names, so no provider
    package is imported; any other class, a wrapper around a model included, gets the prefix.
    """
    model_class = type(model)
    if model_class not in _known:
        names = _names(model_class)
        form: Form = "prefix"
        for name in names:
            if name in _FORMS:
                form = _FORMS[name]
                break
        _known[model_class] = form
        _asked[model_class] = _CONVERSE_WHEN_ASKED in names
    if _asked[model_class] and getattr(model, "beta_use_converse_api", False) is True:
        return "flag"
    return _known[model_class]


def _names(model_class: type) -> list[str]:
    return [f"{base.__module__}.{base.__qualname__}" for base in model_class.__mro__]


def marked(messages: Sequence[AnyMessage], form: Form, prefix: str) -> list[AnyMessage] | None:
    """The messages with each error `ToolMessage` in `form`, or `None` if none changes.

    A marked message is a copy; the originals (the agent's state) are left as they are.
    """
    if form == "flag":
        return None
    copies: list[AnyMessage] | None = None
    for index, message in enumerate(messages):
        if not (type(message) is ToolMessage or isinstance(message, ToolMessage)):
            continue
        if message.status != "error":
            continue
        content = message.content
        if form == "error_key" and isinstance(content, str):
            sent: str | list[str | dict[Any, Any]] | None = json.dumps({"error": content})
        else:
            sent = _with_prefix(content, prefix)
        if sent is None:
            continue
        if copies is None:
            copies = list(messages)
        copies[index] = message.model_copy(update={"content": sent})
    return copies


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
