"""Ordered routes in one middleware, through real agents on both paths.

`ToolErrorMiddleware.from_routes([...])` reads like a `try` statement's `except` clauses: the
first route whose exception types and tools match a failure handles it; its handler's
`None` re-raises (no falling through); a failure no route matches propagates unchanged.
"""

from __future__ import annotations

import abc
import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage, ContentBlock, InvalidToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphInterrupt
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    MalformedToolCall,
    Route,
    SyncCapable,
    ToolErrorMiddleware,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import (
    Agent,
    Calls,
    Path,
    build_agent,
    call,
    direct_request,
    echo_tool,
    failing_tool,
    run,
    tool_messages,
)
from tests._refusals import Refusal, assert_refused
from tests.conftest import FIGURES


def says(text: str) -> Any:
    """A sync handler that answers `text` and the exception's type."""

    def handler(exc: Exception, request: ToolCallRequest) -> str:
        return f"{text}: {type(exc).__name__}"

    return handler


def asays(text: str) -> Any:
    """An async handler that answers `text` and the exception's type."""

    async def handler(exc: Exception, request: ToolCallRequest) -> str:
        return f"{text}: {type(exc).__name__}"

    return handler


# The classes as code that skips the type checker sees them, for the runtime checks.
Untyped: Any = ToolErrorMiddleware
UntypedRoute: Any = Route

TOOLS = [
    failing_tool("search", TimeoutError("search timed out")),
    failing_tool("lookup", KeyError("record 7")),
    failing_tool("convert", ValueError("bad unit")),
]
CALLS = [call("search", "s"), call("lookup", "l"), call("convert", "c")]


def _contents(middleware: list[Any], path: Path) -> dict[str, object]:
    agent = build_agent(TOOLS, middleware, CALLS)
    return {i: m.content for i, m in tool_messages(run(agent, path)).items()}


def test_specific_middleware_before_a_fallback_loses_to_it_in_a_middleware_list(
    path: Path,
) -> None:
    # The trap routes solve: the last middleware in the list is the innermost, so a
    # catch-all placed last sees every failure first.
    middleware = [
        ToolErrorMiddleware(says("lookup route"), exceptions=KeyError, name="lookup_errors"),
        ToolErrorMiddleware(says("search route"), exceptions=TimeoutError, name="search"),
        ToolErrorMiddleware(says("fallback"), name="fallback"),
    ]

    contents = _contents(middleware, path)

    assert contents == {
        "s": "fallback: TimeoutError",
        "l": "fallback: KeyError",
        "c": "fallback: ValueError",
    }


def test_routes_in_one_middleware_handle_each_failure_by_the_first_match(path: Path) -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, says("lookup route"), tools=["lookup"]),
            Route(TimeoutError, says("search route")),
            Route(Exception, says("fallback")),
        ]
    )

    contents = _contents([middleware], path)

    assert contents == {
        "s": "search route: TimeoutError",
        "l": "lookup route: KeyError",
        "c": "fallback: ValueError",
    }


def test_a_route_matches_by_exception_and_by_tool_together(path: Path) -> None:
    tools = [failing_tool("a", KeyError("x")), failing_tool("b", KeyError("y"))]
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, says("a's keys"), tools=["a"]),
            Route(LookupError, says("lookups")),
        ]
    )
    agent = build_agent(tools, [middleware], [call("a", "1"), call("b", "2")])

    contents = {i: m.content for i, m in tool_messages(run(agent, path)).items()}

    assert contents == {"1": "a's keys: KeyError", "2": "lookups: KeyError"}


def test_none_from_the_matching_route_propagates_without_falling_through(path: Path) -> None:
    error = KeyError("record 7")
    fallback = Calls()
    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, lambda exc, request: None), Route(Exception, fallback.handler)]
    )
    agent = build_agent([failing_tool("lookup", error)], [middleware], [call("lookup", "l")])

    with pytest.raises(KeyError) as raised:
        run(agent, path)

    assert raised.value is error
    assert fallback.seen == []


def test_a_failure_no_route_matches_propagates_unchanged(path: Path) -> None:
    error = ValueError("bad unit")
    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, says("keys")), Route(TimeoutError, says("timeouts"))]
    )
    agent = build_agent([failing_tool("convert", error)], [middleware], [call("convert", "c")])

    with pytest.raises(ValueError, match="bad unit") as raised:
        run(agent, path)

    assert raised.value is error
    assert raised.value.__cause__ is None


