"""What each error message tells the user: the tool's name, the numbers, the value given and
the fix that works.

These tests pin the parts of a message a reader acts on, not its wording: the name of the
argument, tool or route; the counts, limits and positions; the value given and its type;
and the fix. Each must appear exactly (letter case included, not glued to other letters),
and a fix that stands alone as code is also evaluated, to prove that applying it works.
"""

from __future__ import annotations

import ast
import asyncio
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    RepairableFailure,
    Route,
    SyncCapable,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import log_handled, report_messages_of, report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import (
    PATHS,
    Agent,
    Path,
    Ready,
    build_agent,
    call,
    direct_request,
    failing_tool,
    run,
)

# The public names as code that skips the type checker sees them, to pass wrong types.
UntypedMiddleware: Any = ToolErrorMiddleware
UntypedRoute: Any = Route
UntypedBudget: Any = ErrorBudget
untyped_log_handled: Any = log_handled


def mentions(message: str, code: str) -> bool:
    """Whether `message` holds `code` exactly: same letter case, not glued to a word.

    Where `code` starts or ends with a letter, digit or underscore, the character next to
    it in the message must not be one, so `XXreport_type_only` does not count as naming
    `report_type_only`.
    """
    before = r"(?<!\w)" if re.match(r"\w", code[0]) else ""
    after = r"(?!\w)" if re.match(r"\w", code[-1]) else ""
    return re.search(before + re.escape(code) + after, message) is not None


def names_exactly(message: str, code: str) -> bool:
    """Whether `message` holds `code` (see `mentions`), and each time it names it, exactly.

    Every place the message spells `code` in any letter case must be `code` itself, not
    glued to a word: a second mention in capitals (`"TELL"`) or glued (`XXToolFailure`)
    would offer a reader a name that does not work. A plain word (`Exception`, `None`) may
    also be prose ("selects no exception"), so for it one exact mention is enough.
    """
    if not mentions(message, code):
        return False
    if re.fullmatch(r"[A-Za-z][a-z]*", code):
        return True
    for found in re.finditer(re.escape(code), message, re.IGNORECASE):
        if not mentions(message[max(found.start() - 1, 0) : found.end() + 1], code):
            return False
    return True


def _handler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


async def _ahandler(exc: Exception, request: ToolCallRequest) -> str:
    return "handled"


async def _arepair(failure: RepairableFailure) -> ToolCall | None:
    return None


def _repair_to_name(failure: RepairableFailure) -> Any:
    return failure.tool


def _count_failure(failure: ToolFailure) -> None:
    return None


def _two_arguments(failure: ToolFailure, extra: object) -> None:
    return None


# What the names in a message's code fix stand for when a user pastes it into their code.
FIX_NAMES: dict[str, object] = {
    "ErrorBudget": ErrorBudget,
    "Route": Route,
    "ToolErrorMiddleware": ToolErrorMiddleware,
    "ToolException": ToolException,
    "report_messages_of": report_messages_of,
    "report_type_only": report_type_only,
    "handler": _handler,
    "fallback": report_type_only,
    "on_error": _handler,
    "exceptions": KeyError,
    "InvalidArguments": InvalidArguments,
    "count_failure": _count_failure,
}


def apply(template: str, fix: str) -> object:
    """Evaluate `template` with `fix` in place of `{fix}`: the user's code once fixed."""
    return eval(template.replace("{fix}", fix), dict(FIX_NAMES))


@dataclass(frozen=True)
class Mistake:
    """A wrong call, what it raises, and what its message must tell the user."""

    make: Callable[[], object]
    error: type[Exception]
    shows: tuple[str, ...]
    """The names, numbers and the value given (with its type), each standing alone."""
    fixes: Mapping[str, str | None]
    """Each fix the message offers, as the user would copy it, with a call that applies it
    (`{fix}` marks where it goes), or `None` where it is not code that stands alone."""


