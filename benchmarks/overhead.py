"""Per-call cost of this package's ToolErrorMiddleware against langchain's, in one process.

Run: `.venv/bin/python benchmarks/overhead.py` (add `--quick` for a fast, noisier run).

Every figure is the best of several rounds, and within a round the variants run in turn
(interleaved), so drift in the machine's speed hits them alike. Each line prints ours,
langchain's, and the ratio ours/langchain's; the targets are checked at the end. Nothing
here is a test: timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

# The exact wrapping create_agent gives each wrap_tool_call hook (private, so a benchmark
# of "the hook as the agent calls it" follows langchain if it changes).
from langchain.agents.factory import _wrap_trace_kwargs  # pyright: ignore[reportPrivateUsage]
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import Command

# langsmith's `traceable` overloads leave some parameters unannotated, which pyright strict
# reports as partially unknown.
from langsmith import traceable  # pyright: ignore[reportUnknownVariableType]
from typing_extensions import override

import langchain_tool_errors
from _langchain_tool_errors.inner_commands import is_state_update
from _langchain_tool_errors.scripted_model import ScriptedChatModel
from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    RepairableFailure,
    RepeatedCall,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_invalid_fields, report_kind_only

Result = ToolMessage | Command[Any]
_R = TypeVar("_R")


def _explain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} failed with {type(exc).__name__}"


def _echo(query: str = "") -> str:
    return query


def _request(name: str = "search") -> ToolCallRequest:
    tool = StructuredTool.from_function(_echo, name=name, description=name)
    call = ToolCall(name=name, args={}, id="call-1", type="tool_call")
    runtime: ToolRuntime[None, dict[str, Any]] = ToolRuntime(
        state={}, context=None, config={}, stream_writer=lambda _: None,
        tool_call_id="call-1", store=None,
    )  # fmt: skip
    return ToolCallRequest(tool_call=call, tool=tool, state={}, runtime=runtime)


REQUEST = _request()
IN_A_RUN = REQUEST.override(
    state={
        "messages": [
            HumanMessage("Find it."),
            AIMessage("", tool_calls=[ToolCall(name="search", args={}, id="call-1")]),
        ]
    }
)
"""The same call in a run's state: the model's reply, whose one call this is, is last."""
SUCCESS = ToolMessage(content="ok", tool_call_id="call-1", name="search")
REPORTED = ToolMessage(
    content="search could not answer", tool_call_id="call-1", name="search", status="error"
)
"""An error message the call returns instead of raising: the tool (or an inner middleware)
answered its own failure."""


def _succeed(request: ToolCallRequest) -> Result:
    return SUCCESS


def _fail(request: ToolCallRequest) -> Result:
    raise TimeoutError("upstream timed out")


def _report(request: ToolCallRequest) -> Result:
    return REPORTED


async def _asucceed(request: ToolCallRequest) -> Result:
    return SUCCESS


async def _afail(request: ToolCallRequest) -> Result:
    raise TimeoutError("upstream timed out")


def _listen(failure: ToolFailure) -> None:
    """A sync listener that does nothing: what telling one costs."""


async def _alisten(failure: ToolFailure) -> None:
    """An async listener that does nothing: what awaiting one costs."""


def _best_per_call(
    variants: dict[str, Callable[[int], float]], number: int, rounds: int
) -> dict[str, float]:
    """Seconds per call for each variant: best of `rounds`, the variants taking turns."""
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(rounds):
        for name, run in variants.items():
            best[name] = min(best[name], run(number) / number)
    return best


def _loop(call: Callable[[], object]) -> Callable[[int], float]:
    def run(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            call()
        return time.perf_counter() - start

    return run


def _aloop(
    loop: asyncio.AbstractEventLoop, call: Callable[[], Awaitable[object]]
) -> Callable[[int], float]:
    async def many(number: int) -> None:
        for _ in range(number):
            await call()

    def run(number: int) -> float:
        start = time.perf_counter()
        loop.run_until_complete(many(number))
        return time.perf_counter() - start

    return run


class _BareAsyncHook:
    """The least an async wrap hook can cost: one coroutine around the call."""

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        """Await the call, nothing else."""
        return await handler(request)


def _after_a_failure(middleware: ToolErrorMiddleware[Any, Any, Any]) -> ToolCallRequest:
    """`REQUEST` in a run where a call of the same tool with other arguments failed.

    The worst case of a route for repeats: the call is hashed and looked up.
    """
    other = REQUEST.override(tool_call={**REQUEST.tool_call, "args": {"query": "other"}})
    failed = middleware.wrap_tool_call(other, _fail)
    assert isinstance(failed, Command)
    update: object = failed.update
    assert is_state_update(update)
    written: dict[str, Any] = {k: v for k, v in update.items() if k != "messages"}
    return REQUEST.override(state=written)


def _hook(
    hook: Callable[[ToolCallRequest, Any], _R], handler: Any, request: ToolCallRequest = REQUEST
) -> Callable[[], _R]:
    """A hook bound once, as `create_agent` binds it when it builds the agent, then called."""
    return lambda: hook(request, handler)


def _try(call: Callable[[], object]) -> Callable[[], object]:
    def attempt() -> object:
        try:
            return call()
        except (TimeoutError, ToolException):
            return None

    return attempt


@dataclass
class Figure:
    """One measured line: ours, langchain's, and what they are compared with."""

    name: str
    ours: float
    theirs: float
    unit: str = "us"

    @property
    def ratio(self) -> float:
        """Ours over langchain's."""
        return self.ours / self.theirs if self.theirs else float("inf")