def test_the_async_path_uses_a_routes_async_handler_and_the_sync_path_its_sync_one() -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [Route(Exception, says("sync"), aon_error=asays("async"))]
    )
    agent = build_agent(TOOLS[:1], [middleware], CALLS[:1])

    assert tool_messages(run(agent, "sync"))["s"].content == "sync: TimeoutError"
    assert tool_messages(run(agent, "async"))["s"].content == "async: TimeoutError"


@pytest.mark.parametrize(
    "routes",
    [
        [Route(Exception, aon_error=asays("async"))],
        [Route(KeyError, says("sync")), Route(Exception, aon_error=asays("async"))],
    ],
    ids=["async-only routes", "one async-only route"],
)
def test_a_middleware_with_an_async_only_route_refuses_the_sync_path_before_tools_run(
    routes: list[Route[Any]],
) -> None:
    ran: list[str] = []

    def run_tool(request: ToolCallRequest) -> Any:
        ran.append("tool")
        raise TimeoutError

    middleware = ToolErrorMiddleware.from_routes(routes)
    request = direct_request(None, call("search", "s"))

    with pytest.raises(NotImplementedError, match="ainvoke"):
        middleware.wrap_tool_call(request, run_tool)

    assert ran == []
    message = asyncio.run(middleware.awrap_tool_call(request, _araise(TimeoutError())))
    assert isinstance(message, ToolMessage)
    assert message.content == "async: TimeoutError"


def test_an_async_only_route_refuses_the_sync_path_for_a_failure_met_after_the_model() -> None:
    # A reply of only malformed calls runs no tool: the model hook meets the failure, and on
    # the sync path the route's async handler cannot answer it, so the run is refused there
    # too, naming the route, the tool and the fix, where it would otherwise get langchain's
    # answer on invoke and the route's on ainvoke.
    cut = InvalidToolCall(
        name="echo", args='{"query": "x', id="m1", error="cut short", type="invalid_tool_call"
    )

    async def answer(failure: MalformedToolCall, request: ToolCallRequest) -> str:
        return "answered by the route"

    middleware = ToolErrorMiddleware.from_routes([Route(MalformedToolCall, aon_error=answer)])

    def agent() -> Agent:
        script = [AIMessage("", invalid_tool_calls=[cut]), AIMessage("done")]
        built: Agent = create_agent(
            ScriptedChatModel(script=script), tools=[echo_tool()], middleware=[middleware]
        )
        return built

    with pytest.raises(NotImplementedError) as refused:
        run(agent(), "sync")

    message = str(refused.value)
    assert "position 0" in message
    assert "`echo`" in message
    assert "`ainvoke`/`astream`" in message
    assert "sync `on_error`" in message
    assert tool_messages(run(agent(), "async"))["m1"].text == "answered by the route"


def _araise(error: Exception) -> Any:
    async def run_tool(request: ToolCallRequest) -> Any:
        raise error

    return run_tool


def test_fifty_parallel_failures_are_each_answered_by_their_own_route(path: Path) -> None:
    errors: dict[str, Exception] = {
        "t0": KeyError("k"),
        "t1": TimeoutError("t"),
        "t2": ValueError("v"),
        "t3": IndexError("i"),
        "t4": ConnectionError("c"),
    }
    tools = [failing_tool(name, error) for name, error in errors.items()]
    calls = [call(f"t{n % 5}", f"c{n}") for n in range(50)]
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route((KeyError, IndexError), says("lookups")),
            Route(TimeoutError, says("timeouts"), tools=["t1"]),
            Route(ConnectionError, says("network")),
            Route(Exception, says("fallback")),
        ]
    )
    expected = {
        "t0": "lookups: KeyError",
        "t1": "timeouts: TimeoutError",
        "t2": "fallback: ValueError",
        "t3": "lookups: IndexError",
        "t4": "network: ConnectionError",
    }

    messages = tool_messages(run(build_agent(tools, [middleware], calls), path))

    assert {i: m.content for i, m in messages.items()} == {
        f"c{n}": expected[f"t{n % 5}"] for n in range(50)
    }
    assert all(m.status == "error" for m in messages.values())
    FIGURES.append(f"routes ({path}): 50 parallel failing calls, each answered by its route")


