"""The error path's messages and commands, built directly, are those built the ordinary way."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from _langchain_tool_errors import building
from _langchain_tool_errors.building import error_tool_message, state_update

CONTENTS: list[Any] = ["search failed", [{"type": "text", "text": "search failed"}]]


def test_this_pydantic_and_this_langgraph_take_the_direct_builders() -> None:
    # Should either fall back, the error path would lose a third of its speed unnoticed.
    assert error_tool_message is building._built_directly  # pyright: ignore[reportPrivateUsage]
    assert state_update is building._command_directly  # pyright: ignore[reportPrivateUsage]
    # The choice made at import, made again: the same.
    assert building._choose_message_builder() is error_tool_message  # pyright: ignore[reportPrivateUsage]
    assert building._choose_command_builder() is state_update  # pyright: ignore[reportPrivateUsage]


def _differing(part: str) -> ToolMessage:
    """A message like `_validated("probe", "id", "tool")` but for one part of it."""
    message = ToolMessage(content="probe", tool_call_id="id", name="tool", status="error")
    if part == "content":
        return message.model_copy(update={"content": "other"})
    if part == "fields set":
        message.__pydantic_fields_set__.add("artifact")
    elif part == "extra":
        object.__setattr__(message, "__pydantic_extra__", {"note": 1})
    elif part == "private":
        object.__setattr__(message, "__pydantic_private__", {"_note": 1})
    return message


@pytest.mark.parametrize("part", ["content", "fields set", "extra", "private"])
def test_the_import_check_tells_a_message_that_differs_in_any_part(part: str) -> None:
    ordinary = ToolMessage(content="probe", tool_call_id="id", name="tool", status="error")
    same = building._same_message  # pyright: ignore[reportPrivateUsage]

    assert same(error_tool_message("probe", "id", "tool"), ordinary)
    assert not same(_differing(part), ordinary)


@pytest.mark.parametrize("content", CONTENTS, ids=["str", "blocks"])
def test_a_message_built_directly_is_one_pydantic_validated(content: Any) -> None:
    built = error_tool_message(content, "c1", "search")
    ordinary = ToolMessage(content=content, tool_call_id="c1", name="search", status="error")

    assert built == ordinary
    assert built.model_dump() == ordinary.model_dump()
    assert built.model_dump_json() == ordinary.model_dump_json()
    assert built.model_fields_set == ordinary.model_fields_set
    assert built.__pydantic_extra__ == ordinary.__pydantic_extra__
    assert copy.deepcopy(built) == ordinary
    assert pickle.loads(pickle.dumps(built)) == ordinary
    assert built.model_copy(update={"content": "x"}).text == "x"


def test_no_two_messages_share_a_mutable_field() -> None:
    first = error_tool_message("a", "c1", "search")
    second = error_tool_message("b", "c2", "search")

    first.additional_kwargs["k"] = 1
    first.response_metadata["k"] = 1

    assert second.additional_kwargs == {}
    assert second.response_metadata == {}
    assert first.model_fields_set is not second.model_fields_set
    assert first.__pydantic_extra__ is not second.__pydantic_extra__
    assert (second.text, second.tool_call_id) == ("b", "c2")
    assert error_tool_message("c", "c3", "search").additional_kwargs == {}


def test_a_command_built_directly_is_one_built_ordinarily() -> None:
    update: dict[str, Any] = {"messages": [], "tool_failures": []}

    built = state_update(update)
    ordinary: Command[Any] = Command(update=update)

    assert built == ordinary
    assert repr(built) == repr(ordinary)
    assert (built.graph, built.update, built.resume, built.goto) == (None, update, None, ())
    assert built.update is update
    with pytest.raises(AttributeError):
        built.update = {}  # ty: ignore[invalid-assignment]  # frozen, as ever


def test_a_message_layout_the_module_does_not_know_falls_back_to_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unknown(content: Any, tool_call_id: str, name: str) -> ToolMessage:
        raise AttributeError("__pydantic_fields_set__")

    def different(content: Any, tool_call_id: str, name: str) -> ToolMessage:
        return ToolMessage(content=content, tool_call_id=tool_call_id, status="success")

    for builder in (unknown, different):
        monkeypatch.setattr(building, "_built_directly", builder)
        chosen = building._choose_message_builder()  # pyright: ignore[reportPrivateUsage]

        assert chosen is building._validated  # pyright: ignore[reportPrivateUsage]
        built = chosen("search failed", "c1", "search")
        assert built == ToolMessage(
            content="search failed", tool_call_id="c1", name="search", status="error"
        )
        assert built.model_fields_set == {"content", "tool_call_id", "name", "status"}


def test_a_command_whose_init_does_more_falls_back_to_its_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def post_init(self: Command[Any]) -> None:
        pass

    monkeypatch.setattr(Command, "__post_init__", post_init, raising=False)

    chosen = building._choose_command_builder()  # pyright: ignore[reportPrivateUsage]

    assert chosen is building._command_ordinarily  # pyright: ignore[reportPrivateUsage]


def test_a_message_layout_that_differs_only_for_blocks_falls_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    direct = building._built_directly  # pyright: ignore[reportPrivateUsage]

    def blocks_differ(content: Any, tool_call_id: str, name: str) -> ToolMessage:
        return direct("other" if isinstance(content, list) else content, tool_call_id, name)

    monkeypatch.setattr(building, "_built_directly", blocks_differ)

    chosen = building._choose_message_builder()  # pyright: ignore[reportPrivateUsage]

    assert chosen is building._validated  # pyright: ignore[reportPrivateUsage]


def test_a_command_with_other_fields_falls_back_to_its_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        building,
        "_COMMAND_DEFAULTS",
        {"graph": None, "update": None, "resume": None, "goto": (), "id": None},
    )
    chosen = building._choose_command_builder()  # pyright: ignore[reportPrivateUsage]

    assert chosen is building._command_ordinarily  # pyright: ignore[reportPrivateUsage]
    assert chosen({"messages": []}) == Command(update={"messages": []})