def hook_figures(number: int, rounds: int) -> tuple[list[Figure], dict[str, float]]:
    """The per-call figures of the wrap hooks, sync and async."""
    ours = ToolErrorMiddleware(_explain)
    theirs = LangchainToolErrorMiddleware(_explain)
    names = [f"tool_{i}" for i in range(1000)] + ["search"]
    ours_filtered = ToolErrorMiddleware(_explain, tools=names)
    ours_one = ToolErrorMiddleware(_explain, tools=["search"])
    theirs_filtered = LangchainToolErrorMiddleware(_explain, tools=list(names))
    # Twenty routes, the failure matching only the last: 19 exception types it is not.
    others = [type(f"NotRaised{i}", (Exception,), {}) for i in range(19)]
    ours_routes = ToolErrorMiddleware.from_routes(
        [*(Route(other, _explain) for other in others), Route(Exception, _explain)]
    )
    ours_budget = ToolErrorMiddleware(_explain, budget=ErrorBudget(per_tool=10**9))
    # The same again: two identical middleware ("A/A") show the noise left in a comparison.
    ours_budget_b = ToolErrorMiddleware(_explain, budget=ErrorBudget(per_tool=10**9))
    ours_tells = ToolErrorMiddleware(
        _explain, budget=ErrorBudget(per_tool=10**9, when_spent="tell")
    )
    ours_in_a_row = ToolErrorMiddleware(_explain, budget=ErrorBudget(consecutive=10**9))
    ours_pausing = ToolErrorMiddleware(
        _explain, budget=ErrorBudget(per_tool=10**9, when_spent="interrupt")
    )
    ours_kinds = ToolErrorMiddleware.from_routes(
        [Route(InvalidArguments, report_invalid_fields), Route(Exception, _explain)]
    )
    ours_repeats = ToolErrorMiddleware.from_routes(
        [Route(RepeatedCall, report_kind_only), Route(Exception, _explain)]
    )
    after_a_failure = _after_a_failure(ours_repeats)
    # The recording stage: a record of each failure in the state, or a listener told of it.
    ours_record = ToolErrorMiddleware(_explain, record_failures=True)
    ours_listener = ToolErrorMiddleware(_explain, listeners=[_listen])
    ours_alistener = ToolErrorMiddleware(_explain, listeners=[_alisten])
    loop = asyncio.new_event_loop()
    try:
        sync = _best_per_call(
            {
                "direct": _loop(lambda: _succeed(REQUEST)),
                "ours": _loop(_hook(ours.wrap_tool_call, _succeed)),
                "theirs": _loop(_hook(theirs.wrap_tool_call, _succeed)),
                "ours 1001": _loop(_hook(ours_filtered.wrap_tool_call, _succeed)),
                "ours 1": _loop(_hook(ours_one.wrap_tool_call, _succeed)),
                "theirs 1001": _loop(_hook(theirs_filtered.wrap_tool_call, _succeed)),
                "direct error": _loop(_try(lambda: _fail(REQUEST))),
                "ours error": _loop(_hook(ours.wrap_tool_call, _fail)),
                "theirs error": _loop(_hook(theirs.wrap_tool_call, _fail)),
                "ours 20 routes": _loop(_hook(ours_routes.wrap_tool_call, _succeed)),
                "ours 20 routes error": _loop(_hook(ours_routes.wrap_tool_call, _fail)),
                "ours budget": _loop(_hook(ours_budget.wrap_tool_call, _succeed)),
                "ours budget B": _loop(_hook(ours_budget_b.wrap_tool_call, _succeed)),
                "ours budget tell": _loop(_hook(ours_tells.wrap_tool_call, _succeed)),
                "ours budget interrupt": _loop(_hook(ours_pausing.wrap_tool_call, _succeed)),
                "ours in a row": _loop(_hook(ours_in_a_row.wrap_tool_call, _succeed, IN_A_RUN)),
                "ours budget error": _loop(_hook(ours_budget.wrap_tool_call, _fail)),
                "ours kinds": _loop(_hook(ours_kinds.wrap_tool_call, _succeed)),
                "ours repeats": _loop(_hook(ours_repeats.wrap_tool_call, _succeed)),
                "ours repeats after a failure": _loop(
                    _hook(ours_repeats.wrap_tool_call, _succeed, after_a_failure)
                ),
                "ours budget reported": _loop(_hook(ours_budget.wrap_tool_call, _report)),
                "theirs reported": _loop(_hook(theirs.wrap_tool_call, _report)),
                "ours record": _loop(_hook(ours_record.wrap_tool_call, _succeed)),
                "ours listener": _loop(_hook(ours_listener.wrap_tool_call, _succeed)),
                "ours record error": _loop(_hook(ours_record.wrap_tool_call, _fail)),
                "ours listener error": _loop(_hook(ours_listener.wrap_tool_call, _fail)),
            },
            number,
            rounds,
        )
        asyn = _best_per_call(
            {
                "direct": _aloop(loop, lambda: _asucceed(REQUEST)),
                "floor": _aloop(loop, _hook(_BareAsyncHook().awrap_tool_call, _asucceed)),
                "ours": _aloop(loop, _hook(ours.awrap_tool_call, _asucceed)),
                "theirs": _aloop(loop, _hook(theirs.awrap_tool_call, _asucceed)),
                "ours error": _aloop(loop, _hook(ours.awrap_tool_call, _afail)),
                "ours budget": _aloop(loop, _hook(ours_budget.awrap_tool_call, _asucceed)),
                "ours budget B": _aloop(loop, _hook(ours_budget_b.awrap_tool_call, _asucceed)),
                "theirs error": _aloop(loop, _hook(theirs.awrap_tool_call, _afail)),
                "ours 20 routes error": _aloop(loop, _hook(ours_routes.awrap_tool_call, _afail)),
                "ours record": _aloop(loop, _hook(ours_record.awrap_tool_call, _asucceed)),
                "ours listener": _aloop(loop, _hook(ours_listener.awrap_tool_call, _asucceed)),
                "ours record error": _aloop(loop, _hook(ours_record.awrap_tool_call, _afail)),
                "ours listener error": _aloop(loop, _hook(ours_listener.awrap_tool_call, _afail)),
                "ours async listener error": _aloop(
                    loop, _hook(ours_alistener.awrap_tool_call, _afail)
                ),
            },
            number,
            rounds,
        )
    finally:
        loop.close()
    us = 1e6
    figures = [
        Figure("success path: overhead over the bare call", *_over(sync, "direct", us)),
        Figure("handled-error path: per call", sync["ours error"] * us, sync["theirs error"] * us),
        Figure(
            "success path, 1,001-name filter: overhead",
            *_over(sync, "direct", us, ours="ours 1001", theirs="theirs 1001"),
        ),
        Figure(
            "success path, 20 routes: overhead", *_over(sync, "direct", us, ours="ours 20 routes")
        ),
        Figure(
            "handled-error path, 20 routes, the last matching",
            sync["ours 20 routes error"] * us,
            sync["theirs error"] * us,
        ),
        Figure(
            "success path with a budget: overhead", *_over(sync, "direct", us, ours="ours budget")
        ),
        Figure(
            "success path with a 'tell' budget: overhead",
            *_over(sync, "direct", us, ours="ours budget tell"),
        ),
        Figure(
            "success path with an 'interrupt' budget: overhead",
            *_over(sync, "direct", us, ours="ours budget interrupt"),
        ),
        Figure(
            "success path with a consecutive budget: overhead",
            *_over(sync, "direct", us, ours="ours in a row"),
        ),
        Figure(
            "handled-error path with a budget",
            sync["ours budget error"] * us,
            sync["theirs error"] * us,
        ),
        Figure(
            "success path, a route for invalid arguments: overhead",
            *_over(sync, "direct", us, ours="ours kinds"),
        ),
        Figure(
            "success path, a route for repeats: overhead",
            *_over(sync, "direct", us, ours="ours repeats"),
        ),
        Figure(
            "success path, a route for repeats, after the tool failed: overhead",
            *_over(sync, "direct", us, ours="ours repeats after a failure"),
        ),
        Figure(
            "returned error message, classified and counted",
            sync["ours budget reported"] * us,
            sync["theirs reported"] * us,
        ),
        Figure(
            "success path with a record: overhead", *_over(sync, "direct", us, ours="ours record")
        ),
        Figure(
            "success path with a listener: overhead",
            *_over(sync, "direct", us, ours="ours listener"),
        ),
        Figure(
            "handled-error path with a record",
            sync["ours record error"] * us,
            sync["theirs error"] * us,
        ),
        Figure(
            "handled-error path with a listener",
            sync["ours listener error"] * us,
            sync["theirs error"] * us,
        ),
        Figure("async success path: overhead over the bare call", *_over(asyn, "direct", us)),
        Figure(
            "async success path with a budget: overhead",
            *_over(asyn, "direct", us, ours="ours budget"),
        ),
        Figure(
            "async handled-error path: per call", asyn["ours error"] * us, asyn["theirs error"] * us
        ),
        Figure(
            "async handled-error path, 20 routes",
            asyn["ours 20 routes error"] * us,
            asyn["theirs error"] * us,
        ),
        Figure(
            "async success path with a record: overhead",
            *_over(asyn, "direct", us, ours="ours record"),
        ),
        Figure(
            "async success path with a listener: overhead",
            *_over(asyn, "direct", us, ours="ours listener"),
        ),
        Figure(
            "async handled-error path with a record",
            asyn["ours record error"] * us,
            asyn["theirs error"] * us,
        ),
        Figure(
            "async handled-error path with a listener",
            asyn["ours listener error"] * us,
            asyn["theirs error"] * us,
        ),
        Figure(
            "async handled-error path with an async listener",
            asyn["ours async listener error"] * us,
            asyn["theirs error"] * us,
        ),
    ]
    extra = {
        "ours filtered/unfiltered": sync["ours 1001"] / sync["ours"],
        "ours 1001 names/1 name": sync["ours 1001"] / sync["ours 1"],
        "async floor": (asyn["floor"] - asyn["direct"]) * us,
        "theirs filtered/unfiltered": sync["theirs 1001"] / sync["theirs"],
        "bare call": sync["direct"] * us,
        "bare raise and catch": sync["direct error"] * us,
        "budget A/A noise": _aa_noise(sync, "direct", "ours budget", "ours budget B"),
        "async budget A/A noise": _aa_noise(asyn, "direct", "ours budget", "ours budget B"),
    }
    return figures, extra