def test_successes_pass_through_a_routed_middleware_untouched(path: Path) -> None:
    middleware = ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)])
    agent = build_agent([echo_tool()], [middleware], [call("echo", "e", query="hi")])

    message = tool_messages(run(agent, path))["e"]

    assert (message.content, message.status) == ("echo: hi", "success")


def test_a_routes_handler_returning_no_content_is_refused_chained_to_the_tool_error(
    path: Path,
) -> None:
    error = KeyError("k")

    def returns_int(exc: Exception, request: ToolCallRequest) -> int:
        return 42

    middleware = Untyped.from_routes([UntypedRoute(KeyError, returns_int)])
    agent = build_agent([failing_tool("lookup", error)], [middleware], [call("lookup", "l")])

    with pytest.raises(TypeError, match="on_error") as raised:
        run(agent, path)

    assert raised.value.__cause__ is error


def test_a_graph_interrupt_is_refused_as_a_route_exception() -> None:
    with pytest.raises(ValueError, match="GraphInterrupt"):
        Route(GraphInterrupt, says("never"))


def test_blocks_and_text_routes_mix_in_one_middleware() -> None:
    def blocks(exc: Exception, request: ToolCallRequest) -> list[ContentBlock]:
        return [{"type": "text", "text": "blocks"}]

    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, says("text")), Route(Exception, blocks)]
    )
    agent = build_agent(TOOLS[:2], [middleware], CALLS[:2])

    contents = {i: m.content for i, m in tool_messages(run(agent, "sync")).items()}

    assert contents == {"s": [{"type": "text", "text": "blocks"}], "l": "text: KeyError"}


def test_the_routes_are_readable_back_in_order() -> None:
    first, last = Route(KeyError, says("k"), tools=["lookup"]), Route(Exception, says("e"))

    middleware = ToolErrorMiddleware.from_routes((first, last), name="errors")

    assert middleware.routes == (first, last)
    assert (middleware.on_error, middleware.aon_error, middleware.selected_tools) == (
        None,
        None,
        None,
    )
    assert middleware.exceptions == (Exception,)  # what its `except` clause catches
    assert first.selected_tools == frozenset({"lookup"})
    assert "ToolErrorMiddleware.from_routes([Route(('KeyError',)" in repr(middleware)


def test_a_single_handler_middleware_is_one_route() -> None:
    middleware = ToolErrorMiddleware(report_type_only, exceptions=KeyError, tools=["lookup"])

    [route] = middleware.routes

    assert (route.exceptions, route.on_error, route.selected_tools) == (
        (KeyError,),
        report_type_only,
        frozenset({"lookup"}),
    )


def _handler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


async def _ahandler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


