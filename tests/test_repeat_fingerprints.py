"""Which arguments make a call the same call again: equal arguments, and only those.

A route for repeats answers a call whose tool and arguments equal those of a call that
failed in the run. The arguments are compared as JSON with sorted keys. Through agents,
`test_repeated_calls.py` shows the order of keys and a number against its text; here the
whole table of what is equal and what is not.
"""

from __future__ import annotations

import pytest

from _langchain_tool_errors.repeats import canonical

EQUAL: list[tuple[object, object]] = [
    ({"order": "bad", "amount": 5}, {"amount": 5, "order": "bad"}),
    ({"filter": {"a": 1, "b": [1, 2]}}, {"filter": {"b": [1, 2], "a": 1}}),
    ({}, {}),
    ({"n": None}, {"n": None}),
]

DIFFERENT: list[tuple[object, object]] = [
    ({"n": 1}, {"n": 1.0}),
    ({"n": 1}, {"n": True}),
    ({"n": 1}, {"n": "1"}),
    ({"n": None}, {"n": "None"}),
    ({"n": [1]}, {"n": "[1]"}),
    ({"n": {"a": 1}}, {"n": "{'a': 1}"}),
    ({"a": 1}, {"a": 1, "b": 1}),
    ({"a": "x"}, {"b": "x"}),
]


@pytest.mark.parametrize(("first", "second"), EQUAL)
def test_equal_arguments_share_one_text(first: object, second: object) -> None:
    assert canonical(first) == canonical(second)
    assert canonical(first) is not None


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_different_arguments_never_share_a_text(first: object, second: object) -> None:
    assert canonical(first) != canonical(second)


def test_arguments_json_cannot_hold_have_no_text() -> None:
    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    assert canonical({"when": object()}) is None
    assert canonical(cyclic) is None
