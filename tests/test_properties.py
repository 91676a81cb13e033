"""Property: whatever a handler returns, the outcome is one of exactly three.

- content (a `str`, or a list or tuple of mappings with a string "type") -> an error
  `ToolMessage` whose content equals it (a tuple arrives as a list);
- `None` -> the tool's own exception, the same object;
- anything else -> a `TypeError` chained to the tool's exception, and no message.

Every example runs through a real agent, on both paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import TypeIs

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Agent, Path, build_agent, call, failing_tool, run, tool_messages
from tests.conftest import FIGURES

EXAMPLES_PER_PATH = 1000

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.binary(max_size=10),
)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=8,
)
blocks = st.fixed_dictionaries(
    {"type": st.text(max_size=10)},
    optional={"text": st.text(max_size=20), "id": st.text(max_size=8)},
)
contents = st.one_of(
    st.text(max_size=40),
    st.lists(blocks, max_size=4),
    st.lists(blocks, max_size=4).map(tuple),
)
outputs = st.one_of(contents, contents, junk)


def _is_list_or_tuple(value: object) -> TypeIs[list[object] | tuple[object, ...]]:
    return isinstance(value, (list, tuple))


def _is_mapping(value: object) -> TypeIs[Mapping[object, object]]:
    return isinstance(value, Mapping)


def _expected_content(value: object) -> str | list[str | dict[Any, Any]] | None:
    """What the model must receive when the handler returns `value`; None: not content."""
    if isinstance(value, str):
        return value
    if not _is_list_or_tuple(value):
        return None
    blocks: list[str | dict[Any, Any]] = []
    for item in value:
        if not (_is_mapping(item) and isinstance(item.get("type"), str)):
            return None
        blocks.append(dict(item))
    return blocks


class Holder:
    """The value the handler returns next, set by each example."""

    value: object = None


TOOL_ERROR = ConnectionError("the tool's own failure")
HOLDER = Holder()


def _handler(exc: Exception, request: ToolCallRequest) -> Any:
    return HOLDER.value


AGENT: Agent = build_agent(
    [failing_tool("search", TOOL_ERROR)], [ToolErrorMiddleware(_handler)], [call("search", "c1")]
)
COUNTS: dict[str, dict[str, int]] = {}


def test_every_handler_output_gives_exactly_one_of_three_outcomes(path: Path) -> None:
    counts = COUNTS.setdefault(path, {"message": 0, "propagated": 0, "refused": 0})

    @settings(
        max_examples=EXAMPLES_PER_PATH,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(outputs)
    def check(value: object) -> None:
        HOLDER.value = value
        if value is None:
            with pytest.raises(ConnectionError) as propagated:
                run(AGENT, path)
            assert propagated.value is TOOL_ERROR
            counts["propagated"] += 1
        elif (expected := _expected_content(value)) is not None:
            message = tool_messages(run(AGENT, path))["c1"]
            assert message.content == expected
            ordinary = ToolMessage(
                content=expected, tool_call_id="c1", name="search", status="error"
            )
            # The agent's reducer gives each message in its state an id; all else must match.
            assert message.model_dump(exclude={"id"}) == ordinary.model_dump(exclude={"id"})
            assert message.status == "error"
            counts["message"] += 1
        else:
            with pytest.raises(TypeError) as refused:
                run(AGENT, path)
            assert refused.value.__cause__ is TOOL_ERROR
            counts["refused"] += 1

    check()

    total = sum(counts.values())
    assert total >= EXAMPLES_PER_PATH
    FIGURES.append(
        f"property ({path} path): {total} examples through a real agent: "
        f"{counts['message']} messages, {counts['propagated']} re-raised, "
        f"{counts['refused']} refused"
    )