# Each wrong configuration, typed `Any` as code that skips the type checker would pass it:
# (what is given, the error it raises, words the message must hold).
BAD_ROUTES: dict[str, Refusal] = {
    "routes empty": (lambda: Untyped.from_routes([]), ValueError, "at least one Route"),
    "routes not a list": (
        lambda: Untyped.from_routes(UntypedRoute(Exception, _handler)),
        TypeError,
        "list or tuple of Route",
    ),
    "an element not a Route": (
        lambda: Untyped.from_routes([_handler]),
        TypeError,
        "routes[0] is function, not a Route",
    ),
    "the same exception twice": (
        lambda: Untyped.from_routes(
            [UntypedRoute(KeyError, _handler), UntypedRoute(KeyError, _handler)]
        ),
        ValueError,
        "routes[1]",
    ),
    "a subclass after its base": (
        lambda: Untyped.from_routes(
            [
                UntypedRoute(LookupError, _handler),
                UntypedRoute((KeyError, IndexError), _handler),
            ]
        ),
        ValueError,
        "can never match",
    ),
    "a route for some tools after one for all": (
        lambda: Untyped.from_routes(
            [
                UntypedRoute(Exception, _handler),
                UntypedRoute(KeyError, _handler, tools=["lookup"]),
            ]
        ),
        ValueError,
        "routes[0]",
    ),
    "a route whose exceptions two earlier routes catch together": (
        lambda: Untyped.from_routes(
            [
                UntypedRoute(KeyError, _handler),
                UntypedRoute(ValueError, _handler),
                UntypedRoute((KeyError, ValueError), _handler),
            ]
        ),
        ValueError,
        "routes[2] (Route(('KeyError', 'ValueError')",
    ),
    "a route whose tools two earlier routes cover together": (
        lambda: Untyped.from_routes(
            [
                UntypedRoute(KeyError, _handler, tools=["lookup"]),
                UntypedRoute(LookupError, _handler, tools=["search"]),
                UntypedRoute(KeyError, _handler, tools=["search", "lookup"]),
            ]
        ),
        ValueError,
        "routes[0] and routes[1] come first and together catch",
    ),
    "routes= given to the one-handler constructor": (
        lambda: Untyped(_handler, routes=[UntypedRoute(Exception, _handler)]),
        TypeError,
        "ToolErrorMiddleware.from_routes(",
    ),
    "routes= alone": (
        lambda: Untyped(routes=[UntypedRoute(Exception, _handler)]),
        TypeError,
        "ToolErrorMiddleware.from_routes(",
    ),
    "from_routes with a handler": (
        lambda: Untyped.from_routes([UntypedRoute(Exception, _handler)], on_error=_handler),
        TypeError,
        "on_error",
    ),
    "a route for the same tools as an earlier, wider one": (
        lambda: Untyped.from_routes(
            [
                UntypedRoute(LookupError, _handler, tools=["lookup", "search"]),
                UntypedRoute(KeyError, _handler, tools=["search", "lookup"]),
            ]
        ),
        ValueError,
        "routes[1]",
    ),
    "a route whose on_error cannot be called": (
        lambda: UntypedRoute(KeyError, 42),
        TypeError,
        "`on_error` must be callable",
    ),
    "a route whose aon_error cannot be called": (
        lambda: UntypedRoute(KeyError, _handler, aon_error="later"),
        TypeError,
        "`aon_error` must be callable",
    ),
    "a route with no handler": (
        lambda: UntypedRoute(KeyError),
        ValueError,
        "Route() was given no handler",
    ),
    "a route with an async on_error": (
        lambda: UntypedRoute(KeyError, _ahandler),
        TypeError,
        "aon_error",
    ),
    "a route with tools as a str": (
        lambda: UntypedRoute(KeyError, _handler, tools="lookup"),
        TypeError,
        "tools",
    ),
    "a route with no exception types": (
        lambda: UntypedRoute((), _handler),
        ValueError,
        "selects no exception",
    ),
}


@pytest.mark.parametrize("case", BAD_ROUTES)
def test_a_wrong_routes_configuration_fails_at_construction(case: str) -> None:
    assert_refused(BAD_ROUTES[case])


# Routes after narrower ones that still match some failure: (the routes, what reaches the
# last one).
REACHABLE: dict[str, list[Route[SyncCapable]]] = {
    "a fallback after routes for some tools": [
        Route(KeyError, _handler, tools=["lookup"]),
        Route(KeyError, _handler, tools=["search"]),
        Route(Exception, _handler),
    ],
    "a route for two types, one of them only caught for one tool": [
        Route(KeyError, _handler, tools=["lookup"]),
        Route(ValueError, _handler),
        Route((KeyError, ValueError), _handler),
    ],
    "a route for more tools than the earlier ones cover together": [
        Route(KeyError, _handler, tools=["lookup"]),
        Route(KeyError, _handler, tools=["search"]),
        Route(KeyError, _handler, tools=["lookup", "fetch"]),
    ],
    "a route for a base of the earlier routes' types": [
        Route(KeyError, _handler),
        Route(IndexError, _handler),
        Route(LookupError, _handler),
    ],
}


@pytest.mark.parametrize("case", REACHABLE)
def test_a_route_that_some_failure_reaches_is_accepted(case: str) -> None:
    middleware = ToolErrorMiddleware.from_routes(REACHABLE[case])

    assert middleware.routes == tuple(REACHABLE[case])