BUDGET_FIX = "budget=ErrorBudget(per_tool=3)"
ROUTES_FIX = (
    "ToolErrorMiddleware.from_routes([Route(KeyError, handler), Route(Exception, fallback)])"
)

MISTAKES: dict[str, Mistake] = {
    "an error prefix given as a bool": Mistake(
        lambda: UntypedMiddleware(report_type_only, error_prefix=False),
        TypeError,
        ("`error_prefix`", "False (bool)"),
        {
            'error_prefix="Tool error: "': "ToolErrorMiddleware(report_type_only, {fix})",
            "error_prefix=None": "ToolErrorMiddleware(report_type_only, {fix})",
        },
    ),
    "an empty error prefix": Mistake(
        lambda: UntypedMiddleware.from_routes([Route(KeyError, _handler)], error_prefix=""),
        ValueError,
        ("`error_prefix`",),
        {
            'error_prefix="Tool error: "': "ToolErrorMiddleware(report_type_only, {fix})",
            "error_prefix=None": "ToolErrorMiddleware(report_type_only, {fix})",
        },
    ),
    "a budget given as a number": Mistake(
        lambda: UntypedMiddleware(report_type_only, budget=3),
        TypeError,
        ("`budget`", "3 (int)"),
        {BUDGET_FIX: "ToolErrorMiddleware(report_type_only, {fix})"},
    ),
    "a route's budget given as a dict": Mistake(
        lambda: UntypedRoute(KeyError, report_type_only, budget={"per_tool": 3}),
        TypeError,
        ("`budget`", "{'per_tool': 3} (dict)"),
        {BUDGET_FIX: "Route(KeyError, report_type_only, {fix})"},
    ),
    "routes given as a dict": Mistake(
        lambda: UntypedMiddleware.from_routes({}),
        TypeError,
        ("`routes`", "got dict"),
        {ROUTES_FIX: "{fix}"},
    ),
    "routes given as one Route": Mistake(
        lambda: UntypedMiddleware.from_routes(Route(Exception, report_type_only)),
        TypeError,
        ("`routes`", "got Route"),
        {ROUTES_FIX: "{fix}"},
    ),
    "a handler where a Route belongs": Mistake(
        lambda: UntypedMiddleware.from_routes([Route(KeyError, _handler), report_type_only]),
        TypeError,
        ("routes[1]", "function"),
        {"Route(KeyError, handler)": "ToolErrorMiddleware.from_routes([{fix}])"},
    ),
    "no routes": Mistake(
        lambda: UntypedMiddleware.from_routes([]),
        ValueError,
        ("`routes`",),
        {"ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)])": "{fix}"},
    ),
    "routes given to the one-handler constructor": Mistake(
        lambda: UntypedMiddleware(_handler, routes=[Route(Exception, _handler)]),
        TypeError,
        ("ToolErrorMiddleware()", "`routes=`", "`budget=`", "`name=`"),
        {"ToolErrorMiddleware.from_routes([Route(KeyError, on_error), ...])": None},
    ),
    "a route with no handler": Mistake(
        lambda: UntypedRoute(KeyError),
        TypeError,
        ("Route()",),
        {"Route(exceptions, on_error)": "{fix}", "`aon_error=`": None},
    ),
    "a failure that is not an exception given to exceptions=": Mistake(
        lambda: UntypedMiddleware(_handler, exceptions=InvalidArguments),
        TypeError,
        ("`exceptions`", "InvalidArguments"),
        {"ToolErrorMiddleware.from_routes([Route(InvalidArguments, handler)])": "{fix}"},
    ),
    "a route for something that is neither an exception nor a failure kind": Mistake(
        lambda: UntypedRoute(str, _handler),
        TypeError,
        ("`exceptions`", "<class 'str'> (type)", "InvalidArguments"),
        {"exceptions=ValueError": "Route(on_error=handler, {fix})"},
    ),
    "budget kinds given as one string": Mistake(
        lambda: UntypedBudget(per_tool=3, kinds="exception"),
        TypeError,
        ("`kinds`", "'exception' (str)"),
        {'kinds=("invalid_arguments",)': "ErrorBudget(per_tool=3, {fix})"},
    ),
    "a repair given as a string": Mistake(
        lambda: UntypedMiddleware(report_type_only, repair="fix"),
        TypeError,
        ("`repair`", "'fix' (str)", "repair(failure)"),
        {"def repair(failure: RepairableFailure) -> ToolCall | None": None},
    ),
    "an async repair": Mistake(
        lambda: UntypedMiddleware.from_routes([Route(KeyError, _handler)], repair=_arepair),
        TypeError,
        ("`repair`", "an async function", "repair(failure)"),
        {"def repair(failure: RepairableFailure) -> ToolCall | None": None},
    ),
    "a repair that returns a name, not a call": Mistake(
        lambda: run(
            build_agent(
                [failing_tool("lookup", KeyError("k"))],
                [ToolErrorMiddleware(report_type_only, repair=_repair_to_name)],
                [call("lookup", "c1", query=7)],
            ),
            "sync",
        ),
        TypeError,
        ("`repair`", "'lookup' (str)", "`lookup`", "'c1'"),
        {'ToolCall(name="lookup", args={...}, id=None)': None, "None": None},
    ),
    "an unknown budget kind": Mistake(
        lambda: UntypedBudget(per_tool=3, kinds=["invalid_args"]),
        ValueError,
        ("`kinds`", "'invalid_args'", "'invalid_arguments'"),
        {},
    ),
    "no budget kinds": Mistake(
        lambda: UntypedBudget(per_tool=3, kinds=()),
        ValueError,
        ("`kinds=()`", "exception, invalid_arguments"),
        {"None": "ErrorBudget(per_tool=3, kinds={fix})"},
    ),
    "a middleware with no handler": Mistake(
        lambda: UntypedMiddleware(),
        TypeError,
        ("ToolErrorMiddleware()",),
        {
            "ToolErrorMiddleware(on_error)": "{fix}",
            "`aon_error=`": None,
            "ToolErrorMiddleware.from_routes([Route(KeyError, on_error), ...])": None,
        },
    ),
    "an ErrorBudget with no limit": Mistake(
        lambda: UntypedBudget(),
        ValueError,
        ("ErrorBudget()",),
        {
            "ErrorBudget(per_tool=3)": "{fix}",
            "per_tool=": None,
            "per_run=": None,
            "consecutive=": None,
        },
    ),
    "a limit of zero": Mistake(
        lambda: UntypedBudget(per_tool=0),
        ValueError,
        ("`per_tool`", "got 0"),
        {"per_tool=1": "ErrorBudget({fix})", "None": "ErrorBudget(per_tool={fix}, per_run=2)"},
    ),
    "a negative limit": Mistake(
        lambda: UntypedBudget(per_run=-2),
        ValueError,
        ("`per_run`", "got -2"),
        {"per_run=1": "ErrorBudget({fix})", "None": "ErrorBudget(per_tool=2, per_run={fix})"},
    ),
    "a consecutive limit of zero": Mistake(
        lambda: UntypedBudget(consecutive=0),
        ValueError,
        ("`consecutive`", "got 0"),
        {"consecutive=1": "ErrorBudget({fix})"},
    ),
    "a limit given as a str": Mistake(
        lambda: UntypedBudget(per_run="3"),
        TypeError,
        ("`per_run`", "'3' (str)"),
        {"per_run=3": "ErrorBudget({fix})", "None": None},
    ),
    "a limit given as a bool": Mistake(
        lambda: UntypedBudget(per_tool=True),
        TypeError,
        ("`per_tool`", "True (bool)"),
        {"per_tool=3": "ErrorBudget({fix})"},
    ),
    "an unknown when_spent": Mistake(
        lambda: UntypedBudget(per_tool=1, when_spent="retry"),
        ValueError,
        ("`when_spent`", "'retry' (str)", '"stop"', '"tell"', '"interrupt"'),
        {'when_spent="tell"': "ErrorBudget(per_tool=1, {fix})"},
    ),
    "a when_spent that is not a str": Mistake(
        lambda: UntypedBudget(per_tool=1, when_spent=1),
        TypeError,
        ("`when_spent`", "1 (int)"),
        {'when_spent="tell"': "ErrorBudget(per_tool=1, {fix})"},
    ),
    "a message for a budget that does not tell": Mistake(
        lambda: ErrorBudget(per_tool=1, when_spent="interrupt", message="`{tool}` is off"),
        ValueError,
        ("`message`", "'interrupt'"),
        {
            'when_spent="tell"': "ErrorBudget(per_tool=1, message='off', {fix})",
            "remove message=": None,
        },
    ),
    "an empty message": Mistake(
        lambda: UntypedBudget(per_tool=1, message=""),
        TypeError,
        ("`message`", "''"),
        {
            "{tool}": "ErrorBudget(per_tool=1, when_spent='tell', message='{fix} is off')",
            "{count}": "ErrorBudget(per_tool=1, when_spent='tell', message='{fix} failures')",
        },
    ),
    "a message with a field that is not given": Mistake(
        lambda: UntypedBudget(per_tool=1, message="{tool} failed {n}"),
        ValueError,
        ("'{tool} failed {n}'", "field {n}"),
        {"{tool}": None, "{count}": None, "{times}": None, "{{": None, "}}": None},
    ),
    "a format spec that does not suit the name": Mistake(
        lambda: UntypedBudget(per_tool=1, message="{tool:d} failed"),
        ValueError,
        ("'{tool:d} failed'", "'d'"),
        {
            "{tool}": "ErrorBudget(per_tool=1, when_spent='tell', message='{fix} failed')",
            "{count}": None,
            "{times}": "ErrorBudget(per_tool=1, when_spent='tell', message='failed {fix}')",
        },
    ),
    "no exception types": Mistake(
        lambda: UntypedMiddleware(_handler, exceptions=()),
        ValueError,
        ("`exceptions=()`",),
        {"Exception": "ToolErrorMiddleware(report_type_only, exceptions={fix})"},
    ),
    "exceptions given as a str": Mistake(
        lambda: UntypedMiddleware(_handler, exceptions="ValueError"),
        TypeError,
        ("`exceptions`", "'ValueError' (str)"),
        {
            "exceptions=ValueError": "ToolErrorMiddleware(report_type_only, {fix})",
            "exceptions=(ValueError, KeyError)": "ToolErrorMiddleware(report_type_only, {fix})",
        },
    ),
    "report_messages_of with no type": Mistake(
        lambda: report_messages_of(),
        ValueError,
        ("report_messages_of()",),
        {
            "report_messages_of(ToolException)": "ToolErrorMiddleware({fix})",
            "report_type_only": "ToolErrorMiddleware({fix})",
        },
    ),
    "an async on_error": Mistake(
        lambda: UntypedMiddleware(_ahandler),
        TypeError,
        ("`on_error`", "_ahandler"),
        {"`aon_error=`": None, "ToolErrorMiddleware(aon_error=...)": None},
    ),
    "a route's async on_error": Mistake(
        lambda: UntypedRoute(KeyError, _ahandler),
        TypeError,
        ("`on_error`", "_ahandler"),
        {"`aon_error=`": None, "Route(..., aon_error=...)": None},
    ),
    "listeners given as one function": Mistake(
        lambda: UntypedMiddleware(report_type_only, listeners=_count_failure),
        TypeError,
        ("`listeners`", "(function)"),
        {"listeners=[count_failure]": "ToolErrorMiddleware(report_type_only, {fix})"},
    ),
    "a listener that is not callable": Mistake(
        lambda: UntypedMiddleware(report_type_only, listeners=[_count_failure, 3]),
        TypeError,
        ("`listeners[1]`", "3 (int)", "ToolFailure"),
        {"def count(failure: ToolFailure) -> None": None},
    ),
    "a listener that takes two arguments": Mistake(
        lambda: UntypedMiddleware(report_type_only, listeners=[_two_arguments]),
        TypeError,
        ("`listeners[0]`", "_two_arguments", "ToolFailure"),
        {"def count(failure: ToolFailure) -> None": None},
    ),
    "log_handled over an async handler": Mistake(
        lambda: untyped_log_handled(_ahandler),
        TypeError,
        ("_ahandler",),
        {"alog_handled()": None, "`aon_error=`": None},
    ),
}


