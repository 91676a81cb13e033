"""What a configuration gets: its graph (the nodes and state channels langchain builds for
it), whichever constructor made it.

langchain makes a graph node of each model and agent hook a middleware's class defines, and
a state channel of each key its state schema declares. Every step of a node is a
checkpoint, so a configuration must get the nodes it needs and no more: none for a plain
middleware, the run's start and end for one that counts or records (the rest happens in the
model call's own step), the hooks around the model only for an "interrupt" budget, and a
channel only for what is written.
"""

from __future__ import annotations

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_kind_only, report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import echo_tool

WATCHING = ["after_agent", "before_agent"]
PAUSING = ["after_agent", "before_agent", "before_model"]
PAUSING_REPLYING = ["after_agent", "after_model", "before_agent", "before_model"]
COUNTING = ["tool_error_budget_counts", "tool_error_budget_stops", "tool_error_settled"]


def _listen(failure: ToolFailure) -> None:
    """A listener that does nothing."""


GRAPHS: list[tuple[str, ToolErrorMiddleware, list[str], list[str]]] = [
    ("plain", ToolErrorMiddleware(report_type_only), [], []),
    (
        "a budget that does not count malformed calls",
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3, kinds=["exception"])),
        WATCHING,
        COUNTING,
    ),
    (
        "a budget",
        ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3)),
        WATCHING,
        COUNTING,
    ),
    (
        "an 'interrupt' budget",
        ToolErrorMiddleware(
            report_type_only, budget=ErrorBudget(per_tool=3, when_spent="interrupt")
        ),
        PAUSING_REPLYING,
        sorted([*COUNTING, "tool_error_budget_held"]),
    ),
    (
        "an 'interrupt' budget that does not count malformed calls",
        ToolErrorMiddleware(
            report_type_only,
            budget=ErrorBudget(per_tool=3, when_spent="interrupt", kinds=["exception"]),
        ),
        PAUSING,
        sorted([*COUNTING, "tool_error_budget_held"]),
    ),
    (
        "the record",
        ToolErrorMiddleware(report_type_only, record_failures=True),
        WATCHING,
        [*COUNTING, "tool_failures"],
    ),
    ("a listener", ToolErrorMiddleware(report_type_only, listeners=[_listen]), WATCHING, COUNTING),
    (
        "a route for invalid arguments",
        ToolErrorMiddleware.from_routes([Route(InvalidArguments, report_kind_only)]),
        WATCHING,
        COUNTING,
    ),
]


@pytest.mark.parametrize(
    ("middleware", "hooks", "channels"),
    [pytest.param(m, h, c, id=name) for name, m, h, c in GRAPHS],
)
def test_each_configuration_gets_the_nodes_and_channels_it_needs_and_no_more(
    middleware: ToolErrorMiddleware, hooks: list[str], channels: list[str]
) -> None:
    model = ScriptedChatModel(script=[AIMessage("done")])
    agent = create_agent(model, tools=[echo_tool()], middleware=[middleware])
    graph: list[str] = list(agent.get_graph().nodes)
    # langgraph types its channels with unsolved type parameters; only the names are read.
    state: list[str] = list(agent.channels)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]

    assert sorted(n for n in graph if n.startswith("ToolError")) == [
        f"ToolErrorMiddleware.{hook}" for hook in hooks
    ]
    assert sorted(c for c in state if c.startswith("tool_")) == channels


def test_from_routes_has_the_constructor_s_defaults() -> None:
    built = ToolErrorMiddleware(report_type_only)
    routed = ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)])

    for middleware in (built, routed):
        assert middleware.error_prefix == "Error: "
        assert middleware.budget is None
        assert middleware.record_failures is False
        assert middleware.listeners == ()
        assert middleware.repair is None
        assert middleware.name == "ToolErrorMiddleware"