def _over(
    best: dict[str, float], base: str, scale: float, ours: str = "ours", theirs: str = "theirs"
) -> tuple[float, float]:
    """Ours and theirs as overheads over `base`, scaled (to microseconds)."""
    return (best[ours] - best[base]) * scale, (best[theirs] - best[base]) * scale


def _aa_noise(best: dict[str, float], base: str, a: str, b: str) -> float:
    """How far apart the overheads over `base` of two identical variants came out."""
    return abs((best[a] - best[base]) / (best[b] - best[base]) - 1)


def _turn_tools(*, asynchronous: bool) -> list[BaseTool]:
    def lookup(key: str) -> str:
        return f"value of {key}"

    def fragile(key: str) -> str:
        raise ToolException(f"no value for {key}")

    async def alookup(key: str) -> str:
        return lookup(key)

    async def afragile(key: str) -> str:
        return fragile(key)

    def tool(name: str, func: Callable[[str], str], coro: Callable[[str], Any]) -> BaseTool:
        if asynchronous:  # a coroutine only: no thread pool on the async path
            return StructuredTool.from_function(coroutine=coro, name=name, description=name)
        return StructuredTool.from_function(func, name=name, description=name)

    handled = tool("fragile_handled", fragile, afragile)
    handled.handle_tool_error = _explain_tool_exception
    return [tool("lookup", lookup, alookup), tool("fragile", fragile, afragile), handled]