@pytest.mark.parametrize("case", MISTAKES)
def test_a_wrong_argument_is_refused_naming_it_the_value_given_and_a_fix_that_works(
    case: str,
) -> None:
    mistake = MISTAKES[case]

    with pytest.raises(mistake.error) as raised:
        mistake.make()

    message = str(raised.value)
    for shown in mistake.shows:
        assert names_exactly(message, shown), (shown, message)
    for fix, applied in mistake.fixes.items():
        assert names_exactly(message, fix), (fix, message)
        if applied is not None:
            apply(applied, fix)  # the fixed call runs without an error


def test_a_middleware_s_wrong_exceptions_are_refused_offering_no_failure_kind_it_refuses() -> None:
    with pytest.raises(TypeError) as raised:
        UntypedMiddleware(_handler, exceptions="ValueError")

    # A Route takes InvalidArguments beside exceptions; the middleware's `exceptions=` does
    # not, so offering it here would be a fix that fails.
    assert not mentions(str(raised.value), "InvalidArguments"), str(raised.value)
    with pytest.raises(TypeError):
        UntypedMiddleware(_handler, exceptions=InvalidArguments)


# --- what a handler returned ----------------------------------------------------------------


async def _a_coroutine() -> str:
    return "content"


async def _returns_a_coroutine(exc: Exception, request: ToolCallRequest) -> object:
    return _a_coroutine()


