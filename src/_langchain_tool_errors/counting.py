"""The counting stage: each failure the model reads spends the budgets that count its kind.

A budgeted middleware builds one `Accounts` from its budgets at construction. Once a
failure has its message (a handler's answer to an exception, or the error message of a
failure that is not one), `spend` gives the increments to the run's counts (kept in the
agent state, see `state.py`) and decides: the message goes out with the new counts; or a
budget is spent and the run stops ("stop") or the tool is closed ("tell"). `answer_closed`
answers the model's later calls to a closed tool, in place of running them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.budget import BudgetScope, ErrorBudget, ToolErrorBudgetExceeded, times
from _langchain_tool_errors.failures import ReportedFailure, kind_of
from _langchain_tool_errors.recording import type_name
from _langchain_tool_errors.routes import Route
from _langchain_tool_errors.state import COUNTS_KEY, PAUSES_KEY, HeldTool
from _langchain_tool_errors.tool_calls import tool_name

_Plan: TypeAlias = tuple[tuple[ErrorBudget, str, "int | None"], ...]
"""The budgets that count one route's failures, each with the prefix of its state keys and
the position of the route it belongs to (`None` for the middleware's): the route's own
first, then the middleware's."""

_SPENT = "\x00spent"
"""The end of the state key that marks a tool closed by a "tell" budget for the run."""

_AT = "\x00at\x00"
"""Between a closed tool's spent key and the count it was closed at, in the key that keeps
that count: every call told in the closing step writes the same key, so the count stays one
number whatever the counts reducer adds."""

_ROW = "\x00row"
"""The end of the state key that counts a tool's failures in a row, for `consecutive`."""

_MARK = f"{_ROW}\x00"
"""Between a row's key and a call's id, in the key that marks a failure the row counted in
the tool node's step, so the step's successes can be put in call order with it."""


def row_key(tool_key: str) -> str:
    """The key that counts failures in a row, of the tool whose count is at `tool_key`."""
    return f"{tool_key}{_ROW}"


_UNKNOWN = "\x00unknown"
"""The end of the state key that marks a closed name as a tool the agent does not have."""


def _shared(name: str, budget: ErrorBudget | None) -> _Plan:
    """The middleware's own budget, which counts every failure it sees.

    The keys of one middleware start with its name, which is unique in an agent, so two
    budgeted middleware never share a count.
    """
    return () if budget is None else ((budget, f"{name}\x00", None),)


def _plans(name: str, shared: _Plan, routes: tuple[Route[Any], ...]) -> tuple[_Plan, ...]:
    """For each route, the budgets that count its failures: its own, then `shared`."""
    return tuple(
        (
            ((route.budget, f"{name}\x00routes[{index}]\x00", index),)
            if route.budget is not None
            else ()
        )
        + shared
        for index, route in enumerate(routes)
    )


def _unavailable(
    budget: ErrorBudget, tool_call_id: str, tool: str, count: int, unknown: bool
) -> ToolMessage:
    """The message a "tell" budget answers a closed tool's calls with."""
    template = budget.message
    if unknown and template == ErrorBudget.DEFAULT_MESSAGE:
        template = ErrorBudget.UNKNOWN_TOOL_MESSAGE
    content = template.format(tool=tool, count=count, times=times(count))
    return ToolMessage(content=content, tool_call_id=tool_call_id, name=tool, status="error")


def _closed_at(spent: str, counts: Mapping[str, int]) -> int | None:
    """The count a closed tool was closed at, from the key that keeps it (`None`: not closed).

    Only a closed tool's calls look, and the counts hold a few keys per tool.
    """
    if spent not in counts:
        return None
    start = f"{spent}{_AT}"
    return min(
        (int(key.removeprefix(start)) for key in counts if key.startswith(start)), default=None
    )


class Accounts:
    """The budgets of one middleware and its routes, and how a failure spends them."""

    __slots__ = ("_closing", "_holding", "_name", "_plans", "_rows", "_telling", "_unrouted")

    def __init__(
        self, name: str, budget: ErrorBudget | None, routes: tuple[Route[Any], ...]
    ) -> None:
        self._name = name
        # A failure no route takes (one that is not an exception) spends the middleware's.
        self._unrouted = _shared(name, budget)
        # Counted once a "tell" budget closes any tool: until then no call needs a look.
        self._closing = f"{name}\x00\x00closed"
        self._plans = _plans(name, self._unrouted, routes)
        self._telling = tuple(
            dict.fromkeys(
                (budget, prefix)
                for plan in (*self._plans, self._unrouted)
                for budget, prefix, _ in plan
                if budget.when_spent == "tell"
            )
        )
        # The prefixes of the "interrupt" budgets: a tool one of them holds pauses the run.
        self._holding = tuple(
            dict.fromkeys(
                prefix
                for plan in (*self._plans, self._unrouted)
                for budget, prefix, _ in plan
                if budget.when_spent == "interrupt"
            )
        )
        # The prefixes of the budgets that count failures in a row: a success resets them.
        self._rows = tuple(
            dict.fromkeys(
                prefix
                for plan in (*self._plans, self._unrouted)
                for budget, prefix, _ in plan
                if budget.consecutive is not None
            )
        )

    def spend(
        self,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        counts: Mapping[str, int],
        route: int | None,
        *,
        in_step: bool = False,
    ) -> tuple[ToolMessage | None, dict[str, int], tuple[str, HeldTool] | None] | None:
        """The increments that count the failure, with what a spent budget does instead.

        A spent "tell" budget gives its answer; a spent "interrupt" budget the tool it
        holds (its key in the state, and what spent it). `None` when no budget counts
        this failure (its route and the middleware have none, or none counts its kind).
        Raises `ToolErrorBudgetExceeded` for a spent "stop" budget, chained to the failure
        when it is an exception. A failure `in_step` (met in the tool node, beside the
        step's other calls) also marks its call in each row that counts it, for
        `in_call_order`.
        """
        kind = kind_of(failure)
        tool = tool_name(request)
        plan = self._unrouted if route is None else self._plans[route]
        increments: dict[str, int] = {}
        over: tuple[ErrorBudget, str, int | None, int, int, BudgetScope] | None = None
        for budget, prefix, owner in plan:
            if kind not in budget.kinds:
                continue
            tool_key = f"{prefix}{tool}"
            tool_count = counts.get(tool_key, 0) + 1
            run_count = counts.get(prefix, 0) + 1
            increments[tool_key] = increments[prefix] = 1
            row, row_count = budget.consecutive, 0
            if row is not None:
                in_a_row = row_key(tool_key)
                row_count = counts.get(in_a_row, 0) + 1
                increments[in_a_row] = 1
                call_id = request.tool_call.get("id")
                if in_step and call_id is not None:
                    increments[f"{tool_key}{_MARK}{call_id}"] = 1
            if over is not None:
                continue
            if budget.per_tool is not None and tool_count > budget.per_tool:
                over = (budget, prefix, owner, tool_count, budget.per_tool, "tool")
            elif budget.per_run is not None and run_count > budget.per_run:
                over = (budget, prefix, owner, run_count, budget.per_run, "run")
            elif row is not None and row_count > row:
                over = (budget, prefix, owner, row_count, row, "consecutive")
        if not increments:
            return None
        if over is None:
            return None, increments, None
        budget, prefix, owner, count, limit, scope = over
        if budget.when_spent == "stop":
            cause = failure if isinstance(failure, Exception) else None
            raise ToolErrorBudgetExceeded(
                tool, count, limit, scope, route=owner, kind=kind
            ) from cause
        if budget.when_spent == "interrupt":
            held: HeldTool = {
                "middleware": self._name,
                "tool": tool,
                "call_id": str(request.tool_call.get("id")),
                "failure_route": route,
                "kind": kind,
                "error_type": type_name(failure),
                "count": count,
                "limit": limit,
                "scope": scope,
                "route": owner,
            }
            return None, increments, (f"{prefix}{tool}", held)
        spent = f"{prefix}{tool}{_SPENT}"
        # One text for the rest of the run: a tool already closed keeps the count it was
        # closed at (a failure met after the close, such as a limit's block of a later call,
        # says the same); else every call of this step is told the count from before it,
        # plus one, whatever its place in the step.
        closed_at = _closed_at(spent, counts)
        tool_count = counts.get(f"{prefix}{tool}", 0) + 1 if closed_at is None else closed_at
        unknown = kind == "unknown_tool"
        # The call's id was checked when the failure's message was made.
        call_id = str(request.tool_call["id"])
        told = _unavailable(budget, call_id, tool, tool_count, unknown)
        increments[spent] = increments[self._closing] = 1
        increments[f"{spent}{_AT}{tool_count}"] = 1
        if unknown:
            increments[f"{prefix}{tool}{_UNKNOWN}"] = 1
        return told, increments, None

    @property
    def holds(self) -> bool:
        """Whether an "interrupt" budget may hold a tool, so calls must be checked first."""
        return bool(self._holding)

    def held(self, request: ToolCallRequest) -> tuple[str, HeldTool] | None:
        """The tool of this call, if an "interrupt" budget of these accounts holds it."""
        holding: Mapping[str, HeldTool] | None = request.state.get(PAUSES_KEY)
        if not holding:
            return None
        tool = tool_name(request)
        for prefix in self._holding:
            key = f"{prefix}{tool}"
            held = holding.get(key)
            if held is not None:
                return key, held
        return None

    def in_call_order(self, state: Mapping[str, Any]) -> dict[str, int] | None:
        """The run's counts with the last step's failures in a row put in call order.

        Parallel calls of one step each see the counts from before the step, so a success
        cannot end its tool's row as it runs: a failure of the same tool before it in the
        reply may be running beside it. Its success writes nothing; here, before the next
        model call, each tool whose call in the step was answered as a success (not an
        error: the tool's result, or an answer given in its place) keeps in its row only
        the failures marked after its last such call in the reply (none, for a tool whose
        failures all came before), and the marks go. `None` when nothing changes: no row
        counted and no mark, or no success of a tool with a row.
        """
        if not self._rows:
            return None
        counts: Mapping[str, int] | None = state.get(COUNTS_KEY)
        if not counts or not any(value and _ROW in key for key, value in counts.items()):
            return None  # no failure in a row counted, and no failure marked
        # The model's last reply and the answers after it. Other messages may come between
        # (a tool's `Command` that adds one, a hook before the model that adds one).
        succeeded: set[str] = set()
        calls: Sequence[ToolCall] = ()
        messages: Sequence[object] = state.get("messages") or ()
        for message in reversed(messages):
            if isinstance(message, AIMessage):
                calls = message.tool_calls
                break
            if isinstance(message, ToolMessage) and message.status != "error":
                succeeded.add(message.tool_call_id)
        place = {call["id"]: at for at, call in enumerate(calls) if call["id"] is not None}
        # Each tool's last success in the reply: a later call of it replaces an earlier one.
        last_success = {
            call["name"]: at for at, call in enumerate(calls) if call["id"] in succeeded
        }
        ordered = {
            key: value
            for key, value in counts.items()
            if not (_MARK in key and key.startswith(self._rows))
        }
        for prefix in self._rows:
            for tool, at in last_success.items():
                row = f"{prefix}{tool}{_ROW}"
                if row not in counts:
                    continue
                marked = f"{prefix}{tool}{_MARK}"
                ordered[row] = sum(
                    place.get(key.removeprefix(marked), -1) > at
                    for key in counts
                    if key.startswith(marked)
                )
        return None if ordered == counts else ordered

    @property
    def closing_key(self) -> str:
        """The count that shows a "tell" budget closed a tool in the run."""
        return self._closing

    @property
    def closes(self) -> bool:
        """Whether a "tell" budget may close a tool, so calls must be checked before they run."""
        return bool(self._telling)

    def closed(self, tool: str, counts: Mapping[str, int]) -> bool:
        """Whether a "tell" budget closed `tool` for the rest of the run."""
        if self._closing not in counts:
            return False
        return any(f"{prefix}{tool}{_SPENT}" in counts for _, prefix in self._telling)

    def answer_closed(self, request: ToolCallRequest) -> ToolMessage | None:
        """The answer to a call to a tool a "tell" budget closed in this run, else `None`.

        Given at the call itself, in place of running it: a call another middleware already
        answered (a limit that blocked it, a person who rejected it) never gets here, so no
        call is answered twice. A call without an id runs, and fails as such calls do.
        """
        counts: dict[str, int] | None = request.state.get(COUNTS_KEY)
        if not counts or self._closing not in counts:  # no tool closed in this run
            return None
        call = request.tool_call
        tool, call_id = call["name"], call.get("id")
        if call_id is None:
            return None
        for budget, prefix in self._telling:
            spent = f"{prefix}{tool}{_SPENT}"
            if spent in counts:
                count = _closed_at(spent, counts)
                if count is None:  # closed by a release that did not keep the count
                    count = counts.get(f"{prefix}{tool}", 0)
                unknown = f"{prefix}{tool}{_UNKNOWN}" in counts
                return _unavailable(budget, call_id, tool, count, unknown)
        return None