def _explain_tool_exception(exc: ToolException) -> str:
    return f"fragile failed with {type(exc).__name__}"


def _turn(
    middleware: Sequence[AgentMiddleware[Any, Any, Any]], failing_tool: str, *, asynchronous: bool
) -> Any:
    calls = [
        ToolCall(
            name="lookup" if i % 2 else failing_tool, args={"key": f"k{i}"}, id=f"c{i}",
            type="tool_call",
        )
        for i in range(50)
    ]  # fmt: skip
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=calls), AIMessage("done")])
    tools = _turn_tools(asynchronous=asynchronous)
    return create_agent(model, tools=tools, middleware=list(middleware))


class PassThrough(AgentMiddleware[Any, Any, Any]):
    """A wrap hook that does nothing: what create_agent charges for any such middleware."""

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]
    ) -> Result:
        """Run the tool call, nothing else."""
        return handler(request)

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        """Run the tool call, nothing else."""
        return await handler(request)


class BareConverter(AgentMiddleware[Any, Any, Any]):
    """The least any exception-converting middleware can do: no filter, no checks."""

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]
    ) -> Result:
        """Run the tool call; a `ToolException` becomes an error message."""
        try:
            return handler(request)
        except ToolException as exc:
            return _bare_message(exc, request)

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        """Run the tool call; a `ToolException` becomes an error message."""
        try:
            return await handler(request)
        except ToolException as exc:
            return _bare_message(exc, request)


def _bare_message(exc: Exception, request: ToolCallRequest) -> ToolMessage:
    call = request.tool_call
    content = _explain(exc, request)
    return ToolMessage(content, tool_call_id=call["id"] or "", name=call["name"], status="error")


def turn_figures(rounds: int, *, asynchronous: bool) -> dict[str, float]:
    """CPU milliseconds per agent turn (50 parallel calls, half failing), best of `rounds`.

    CPU time of the whole process (all threads): on the sync path a turn's wall time is
    dominated by the thread pool's scheduling. Two identical do-nothing agents ("A/A") show
    the noise left. The async turn runs coroutine tools with `ainvoke` on one event loop.
    """

    def turn(middleware: AgentMiddleware[Any, Any, Any] | None, failing_tool: str) -> Any:
        chosen = [] if middleware is None else [middleware]
        return _turn(chosen, failing_tool, asynchronous=asynchronous)

    agents = {
        "ours": turn(ToolErrorMiddleware(_explain, exceptions=ToolException), "fragile"),
        "theirs": turn(LangchainToolErrorMiddleware(_explain), "fragile"),
        "bare converter": turn(BareConverter(), "fragile"),
        # No middleware: the failing tools handle their own ToolException instead.
        "none": turn(None, "fragile_handled"),
        "do-nothing A": turn(PassThrough(), "fragile_handled"),
        "do-nothing B": turn(PassThrough(), "fragile_handled"),
    }
    question = {"messages": [HumanMessage("go")]}
    loop = asyncio.new_event_loop()

    def run(agent: Any) -> Any:
        if asynchronous:
            return loop.run_until_complete(agent.ainvoke(question))
        return agent.invoke(question)

    try:
        for agent in agents.values():
            run(agent)  # warm up
        best = dict.fromkeys(agents, float("inf"))
        for _ in range(rounds):
            for name, agent in agents.items():
                start = time.process_time()
                result = run(agent)
                best[name] = min(best[name], time.process_time() - start)
                assert len([m for m in result["messages"] if isinstance(m, ToolMessage)]) == 50
    finally:
        loop.close()
    return {name: seconds * 1e3 for name, seconds in best.items()}


def _fail_tool(request: ToolCallRequest) -> Result:
    raise ToolException("no value for k0")