def _returns_an_awaitable(exc: Exception, request: ToolCallRequest) -> object:
    return Ready("content")


def _returns_a_str_among_blocks(exc: Exception, request: ToolCallRequest) -> object:
    return [{"type": "text", "text": "ok"}, "plain"]


def _middleware(on_error: object = None, aon_error: object = None) -> ToolErrorMiddleware:
    middleware: ToolErrorMiddleware = UntypedMiddleware(on_error, aon_error=aon_error)
    return middleware


EXAMPLE_BLOCK = '{"type": "text", "text": "..."}'


@dataclass(frozen=True)
class BadResult:
    """A handler that returns the wrong thing, and what the refusal must tell the user."""

    middleware: Callable[[], ToolErrorMiddleware]
    paths: tuple[Path, ...]
    shows: tuple[str, ...]
    fixes: tuple[str, ...]


BAD_RESULTS: dict[str, BadResult] = {
    "aon_error that is a sync function": BadResult(
        lambda: _middleware(aon_error=_handler),
        ("async",),
        ("`aon_error`", "'handled' (str)"),
        ("`async def`", "`on_error`"),
    ),
    "aon_error whose result is a coroutine": BadResult(
        lambda: _middleware(aon_error=_returns_a_coroutine),
        ("async",),
        ("`aon_error`", "(coroutine)"),
        ("`aon_error=`", "`on_error`"),
    ),
    "on_error returning an awaitable that is not a coroutine": BadResult(
        lambda: _middleware(_returns_an_awaitable),
        PATHS,
        ("`on_error`", "(Ready)"),
        ("`aon_error=`", "`on_error`"),
    ),
    "a list holding a str": BadResult(
        lambda: _middleware(_returns_a_str_among_blocks),
        PATHS,
        ("`on_error`", "item 1", "'plain' (str)"),
        ('str "type"', EXAMPLE_BLOCK),
    ),
}


