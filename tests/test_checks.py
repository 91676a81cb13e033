"""The runtime checks that mirror the static guarantees, for code that skips the type checker.

Each wrong input is a row: what was passed, the exception expected, and words the message
must contain (the argument's name, what was given, the fix).
"""

from __future__ import annotations

import functools
import gc
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphInterrupt
from langgraph.prebuilt.tool_node import ToolCallRequest

# The package's Route, named apart from this module's own (a handler and a path).
from langchain_tool_errors import InvalidArguments, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors import Route as ExceptClause
from langchain_tool_errors.handlers import alog_handled, log_handled
from tests._agents import Path, build_agent, call, echo_tool, failing_tool, run, tool_messages
from tests._processes import ROOT
from tests.conftest import FIGURES


def sync_handler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


async def async_handler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


async def async_generator_handler(exc: Exception, request: ToolCallRequest) -> AsyncIterator[str]:
    yield "handled"


class AsyncCallable:
    async def __call__(self, exc: Exception, request: ToolCallRequest) -> str:
        return "handled"


class AsyncGeneratorCallable:
    async def __call__(self, exc: Exception, request: ToolCallRequest) -> AsyncIterator[str]:
        yield "handled"


class SyncCallable:
    def __call__(self, exc: Exception, request: ToolCallRequest) -> str:
        return "handled"


class Explanation:
    def __init__(self, exc: Exception, request: ToolCallRequest) -> None:
        self.text = str(exc)


def one_argument(exc: Exception) -> str:
    return "handled"


def three_arguments(a: object, b: object, c: object) -> str:
    return "handled"