def traced_hook_figures(number: int, rounds: int) -> dict[str, float]:
    """Microseconds per call of a wrap hook as `create_agent` calls it (inside `traceable`).

    This is the per-call cost inside an agent, measured without the thread pool's noise:
    each middleware on a succeeding call, and the converters on a failing one.
    """
    middleware: dict[str, AgentMiddleware[Any, Any, Any]] = {
        "do-nothing": PassThrough(),
        "bare converter": BareConverter(),
        "ours": ToolErrorMiddleware(_explain),
        "theirs": LangchainToolErrorMiddleware(_explain),
    }
    wrapped = {
        name: traceable(name=f"{m.name}.wrap_tool_call", **_wrap_trace_kwargs(m))(m.wrap_tool_call)
        for name, m in middleware.items()
    }
    # ty matches `partial`'s arguments against langsmith's ParamSpec-typed wrapper wrongly.
    variants = {
        name: _loop(functools.partial(w, REQUEST, _succeed))  # ty: ignore[invalid-argument-type]
        for name, w in wrapped.items()
    }
    for name in ("bare converter", "ours", "theirs"):
        failing = functools.partial(wrapped[name], REQUEST, _fail_tool)  # ty: ignore[invalid-argument-type]
        variants[f"{name} error"] = _loop(failing)
    best = _best_per_call(variants, number, rounds)
    return {name: seconds * 1e6 for name, seconds in best.items()}


def _conversation(errors: int) -> list[AnyMessage]:
    """A question, then 19 messages: tool calls and their results, `errors` of them errors."""
    messages: list[AnyMessage] = [HumanMessage("go")]
    for i in range(9):
        call = ToolCall(name="search", args={"query": f"q{i}"}, id=f"m{i}", type="tool_call")
        messages.append(AIMessage(content="", tool_calls=[call]))
        status = "error" if i < errors else "success"
        messages.append(ToolMessage(f"result {i}", tool_call_id=f"m{i}", status=status))
    messages.append(AIMessage("thinking"))
    return messages


_MODEL_REPLY = ModelResponse[Any](result=[AIMessage("done")])


def _no_repair(failure: RepairableFailure) -> ToolCall | None:
    return None


def _call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
    return _MODEL_REPLY


class PassThroughModel(PassThrough):
    """Do-nothing tool and model hooks: what create_agent charges for both."""

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Call the model, nothing else."""
        return handler(request)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Call the model, nothing else."""
        return await handler(request)


def _after_a_step(middleware: ToolErrorMiddleware[Any, Any, Any]) -> AgentState[Any]:
    """The agent state before the model call that follows a step of five calls of one tool.

    The first, third and fourth calls fail; the state is the checkpoint's, read where a real
    agent pauses before this middleware's hook.
    """

    def flaky(outcome: str) -> str:
        if outcome == "fail":
            raise ToolException("the service is down")
        return "ok"

    outcomes = ["fail", "ok", "fail", "fail", "ok"]
    calls = [
        ToolCall(name="flaky", args={"outcome": outcome}, id=f"c{i}", type="tool_call")
        for i, outcome in enumerate(outcomes)
    ]
    model = ScriptedChatModel(script=[AIMessage("", tool_calls=calls), AIMessage("done")])
    agent: Any = create_agent(
        model,
        tools=[StructuredTool.from_function(flaky, description="flaky")],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
        interrupt_before=[f"{middleware.name}.before_model"],
    )
    config: RunnableConfig = {"configurable": {"thread_id": "step"}}
    agent.invoke({"messages": [HumanMessage("go")]}, config)  # pauses before the model call
    agent.invoke(None, config)  # the step, then a pause before the hook after it
    values: AgentState[Any] = agent.get_state(config).values
    return values