@pytest.mark.parametrize(
    ("case", "path"), [(case, path) for case, bad in BAD_RESULTS.items() for path in bad.paths]
)
def test_a_wrong_handler_result_is_refused_naming_its_type_and_the_fix(
    case: str, path: Path
) -> None:
    bad = BAD_RESULTS[case]
    error = ConnectionError("down")
    agent = build_agent([failing_tool("search", error)], [bad.middleware()], [call("search", "c1")])

    with pytest.raises(TypeError) as raised:
        run(agent, path)

    message = str(raised.value)
    assert raised.value.__cause__ is error
    for shown in bad.shows:
        assert mentions(message, shown), (shown, message)
    for fix in bad.fixes:
        assert mentions(message, fix), (fix, message)


def test_the_content_block_a_refusal_shows_is_content_the_model_receives(path: Path) -> None:
    block: dict[str, str] = ast.literal_eval(EXAMPLE_BLOCK)

    def answer(exc: Exception, request: ToolCallRequest) -> list[dict[str, str]]:
        return [block]

    agent = build_agent(
        [failing_tool("search", KeyError("k"))],
        [ToolErrorMiddleware(answer)],
        [call("search", "c1")],
    )

    result = run(agent, path)

    sent = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in sent] == [[block]]


def _hook(
    middleware: ToolErrorMiddleware[str, Exception, SyncCapable],
    request: ToolCallRequest,
    path: Path,
) -> object:
    """Call `middleware`'s hook for `path` directly, on a call whose tool raises `KeyError`."""

    def fail(request: ToolCallRequest) -> ToolMessage:
        raise KeyError("k")

    async def afail(request: ToolCallRequest) -> ToolMessage:
        raise KeyError("k")

    if path == "sync":
        return middleware.wrap_tool_call(request, fail)
    return asyncio.run(middleware.awrap_tool_call(request, afail))


