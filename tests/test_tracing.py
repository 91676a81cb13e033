"""What the middleware's hook spans record when LangSmith tracing is on: no request payload.

The LangSmith client is a mock built from the real class's spec, so every run the tracer
creates is recorded in the test and nothing leaves the machine.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import langsmith
import pytest

# langsmith annotates `tracing_context`'s `parent` as a bare `Mapping`, which pyright strict
# reports as partially unknown.
from langsmith.run_helpers import tracing_context  # pyright: ignore[reportUnknownVariableType]

from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
from tests._agents import Path, build_agent, call, failing_tool, run

HOOKS = {"wrap_tool_call", "wrap_model_call"}
"""The hooks of a plain middleware, by their sync names."""

WATCHING_HOOKS = HOOKS | {"before_agent", "after_agent"}
"""The hooks of one with a budget, a record and a listener."""


def _sync_name(hook: str) -> str:
    """`abefore_agent` as `before_agent`; `after_agent` as it is."""
    return hook[1:] if hook.startswith("a") and hook[1:] in WATCHING_HOOKS else hook


@pytest.mark.parametrize("watching", [False, True], ids=["plain", "watching"])
def test_hook_spans_record_no_tool_arguments_state_or_replies(path: Path, watching: bool) -> None:
    client: Any = mock.create_autospec(langsmith.Client, instance=True)
    middleware = (
        ToolErrorMiddleware(
            lambda exc, request: "search failed",
            budget=ErrorBudget(per_run=5),
            record_failures=True,
            listeners=[lambda failure: None],
        )
        if watching
        else ToolErrorMiddleware(lambda exc, request: "search failed")
    )
    agent = build_agent(
        [failing_tool("search", ValueError("db password is hunter2"))],
        [middleware],
        [call("search", "c1", query="patient 4711")],
    )

    with tracing_context(enabled=True, client=client, project_name="test"):
        run(agent, path)

    created: list[Any] = client.create_run.call_args_list
    updated: list[Any] = client.update_run.call_args_list
    spans = [
        c.kwargs for c in created if str(c.kwargs.get("name")).startswith("ToolErrorMiddleware.")
    ]
    ends = [
        c.kwargs for c in updated if str(c.kwargs.get("name")).startswith("ToolErrorMiddleware.")
    ]
    hooks = {_sync_name(str(span["name"]).removeprefix("ToolErrorMiddleware.")) for span in spans}
    assert hooks == (WATCHING_HOOKS if watching else HOOKS)
    assert all(span["inputs"] == {} for span in spans)
    assert ends
    assert all(end.get("outputs") in (None, {}) for end in ends)
    for secret in ("patient 4711", "hunter2", "search failed"):
        assert secret not in repr(spans) + repr(ends)


def test_langsmith_shows_the_record_in_the_agent_runs_outputs(path: Path) -> None:
    client: Any = mock.create_autospec(langsmith.Client, instance=True)
    agent = build_agent(
        [failing_tool("search", ValueError("db password is hunter2"))],
        [ToolErrorMiddleware(lambda exc, request: "search failed", record_failures=True)],
        [call("search", "c1", query="patient 4711")],
    )

    with tracing_context(enabled=True, client=client, project_name="test"):
        run(agent, path)

    updated: list[Any] = client.update_run.call_args_list
    [root] = [c.kwargs for c in updated if c.kwargs.get("name") == "LangGraph"]
    [failure] = root["outputs"]["tool_failures"]
    assert (failure["tool"], failure["call_id"], failure["error_type"], failure["outcome"]) == (
        "search",
        "c1",
        "ValueError",
        "answered",
    )
    assert "hunter2" not in repr(root["outputs"]["tool_failures"])