def model_hook_figures(number: int, rounds: int) -> dict[str, float]:
    """Microseconds per model call through the marking hook, direct and as create_agent calls it.

    A 20-message conversation, sent to a chat model class that drops the error flag (the
    scripted one), so the hook reads every message: with no error among them, and with 5.
    """
    model = ScriptedChatModel(script=[AIMessage("done")])
    clean: ModelRequest[Any] = ModelRequest(model=model, messages=_conversation(0))
    errors: ModelRequest[Any] = ModelRequest(model=model, messages=_conversation(5))
    ours = ToolErrorMiddleware(_explain)
    nothing = PassThroughModel()

    def traced(m: AgentMiddleware[Any, Any, Any]) -> Callable[..., Any]:
        wrapper: Callable[..., Any] = traceable(
            name=f"{m.name}.wrap_model_call", **_wrap_trace_kwargs(m)
        )(m.wrap_model_call)
        return wrapper

    traced_ours, traced_nothing = traced(ours), traced(nothing)
    # A reply of five valid calls to a tool with a schema: what `repair=` checks each time.
    tools: list[BaseTool | dict[str, Any]] = [*_turn_tools(asynchronous=False)]
    calls = [
        ToolCall(name="lookup", args={"key": f"k{i}"}, id=f"c{i}", type="tool_call")
        for i in range(5)
    ]
    reply = ModelResponse(result=[AIMessage("", tool_calls=calls)])
    offered: ModelRequest[Any] = ModelRequest(model=model, messages=_conversation(0), tools=tools)
    repairing = ToolErrorMiddleware(_explain, repair=_no_repair)

    def call_model_with_calls(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return reply

    # The hook before the model call after a step: a consecutive budget puts the step's
    # failures in a row in call order there, which a `per_tool` budget does not.
    in_a_row = ToolErrorMiddleware(_explain, budget=ErrorBudget(consecutive=10**9))
    per_tool = ToolErrorMiddleware(_explain, budget=ErrorBudget(per_tool=10**9))
    rows_state, budget_state = _after_a_step(in_a_row), _after_a_step(per_tool)
    runtime = Runtime()

    variants = {
        "bare": _loop(lambda: _call_model(clean)),
        "before model, budget": _loop(lambda: per_tool.before_model(budget_state, runtime)),
        "before model, rows": _loop(lambda: in_a_row.before_model(rows_state, runtime)),
        "ours clean": _loop(lambda: ours.wrap_model_call(clean, _call_model)),
        "ours errors": _loop(lambda: ours.wrap_model_call(errors, _call_model)),
        "traced nothing": _loop(lambda: traced_nothing(clean, _call_model)),
        "traced ours": _loop(lambda: traced_ours(clean, _call_model)),
        "ours calls": _loop(lambda: ours.wrap_model_call(offered, call_model_with_calls)),
        "ours calls repair": _loop(
            lambda: repairing.wrap_model_call(offered, call_model_with_calls)
        ),
    }
    best = _best_per_call(variants, number, rounds)
    return {name: seconds * 1e6 for name, seconds in best.items()}


def quiet_run_figures(rounds: int) -> dict[str, float]:
    """CPU milliseconds of a sync run in which no tool fails: 10 calls, then the answer."""
    calls = [
        ToolCall(name="lookup", args={"key": f"k{i}"}, id=f"c{i}", type="tool_call")
        for i in range(10)
    ]

    def agent(middleware: Sequence[AgentMiddleware[Any, Any, Any]]) -> Any:
        script = [AIMessage(content="", tool_calls=calls), AIMessage("done")]
        model = ScriptedChatModel(script=script)
        return create_agent(
            model, tools=_turn_tools(asynchronous=False), middleware=list(middleware)
        )

    agents = {
        "none": agent([]),
        "ours": agent([ToolErrorMiddleware(_explain)]),
        "do-nothing A": agent([PassThroughModel()]),
        "do-nothing B": agent([PassThroughModel()]),
    }
    question = {"messages": [HumanMessage("go")]}
    for compiled in agents.values():
        compiled.invoke(question)  # warm up
    best = dict.fromkeys(agents, float("inf"))
    for _ in range(rounds):
        for name, compiled in agents.items():
            start = time.process_time()
            compiled.invoke(question)
            best[name] = min(best[name], time.process_time() - start)
    return {name: seconds * 1e3 for name, seconds in best.items()}


def escape_figures(number: int, rounds: int) -> dict[str, float]:
    """Microseconds per failing tool call: handled inside the tool, or raised out of it.

    A middleware can only convert an exception that leaves the tool, which costs more
    (the tool's error callbacks, the traceback) than a tool answering its own failure.
    """
    tools = {tool.name: tool for tool in _turn_tools(asynchronous=False)}

    def call(name: str) -> Callable[[], object]:
        tool_call = {"name": name, "args": {"key": "k0"}, "id": "c0", "type": "tool_call"}
        return lambda: tools[name].invoke(tool_call)

    best = _best_per_call(
        {"inside": _loop(call("fragile_handled")), "out": _loop(_try(call("fragile")))},
        number,
        rounds,
    )
    return {name: seconds * 1e6 for name, seconds in best.items()}


def import_figures(rounds: int) -> dict[str, float]:
    """Milliseconds to import the package once `langchain.agents.middleware` is imported.

    As installed from a wheel, with bytecode compiled (pip compiles it at install; here it
    goes to a temporary cache, since an editable checkout may run with
    PYTHONDONTWRITEBYTECODE); and, for comparison, compiling the source on import.
    """
    code = "import langchain.agents.middleware; import langchain_tool_errors"
    package = os.path.dirname(langchain_tool_errors.__file__ or "")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        compiled = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        compiled.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", package], env=compiled, check=True
        )
        empty = os.path.join(cache, "empty")
        uncompiled = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": empty}
        for name, env in (("import", compiled), ("import, compiling", uncompiled)):
            best = float("inf")
            for _ in range(rounds):
                done = subprocess.run(
                    [sys.executable, "-X", "importtime", "-c", code],
                    capture_output=True, text=True, check=True, env=env,
                )  # fmt: skip
                match = re.search(r"\|\s*(\d+) \| langchain_tool_errors\s*$", done.stderr, re.M)
                assert match is not None, done.stderr[-2000:]
                best = min(best, int(match.group(1)) / 1e3)
            figures[name] = best
    return figures