def test_a_call_whose_name_is_not_a_str_is_refused_naming_the_value_and_the_message_type(
    path: Path,
) -> None:
    tool_call: Any = {"name": 7, "args": {}, "id": "c1", "type": "tool_call"}

    with pytest.raises(TypeError) as raised:
        _hook(ToolErrorMiddleware(_handler), direct_request(None, tool_call), path)

    assert "7 (int)" in str(raised.value)
    assert mentions(str(raised.value), "ToolMessage")
    assert isinstance(raised.value.__cause__, KeyError)


# --- a spent budget -----------------------------------------------------------------------


def looping(tool: BaseTool, middleware: ToolErrorMiddleware, turns: int) -> Agent:
    """An agent whose model calls `tool` once in each of `turns` turns, then answers."""
    step = AIMessage("", tool_calls=[call(tool.name, "c")])
    model = ScriptedChatModel(script=[Repeat(step, times=turns), AIMessage("done")])
    agent: Agent = create_agent(model, tools=[tool], middleware=[middleware])
    return agent


def _routed(budget: ErrorBudget) -> ToolErrorMiddleware:
    """Two routes; the second, which handles the weather tool's `LookupError`, has `budget`."""
    return ToolErrorMiddleware.from_routes(
        [Route(KeyError, _handler), Route(LookupError, report_type_only, budget=budget)]
    )


# (the middleware, what the message must hold, what it must not)
STOPS: dict[str, tuple[Callable[[], ToolErrorMiddleware], tuple[str, ...], tuple[str, ...]]] = {
    "the middleware's per_tool": (
        lambda: ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3)),
        ("4 failures of `weather`", "limit of 3 (per_tool)"),
        ("all tools", "routes["),
    ),
    "the middleware's per_run": (
        lambda: ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=2)),
        ("3 failures of all tools", "limit of 2 (per_run)", "`weather`"),
        ("failures of `weather`", "routes["),
    ),
    "a route's per_tool": (
        lambda: _routed(ErrorBudget(per_tool=2)),
        ("3 failures of `weather` handled by routes[1]", "limit of 2 (per_tool)"),
        ("all tools", "routes[0]"),
    ),
    "a route's per_run": (
        lambda: _routed(ErrorBudget(per_run=1)),
        ("2 failures of all tools handled by routes[1]", "limit of 1 (per_run)", "`weather`"),
        ("failures of `weather`", "routes[0]"),
    ),
}


