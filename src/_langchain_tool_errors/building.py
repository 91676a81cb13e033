"""What the error path returns, built from parts that are already checked.

Each handled failure gets a new error `ToolMessage`, and a `Command` when a budget or the
record writes to the state. Built the ordinary way, pydantic validates every field of the
message again, and the frozen dataclass sets each of its fields through its guard: more
than a third of what a handled failure costs. Here both are set directly, as pydantic's
`model_construct` and the dataclass's own `__init__` set them. At import, one of each is
compared with one built the ordinary way; should a later pydantic or langgraph lay them out
otherwise, the ordinary way is used instead (tests/test_building.py holds both to this).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeAlias

from langchain_core.messages import ToolMessage
from langgraph.types import Command

_set = object.__setattr__

_TEMPLATE = ToolMessage(content="", tool_call_id="template", status="error")
"""A validated error message: every other field of each one is its default."""

_TEMPLATE_FIELDS = dict(_TEMPLATE.__dict__)

_SET_FIELDS = ("content", "tool_call_id", "name", "status")
"""The fields an error message is given, as `model_fields_set` reports them."""

Content: TypeAlias = str | list[str | dict[Any, Any]]
"""A message's content, as `require_content` returns it."""

MessageBuilder: TypeAlias = Callable[[Content, str, str], ToolMessage]


def _built_directly(content: Content, tool_call_id: str, name: str) -> ToolMessage:
    message = object.__new__(ToolMessage)
    fields = _TEMPLATE_FIELDS.copy()
    fields["content"] = content
    fields["tool_call_id"] = tool_call_id
    fields["name"] = name
    additional_kwargs: dict[str, Any] = {}  # fresh, so no two messages share one
    response_metadata: dict[str, Any] = {}
    fields["additional_kwargs"] = additional_kwargs
    fields["response_metadata"] = response_metadata
    _set(message, "__dict__", fields)
    _set(message, "__pydantic_fields_set__", set(_SET_FIELDS))
    _set(message, "__pydantic_extra__", {})  # ToolMessage allows extra fields; it has none
    _set(message, "__pydantic_private__", None)
    return message


def _validated(content: Content, tool_call_id: str, name: str) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=tool_call_id, name=name, status="error")


def _same_message(built: ToolMessage, ordinary: ToolMessage) -> bool:
    return (
        built == ordinary
        and built.model_dump() == ordinary.model_dump()
        and built.model_fields_set == ordinary.model_fields_set
        and built.__pydantic_extra__ == ordinary.__pydantic_extra__
        and built.__pydantic_private__ == ordinary.__pydantic_private__
    )


def _choose_message_builder() -> MessageBuilder:
    """The direct builder, if it makes what pydantic makes; else pydantic's own validation."""
    probes: list[Content] = ["probe", [{"type": "text", "text": "probe"}]]
    try:
        same = all(
            _same_message(
                _built_directly(content, "probe-id", "probe-tool"),
                _validated(content, "probe-id", "probe-tool"),
            )
            for content in probes
        )
    except Exception:  # a layout this module does not know: the ordinary way
        same = False
    return _built_directly if same and _TEMPLATE.__pydantic_private__ is None else _validated


error_tool_message: MessageBuilder = _choose_message_builder()
"""The error message for a call: its content, the call's id and the tool's name, all checked."""


_COMMAND_DEFAULTS: dict[str, object] = {"graph": None, "update": None, "resume": None, "goto": ()}
"""`Command`'s fields and their defaults, as this module sets them: only `update` differs."""


_COMMAND: type[Command[Any]] = Command
"""The class, with its node type given: `object.__new__` of it is a `Command[Any]`."""


def _command_directly(update: dict[str, Any]) -> Command[Any]:
    command = object.__new__(_COMMAND)
    _set(command, "graph", None)
    _set(command, "update", update)
    _set(command, "resume", None)
    _set(command, "goto", ())
    return command


def _command_ordinarily(update: dict[str, Any]) -> Command[Any]:
    return Command(update=update)


def _choose_command_builder() -> Callable[[dict[str, Any]], Command[Any]]:
    """The direct builder, if `Command` still has these fields and defaults."""
    fields = {field.name: field.default for field in dataclasses.fields(Command)}
    probe: dict[str, Any] = {"messages": []}
    known = (
        fields == _COMMAND_DEFAULTS
        and not hasattr(Command, "__post_init__")  # its `__init__` would do more than set
        and _command_directly(probe) == Command(update=probe)
    )
    return _command_directly if known else _command_ordinarily


state_update: Callable[[dict[str, Any]], Command[Any]] = _choose_command_builder()
"""A `Command` that only updates the state: what the error path returns to write to it."""
