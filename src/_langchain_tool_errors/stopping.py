"""A budget's stop, made durable: the step ends with every call answered, then the run stops.

A budget that is spent with `when_spent="stop"` does not raise in the step where it is
spent. Raising there would throw away everything the step wrote (the results of the calls
beside the stopping one, the failure that stopped it in the record) and leave the model's
calls without answers, which providers refuse on the thread's next input. Instead the
stopping call is answered with a text saying a budget stopped the run, the stop is written
to the agent state beside the step's other results, and the middleware's next hook
(`before_model`, before the model can be called again, or `after_agent` at the run's end)
raises `ToolErrorBudgetExceeded` from what the state says. The step's results are then in the
checkpoint, and the next input on the thread starts from a conversation in which every call
has exactly one answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from threading import Lock
from typing import Annotated, Any, NotRequired, TypedDict

from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

from _langchain_tool_errors.budget import BudgetScope, BudgetState, ToolErrorBudgetExceeded
from _langchain_tool_errors.failures import FailureKind
from _langchain_tool_errors.record_types import ToolFailure

STOPS_KEY = "tool_error_budget_stops"
"""The state key holding, by middleware name, the budget stop of the current run."""


class BudgetStop(TypedDict):
    """What the state keeps of a budget's stop: enough to raise it again, in any process."""

    tool: str
    count: int
    limit: int
    scope: BudgetScope
    route: int | None
    kind: FailureKind
    call_id: str
    failure: NotRequired[ToolFailure]
    """The stopping failure as the record keeps it (absent in stops an older release kept)."""


def keep_first_stops(
    current: dict[str, BudgetStop] | None, update: dict[str, BudgetStop]
) -> dict[str, BudgetStop]:
    """The state reducer: each middleware's first stop of the run is kept.

    Parallel calls of one step may each spend the budget; LangGraph applies their updates
    in call order, so the stop raised is the first call's. An empty update adds nothing; a
    new run starts from none with LangGraph's `Overwrite`, which bypasses the reducer.
    """
    if not update:
        return current or {}
    return {**update, **(current or {})}


class StopState(BudgetState):
    """The agent state a budgeted middleware adds: the counts, and the run's stop."""

    tool_error_budget_stops: NotRequired[
        Annotated[dict[str, BudgetStop], PrivateStateAttr, keep_first_stops]
    ]


def stop_of(stop: ToolErrorBudgetExceeded, call_id: str) -> BudgetStop:
    """What the state keeps of `stop`, spent by the call `call_id`."""
    kept: BudgetStop = {
        "tool": stop.tool,
        "count": stop.count,
        "limit": stop.limit,
        "scope": stop.scope,
        "route": stop.route,
        "kind": stop.kind,
        "call_id": call_id,
    }
    if stop.failure is not None:
        kept["failure"] = stop.failure
    return kept


def stopped_answer(
    stop: BudgetStop, call_id: str, tool: str, *, by_person: bool = False
) -> ToolMessage:
    """The answer to a call of the step a budget stopped: the stopping call's, or another's.

    The call that spent the budget reads that it failed and what was spent; a call that
    never ran (beside a malformed call that spent it, or the held call a person stopped
    the run at, `by_person`) reads that it did not run, and why.
    """
    scope = stop["scope"]
    spent = (
        f"{stop['count']} failures of all tools"
        if scope == "run"
        else f"{stop['count']} failures of `{stop['tool']}`"
        + (" in a row" if scope == "consecutive" else "")
    )
    numbers = f"({spent} in this run, over the limit of {stop['limit']})"
    if by_person:
        content = (
            f"This call to `{tool}` did not run: a person stopped the run when the error "
            f"budget was spent {numbers}."
        )
    elif call_id == stop["call_id"]:
        content = f"This call to `{tool}` failed, and the error budget stopped the run {numbers}."
    else:
        content = f"This call to `{tool}` did not run: the error budget stopped the run {numbers}."
    return ToolMessage(content=content, tool_call_id=call_id, name=tool, status="error")


def running_config() -> RunnableConfig:
    """The running graph's configuration; none for a hook called outside a graph."""
    try:
        return get_config()
    except RuntimeError:  # a hook called directly, as a unit test does
        return {}


def raised(name: str, stop: BudgetStop, config: RunnableConfig) -> ToolErrorBudgetExceeded:
    """The exception to raise for a stop the state holds.

    The one the budget raised, chained to the tool's exception, when this process still
    holds it and no other run could have put it there; else one made from the state (a run
    resumed in another process, or raised again), unchained.
    """
    kept = _CAUSES.pop(_key(name, config), stop["call_id"])
    if kept is not None:
        return kept
    return ToolErrorBudgetExceeded(
        stop["tool"],
        stop["count"],
        stop["limit"],
        stop["scope"],
        route=stop["route"],
        kind=stop["kind"],
        failure=stop.get("failure"),
    )


def keep_cause(
    name: str, stop: ToolErrorBudgetExceeded, call_id: str, config: RunnableConfig
) -> None:
    """Keep the budget's exception, chained to the tool's, until the stop is raised."""
    _CAUSES.put(_key(name, config), call_id, stop)


_Key = tuple[str, str, str]


def _key(name: str, config: Mapping[str, Any]) -> _Key:
    """A run's stops in this process: its thread and graph, and the middleware.

    A node's namespace is its graph's, then `|` and the node's own task (`tools:<id>`,
    `ToolErrorMiddleware.before_model:<id>`): the graph's part is the same in both hooks.
    """
    configurable: Mapping[str, Any] = config.get("configurable") or {}
    thread = str(configurable.get("thread_id", ""))
    graph = str(configurable.get("checkpoint_ns", "")).rpartition("|")[0]
    return thread, graph, name


_AMBIGUOUS = ToolErrorBudgetExceeded("", 0, 0, "tool")
"""What a call's entry becomes when two runs put one under the same key: neither is used."""


class _Causes:
    """The budgets' exceptions not raised yet, for at most `_KEPT` runs, oldest dropped first.

    Only what `__cause__` shows lives here, never what the run does: the stop itself is in
    the state, and is raised from there when this process does not hold the exception. Two
    runs with no thread (no checkpointer) that stop on calls with the same id share a key:
    their entry is then marked ambiguous, so that neither is chained to the other's.
    """

    __slots__ = ("_kept", "_lock")

    def __init__(self) -> None:
        self._kept: OrderedDict[_Key, dict[str, ToolErrorBudgetExceeded]] = OrderedDict()
        self._lock = Lock()

    def put(self, key: _Key, call_id: str, stop: ToolErrorBudgetExceeded) -> None:
        with self._lock:
            calls = self._kept.setdefault(key, {})
            calls[call_id] = stop if call_id not in calls else _AMBIGUOUS
            self._kept.move_to_end(key)
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)

    def pop(self, key: _Key, call_id: str) -> ToolErrorBudgetExceeded | None:
        """The exception of the call that stopped the run; the run's others are dropped."""
        with self._lock:
            stop = self._kept.pop(key, {}).get(call_id)
        return None if stop is _AMBIGUOUS else stop


_KEPT = 256
_CAUSES = _Causes()
