"""What each chat model class's integration does with an error `ToolMessage`.

Known by the class and its bases, by their qualified names, so no provider package is
imported. For each: how a failure reaches the model (the flag the integration sets, the
provider's own error key, or the prefix), and which content blocks its API takes in a tool
result. Measured through the real clients by tests/test_providers_*.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from langchain_core.messages import ToolMessage

Form: TypeAlias = Literal["flag", "error_key", "prefix"]
"""How an error message reaches a model: by the flag the integration sets itself, by the
provider's error key (a text content sent as `{"error": text}`), or marked with the prefix."""

_ANTHROPIC = "langchain_anthropic.chat_models.ChatAnthropic"
_CONVERSE = "langchain_aws.chat_models.bedrock_converse.ChatBedrockConverse"
_BEDROCK = "langchain_aws.chat_models.bedrock.ChatBedrock"
_OPENAI = "langchain_openai.chat_models.base.BaseChatOpenAI"
_GEMINI = "langchain_google_genai.chat_models.ChatGoogleGenerativeAI"
_OLLAMA = "langchain_ollama.chat_models.ChatOllama"

_FORMS: dict[str, Form] = {
    _ANTHROPIC: "flag",  # tool_result blocks carry `is_error: true`
    _CONVERSE: "flag",  # toolResult blocks carry `status: "error"`
    # A text that is a JSON object is sent as the functionResponse's `response` itself,
    # where Gemini reads an `error` key as the call's error (any other text is `output`).
    _GEMINI: "error_key",
}
"""The classes that do not take the prefix; every other class, unknown ones too, does."""

_TAKEN: dict[str, frozenset[str]] = {
    _ANTHROPIC: frozenset({"image/base64", "image/url", "file/base64", "file/url"}),
    _CONVERSE: frozenset({"image/base64", "file/base64"}),  # a URL image: the client raises
    _BEDROCK: frozenset(),  # blocks are passed on unconverted, which Anthropic refuses
    _OPENAI: frozenset(),  # Chat Completions: a tool message takes text parts only
    _GEMINI: frozenset({"image/base64", "image/url", "file/base64"}),
    _OLLAMA: frozenset({"image/base64"}),  # a URL image or a file: the client raises
}
"""Besides text, the blocks each known class's request carries in a tool result, as
`<type>/<source>`: what the provider's API takes, so that no request is refused."""

_RESPONSES_TAKEN = frozenset({"image/base64", "image/url", "file/base64"})
"""`ChatOpenAI(use_responses_api=True)`: a function_call_output takes images and files."""

_FIXES: dict[str, str] = {
    _OPENAI: (
        "; or use ChatOpenAI(use_responses_api=True), whose Responses API takes images and "
        "files in a tool result"
    ),
}


class Provider:
    """One model's integration: its form, and the blocks it takes (`None`: not known).

    `fix` is what a refusal offers besides text (another API of the same class, where it
    has one); by default the one known for `name`.
    """

    __slots__ = ("fix", "form", "name", "taken")

    def __init__(
        self, name: str, form: Form, taken: frozenset[str] | None, fix: str | None = None
    ) -> None:
        self.name: Final = name
        self.form: Final = form
        self.taken: Final = taken
        self.fix: Final = _FIXES.get(name, "") if fix is None else fix

    def require_taken(
        self,
        content: Sequence[str | Mapping[str, Any]],
        message: ToolMessage,
        cause: Exception | None = None,
    ) -> None:
        """Every block of an error message's content is one the provider takes.

        Raises:
            TypeError: One is not: the request would be refused. Nothing is sent. Chained
                to `cause`, the tool's exception, when the handler's content is checked
                at the failure.
        """
        taken = self.taken
        if taken is None:
            return
        for block in content:
            if isinstance(block, str) or block.get("type") == "text":
                continue
            kind = _kind(block)
            if kind in taken:
                continue
            msg = (
                f"The error message for the call to `{message.name}` (id "
                f"{message.tool_call_id!r}) has content blocks that {self.name} cannot send "
                f"in a tool result (its API would refuse the request), starting with its "
                f"{kind} block; nothing was sent. Return text for this model, or only blocks "
                f"of the kinds it takes ({', '.join(sorted(taken)) or 'none but text'})"
                f"{self.fix}."
            )
            raise TypeError(msg) from cause


def _kind(block: Mapping[str, Any]) -> str:
    """A block as `<type>/<source>`: `image/url`, `image/base64`, `file/base64`, ..."""
    source = "url" if "url" in block else "base64" if "base64" in block else "other"
    return f"{block.get('type')}/{source}"


_classes: dict[type, tuple[str, Form, frozenset[str] | None]] = {}


def provider_of(model: object) -> Provider:
    """The integration behind `model`, known by its class (and settings that change the API)."""
    model_class = type(model)
    known = _classes.get(model_class)
    if known is None:
        names = [f"{base.__module__}.{base.__qualname__}" for base in model_class.__mro__]
        name = next((name for name in names if name in _TAKEN), names[0])
        form: Form = _FORMS.get(name, "prefix")
        known = (name, form, _TAKEN.get(name))
        _classes[model_class] = known
    name, form, taken = known
    if name == _BEDROCK and getattr(model, "beta_use_converse_api", False) is True:
        return Provider(_CONVERSE, "flag", _TAKEN[_CONVERSE])  # it hands its calls to Converse
    if name == _OPENAI and getattr(model, "use_responses_api", None) is True:
        return Provider(name, form, _RESPONSES_TAKEN, fix="")  # already the other API
    return Provider(name, form, taken)