_RECORDING_SUCCESS_ROWS = [
    (path, option) for path in ("", "async ") for option in ("a record", "a listener")
]
"""The success-path rows of the recording stage: (path prefix, option)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the table, and check the targets."""
    parser = argparse.ArgumentParser(
        description="ToolErrorMiddleware overhead, ours and langchain's"
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    quick = parser.parse_args(argv).quick
    number, rounds = (2_000, 3) if quick else (20_000, 20)

    figures, extra = hook_figures(number, rounds)
    turns = {
        path: turn_figures(3 if quick else 30, asynchronous=path == "async")
        for path in ("sync", "async")
    }
    hook = traced_hook_figures(number // 10, rounds)
    escape = escape_figures(number // 10, rounds)
    marking = model_hook_figures(number // 10, rounds)
    quiet = quiet_run_figures(3 if quick else 30)
    imports = import_figures(3 if quick else 10)

    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(f"{number:,} calls x {rounds} rounds per hook figure, best round\n")
    print(f"{'figure':<52}{'ours':>10}{'langchain':>12}{'ratio':>8}")
    for f in figures:
        print(f"{f.name:<52}{f.ours:>8.3f}us{f.theirs:>10.3f}us{f.ratio:>8.2f}")
    print(f"{'(bare tool call, for scale)':<52}{extra['bare call']:>8.3f}us")
    print(f"{'(bare raise and catch, for scale)':<52}{extra['bare raise and catch']:>8.3f}us")
    print(f"{'(an async def that only awaits: the async floor)':<52}{extra['async floor']:>8.3f}us")
    print(
        f"{'1,001-name filter / no filter, whole call':<52}"
        f"{extra['ours filtered/unfiltered']:>10.2f}{extra['theirs filtered/unfiltered']:>12.2f}"
    )
    constant = extra["ours 1001 names/1 name"]
    print(f"{'1,001-name filter / 1-name filter, whole call':<52}{constant:>10.2f}")
    added: dict[str, float] = {}
    framework: dict[str, float] = {}
    noise: dict[str, float] = {}
    for path, turn in turns.items():
        added[path] = turn["ours"] / turn["none"] - 1
        noise[path] = abs(turn["do-nothing A"] / turn["do-nothing B"] - 1)
        framework[path] = min(turn["do-nothing A"], turn["do-nothing B"]) / turn["none"] - 1
        print(
            f"{f'{path} agent turn, 50 calls, half failing (CPU ms)':<52}{turn['ours']:>8.2f}ms"
            f"{turn['theirs']:>10.2f}ms{turn['ours'] / turn['theirs']:>8.2f}"
        )
        print(f"{'  the same turn, no middleware':<52}{turn['none']:>8.2f}ms")
        print(
            f"{'  the same turn, do-nothing middleware A / B':<52}{turn['do-nothing A']:>8.2f}ms"
            f"{turn['do-nothing B']:>10.2f}ms   A/A noise {noise[path]:.1%}"
        )
        print(
            f"{'  the same turn, a bare converting middleware':<52}{turn['bare converter']:>8.2f}ms"
        )
    # What our hook costs a sync turn beyond the least any converter costs: 25 succeeding
    # and 25 failing calls, each measured as create_agent calls the hook.
    beyond = (hook["ours"] - hook["bare converter"]) + (
        hook["ours error"] - hook["bare converter error"]
    )
    own = beyond * 25 / 1e3 / turns["sync"]["none"]
    print(
        f"{'hook as create_agent calls it (traceable), success':<52}{hook['ours']:>8.2f}us"
        f"{hook['theirs']:>10.2f}us{hook['ours'] / hook['theirs']:>8.2f}"
    )
    print(
        f"{'  do-nothing hook / bare converter, the same way':<52}{hook['do-nothing']:>8.2f}us"
        f"{hook['bare converter']:>10.2f}us"
    )
    print(
        f"{'hook as create_agent calls it (traceable), failure':<52}"
        f"{hook['ours error']:>8.2f}us{hook['theirs error']:>10.2f}us"
        f"{hook['ours error'] / hook['theirs error']:>8.2f}"
    )
    print(f"{'  bare converter, the same way':<52}{hook['bare converter error']:>8.2f}us")
    print(
        f"{'a failing tool, handled inside it / raised out of it':<52}{escape['inside']:>8.2f}us"
        f"{escape['out']:>10.2f}us"
    )
    # The least any wrap middleware that converts exceptions adds to the sync turn: the
    # traceable wrapper on 50 calls, and 25 exceptions leaving their tools.
    floor = (50 * hook["do-nothing"] + 25 * (escape["out"] - escape["inside"])) / 1e3
    floor_share = floor / turns["sync"]["none"]
    print(
        f"{'  so any converting middleware adds to the sync turn':<52}{floor:>8.2f}ms"
        f"   {floor_share:+.1%} of it"
    )
    print(
        f"{'model call, 20 messages, none an error: our hook':<52}"
        f"{marking['ours clean'] - marking['bare']:>8.2f}us   over the bare call"
    )
    print(
        f"{'model call, 20 messages, 5 errors marked: our hook':<52}"
        f"{marking['ours errors'] - marking['bare']:>8.2f}us   over the bare call"
    )
    print(
        f"{'model reply of 5 valid calls: repair= checks them':<52}"
        f"{marking['ours calls repair'] - marking['ours calls']:>8.2f}us   over our hook without it"
    )
    print(
        f"{'after a step of 5 calls, 3 failing: rows in call order':<52}"
        f"{marking['before model, rows'] - marking['before model, budget']:>8.2f}us"
        "   over a per_tool budget's hook"
    )
    print(
        f"{'model hook as create_agent calls it (traceable)':<52}{marking['traced ours']:>8.2f}us"
        f"{marking['traced nothing']:>10.2f}us   (a do-nothing model hook)"
    )
    quiet_noise = abs(quiet["do-nothing A"] / quiet["do-nothing B"] - 1)
    quiet_floor = min(quiet["do-nothing A"], quiet["do-nothing B"])
    print(
        f"{'sync run, 10 calls, none failing (CPU ms)':<52}{quiet['ours']:>8.2f}ms"
        f"{quiet['none']:>10.2f}ms   (no middleware)"
    )
    print(
        f"{'  do-nothing tool and model hooks A / B':<52}{quiet['do-nothing A']:>8.2f}ms"
        f"{quiet['do-nothing B']:>10.2f}ms   A/A noise {quiet_noise:.1%}"
    )
    print(f"{'import beyond langchain.agents.middleware (ms)':<52}{imports['import']:>8.2f}ms")
    compiling = imports["import, compiling"]
    print(f"{'  the same, compiling the source (no bytecode yet)':<52}{compiling:>8.2f}ms")

    by_name = {f.name: f for f in figures}
    # The success path with a record or a listener runs the hooks a budget runs: the same
    # overhead, compared with ours with a budget measured in the same rounds, within 5% or
    # the noise between two identical budgeted middleware, whichever is larger.
    unchanged = {
        (path, option): by_name[f"{path}success path with {option}: overhead"].ours
        / by_name[f"{path}success path with a budget: overhead"].ours
        for path, option in _RECORDING_SUCCESS_ROWS
    }
    budget_noise = {path: extra[f"{path}budget A/A noise"] for path in ("", "async ")}
    targets = [
        ("success-path overhead <= 0.5 x langchain's",
         by_name["success path: overhead over the bare call"].ratio <= 0.5),
        ("handled-error path <= 1.0 x langchain's",
         by_name["handled-error path: per call"].ratio <= 1.0),
        ("success path with 20 routes <= 0.5 x langchain's",
         by_name["success path, 20 routes: overhead"].ratio <= 0.5),
        ("error path with 20 routes <= 1.0 x langchain's single handler",
         by_name["handled-error path, 20 routes, the last matching"].ratio <= 1.0),
        ("async error path with 20 routes <= 1.0 x langchain's single handler",
         by_name["async handled-error path, 20 routes"].ratio <= 1.0),
        ("success path with a budget <= 1.0 x langchain's",
         by_name["success path with a budget: overhead"].ratio <= 1.0),
        ("success path with a 'tell' budget <= 1.0 x langchain's",
         by_name["success path with a 'tell' budget: overhead"].ratio <= 1.0),
        ("success path with an 'interrupt' budget <= 1.0 x langchain's",
         by_name["success path with an 'interrupt' budget: overhead"].ratio <= 1.0),
        ("success path with a consecutive budget <= 1.0 x langchain's",
         by_name["success path with a consecutive budget: overhead"].ratio <= 1.0),
        ("success path with a route for invalid arguments <= 1.0 x langchain's",
         by_name["success path, a route for invalid arguments: overhead"].ratio <= 1.0),
        ("success path with a route for repeats <= 1.0 x langchain's",
         by_name["success path, a route for repeats: overhead"].ratio <= 1.0),
        ("success path with a route for repeats, after the tool failed <= 1.0 x langchain's",
         by_name["success path, a route for repeats, after the tool failed: overhead"].ratio
         <= 1.0),
        ("async success path with a budget <= 1.0 x langchain's",
         by_name["async success path with a budget: overhead"].ratio <= 1.0),
        ("1,001-name filter within 1.1 x of no filter",
         extra["ours filtered/unfiltered"] <= 1.1),
        ("async success-path overhead <= 0.5 x langchain's",
         by_name["async success path: overhead over the bare call"].ratio <= 0.5),
        ("async handled-error path <= 1.0 x langchain's",
         by_name["async handled-error path: per call"].ratio <= 1.0),
        *[
            (f"{path}success path with {option} <= 1.0 x langchain's",
             by_name[f"{path}success path with {option}: overhead"].ratio <= 1.0)
            for path, option in _RECORDING_SUCCESS_ROWS
        ],
        *[
            (f"{path}success path with {option} within 5% of ours with a budget, or the A/A "
             f"noise ({unchanged[path, option]:.2f} x, noise {budget_noise[path]:.1%})",
             unchanged[path, option] - 1 <= max(0.05, budget_noise[path]))
            for path, option in _RECORDING_SUCCESS_ROWS
        ],
        *[
            (f"{path} agent turn adds <= 1% over no middleware (adds {added[path]:+.1%}; "
             f"a do-nothing middleware {framework[path]:+.1%}, A/A noise {noise[path]:.1%})",
             added[path] <= 0.01)
            for path in turns
        ],
        (f"  our hook adds <= 1% of a turn over a bare converter ({own:+.2%})", own <= 0.01),
        ("import <= 5 ms beyond langchain.agents.middleware", imports["import"] <= 5.0),
        (f"a run with no failing tool costs what do-nothing hooks cost, within the A/A "
         f"noise ({quiet['ours'] / quiet_floor - 1:+.1%}, noise {quiet_noise:.1%})",
         quiet["ours"] / quiet_floor - 1 <= max(quiet_noise, 0.01)),
    ]  # fmt: skip
    print()
    for label, met in targets:
        print(f"{'met   ' if met else 'MISSED'} {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