def keyword_only(*, exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


def any_arguments(*given: object) -> str:
    return "handled"


def repair_with_the_request(failure: object, request: object) -> None:
    return None


class UnreadableHandler:
    """A handler whose signature `inspect` cannot read, as some builtins' cannot be."""

    __signature__ = "not a signature"

    def __call__(self, exc: Exception, request: ToolCallRequest) -> str:
        return "handled"


def with_a_logger(
    handler: Callable[[Exception, ToolCallRequest, list[str]], str],
) -> Callable[[Exception, ToolCallRequest], str]:
    """A decorator that hands the handler one more argument: `functools.wraps` copies the
    handler's signature onto the wrapper, which takes two."""
    log: list[str] = []

    @functools.wraps(handler)
    def wrapper(exc: Exception, request: ToolCallRequest) -> str:
        return handler(exc, request, log)

    return wrapper


def explain_with_a_logger(exc: Exception, request: ToolCallRequest, log: list[str]) -> str:
    log.append(type(exc).__name__)
    return "handled"


@dataclass(frozen=True)
class BadConstruction:
    """A constructor call that must fail, and how."""

    kwargs: Mapping[str, Any]
    error: type[Exception]
    words: tuple[str, ...]
    constructor: Callable[..., object] = ToolErrorMiddleware


CONSTRUCTION = {
    "on_error not callable": BadConstruction(
        {"on_error": 42}, TypeError, ("`on_error`", "42 (int)", "callable")
    ),
    "aon_error not callable": BadConstruction(
        {"aon_error": "handler"}, TypeError, ("`aon_error`", "'handler' (str)", "callable")
    ),
    "async function as on_error": BadConstruction(
        {"on_error": async_handler},
        TypeError,
        ("`on_error`", "async_handler", "ToolErrorMiddleware(aon_error=...)"),
    ),
    "async function as a route's on_error": BadConstruction(
        {"exceptions": KeyError, "on_error": async_handler},
        TypeError,
        ("`on_error`", "async_handler", "Route(..., aon_error=...)"),
        constructor=ExceptClause,
    ),
    "partial of an async function as a route's on_error": BadConstruction(
        {"exceptions": KeyError, "on_error": functools.partial(async_handler)},
        TypeError,
        ("`on_error`", "Route(..., aon_error=...)"),
        constructor=ExceptClause,
    ),
    "object with an async __call__ as a route's on_error": BadConstruction(
        {"exceptions": KeyError, "on_error": AsyncCallable()},
        TypeError,
        ("`on_error`", "AsyncCallable", "Route(..., aon_error=...)"),
        constructor=ExceptClause,
    ),
    "partial of an async function as on_error": BadConstruction(
        {"on_error": functools.partial(async_handler)}, TypeError, ("`on_error`", "aon_error=")
    ),
    "object with an async __call__ as on_error": BadConstruction(
        {"on_error": AsyncCallable()}, TypeError, ("`on_error`", "AsyncCallable", "aon_error=")
    ),
    "async generator as on_error": BadConstruction(
        {"on_error": async_generator_handler}, TypeError, ("`on_error`", "aon_error=")
    ),
    "partial of an object with an async __call__ as on_error": BadConstruction(
        {"on_error": functools.partial(AsyncCallable())}, TypeError, ("`on_error`", "aon_error=")
    ),
    "object whose __call__ is an async generator as on_error": BadConstruction(
        {"on_error": AsyncGeneratorCallable()}, TypeError, ("`on_error`", "aon_error=")
    ),
    "tools as a bare string": BadConstruction(
        {"on_error": sync_handler, "tools": "search"},
        TypeError,
        ("`tools`", "'search' (str)", "tools=['search']"),
    ),
    "tools as bytes": BadConstruction(
        {"on_error": sync_handler, "tools": b"search"}, TypeError, ("`tools`", "(bytes)")
    ),
    "tools as a set": BadConstruction(
        {"on_error": sync_handler, "tools": {"search"}},
        TypeError,
        ("`tools`", "(set)", "tools=list("),
    ),
    "tools as a single tool": BadConstruction(
        {"on_error": sync_handler, "tools": echo_tool("search")},
        TypeError,
        ("`tools`", "(StructuredTool)", "tools=[StructuredTool("),
    ),
    "tools holding a number": BadConstruction(
        {"on_error": sync_handler, "tools": ["search", 1]},
        TypeError,
        ("`tools[1]`", "1 (int)", "BaseTool"),
    ),
    "tools empty": BadConstruction(
        {"on_error": sync_handler, "tools": []}, ValueError, ("`tools=[]`", "tools=None")
    ),
    "exceptions as a string": BadConstruction(
        {"on_error": sync_handler, "exceptions": "ValueError"},
        TypeError,
        ("`exceptions`", "'ValueError' (str)", "exceptions=ValueError"),
    ),
    "exceptions as an instance": BadConstruction(
        {"on_error": sync_handler, "exceptions": ValueError("x")},
        TypeError,
        ("`exceptions`", "(ValueError)", "Exception subclass"),
    ),
    "exceptions tuple holding a non-type": BadConstruction(
        {"on_error": sync_handler, "exceptions": (ValueError, 1)}, TypeError, ("`exceptions`",)
    ),
    "exceptions not an Exception subclass": BadConstruction(
        {"on_error": sync_handler, "exceptions": KeyboardInterrupt},
        TypeError,
        ("`exceptions`", "KeyboardInterrupt", "Exception subclass"),
    ),
    "exceptions empty": BadConstruction(
        {"on_error": sync_handler, "exceptions": ()}, ValueError, ("`exceptions=()`",)
    ),
    "exceptions naming a control-flow signal": BadConstruction(
        {"on_error": sync_handler, "exceptions": GraphInterrupt},
        ValueError,
        ("`exceptions`", "GraphInterrupt", "always propagate"),
    ),
    "name not a string": BadConstruction(
        {"on_error": sync_handler, "name": 7}, TypeError, ("`name`", "7 (int)", "name=")
    ),
    "name empty": BadConstruction(
        {"on_error": sync_handler, "name": ""}, TypeError, ("`name`", "non-empty")
    ),
    "error_prefix not a string": BadConstruction(
        {"on_error": sync_handler, "error_prefix": False},
        TypeError,
        ("`error_prefix`", "False (bool)", "error_prefix=None"),
    ),
    "error_prefix empty": BadConstruction(
        {"on_error": sync_handler, "error_prefix": ""},
        ValueError,
        ("`error_prefix`", "error_prefix=None"),
    ),
    "on_error taking one argument": BadConstruction(
        {"on_error": one_argument},
        TypeError,
        (
            "`on_error` <function one_argument",
            "cannot be called as on_error(exc, request): it takes (exc).",
            "called with 2 positional arguments, such as `def explain(exc: Exception, ",
        ),
    ),
    "aon_error taking three arguments": BadConstruction(
        {"aon_error": functools.partial(three_arguments)},
        TypeError,
        ("`aon_error`", "takes (a, b, c).", "async def explain(exc: Exception, "),
    ),
    "a route's on_error with keyword-only parameters": BadConstruction(
        {"exceptions": KeyError, "on_error": keyword_only},
        TypeError,
        ("`on_error`", "takes (*, exc, request).", "def explain(exc: Exception, "),
        constructor=ExceptClause,
    ),
    "a class whose instances take the arguments as on_error": BadConstruction(
        {"on_error": SyncCallable}, TypeError, ("`on_error`", "SyncCallable", "takes ().")
    ),
    "no handler": BadConstruction({}, TypeError, ("on_error", "aon_error")),
    "None as the only handler": BadConstruction(
        {"on_error": None}, ValueError, ("on_error", "aon_error")
    ),
}


@pytest.mark.parametrize("case", CONSTRUCTION.values(), ids=CONSTRUCTION.keys())
def test_wrong_constructor_arguments_fail_at_construction(case: BadConstruction) -> None:
    with pytest.raises(case.error) as raised:
        case.constructor(**case.kwargs)

    for word in case.words:
        assert word in str(raised.value)


def test_handlers_that_are_fine_construct() -> None:
    ToolErrorMiddleware(functools.partial(sync_handler))
    ToolErrorMiddleware(SyncCallable())
    ToolErrorMiddleware(functools.partial(SyncCallable()))
    a_class: Any = Explanation  # calling a class builds an instance, never a coroutine
    ToolErrorMiddleware(a_class)
    ToolErrorMiddleware(any_arguments)  # it takes any number of them
    ToolErrorMiddleware(UnreadableHandler())  # its signature cannot be read: trusted
    ToolErrorMiddleware(with_a_logger(explain_with_a_logger))  # the wrapper is what is called
    ToolErrorMiddleware(aon_error=AsyncCallable())
    ToolErrorMiddleware(aon_error=functools.partial(async_handler))
    ToolErrorMiddleware(sync_handler, exceptions=(ValueError, KeyError), tools=("a", "b"))


@dataclass(frozen=True)
class Route:
    """Which handler gives the bad return, and on which execution path."""

    argument: str
    path: Path


ROUTES = {
    "on_error, sync path": Route("on_error", "sync"),
    "on_error, async path": Route("on_error", "async"),
    "aon_error, async path": Route("aon_error", "async"),
}


def _middleware_returning(value: Callable[[], object], route: Route) -> ToolErrorMiddleware:
    """A middleware whose `route.argument` handler returns `value()` (a new one per call)."""

    def on_error(exc: Exception, request: ToolCallRequest) -> Any:
        return value()

    async def aon_error(exc: Exception, request: ToolCallRequest) -> Any:
        return value()

    if route.argument == "on_error":
        return ToolErrorMiddleware(on_error)
    return ToolErrorMiddleware(aon_error=aon_error)


async def _coroutine() -> str:
    return "content"


BAD_RETURNS: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    "int": (lambda: 42, ("42 (int)",)),
    "bool": (lambda: False, ("False (bool)",)),
    "dict": (lambda: {"a": 1}, ("(dict)",)),
    "bytes": (lambda: b"secret", ("(bytes)",)),
    "float": (lambda: 1.5, ("1.5 (float)",)),
    "object": (object, ("(object)",)),
    "list of ints": (lambda: [1, 2], ("item 0", "1 (int)")),
    "list of strings": (lambda: ["plain"], ("item 0", "'plain' (str)")),
    "block without a type": (lambda: [{"text": "x"}], ("item 0", '"type"')),
    "block with a non-string type": (lambda: [{"type": 1, "text": "x"}], ("item 0",)),
    "nested list": (lambda: [[{"type": "text", "text": "x"}]], ("item 0", "(list)")),
    "tuple holding a non-block": (lambda: ({"type": "text", "text": "ok"}, 3), ("item 1",)),
    "a coroutine": (_coroutine, ("awaitable (coroutine)", "aon_error=")),
}

