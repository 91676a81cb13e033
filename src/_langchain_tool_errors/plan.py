"""A middleware's configuration, checked and compiled once, at construction, into a `Plan`.

The hooks read the plan and nothing else of the middleware: which failures are caught,
the route table, the budgets' accounts, the record and listeners, repair, repeats, and
the graph shape the configuration needs. The plan is frozen; whatever a run learns lives
in the run's state (`state.py`), never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.budget import ErrorBudget
from _langchain_tool_errors.checks import (
    require_budget,
    require_error_prefix,
    require_flag,
    require_name,
)
from _langchain_tool_errors.counting import Accounts
from _langchain_tool_errors.failures import MalformedToolCall
from _langchain_tool_errors.handler_checks import require_listeners
from _langchain_tool_errors.record_types import AFailureListener, FailureListener
from _langchain_tool_errors.recording import Recorder
from _langchain_tool_errors.repair import RepairCall, require_repair
from _langchain_tool_errors.repeats import Repeats
from _langchain_tool_errors.route_table import RouteTable, except_clause, selects_reported, widest
from _langchain_tool_errors.routes import Route
from _langchain_tool_errors.tool_calls import tool_name

Shape: TypeAlias = Literal["plain", "watching", "replying", "pausing", "pausing_replying"]
"""The graph a middleware needs, by the hooks langchain makes nodes of:

- `"plain"`: the tool-call and model-call hooks only, which add no node;
- `"watching"`: also a hook at the run's start (counts and record from zero) and one at
  its end (a stop of the last step); each step is settled as the model call starts, in
  the model call's own step (a stop saved before raised; answers written elsewhere met);
- `"replying"`: the same nodes; the reply's malformed calls are met in the model call's
  step too, and the hook at the run's end sends back a reply of only malformed calls
  that another middleware's hook after the model kept from the model;
- `"pausing"`, `"pausing_replying"`: an "interrupt" budget's, which settle each step in a
  hook before the model instead: a person's decision at a pause there must be saved with
  the step it ends, and a model call's step that stops writes nothing. The second also
  meets each reply in a hook after the model, where a held tool's cut-short call pauses.
"""


_SHAPES: dict[tuple[bool, bool], Shape] = {
    (False, False): "watching",
    (False, True): "replying",
    (True, False): "pausing",
    (True, True): "pausing_replying",
}
"""A watching configuration's shape: whether it may hold a tool, and whether it replies."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What the hooks of one middleware read: its configuration, checked and compiled."""

    name: str
    """The middleware's name in the agent; its state keys start with it."""
    routes: tuple[Route[Any], ...]
    """The routes, in order (the arguments of `__init__` make one)."""
    budget: ErrorBudget | None
    """The middleware's own budget, counting every failure it hands back."""
    error_prefix: str | None
    """The mark of an error message sent to a model whose provider drops the flag."""
    tool_names: frozenset[str] | None
    """The tools `tools=` selects; `None`: every tool. Calls to others are not seen."""
    caught: tuple[type[Exception], ...]
    """What the tool-call hooks' `except` clause catches, before a failure is routed."""
    table: RouteTable
    """The routes in the form read after a failure."""
    accounts: Accounts | None
    """The budgets' accounts; `None` without a budget, so nothing is counted."""
    repeats: Repeats | None
    """The failed calls of the run, where a route names `RepeatedCall`; else `None`."""
    recorder: Recorder | None
    """The record and the listeners; `None` when nothing records or listens."""
    repair: RepairCall | None
    """What each reply's wrong calls are offered to; `None` repairs nothing."""
    shape: Shape
    """The graph this configuration needs (see `Shape`)."""
    watches: bool
    """Whether every result is looked at, and failures counted, recorded and marked settled:
    a budget, a route for failures that are not exceptions, the record or listeners."""
    replies: bool
    """Whether the model's replies are met once the model answers, for their malformed
    calls (in the model call's step, or in a node for an "interrupt" budget)."""
    looks: bool
    """Whether a call needs a look before it runs: a tool may be closed or held, or
    repeats are answered."""
    sync_capable: bool
    """Whether every route has a sync handler; else the sync tool-call hook refuses."""

    def ignores(self, request: ToolCallRequest) -> bool:
        """Whether the call is to a tool outside `tools=`: no stage sees its failures."""
        names = self.tool_names
        return names is not None and tool_name(request) not in names

    @property
    def keeps(self) -> bool:
        """Whether the run's failures are kept in the agent state (`record_failures=True`)."""
        return self.recorder is not None and self.recorder.keeps

    @property
    def holding(self) -> Accounts | None:
        """The accounts, when an "interrupt" budget may hold a tool; else `None`."""
        accounts = self.accounts
        return accounts if accounts is not None and accounts.holds else None

    @property
    def settles_in_model_step(self) -> bool:
        """Whether each step is settled in the model call's own step, not a hook before it."""
        return self.shape in ("watching", "replying")

    @property
    def closing(self) -> Accounts | None:
        """The accounts, when a "tell" budget may close a tool; else `None`."""
        accounts = self.accounts
        return accounts if accounts is not None and accounts.closes else None


def compile_plan(
    routes: tuple[Route[Any], ...],
    tool_names: frozenset[str] | None,
    budget: ErrorBudget | None,
    error_prefix: str | None,
    record_failures: bool,
    listeners: Sequence[FailureListener | AFailureListener],
    name: str | None,
    repair: RepairCall | None,
) -> Plan:
    """Check the arguments every middleware has, and compile them with its routes.

    `tool_names` are the tools `tools=` selected (checked with the handlers), `None`
    for every tool; the rest are the constructor's arguments of the same names.

    Raises:
        TypeError: `budget`, `record_failures`, `listeners`, `repair` or `name` has the
            wrong type, or a listener cannot be called with one argument.
        ValueError: `error_prefix` is empty.
    """
    checked_budget = require_budget(budget)
    checked_prefix = require_error_prefix(error_prefix)
    keeps = require_flag("record_failures", record_failures)
    checked_listeners = require_listeners(listeners)
    checked_name = require_name(name)
    checked_repair = require_repair(repair)
    budgets = [checked_budget, *(route.budget for route in routes)]
    records = keeps or bool(checked_listeners)
    accounts = Accounts(checked_name, checked_budget, routes) if any(budgets) else None
    repeats = Repeats.of(checked_name, routes)
    shape: Shape = "plain"
    if any(budgets) or selects_reported(routes) or records:
        # Malformed calls are seen only in the model's reply, never in a tool call: a
        # record sees them, and so does a budget or a route that takes them.
        replies = (
            records
            or any("malformed_call" in spent.kinds for spent in budgets if spent)
            or any(
                issubclass(MalformedToolCall, taken)
                for route in routes
                for taken in route.exceptions
            )
        )
        shape = _SHAPES[accounts is not None and accounts.holds, replies]
    return Plan(
        name=checked_name,
        routes=routes,
        budget=checked_budget,
        error_prefix=checked_prefix,
        tool_names=tool_names,
        caught=except_clause(widest(routes)),
        table=RouteTable(routes),
        accounts=accounts,
        repeats=repeats,
        recorder=Recorder(checked_name, keeps, checked_listeners) if records else None,
        repair=checked_repair,
        shape=shape,
        watches=shape != "plain",
        replies=shape in ("replying", "pausing_replying"),
        looks=repeats is not None or (accounts is not None and (accounts.closes or accounts.holds)),
        sync_capable=all(route.on_error is not None for route in routes),
    )
