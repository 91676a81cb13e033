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

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import PATHS, Path, build_agent, call, failing_tool, run


def _spans(client: Any, name: str) -> list[dict[str, Any]]:
    created: list[Any] = client.create_run.call_args_list
    return [c.kwargs for c in created if c.kwargs.get("name") == name]


@pytest.mark.parametrize("path", PATHS)
def test_hook_spans_record_no_tool_arguments_or_state(path: Path) -> None:
    client: Any = mock.create_autospec(langsmith.Client, instance=True)
    agent = build_agent(
        [failing_tool("search", ValueError("db password is hunter2"))],
        [ToolErrorMiddleware(lambda exc, request: "search failed")],
        [call("search", "c1", query="patient 4711")],
    )

    with tracing_context(enabled=True, client=client, project_name="test"):
        run(agent, path)

    hook = (
        "ToolErrorMiddleware.wrap_tool_call"
        if path == "sync"
        else ("ToolErrorMiddleware.awrap_tool_call")
    )
    spans = _spans(client, hook)
    assert len(spans) == 1
    assert spans[0]["inputs"] == {}
    assert "patient 4711" not in repr(spans[0])


@pytest.mark.parametrize("path", PATHS)
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