FIGURES.append(
    f"bad-input matrix: {len(CONSTRUCTION)} constructor rows, {len(BAD_RETURNS)} handler-return "
    f"rows x {len(ROUTES)} routes = {len(CONSTRUCTION) + len(BAD_RETURNS) * len(ROUTES)} cases"
)


def test_the_reliability_guide_gives_the_matrix_as_it_is() -> None:
    guide = (ROOT / "docs" / "guides" / "reliability.md").read_text()
    cases = len(CONSTRUCTION) + len(BAD_RETURNS) * len(ROUTES)
    assert (
        f"| bad-input matrix | {len(CONSTRUCTION)} constructor rows; {len(BAD_RETURNS)} "
        f"handler-return rows × {len(ROUTES)} routes"
    ) in guide
    assert f"= {cases} cases |" in guide


@pytest.mark.parametrize("route", ROUTES.values(), ids=ROUTES.keys())
@pytest.mark.parametrize(("value", "words"), BAD_RETURNS.values(), ids=BAD_RETURNS.keys())
def test_a_handler_return_that_is_not_content_fails_chained_and_reaches_no_model(
    route: Route, value: Callable[[], object], words: tuple[str, ...]
) -> None:
    tool_error = ConnectionError("db down")
    checkpointer = InMemorySaver()
    agent = build_agent(
        [failing_tool("search", tool_error)],
        [_middleware_returning(value, route)],
        [call("search", "c1")],
        checkpointer=checkpointer,
    )
    config: Any = {"configurable": {"thread_id": "bad-return"}}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError) as raised:
            run(agent, route.path, config=config)
        gc.collect()

    assert raised.value.__cause__ is tool_error
    assert f"`{route.argument}`" in str(raised.value)
    for word in words:
        assert word in str(raised.value)
    assert _tool_messages_saved(checkpointer, config) == []
    assert [w for w in caught if "never awaited" in str(w.message)] == []


