"""The migration guide's table quotes, word for word, the errors the package raises.

Each row is raised here the way a user would meet it (constructor calls directly; the
failed-call rows through a real agent) and must appear in the guide as ``Type: message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import build_agent, call, failing_tool, run
from tests._processes import ROOT

GUIDE = ROOT / "docs" / "guides" / "migrating.md"


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{type(exc).__name__}"


async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{type(exc).__name__}"


def returns_int(exc: Exception, request: ToolCallRequest) -> int:
    return 42


def construct(**kwargs: Any) -> Callable[[], object]:
    """A constructor call with arguments no checker sees (they are `Any`)."""
    return lambda: ToolErrorMiddleware(**kwargs)


def fail_in_agent(
    middleware: Mapping[str, Any], *, without_id: bool = False
) -> Callable[[], object]:
    """A real agent (run with `invoke`) whose one tool call fails under the middleware."""

    def go() -> object:
        tool_call = call("search", "c1")
        if without_id:
            tool_call["id"] = None
        tool = failing_tool("search", ConnectionError("reset"))
        return run(build_agent([tool], [ToolErrorMiddleware(**middleware)], [tool_call]), "sync")

    return go


ROWS: dict[str, Callable[[], object]] = {
    "no-handler": construct(),
    "async-on-error": construct(on_error=aexplain),
    "bare-string-tools": construct(on_error=explain, tools="search"),
    "empty-tools": construct(on_error=explain, tools=[]),
    "empty-name": construct(on_error=explain, name=""),
    "returns-int": fail_in_agent({"on_error": returns_int}),
    "async-only-invoke": fail_in_agent({"aon_error": aexplain}),
    "no-id": fail_in_agent({"on_error": explain}, without_id=True),
    # langchain's own messages, quoted in its column
    "langchain-no-handler": lambda: LangchainToolErrorMiddleware(),
    "langchain-two-instances": lambda: build_agent(
        [], [LangchainToolErrorMiddleware(explain), LangchainToolErrorMiddleware(explain)], []
    ),
}


def quoted(row: str) -> str:
    """The row's error as the guide quotes it: ``Type: message``, addresses elided."""
    with pytest.raises((TypeError, ValueError, RuntimeError, AssertionError)) as raised:
        ROWS[row]()
    error = raised.value
    message = re.sub(r" at 0x[0-9a-f]+", " at 0x...", str(error))
    return f"`` {type(error).__name__}: {message} ``"


@pytest.mark.parametrize("row", ROWS)
def test_the_migration_table_quotes_the_error_users_see(row: str) -> None:
    assert quoted(row) in GUIDE.read_text(encoding="utf-8")
