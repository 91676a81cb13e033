"""Names users read (a record's `error_type`, a signature in a message) are where they import."""

from __future__ import annotations

import importlib

import pytest

from _langchain_tool_errors.naming import public_module

PUBLIC = [
    "langchain_tool_errors",
    "langchain_tool_errors.handlers",
    "langchain_tool_errors.telemetry",
    "langchain_tool_errors.testing",
]


@pytest.mark.parametrize("public", PUBLIC)
def test_every_public_class_and_function_is_named_by_the_module_it_is_imported_from(
    public: str,
) -> None:
    module = importlib.import_module(public)
    names: list[str] = list(getattr(module, "__all__", ()))
    named = 0
    for name in names:
        value: object = getattr(module, name)
        home = getattr(value, "__module__", None)
        if (
            isinstance(home, str)
            and home.startswith("_langchain_tool_errors.")
            and (isinstance(value, type) or callable(value))
        ):
            assert public_module(home) == public, name
            named += 1
    assert named > 0


@pytest.mark.parametrize(
    ("module", "public"),
    [
        ("_langchain_tool_errors.classifying", "_langchain_tool_errors.classifying"),
        ("_langchain_tool_errors_extra.failures", "_langchain_tool_errors_extra.failures"),
        ("httpx", "httpx"),
        ("builtins", "builtins"),
    ],
)
def test_a_module_with_no_public_names_keeps_its_own(module: str, public: str) -> None:
    assert public_module(module) == public