@pytest.mark.parametrize("case", STOPS)
def test_a_stopped_run_names_the_tool_the_count_the_limit_and_the_budget(
    path: Path, case: str
) -> None:
    make, holds, lacks = STOPS[case]
    agent = looping(failing_tool("weather", LookupError("Atlantis")), make(), turns=6)

    with pytest.raises(ToolErrorBudgetExceeded) as raised:
        run(agent, path)

    message = str(raised.value)
    for part in holds:
        assert mentions(message, part), (part, message)
    for part in lacks:
        assert part not in message, (part, message)


# A template for "tell", and what the model reads once the tool failed twice (per_tool=1).
TEMPLATES = {
    "{tool:>8} x{count:d}": " weather x2",
    "{tool!r} failed {count:03d} times": "'weather' failed 002 times",
    "`{tool}` is off after {count} failures; {{tool}} is literal": (
        "`weather` is off after 2 failures; {tool} is literal"
    ),
    "`{tool}` failed {times}.": "`weather` failed 2 times.",
    "{tool} failed {times:>9}": "weather failed   2 times",
}


@pytest.mark.parametrize("template", TEMPLATES)
def test_tell_fills_in_the_tools_name_and_count_through_the_templates_format_specs(
    path: Path, template: str
) -> None:
    budget = ErrorBudget(per_tool=1, when_spent="tell", message=template)
    middleware = ToolErrorMiddleware(report_type_only, budget=budget)
    agent = looping(failing_tool("weather", LookupError("Atlantis")), middleware, turns=3)

    result = run(agent, path)

    messages: list[BaseMessage] = result["messages"]
    told = [m.content for m in messages if isinstance(m, ToolMessage)]
    assert told == ["Tool `weather` failed with LookupError.", *[TEMPLATES[template]] * 2]


# Fields that reach into the name or the count: no sample value can vouch for them (a tool
# named "ab" has no `{tool[3]}`), so they are refused where the budget is written.
REACHING_FIELDS = ["{tool.nope}", "{count[0]}", "{tool[3]}"]


@pytest.mark.parametrize("field", REACHING_FIELDS)
def test_a_template_field_that_reaches_into_the_name_or_count_is_refused_naming_it(
    field: str,
) -> None:
    template = f"`{{tool}}` failed {{count}} times ({field})"

    with pytest.raises(ValueError, match=re.escape(repr(template))) as raised:
        UntypedBudget(per_tool=1, when_spent="tell", message=template)

    message = str(raised.value)
    assert mentions(message, f"field {field}")
    assert mentions(message, "{tool}")
    assert mentions(message, "{count}")


# --- a route that can never match -----------------------------------------------------------


def _refusal(routes: list[Route[Any]]) -> str:
    with pytest.raises(ValueError, match="can never match") as raised:
        ToolErrorMiddleware.from_routes(routes)
    return str(raised.value)


def test_an_unreachable_route_is_blamed_on_the_earlier_route_that_catches_it_only() -> None:
    message = _refusal(
        [
            Route(KeyError, _handler, tools=["search"]),
            Route(KeyError, _handler, tools=["lookup"]),
            Route(KeyError, _handler, tools=["lookup"]),
        ]
    )

    assert message.startswith("routes[2] (Route(")
    assert "routes[1] (Route(" in message
    assert "routes[0]" not in message  # it catches KeyError too, but for another tool


def test_an_unreachable_route_covered_by_three_routes_together_names_all_three() -> None:
    message = _refusal(
        [
            Route(KeyError, _handler, tools=["a"]),
            Route(KeyError, _handler, tools=["b"]),
            Route(KeyError, _handler, tools=["c"]),
            Route(KeyError, _handler, tools=["c", "b", "a"]),
        ]
    )

    assert message.startswith("routes[3] (Route(")
    assert mentions(message, "routes[0], routes[1] and routes[2]")