def _tool_messages_saved(checkpointer: InMemorySaver, config: Any) -> list[ToolMessage]:
    checkpoint = checkpointer.get(config)
    assert checkpoint is not None
    messages: list[object] = checkpoint["channel_values"].get("messages", [])
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_aon_error_returning_a_non_awaitable_fails_chained_at_call_time() -> None:
    tool_error = ConnectionError("db down")
    checkpointer = InMemorySaver()
    agent = build_agent(
        [failing_tool("search", tool_error)],
        [ToolErrorMiddleware(aon_error=sync_handler)],  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
        [call("search", "c1")],
        checkpointer=checkpointer,
    )
    config: Any = {"configurable": {"thread_id": "not-awaitable"}}

    with pytest.raises(TypeError) as raised:
        run(agent, "async", config=config)

    assert raised.value.__cause__ is tool_error
    assert "`aon_error`" in str(raised.value)
    assert "'handled' (str)" in str(raised.value)
    assert "async def" in str(raised.value)
    assert _tool_messages_saved(checkpointer, config) == []


# --- long values are shortened in error messages ------------------------------------------


def _message(**kwargs: Any) -> str:
    with pytest.raises((TypeError, ValueError)) as raised:
        ToolErrorMiddleware(sync_handler, **kwargs)
    return str(raised.value)


def test_a_string_is_shown_whole_up_to_sixty_characters_then_shortened() -> None:
    fits, too_long = "a" * 58, "b" * 59  # 60 and 61 characters with their quotes

    assert repr(fits) in _message(tools=fits)
    shortened = _message(tools=too_long)
    assert repr(too_long) not in shortened
    assert "..." in shortened


def test_another_value_is_shown_whole_up_to_sixty_characters_then_shortened() -> None:
    class Shown:
        def __init__(self, width: int) -> None:
            self.width = width

        def __repr__(self) -> str:
            return "r" * self.width

    assert "r" * 60 in _message(tools=Shown(60))
    assert "r" * 61 not in _message(tools=Shown(61))


def test_a_list_shows_four_items_a_dict_four_entries_and_two_levels() -> None:
    assert "[10, 11, 12, 13, ...]" in _message(exceptions=[10, 11, 12, 13, 14])
    assert "[10, 11, 12, 13]" in _message(exceptions=[10, 11, 12, 13])
    assert "{1: 1, 2: 2, 3: 3, 4: 4, ...}" in _message(tools={i: i for i in range(1, 6)})
    assert "{1: 1, 2: 2, 3: 3, 4: 4}" in _message(tools={i: i for i in range(1, 5)})
    assert "[[...]]" in _message(exceptions=[[[1]]])
    assert "[[1]]" in _message(exceptions=[[1]])


# --- failures that are not exceptions, and listeners --------------------------------------

# The package's Route as code that skips the type checker sees it, to pass a sync `aon_error`.
UntypedClause: Any = ExceptClause


def _needs_a_record_id() -> BaseTool:
    """A tool with a required `int` argument: a call without it has invalid arguments."""

    def lookup(record_id: int) -> str:
        return f"record {record_id}"

    return StructuredTool.from_function(lookup, description="Look a record up.")


