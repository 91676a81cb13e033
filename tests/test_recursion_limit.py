"""The `recursion_limit` a run needs, as the budgets and observability guides give it.

LangGraph counts each step of a run against `recursion_limit`. A run of M model calls takes
2M steps with no middleware or the plain one. A budget, the record or listeners add one step
at the run's start and one at its end: 2M + 2. An "interrupt" budget adds one before each
model call, and, where it counts malformed calls (by default it does), one after: 4M + 2,
else 3M + 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.errors import GraphRecursionError

from langchain_tool_errors import ErrorBudget, FailureKind, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only
from tests._agents import Path, agent_of, call, echo_tool, failing_tool, run

Middleware = Callable[[], list[AgentMiddleware[Any, Any, Any]]]

EXCEPTION: tuple[FailureKind, ...] = ("exception",)
EXCEPTIONS_ONLY = ErrorBudget(per_run=50, kinds=EXCEPTION)
PAUSING = ErrorBudget(per_run=50, when_spent="interrupt")
PAUSING_EXCEPTIONS_ONLY = ErrorBudget(per_run=50, kinds=EXCEPTION, when_spent="interrupt")

STEPS: dict[str, tuple[Middleware, int, int]] = {
    "no middleware": (lambda: [], 2, 0),
    "plain": (lambda: [ToolErrorMiddleware(report_type_only)], 2, 0),
    "budget": (
        lambda: [ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=50))],
        2,
        2,
    ),
    "record": (lambda: [ToolErrorMiddleware(report_type_only, record_failures=True)], 2, 2),
    "listeners": (
        lambda: [ToolErrorMiddleware(report_type_only, listeners=[lambda f: None])],
        2,
        2,
    ),
    "budget for exceptions": (
        lambda: [ToolErrorMiddleware(report_type_only, budget=EXCEPTIONS_ONLY)],
        2,
        2,
    ),
    "'interrupt' budget": (
        lambda: [ToolErrorMiddleware(report_type_only, budget=PAUSING)],
        4,
        2,
    ),
    "'interrupt' budget for exceptions": (
        lambda: [ToolErrorMiddleware(report_type_only, budget=PAUSING_EXCEPTIONS_ONLY)],
        3,
        2,
    ),
}
"""Each configuration, the steps it takes a model call, and the steps it adds a run."""


def finishes(middleware: Middleware, model_calls: int, limit: int, path: Path) -> bool:
    """Whether a run of `model_calls` model calls (each but the last calling two tools,
    one of which fails where a middleware answers it) ends within `limit` steps."""
    replies = [
        AIMessage("", tool_calls=[call("echo", f"e{n}", text="x"), call("weather", f"w{n}")])
        for n in range(model_calls - 1)
    ]
    listed = middleware()
    weather = (
        failing_tool("weather", LookupError("no forecast")) if listed else echo_tool("weather")
    )
    agent = agent_of([echo_tool(), weather], listed, [*replies, AIMessage("done")])
    try:
        run(agent, path, {"messages": [HumanMessage("go")]}, {"recursion_limit": limit})
    except GraphRecursionError:
        return False
    return True


@pytest.mark.parametrize("model_calls", [1, 2, 5])
@pytest.mark.parametrize("name", STEPS)
def test_the_least_recursion_limit_is_the_guides_figure(
    path: Path, name: str, model_calls: int
) -> None:
    middleware, steps_a_model_call, steps_a_run = STEPS[name]
    least = steps_a_model_call * model_calls + steps_a_run

    assert finishes(middleware, model_calls, least, path)
    assert not finishes(middleware, model_calls, least - 1, path)