def test_repeated_failures_are_routed_the_same_each_time(path: Path) -> None:
    # The middleware remembers the route of each (exception type, tool) pair it has seen.
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, says("lookup's keys"), tools=["lookup"]),
            Route(TimeoutError, lambda exc, request: None),
            Route(LookupError, says("other lookups")),
        ]
    )
    tools = [failing_tool("lookup", KeyError("k")), failing_tool("find", KeyError("k"))]
    calls = [call("lookup", "a"), call("find", "b"), call("lookup", "c"), call("find", "d")]

    for _ in range(2):
        contents = {
            i: m.content
            for i, m in tool_messages(run(build_agent(tools, [middleware], calls), path)).items()
        }
        assert contents == {
            "a": "lookup's keys: KeyError",
            "b": "other lookups: KeyError",
            "c": "lookup's keys: KeyError",
            "d": "other lookups: KeyError",
        }
    for _ in range(2):
        agent = build_agent(
            [failing_tool("slow", TimeoutError())], [middleware], [call("slow", "s")]
        )
        with pytest.raises(TimeoutError):
            run(agent, path)


@pytest.mark.parametrize("fallback", ["Exception", "another ABC"])
def test_a_route_for_an_abc_sees_classes_registered_after_a_first_failure(fallback: str) -> None:
    class Retryable(Exception, metaclass=abc.ABCMeta):
        """Exceptions registered as worth another try."""

    class Reportable(Exception, metaclass=abc.ABCMeta):
        """Exceptions registered as safe to report."""

    class Flaky(Exception):
        pass

    Reportable.register(Flaky)
    wide = Exception if fallback == "Exception" else Reportable
    middleware = ToolErrorMiddleware.from_routes(
        [Route(Retryable, says("retry")), Route(wide, says("other"))]
    )
    request = direct_request(None, call("search", "s"))

    def fail(request: ToolCallRequest) -> Any:
        raise Flaky

    before = middleware.wrap_tool_call(request, fail)
    Retryable.register(Flaky)
    after = middleware.wrap_tool_call(request, fail)

    assert isinstance(before, ToolMessage)
    assert isinstance(after, ToolMessage)
    assert (before.content, after.content) == ("other: Flaky", "retry: Flaky")


def test_exceptions_an_abc_selects_are_its_registered_classes_too(path: Path) -> None:
    # An `except` clause matches by real inheritance only; the middleware must not.
    class Retryable(Exception, metaclass=abc.ABCMeta):
        """Exceptions registered as worth another try."""

    class Flaky(Exception):
        pass

    class Broken(Exception):
        pass

    Retryable.register(Flaky)
    middleware = ToolErrorMiddleware(says("retry"), exceptions=Retryable)
    flaky = build_agent([failing_tool("a", Flaky())], [middleware], [call("a", "1")])
    broken_error = Broken()
    broken = build_agent([failing_tool("b", broken_error)], [middleware], [call("b", "2")])

    handled = run(flaky, path)
    with pytest.raises(Broken) as raised:
        run(broken, path)

    assert [m.content for m in handled["messages"] if isinstance(m, ToolMessage)] == [
        "retry: Flaky"
    ]
    assert raised.value is broken_error


def test_a_routes_repr_shows_its_exceptions_tools_and_budget() -> None:
    plain = Route((KeyError, IndexError), _handler, tools=["search", "lookup"])
    budgeted = Route(KeyError, _handler, budget=ErrorBudget(per_tool=2))

    assert repr(plain).startswith("Route(('KeyError', 'IndexError'), on_error=")
    assert repr(plain).endswith("aon_error=None, tools=['lookup', 'search'])")
    assert repr(budgeted).endswith(
        "tools=None, budget=ErrorBudget(per_tool=2, per_run=None, when_spent='stop'))"
    )


def _needs_a_record_id() -> BaseTool:
    """A tool with a required `int` argument: a call without it has invalid arguments."""

    def lookup(record_id: int) -> str:
        return f"record {record_id}"

    return StructuredTool.from_function(lookup, description="Look a record up.")


def test_a_route_for_a_failure_kind_and_an_exception_handles_both(path: Path) -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [Route((InvalidArguments, TimeoutError), says("routed"))]
    )
    agent = build_agent(
        [_needs_a_record_id(), TOOLS[0]], [middleware], [call("lookup", "l"), call("search", "s")]
    )

    contents = {i: m.content for i, m in tool_messages(run(agent, path)).items()}

    assert contents == {"l": "routed: InvalidArguments", "s": "routed: TimeoutError"}
