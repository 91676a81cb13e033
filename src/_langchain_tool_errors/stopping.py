"""A budget's stop, made durable: the step ends with every call answered, then the run stops.

A budget that is spent with `when_spent="stop"` does not raise in the step where it is
spent. Raising there would throw away everything the step wrote (the results of the calls
beside the stopping one, the failure that stopped it in the record) and leave the model's
calls without answers, which providers refuse on the thread's next input. Instead the
stopping call is answered with a text saying a budget stopped the run, the stop is written
to the agent state beside the step's other results, and the middleware raises
`ToolErrorBudgetExceeded` from what the state says where it next runs: as the next model
call starts (`model_step.started`, as a `StopBeforeTheModel`), or at the run's end
(`after_agent`). The step's results are then in the
checkpoint, and the next input on the thread starts from a conversation in which every call
has exactly one answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from threading import Lock
from typing import Any, TypeVar

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.budget import ToolErrorBudgetExceeded
from _langchain_tool_errors.classifying import last_reply
from _langchain_tool_errors.control_flow import GraphBubbleUp
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.state import STOPS_KEY, BudgetStop, HeldTool
from _langchain_tool_errors.tool_calls import id_of, tool_name


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
    return exceeded(stop, stop.get("failure")) if kept is None else kept


def exceeded(
    spent: BudgetStop | HeldTool, failure: ToolFailure | None = None
) -> ToolErrorBudgetExceeded:
    """The budget's stop, made from what the state keeps of it or of the tool it held."""
    return ToolErrorBudgetExceeded(
        spent["tool"],
        spent["count"],
        spent["limit"],
        spent["scope"],
        route=spent["route"],
        kind=spent["kind"],
        failure=failure,
    )


class StopBeforeTheModel(ToolErrorBudgetExceeded, GraphBubbleUp):
    """A budget's stop raised as a model call starts, which no model-call wrapper retries.

    It is raised inside the model call's step, where another middleware's `wrap_model_call`
    (`ModelRetryMiddleware`, `ModelFallbackMiddleware`) would take a plain exception for a
    failed model call, retry it and answer it: the stop would be lost. Those wrappers let
    LangGraph's signals through, so this one is one too; to a caller it is the budget's
    `ToolErrorBudgetExceeded`. A tool hook of this package takes it back to a plain one
    (a sub-agent's stop is a failure of the tool that ran it, see `plain_stop`).
    """


# Named as the budget's exception wherever a caller reads a name: a traceback, the
# LangGraph server's error of a run, a log. It is that exception, raised in another place.
StopBeforeTheModel.__name__ = ToolErrorBudgetExceeded.__name__
StopBeforeTheModel.__qualname__ = ToolErrorBudgetExceeded.__qualname__
StopBeforeTheModel.__module__ = ToolErrorBudgetExceeded.__module__


def as_signal(stop: ToolErrorBudgetExceeded) -> StopBeforeTheModel:
    """`stop`, to be raised in a model call's step, chained as it is."""
    if isinstance(stop, StopBeforeTheModel):
        return stop
    return _remade(StopBeforeTheModel, stop)


def plain_stop(stop: StopBeforeTheModel) -> ToolErrorBudgetExceeded:
    """A sub-agent's stop, met where its tool ran: a failure of that tool, not a signal."""
    return _remade(ToolErrorBudgetExceeded, stop)


_StopT = TypeVar("_StopT", bound=ToolErrorBudgetExceeded)


def _remade(kind: type[_StopT], stop: ToolErrorBudgetExceeded) -> _StopT:
    """`stop` as an exception of the class `kind`, chained to what `stop` is chained to."""
    made = kind(
        stop.tool,
        stop.count,
        stop.limit,
        stop.scope,
        route=stop.route,
        kind=stop.kind,
        failure=stop.failure,
    )
    made.__cause__ = stop.__cause__
    return made


def raise_stop(name: str, state: Mapping[str, Any]) -> None:
    """Raise the budget stop of the middleware `name`, if the state holds one.

    Raises:
        ToolErrorBudgetExceeded: The state holds a stop of this middleware.
    """
    stop = saved_stop(name, state)
    if stop is not None:
        raise stop


def saved_stop(name: str, state: Mapping[str, Any]) -> ToolErrorBudgetExceeded | None:
    """The budget stop of the middleware `name` the state holds, to raise; else `None`."""
    stops: Mapping[str, BudgetStop] | None = state.get(STOPS_KEY)
    stop = None if not stops else stops.get(name)
    return None if stop is None else raised(name, stop, running_config())


def stopped_answers(
    name: str,
    stop: ToolErrorBudgetExceeded,
    state: Mapping[str, Any],
    left: Sequence[tuple[ToolCallRequest, str | None]],
    *,
    by_person: bool = False,
) -> list[ToolMessage]:
    """The answers when a failure met in a model hook stops the run.

    `left` holds the stopping call, then the failures met after it, each with the id of
    the answer written for it elsewhere (`None` for a malformed call). Answered: the
    stopping call and the malformed calls after it, then the reply's valid calls that
    nothing has answered; none of them runs. A call answered elsewhere keeps that answer,
    the stopping one too when such an answer spends the budget. `by_person`: a person
    stopped the run at the stopping call's pause, and each answer says so.
    """
    (first, replaces), rest = left[0], left[1:]
    stopping = id_of(first)
    keep_cause(name, stop, stopping, running_config())
    if replaces is not None:
        return []  # every call has its answer, the stopping one the one written for it
    kept = stop_of(stop, stopping)
    answers = [stopped_answer(kept, stopping, tool_name(first), by_person=by_person)]
    answers += [
        stopped_answer(kept, id_of(request), tool_name(request), by_person=by_person)
        for request, replaces in rest
        if replaces is None  # an answer written elsewhere stays its call's one answer
    ]
    reply, answered = last_reply(state)
    for call in () if reply is None else reply.tool_calls:
        call_id = call["id"]
        if call_id is not None and call_id not in answered:
            answers.append(stopped_answer(kept, call_id, call["name"], by_person=by_person))
    return answers


def keep_cause(
    name: str, stop: ToolErrorBudgetExceeded, call_id: str, config: RunnableConfig
) -> None:
    """Keep the budget's exception, chained to the tool's, until the stop is raised."""
    _CAUSES.put(_key(name, config), call_id, stop)


_Key = tuple[str, str, str]


def _key(name: str, config: Mapping[str, Any]) -> _Key:
    """A run's stops in this process: its thread and graph, and the middleware.

    A node's namespace is its graph's, then `|` and the node's own task (`tools:<id>`,
    `model:<id>`): the graph's part is the same in every hook.
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
