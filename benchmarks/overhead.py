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
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.types import Command

# langsmith's `traceable` overloads leave some parameters unannotated, which pyright strict
# reports as partially unknown.
from langsmith import traceable  # pyright: ignore[reportUnknownVariableType]
from typing_extensions import override

import langchain_tool_errors
from _langchain_tool_errors.scripted_model import ScriptedChatModel
from langchain_tool_errors import (
    ErrorBudget,
    RepairableFailure,
    RepeatedCall,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_kind_only

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


def _succeed(request: ToolCallRequest) -> Result:
    return SUCCESS


def _fail(request: ToolCallRequest) -> Result:
    raise TimeoutError("upstream timed out")


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


def _hook(
    hook: Callable[[ToolCallRequest, Any], _R], handler: Any, request: ToolCallRequest = REQUEST
) -> Callable[[], _R]:
    """A hook bound once, as `create_agent` binds it when it builds the agent, then called."""
    return lambda: hook(request, handler)


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


FEATURES = (
    "a budget",
    "a 'tell' budget",
    "an 'interrupt' budget",
    "a consecutive budget",
    "a route for repeats",
    "a record",
    "a listener",
)
"""The features that make a middleware watch every result: each has a success and a
handled-failure row, checked against the same targets."""


def _featured() -> dict[str, tuple[ToolErrorMiddleware[Any, Any, Any], ToolCallRequest]]:
    """A middleware for each feature, with the request its calls come with."""
    never = 10**9  # a budget that is never spent: its counting, not its stop, is measured
    return {
        "a budget": (ToolErrorMiddleware(_explain, budget=ErrorBudget(per_tool=never)), REQUEST),
        "a 'tell' budget": (
            ToolErrorMiddleware(_explain, budget=ErrorBudget(per_tool=never, when_spent="tell")),
            REQUEST,
        ),
        "an 'interrupt' budget": (
            ToolErrorMiddleware(
                _explain, budget=ErrorBudget(per_tool=never, when_spent="interrupt")
            ),
            REQUEST,
        ),
        # In a run, so that a success can end its tool's failures in a row.
        "a consecutive budget": (
            ToolErrorMiddleware(_explain, budget=ErrorBudget(consecutive=never)),
            IN_A_RUN,
        ),
        "a route for repeats": (
            ToolErrorMiddleware.from_routes(
                [Route(RepeatedCall, report_kind_only), Route(Exception, _explain)]
            ),
            REQUEST,
        ),
        "a record": (ToolErrorMiddleware(_explain, record_failures=True), REQUEST),
        "a listener": (ToolErrorMiddleware(_explain, listeners=[_listen]), REQUEST),
    }


def hook_figures(number: int, rounds: int) -> tuple[list[Figure], dict[str, float]]:
    """The per-call figures of the tool-call hooks, sync and async."""
    ours = ToolErrorMiddleware(_explain)
    theirs = LangchainToolErrorMiddleware(_explain)
    names = [f"tool_{i}" for i in range(1000)] + ["search"]
    ours_filtered = ToolErrorMiddleware(_explain, tools=names)
    # Twenty routes, the failure matching only the last: 19 exception types it is not.
    others = [type(f"NotRaised{i}", (Exception,), {}) for i in range(19)]
    ours_routes = ToolErrorMiddleware.from_routes(
        [*(Route(other, _explain) for other in others), Route(Exception, _explain)]
    )
    # A budget, the record and an async listener at once, on the async path.
    ours_all = ToolErrorMiddleware(
        _explain, budget=ErrorBudget(per_tool=10**9), record_failures=True, listeners=[_alisten]
    )
    featured = _featured()
    sync_variants = {
        "direct": _loop(lambda: _succeed(REQUEST)),
        "ours": _loop(_hook(ours.wrap_tool_call, _succeed)),
        "theirs": _loop(_hook(theirs.wrap_tool_call, _succeed)),
        "ours 1001": _loop(_hook(ours_filtered.wrap_tool_call, _succeed)),
        "ours error": _loop(_hook(ours.wrap_tool_call, _fail)),
        "theirs error": _loop(_hook(theirs.wrap_tool_call, _fail)),
        "ours 20 routes error": _loop(_hook(ours_routes.wrap_tool_call, _fail)),
    }
    for feature, (middleware, request) in featured.items():
        sync_variants[feature] = _loop(_hook(middleware.wrap_tool_call, _succeed, request))
        sync_variants[f"{feature} error"] = _loop(_hook(middleware.wrap_tool_call, _fail, request))
    loop = asyncio.new_event_loop()
    try:
        sync = _best_per_call(sync_variants, number, rounds)
        asyn = _best_per_call(
            {
                "direct": _aloop(loop, lambda: _asucceed(REQUEST)),
                "ours": _aloop(loop, _hook(ours.awrap_tool_call, _asucceed)),
                "theirs": _aloop(loop, _hook(theirs.awrap_tool_call, _asucceed)),
                "ours error": _aloop(loop, _hook(ours.awrap_tool_call, _afail)),
                "theirs error": _aloop(loop, _hook(theirs.awrap_tool_call, _afail)),
                "ours all": _aloop(loop, _hook(ours_all.awrap_tool_call, _asucceed)),
                "ours all error": _aloop(loop, _hook(ours_all.awrap_tool_call, _afail)),
            },
            number,
            rounds,
        )
    finally:
        loop.close()
    us = 1e6
    error = "theirs error"
    figures = [
        Figure("success path: overhead over the bare call", *_over(sync, "direct", us)),
        Figure("handled-error path: per call", sync["ours error"] * us, sync[error] * us),
        Figure(
            "handled-error path, 20 routes, the last matching",
            sync["ours 20 routes error"] * us,
            sync[error] * us,
        ),
        Figure("async success path: overhead over the bare call", *_over(asyn, "direct", us)),
        Figure("async handled-error path: per call", asyn["ours error"] * us, asyn[error] * us),
    ]
    for feature in FEATURES:
        figures.append(
            Figure(f"success path with {feature}: overhead", *_over(sync, "direct", us, feature))
        )
        figures.append(
            Figure(
                f"handled failure with {feature}", sync[f"{feature} error"] * us, sync[error] * us
            )
        )
    figures += [
        Figure(
            "async success path with a budget, record and async listener: overhead",
            *_over(asyn, "direct", us, ours="ours all"),
        ),
        Figure(
            "async handled failure with a budget, record and async listener",
            asyn["ours all error"] * us,
            asyn[error] * us,
        ),
    ]
    extra = {
        "ours filtered/unfiltered": sync["ours 1001"] / sync["ours"],
        "bare call": sync["direct"] * us,
    }
    return figures, extra


def _over(
    best: dict[str, float], base: str, scale: float, ours: str = "ours", theirs: str = "theirs"
) -> tuple[float, float]:
    """Ours and theirs as overheads over `base`, scaled (to microseconds)."""
    return (best[ours] - best[base]) * scale, (best[theirs] - best[base]) * scale


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
    dominated by the thread pool's scheduling. The async turn runs coroutine tools with
    `ainvoke` on one event loop.
    """

    def turn(middleware: AgentMiddleware[Any, Any, Any] | None, failing_tool: str) -> Any:
        chosen = [] if middleware is None else [middleware]
        return _turn(chosen, failing_tool, asynchronous=asynchronous)

    agents = {
        "ours": turn(ToolErrorMiddleware(_explain, exceptions=ToolException), "fragile"),
        "ours featured": turn(
            ToolErrorMiddleware(
                _explain,
                exceptions=ToolException,
                budget=ErrorBudget(per_tool=10**9),
                record_failures=True,
                listeners=[_alisten if asynchronous else _listen],
            ),
            "fragile",
        ),
        "theirs": turn(LangchainToolErrorMiddleware(_explain), "fragile"),
        "bare converter": turn(BareConverter(), "fragile"),
        # No middleware: the failing tools handle their own ToolException instead.
        "none": turn(None, "fragile_handled"),
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

    variants = {
        "bare": _loop(lambda: _call_model(clean)),
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
    for path, turn in turns.items():
        figures.append(Figure(f"{path} agent turn, 50 calls, half failing", *_ms(turn, "ours")))
        figures.append(
            Figure(
                f"{path} agent turn with a budget, record and listener", *_ms(turn, "ours featured")
            )
        )
    marking = model_hook_figures(number // 10, rounds)
    quiet = quiet_run_figures(3 if quick else 30)
    imports = import_figures(3 if quick else 10)

    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(f"{number:,} calls x {rounds} rounds per hook figure, best round")
    print("per call: microseconds over the bare call (success) or per call (failure);")
    print("per turn: CPU milliseconds, best of the rounds\n")
    print(f"{'figure':<66}{'ours':>10}{'langchain':>12}{'ratio':>8}")
    for f in figures:
        print(f"{f.name:<66}{f.ours:>8.2f}{f.unit}{f.theirs:>10.2f}{f.unit}{f.ratio:>8.2f}")
    for path, turn in turns.items():
        print(
            f"{f'  the {path} turn: no middleware / a bare converter':<66}"
            f"{turn['none']:>8.2f}ms{turn['bare converter']:>10.2f}ms"
        )
    print(
        f"{'1,001-name tools= filter, success path: whole call / unfiltered':<66}"
        f"{extra['ours filtered/unfiltered']:>10.2f}"
    )
    print(
        f"{'model call, 20 messages, none an error: our hook':<66}"
        f"{marking['ours clean'] - marking['bare']:>8.2f}us   over the bare call"
    )
    print(
        f"{'model call, 20 messages, 5 errors marked: our hook':<66}"
        f"{marking['ours errors'] - marking['bare']:>8.2f}us   over the bare call"
    )
    print(
        f"{'model reply of 5 valid calls: repair= checks them':<66}"
        f"{marking['ours calls repair'] - marking['ours calls']:>8.2f}us   over our hook without it"
    )
    print(
        f"{'model hook as create_agent calls it (traceable)':<66}{marking['traced ours']:>8.2f}us"
        f"{marking['traced nothing']:>10.2f}us   (a do-nothing model hook)"
    )
    quiet_noise = abs(quiet["do-nothing A"] / quiet["do-nothing B"] - 1)
    print(
        f"{'sync run, 10 calls, none failing (CPU ms)':<66}{quiet['ours']:>8.2f}ms"
        f"{quiet['none']:>10.2f}ms   (no middleware)"
    )
    print(
        f"{'  do-nothing tool and model hooks A / B':<66}{quiet['do-nothing A']:>8.2f}ms"
        f"{quiet['do-nothing B']:>10.2f}ms   A/A noise {quiet_noise:.1%}"
    )
    print(f"{'import beyond langchain.agents.middleware (ms)':<66}{imports['import']:>8.2f}ms")
    compiling = imports["import, compiling"]
    print(f"{'  the same, compiling the source (no bytecode yet)':<66}{compiling:>8.2f}ms")

    print()
    ratios = {f.name: f.ratio for f in figures}
    for name, limit in targets():
        ratio = ratios[name]
        verdict = "met   " if ratio <= limit else "MISSED"
        print(f"{verdict} {name} <= {limit} x langchain's ({ratio:.2f})")
    return 0


def targets() -> list[tuple[str, float]]:
    """Each figure with a target, and its limit as a ratio to langchain's class.

    Guards against a regression users would feel, not races: an agent turn, and per call
    what each configuration adds.
    """
    limits = [
        ("success path: overhead over the bare call", 1.0),
        ("async success path: overhead over the bare call", 1.0),
        ("handled-error path: per call", 1.5),
        ("async handled-error path: per call", 1.5),
        ("handled-error path, 20 routes, the last matching", 1.5),
    ]
    for feature in FEATURES:
        limits.append((f"success path with {feature}: overhead", 2.0))
        limits.append((f"handled failure with {feature}", 2.5))
    limits.append(("async success path with a budget, record and async listener: overhead", 2.0))
    limits.append(("async handled failure with a budget, record and async listener", 2.5))
    for path in ("sync", "async"):
        limits.append((f"{path} agent turn, 50 calls, half failing", 1.05))
        limits.append((f"{path} agent turn with a budget, record and listener", 1.2))
    return limits


def _ms(turn: dict[str, float], ours: str) -> tuple[float, float, str]:
    """An agent turn's figure: ours and langchain's, in milliseconds."""
    return turn[ours], turn["theirs"], "ms"


if __name__ == "__main__":
    raise SystemExit(main())