def test_a_routes_aon_error_returning_no_awaitable_for_invalid_arguments_is_refused() -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [UntypedClause(InvalidArguments, aon_error=sync_handler)]
    )
    agent = build_agent([_needs_a_record_id()], [middleware], [call("lookup", "c1")])

    with pytest.raises(TypeError) as raised:
        run(agent, "async")

    assert "`aon_error`" in str(raised.value)
    assert "'handled' (str)" in str(raised.value)
    assert raised.value.__cause__ is None  # the failure is not an exception to chain


class Canned(str, Enum):  # noqa: UP042  # not StrEnum: str() of this one is its name
    """A handler's canned reply: a `str` member, whose `str()` is not its text."""

    BAD_ARGUMENTS = "call lookup with a record_id"


def test_a_str_subclass_replacing_a_failure_s_message_is_sent_as_plain_text(path: Path) -> None:
    def canned(failure: InvalidArguments, request: ToolCallRequest) -> str:
        return Canned.BAD_ARGUMENTS

    async def acanned(failure: InvalidArguments, request: ToolCallRequest) -> str:
        return Canned.BAD_ARGUMENTS

    middleware = ToolErrorMiddleware.from_routes(
        [ExceptClause(InvalidArguments, canned, aon_error=acanned)]
    )
    agent = build_agent([_needs_a_record_id()], [middleware], [call("lookup", "c1")])

    message = tool_messages(run(agent, path))["c1"]

    assert type(message.content) is str
    assert f"{message.content}" == "call lookup with a record_id"


class Unreadable:
    """A listener whose signature `inspect` cannot read, as some builtins' cannot be."""

    __signature__ = "unreadable"

    def __init__(self) -> None:
        self.tools: list[str] = []

    def __call__(self, failure: ToolFailure) -> None:
        self.tools.append(failure["tool"])


def test_a_listener_whose_signature_cannot_be_read_is_trusted_and_told_each_failure(
    path: Path,
) -> None:
    listener = Unreadable()
    middleware = ToolErrorMiddleware(sync_handler, listeners=[listener])
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [middleware], [call("search", "c1")]
    )

    run(agent, path)

    assert listener.tools == ["search"]


def test_a_repair_taking_more_than_the_failure_is_refused_at_construction() -> None:
    repair: Any = repair_with_the_request

    with pytest.raises(TypeError) as raised:
        ToolErrorMiddleware(sync_handler, repair=repair)

    message = str(raised.value)
    assert message.startswith("`repair` <function repair_with_the_request")
    assert "cannot be called as repair(failure): it takes (failure, request)." in message
    assert message.endswith(  # the fix
        "with 1 positional argument, such as `def repair(failure: RepairableFailure) -> ...`."
    )


def test_a_handler_log_handled_wraps_is_checked_as_a_handler_is() -> None:
    handler: Any = one_argument

    with pytest.raises(TypeError) as raised:
        log_handled(handler)

    message = str(raised.value)
    assert message.startswith("log_handled()'s handler <function one_argument")
    assert "cannot be called as handler(exc, request): it takes (exc)." in message
    assert message.endswith(
        "such as `def explain(exc: Exception, request: ToolCallRequest) -> str`."
    )


def test_an_async_handler_alog_handled_wraps_is_shown_the_async_shape() -> None:
    async def one_argument_async(exc: Exception) -> str:
        return "handled"

    handler: Any = one_argument_async

    with pytest.raises(TypeError) as raised:
        alog_handled(handler)

    assert str(raised.value).endswith(
        "such as `async def explain(exc: Exception, request: ToolCallRequest) -> str`."
    )


@pytest.mark.skipif(
    sys.version_info < (3, 14),
    reason="before 3.14 a module evaluates its annotations when it defines the function",
)
def test_a_handler_whose_annotations_name_what_only_checkers_import_constructs() -> None:
    # As in a module without `from __future__ import annotations` whose `ToolCallRequest`
    # is imported under `if TYPE_CHECKING:`: from 3.14 the annotation is evaluated only when
    # read, and reading it raises NameError. The check reads the parameters alone.
    namespace: dict[str, Any] = {}
    exec(
        "def explain(exc: Exception, request: ToolCallRequest) -> str:\n    return 'handled'\n"
        "def one(exc: ToolCallRequest) -> str:\n    return 'handled'\n",
        namespace,
    )

    ToolErrorMiddleware(namespace["explain"])
    with pytest.raises(TypeError, match=r"it takes \(exc\)\."):
        ToolErrorMiddleware(namespace["one"])
