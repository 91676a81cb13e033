"""`ToolErrorMiddleware`: tool failures handed back to the model as error `ToolMessage`s."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Never, TypeAlias, cast, overload

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, hook_config
from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite, TracePolicy, omit_payload
from typing_extensions import TypeVar, override

from _langchain_tool_errors.answered_elsewhere import (
    SETTLED_KEY,
    SettledState,
    answered_elsewhere,
    given,
    met,
    own,
    settled,
    settled_key,
    step_of,
)
from _langchain_tool_errors.asked_by import note_replies
from _langchain_tool_errors.budget import (
    COUNTS_KEY,
    ErrorBudget,
    ToolErrorBudgetExceeded,
    set_to,
)
from _langchain_tool_errors.checks import (
    reject_async_on_error,
    reject_routes_keyword,
    require_a_handler,
    require_budget,
    require_callable,
    require_error_prefix,
    require_exception_types,
    require_flag,
    require_listeners,
    require_name,
    require_tool_selection,
)
from _langchain_tool_errors.classifying import (
    classify,
    last_reply,
    malformed_calls,
    standing_request,
)
from _langchain_tool_errors.control_flow import GraphBubbleUp, is_invalid_resume
from _langchain_tool_errors.counting import Accounts
from _langchain_tool_errors.failures import InnerMiddlewareError, MalformedToolCall, ReportedFailure
from _langchain_tool_errors.handler_types import (
    AOnError,
    AsyncOnly,
    HandlerMode,
    OnError,
    StoredAsyncHandler,
    StoredHandler,
    SyncCapable,
    ToolErrorContent,
    ToolSelection,
)
from _langchain_tool_errors.handling import ahandle, areplace, areply_to, handle, replace, reply_to
from _langchain_tool_errors.inner_commands import answered_inside, is_state_update, put_back
from _langchain_tool_errors.marking import DEFAULT_ERROR_PREFIX, prepared
from _langchain_tool_errors.pausing import (
    PAUSES_KEY,
    BudgetDecision,
    BudgetPause,
    HeldTool,
    PauseState,
    ask,
    pause_of,
)
from _langchain_tool_errors.providers import Provider, provider_of
from _langchain_tool_errors.record_types import (
    AFailureListener,
    FailureListener,
    FailureOutcome,
    ToolFailure,
)
from _langchain_tool_errors.recording import (
    FAILURES_KEY,
    FailureState,
    Recorder,
    failure_record,
)
from _langchain_tool_errors.repair import (
    RepairCall,
    found_in,
    require_call,
    require_repair,
    with_repairs,
)
from _langchain_tool_errors.repeats import Repeats
from _langchain_tool_errors.route_table import (
    RouteHandlers,
    RouteTable,
    except_clause,
    selects_reported,
    widest,
)
from _langchain_tool_errors.routes import Route, require_routes
from _langchain_tool_errors.stopping import (
    STOPS_KEY,
    BudgetStop,
    keep_cause,
    raised,
    running_config,
    stop_of,
    stopped_answer,
)
from _langchain_tool_errors.tool_calls import tool_name
from _langchain_tool_errors.unfinished import with_every_call_answered

_ContentT_co = TypeVar(
    "_ContentT_co", bound=ToolErrorContent, default=ToolErrorContent, covariant=True
)
_ExcT_co = TypeVar("_ExcT_co", bound=Exception, default=Exception, covariant=True)
_ModeT_co = TypeVar("_ModeT_co", bound=HandlerMode, default=HandlerMode, covariant=True)

# The constructor's type parameters. mypy names them in its errors, so each name says what
# it stands for. The content types default to the general one: for a handler that returns
# something else, mypy then names `ToolErrorContent` as what it expected (with no default it
# names `Never`, which reads as if only `None` were allowed). `_ExceptionT` comes after them
# in the overloads' type parameters, so it needs a default too.
_ContentT = TypeVar("_ContentT", bound=ToolErrorContent, default=ToolErrorContent)
_AsyncContentT = TypeVar("_AsyncContentT", bound=ToolErrorContent, default=ToolErrorContent)
_ExceptionT = TypeVar("_ExceptionT", bound=Exception, default=Exception)
_ModeT = TypeVar("_ModeT", bound=HandlerMode)


_FROM_ROUTES = (
    "; or, to send each kind of failure to a handler of its own, build it with "
    "ToolErrorMiddleware.from_routes([Route(KeyError, on_error), ...])"
)

_ASYNC_ONLY = (
    "{name} has only an async handler (`aon_error`), and the agent is running on the sync "
    "path (invoke/stream). Run the agent with `ainvoke`/`astream`, or also pass a sync "
    "`on_error`."
)


class ToolErrorMiddleware(
    # A tool-error middleware fits every agent state, context and structured response;
    # `AgentMiddleware`'s parameters are invariant, so only `Any` fits them all (with a
    # concrete context, `create_agent(..., context_schema=...)` would stop type-checking).
    AgentMiddleware[AgentState[Any], Any, Any],
    Generic[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """Turn exceptions raised by tools into error `ToolMessage`s the model can read.

    The handler gets the exception and the `ToolCallRequest`. It returns the content for a
    `ToolMessage(status="error")` (a `str` or a list of content blocks), or `None` to let
    the exception propagate unchanged. LangGraph control flow (`interrupt()`, parent
    commands, a drained graph, a resume value its interrupt's schema refuses) always
    propagates and never reaches a handler. Successful results pass through untouched.

    Type parameters: the content the handlers return, the exception type they accept, and
    the mode, `SyncCapable` (has `on_error`) or `AsyncOnly` (only `aon_error`). They are
    inferred from the constructor call; a bare `ToolErrorMiddleware` annotation accepts
    every instance.

    Example:
        ```python
        # For pyright strict: create_agent's own signature is partially unknown there.
        from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.testing import ScriptedChatModel

        @tool(description="Search the web.")
        def search(query: str) -> str:
            raise TimeoutError(f"search for {query!r} timed out")

        def on_error(exc: Exception, request: ToolCallRequest) -> str:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        model = ScriptedChatModel(script=[AIMessage("done")])  # or any chat model
        agent = create_agent(model, tools=[search], middleware=[ToolErrorMiddleware(on_error)])
        ```
    """

    trace_policy: TracePolicy | None = TracePolicy(
        process_inputs=omit_payload, process_outputs=omit_payload
    )
    """Hook spans keep their timing and record `{}` as inputs and outputs.

    What they would record is the request (the tool call's arguments, the state) and what
    comes back (the model's reply with its calls' arguments, a state update): the
    model's, the tool's and the tools node's own spans already show what each returned.
    """

    _on_error: OnError[_ContentT_co, Any] | None
    _aon_error: AOnError[_ContentT_co, Any] | None
    _exceptions: tuple[type[_ExcT_co], ...]
    _tool_names: frozenset[str] | None
    _caught: tuple[type[Exception], ...]

    # Each overload admits one call shape, and none has a parameter typed `None` (none shows
    # a handler typed `None` for an argument just given). The order is for editors: pyright
    # and basedpyright highlight the first overload with a parameter named as the argument at
    # the cursor, and the first of all after a comma with nothing typed yet, so the shape with
    # every parameter comes first; pyrefly highlights the first overload whose number of
    # arguments fits, so a shape with both handlers comes before those with one.
    # A sync handler and an async one, for the exception types in `exceptions=`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT | _AsyncContentT, _ExceptionT, SyncCapable],
        on_error: OnError[_ContentT, _ExceptionT],
        *,
        aon_error: AOnError[_AsyncContentT, _ExceptionT],
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    # A sync handler and an async one, for every `Exception`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT | _AsyncContentT, Exception, SyncCapable],
        on_error: OnError[_ContentT, Exception],
        *,
        aon_error: AOnError[_AsyncContentT, Exception],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    # A sync handler, on both paths, for the exception types in `exceptions=`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT, _ExceptionT, SyncCapable],
        on_error: OnError[_ContentT, _ExceptionT],
        *,
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    # An async handler only (the sync path is a type error), for the types in `exceptions=`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT, _ExceptionT, AsyncOnly],
        *,
        aon_error: AOnError[_ContentT, _ExceptionT],
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    # An async handler only, for every `Exception` (the sync path is a type error). It also
    # takes `exceptions=`, as a handler for every `Exception` handles any of them (the
    # overload above admits that call first, with the narrower type). pyrefly highlights the
    # first overload whose number of arguments fits, so with only `exceptions=` typed it
    # shows this one, which has the parameter; it comes before the sync shape for that.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT, Exception, AsyncOnly],
        *,
        aon_error: AOnError[_ContentT, Exception],
        exceptions: type[Exception] | tuple[type[Exception], ...] = Exception,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    # A sync handler, on both paths, for every `Exception`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_ContentT, Exception, SyncCapable],
        on_error: OnError[_ContentT, Exception],
        *,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> None: ...
    def __init__(
        self,
        on_error: StoredHandler | None = None,
        *,
        aon_error: StoredAsyncHandler | None = None,
        exceptions: type[Exception] | tuple[type[Exception], ...] = Exception,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
        routes: object = None,
    ) -> None:
        """Configure which tool failures to hand back to the model, and how.

        Args:
            on_error: Sync handler, called as `on_error(exc, request)` on the sync path and,
                unless `aon_error` is given, on the async path. Returns the content of the
                error `ToolMessage`, or `None` to re-raise `exc`. Positional or keyword.
            aon_error: Async handler for the async path (`ainvoke`, `astream`). Given alone,
                the middleware is `AsyncOnly` and refuses the sync path.
            exceptions: The exception type, or tuple of types, to hand to the handlers; any
                other exception propagates untouched. Defaults to `Exception`. A handler
                typed for a narrower exception needs this argument.
            tools: Names or `BaseTool`s of the tools to handle, in a list or tuple; calls to
                other tools pass through untouched. `None` (the default) handles every tool.
            budget: An `ErrorBudget`: at most so many handled failures per tool, or in
                all, in one run of the agent; what happens then is the budget's choice.
                `None` (the default) sets no limit.
            error_prefix: How an error `ToolMessage` is marked, in what is sent to the
                model only, for a chat model class whose integration drops the error flag:
                this text goes in front of its content, once. (`ChatAnthropic` and
                `ChatBedrockConverse` keep the flag; `ChatGoogleGenerativeAI` is sent a
                text as Gemini's `error` key.) `None` sends every message as written.
            record_failures: Keep a `ToolFailure` for each failure this middleware sees,
                of every kind, in the agent state's `"tool_failures"`: part of the
                output of `invoke`/`ainvoke`, one list per run. Defaults to `False`.
            listeners: Sync (`FailureListener`) or async (`AFailureListener`) callables,
                each told of every failure this middleware sees with its `ToolFailure`,
                as it is settled. What one raises is logged and never changes the run.
            repair: A `RepairCall`, called as `repair(failure)` for each call of a model
                reply that names a tool the model was not offered, has arguments the
                tool's schema refuses, or has arguments that are not JSON: it returns a
                corrected call, which runs once in place of the original (under its id),
                or `None`. `None` (the default) repairs nothing.
            name: The middleware's name in the agent; defaults to `"ToolErrorMiddleware"`.
                Give each instance in one agent its own name: two with one name end in
                langchain's `AssertionError: Please remove duplicate middleware
                instances.` when the agent is built.
            routes: Not taken here (a type error too): routes are built with
                `ToolErrorMiddleware.from_routes(routes)`, and the error says so.

        Raises:
            TypeError: A handler is missing, not callable, or async where a sync one is
                expected; or `exceptions`, `tools`, `budget`, `record_failures`,
                `listeners`, `repair` or `name` has the wrong type, or a listener cannot be called
                with one argument; or `routes=` is given. A missing handler raises
                `MissingHandlerError`, which is also a `ValueError`.
            ValueError: `exceptions` or `tools` is empty, `exceptions` names a
                LangGraph control-flow signal, or `error_prefix` is empty.
        """
        reject_routes_keyword(routes)
        require_a_handler(on_error, aon_error, instead=_FROM_ROUTES)
        require_callable("on_error", on_error)
        require_callable("aon_error", aon_error)
        reject_async_on_error(on_error)
        checked = require_exception_types(exceptions)
        tool_names = require_tool_selection(tools)
        # The configuration as one route, so that the hooks route every failure alike. Its
        # arguments were checked above; `Any` for the overloads' sake.
        given: Any = (checked, on_error, aon_error, tools)
        self._configure(
            (Route(given[0], given[1], aon_error=given[2], tools=given[3]),),
            budget,
            error_prefix,
            record_failures,
            listeners,
            name,
            repair,
        )
        # The overloads tie the handlers' content type and `exceptions=` to the class's type
        # parameters; the implementation's signature cannot name them (mypy checks it
        # against every overload), so the casts restate what the overloads proved.
        self._on_error = cast("OnError[_ContentT_co, Any] | None", on_error)
        self._aon_error = cast("AOnError[_ContentT_co, Any] | None", aon_error)
        self._exceptions = cast("tuple[type[_ExcT_co], ...]", checked)  # as above
        self._tool_names = tool_names

    @classmethod
    def from_routes(
        cls,
        routes: Sequence[Route[_ModeT]],
        *,
        budget: ErrorBudget | None = None,
        error_prefix: str | None = "Error: ",
        record_failures: bool = False,
        listeners: Sequence[FailureListener | AFailureListener] = (),
        repair: RepairCall | None = None,
        name: str | None = None,
    ) -> ToolErrorMiddleware[ToolErrorContent, Exception, _ModeT]:
        """Build a middleware from ordered routes, each an `except` clause of its own.

        When a tool fails, the first route whose exceptions and tools match handles the
        failure, as the first matching `except` clause would; a failure no route matches
        propagates unchanged (see `Route`). The middleware is `SyncCapable` when every route
        has a sync handler, else `AsyncOnly`. Routes returning text and routes returning
        content blocks mix in one list.

        Args:
            routes: A non-empty list or tuple of `Route`s, in order.
            budget: An `ErrorBudget` counting every failure handed back, whatever its route
                (a `Route` may have a budget of its own too). `None` sets no limit.
            error_prefix: How an error `ToolMessage` is marked, in what is sent to the
                model only, for a chat model class whose integration drops the error flag:
                this text goes in front of its content, once. (`ChatAnthropic` and
                `ChatBedrockConverse` keep the flag; `ChatGoogleGenerativeAI` is sent a
                text as Gemini's `error` key.) `None` sends every message as written.
            record_failures: Keep a `ToolFailure` for each failure this middleware sees,
                of every kind, in the agent state's `"tool_failures"`: part of the
                output of `invoke`/`ainvoke`, one list per run. Defaults to `False`.
            listeners: Sync (`FailureListener`) or async (`AFailureListener`) callables,
                each told of every failure this middleware sees with its `ToolFailure`,
                as it is settled. What one raises is logged and never changes the run.
            repair: A `RepairCall`, called as `repair(failure)` for each call of a model
                reply that names a tool the model was not offered, has arguments the
                tool's schema refuses, or has arguments that are not JSON: it returns a
                corrected call, which runs once in place of the original (under its id),
                or `None`. `None` (the default) repairs nothing.
            name: The middleware's name in the agent; defaults to `"ToolErrorMiddleware"`.

        Returns:
            The middleware: `on_error`, `aon_error` and `selected_tools` read `None` (each
            route has its own), and `exceptions` is the widest of the routes' types.

        Raises:
            TypeError: `routes` is not a list or tuple of `Route`s, or `budget`,
                `record_failures`, `listeners`, `repair` or `name` has the wrong type, or a listener
                cannot be called with one argument.
            ValueError: `routes` is empty, or a route can never match because earlier
                routes catch all of its failures.

        Example:
            ```python
            from langchain_tool_errors import ErrorBudget, Route, ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_messages_of, report_type_only

            middleware = ToolErrorMiddleware.from_routes(
                [Route(KeyError, report_messages_of(KeyError)), Route(Exception, report_type_only)],
                budget=ErrorBudget(per_tool=3),
            )
            assert len(middleware.routes) == 2
            ```
        """
        checked_routes = require_routes(routes)
        # Built without `__init__`, whose arguments describe one route; `_configure` is the
        # part both share, and it calls `AgentMiddleware.__init__`. `cls.__new__` is typed
        # `Self`, with the type parameters unsolved; the routes fix them as the return type
        # says, which the cast restates.
        middleware = cast(
            "ToolErrorMiddleware[ToolErrorContent, Exception, _ModeT]", cls.__new__(cls)
        )
        middleware._configure(
            checked_routes, budget, error_prefix, record_failures, listeners, name, repair
        )
        middleware._on_error = None
        middleware._aon_error = None
        middleware._tool_names = None
        middleware._exceptions = widest(checked_routes)
        return middleware

    def _configure(
        self,
        routes: tuple[Route[Any], ...],
        budget: ErrorBudget | None,
        error_prefix: str | None,
        record_failures: bool,
        listeners: Sequence[FailureListener | AFailureListener],
        name: str | None,
        repair: RepairCall | None,
    ) -> None:
        """Set up what every middleware has: name, budget, routes and the hooks' tables."""
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
        chosen: type[ToolErrorMiddleware[Any, Any, Any]] = ToolErrorMiddleware
        if any(budgets) or selects_reported(routes) or records:
            # Why a subclass, chosen here: langchain adds a graph node for `before_agent`
            # or `after_model` only to middleware whose class defines it, so the hooks that
            # count and watch (a reset at the start of each run; after each model reply,
            # its malformed calls and calls to closed tools), and the tool-call hooks that
            # also read error messages, live in a class of their own: a middleware with no
            # budget, no route for such failures, no record and no listener keeps the plain
            # graph and the fastest success path, while users only ever construct and annotate
            # `ToolErrorMiddleware`. An instance whose class changes here keeps attribute
            # reads that Python cannot specialize (measured on 3.11 to 3.13: its values were
            # laid out for `ToolErrorMiddleware`), so no success path reads one: each look
            # a feature needs is a class of its own instead (`_WATCHING`).
            # A record sees every kind of failure, malformed calls included.
            replies = (
                records
                or any("malformed_call" in spent.kinds for spent in budgets if spent)
                or any(
                    issubclass(MalformedToolCall, taken)
                    for route in routes
                    for taken in route.exceptions
                )
            )
            # A look at each call before it runs only where something needs one: a tool
            # may be closed or held, or repeats are answered.
            looks = repeats is not None or (
                accounts is not None and (accounts.closes or accounts.holds)
            )
            chosen = _WATCHING[replies, looks]
        sync_capable = all(route.on_error is not None for route in routes)
        if not sync_capable:
            # The sync hook of an `AsyncOnly` middleware only refuses; a class of its own
            # keeps that check off every other middleware's success path.
            chosen = _REFUSING_SYNC_PATH[chosen]
        if chosen is not type(self):
            object.__setattr__(self, "__class__", chosen)
        AgentMiddleware.__init__(self)
        self._name = checked_name
        self._budget = checked_budget
        self._error_prefix = checked_prefix
        self.tools: Sequence[BaseTool] = ()  # this middleware registers no tools of its own
        self._routes = routes
        # What the hooks read after a failure: the `except` clause, the routing table, and
        # the budgets' accounts (`None` without a budget, so nothing is counted).
        self._caught = except_clause(widest(routes))
        self._table = RouteTable(routes)
        self._accounts = accounts
        # With a "tell" budget, the count that shows a tool was closed in the run, and the
        # accounts that answer the closed tool's calls: until that count is in the state,
        # no call needs a look (`None` without a "tell" budget). Only the looking classes
        # read it, before a call runs.
        self._closing: tuple[str, Accounts] | None = (
            (accounts.closing_key, accounts) if accounts is not None and accounts.closes else None
        )
        # The accounts again when an "interrupt" budget may hold a tool (`None` otherwise).
        # Only the looking classes read it, before a call runs.
        self._holding = accounts if accounts is not None and accounts.holds else None
        # With `repair=`: what the model hooks offer each reply's wrong calls to (`None`
        # otherwise, so a reply goes back untouched).
        self._repair = checked_repair
        # Where a route names `RepeatedCall`: the failed calls of the run, each looked up
        # before a call to a tool such a route selects runs (`None` otherwise).
        self._repeats = repeats
        # What the recording stage needs (`None` when nothing records or listens).
        self._recorder = Recorder(self._name, keeps, checked_listeners) if records else None
        if keeps or self._holding is not None:
            self.state_schema = _STATES[keeps, self._holding is not None]

    @property
    @override
    def name(self) -> str:
        """The middleware's name in the agent, unique among its middleware.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            middleware = ToolErrorMiddleware(report_type_only, name="search_errors")
            assert middleware.name == "search_errors"
            ```
        """
        return self._name

    @property
    def on_error(self) -> OnError[_ContentT_co, Never] | None:
        """The sync handler the middleware was built with, or `None` for an `AsyncOnly` one.

        Read-only. Its exception type reads as `Never` because the middleware's exception
        type parameter is covariant: a `ToolErrorMiddleware[str, KeyError]` is also a
        `ToolErrorMiddleware[str, Exception]`, so no wider exception type would be safe.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            assert ToolErrorMiddleware(report_type_only).on_error is report_type_only
            ```
        """
        return self._on_error

    @property
    def aon_error(self) -> AOnError[_ContentT_co, Never] | None:
        """The async handler the middleware was built with, or `None` if it has none.

        Read-only. With no `aon_error`, the async path calls `on_error`; see `on_error` for
        why the exception type reads as `Never`.

        Example:
            ```python
            from langgraph.prebuilt.tool_node import ToolCallRequest

            from langchain_tool_errors import ToolErrorMiddleware

            async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
                return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

            assert ToolErrorMiddleware(aon_error=aexplain).aon_error is aexplain
            ```
        """
        return self._aon_error

    @property
    def exceptions(self) -> tuple[type[_ExcT_co], ...]:
        """The exception types handed to the handlers, as a tuple (`(Exception,)` by default).

        Read-only.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            middleware = ToolErrorMiddleware(report_type_only, exceptions=TimeoutError)
            assert middleware.exceptions == (TimeoutError,)
            ```
        """
        return self._exceptions

    @property
    def selected_tools(self) -> frozenset[str] | None:
        """The names of the tools `tools=` selected, or `None` when every tool is handled.

        Read-only. (`tools`, as in every langchain middleware, lists the tools the
        middleware registers with the agent: none.)

        Example:
            ```python
            from langchain_core.tools import tool

            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            @tool(description="A record by its id.")
            def lookup(record_id: str) -> str:
                return f"record {record_id}"

            middleware = ToolErrorMiddleware(report_type_only, tools=("search", lookup))
            assert middleware.selected_tools == frozenset({"search", "lookup"})
            ```
        """
        return self._tool_names

    @property
    def routes(self) -> tuple[Route[HandlerMode], ...]:
        """The routes, in order: those given to `from_routes`, or the one the arguments make.

        Read-only. A middleware built with `from_routes` reports `None` for `on_error`,
        `aon_error` and `selected_tools`; each route has its own.

        Example:
            ```python
            from langchain_tool_errors import Route, ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_messages_of, report_type_only

            middleware = ToolErrorMiddleware.from_routes(
                [Route(KeyError, report_messages_of(KeyError)), Route(Exception, report_type_only)]
            )
            assert [route.exceptions for route in middleware.routes] == [
                (KeyError,),
                (Exception,),
            ]
            ```
        """
        return self._routes

    @property
    def budget(self) -> ErrorBudget | None:
        """The middleware's error budget, counting every failure it hands back, or `None`.

        Read-only. Routes may have budgets of their own (see `Route.budget`).

        Example:
            ```python
            from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_run=5))
            assert middleware.budget is not None and middleware.budget.per_run == 5
            ```
        """
        return self._budget

    @property
    def error_prefix(self) -> str | None:
        """The text in front of an error message sent to a model that drops the error flag.

        Read-only. `None` when marking is off. See the providers guide for which chat model
        classes keep the flag and so get no mark.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            assert ToolErrorMiddleware(report_type_only).error_prefix == "Error: "
            assert ToolErrorMiddleware(report_type_only, error_prefix=None).error_prefix is None
            ```
        """
        return self._error_prefix

    @property
    def record_failures(self) -> bool:
        """Whether each run's failures are kept in the agent state's `"tool_failures"`.

        Read-only.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            assert ToolErrorMiddleware(report_type_only, record_failures=True).record_failures
            assert not ToolErrorMiddleware(report_type_only).record_failures
            ```
        """
        return self._recorder is not None and self._recorder.keeps

    @property
    def listeners(self) -> tuple[FailureListener | AFailureListener, ...]:
        """The listeners told of each failure, in the order they are told.

        Read-only.

        Example:
            ```python
            from langchain_tool_errors import ToolErrorMiddleware, ToolFailure
            from langchain_tool_errors.handlers import report_type_only

            def count(failure: ToolFailure) -> None:
                pass

            assert ToolErrorMiddleware(report_type_only, listeners=[count]).listeners == (count,)
            ```
        """
        return () if self._recorder is None else self._recorder.listeners

    @property
    def repair(self) -> RepairCall | None:
        """The repair given as `repair=`, or `None` (the default: nothing is repaired).

        Read-only.

        Example:
            ```python
            from langchain_core.messages import ToolCall

            from langchain_tool_errors import RepairableFailure, ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            def leave_it(failure: RepairableFailure) -> ToolCall | None:
                return None

            assert ToolErrorMiddleware(report_type_only).repair is None
            assert ToolErrorMiddleware(report_type_only, repair=leave_it).repair is leave_it
            ```
        """
        return self._repair

    @override
    def __repr__(self) -> str:
        options = "" if self._budget is None else f"budget={self._budget!r}, "
        if self._error_prefix != DEFAULT_ERROR_PREFIX:
            options += f"error_prefix={self._error_prefix!r}, "
        if self.record_failures:
            options += "record_failures=True, "
        if self.listeners:
            options += f"listeners={list(self.listeners)!r}, "
        if self._repair is not None:
            options += f"repair={self._repair!r}, "
        if self._on_error is None and self._aon_error is None:
            routes = list(self._routes)
            return f"ToolErrorMiddleware.from_routes({routes!r}, {options}name={self._name!r})"
        tools = None if self._tool_names is None else sorted(self._tool_names)
        exceptions = tuple(exc.__name__ for exc in self._exceptions)
        return (
            f"ToolErrorMiddleware(on_error={self._on_error!r}, aon_error={self._aon_error!r}, "
            f"exceptions={exceptions}, tools={tools}, {options}name={self._name!r})"
        )

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send the model its error messages marked, where its provider drops the flag.

        Args:
            request: The model call: the chat model, the messages, the agent state.
            handler: Calls the model (and any inner middleware).

        Returns:
            The model's response, untouched.

        Raises:
            TypeError: An error message holds a content block the model's provider does
                not take in a tool result (see the providers guide); nothing is sent.

        Example:
            `create_agent` calls this before every model call; the messages the agent's
            state holds stay as they were:
            ```python
            from typing import Any

            from langchain.agents.middleware import ModelRequest, ModelResponse
            from langchain_core.messages import AIMessage, ToolMessage

            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only
            from langchain_tool_errors.testing import ScriptedChatModel

            failed = ToolMessage("lookup failed", tool_call_id="c1", status="error")
            model = ScriptedChatModel(script=[AIMessage("ok")])
            model_request: ModelRequest[Any] = ModelRequest(model=model, messages=[failed])
            sent: list[ModelRequest[Any]] = []

            def call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
                sent.append(request)
                return ModelResponse(result=[AIMessage("Trying another id.")])

            ToolErrorMiddleware(report_type_only).wrap_model_call(model_request, call_model)
            assert sent[0].messages[0].content == "Error: lookup failed"
            assert model_request.messages[0] is failed  # the agent's state is untouched
            ```
        """
        provider = provider_of(request.model)
        messages = _sent(request.messages, provider, self._error_prefix)
        response = handler(request if messages is None else request.override(messages=messages))
        note_replies(response, provider)  # so a failure of its calls is checked against it
        repair = self._repair
        if repair is None:
            return response
        repaired = self._repaired(repair, response, request)
        if repaired is None:
            return response
        result, records = repaired
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                recorder.tell(record)
        return result

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send the model its error messages marked, on the async path.

        Args:
            request: The model call: the chat model, the messages, the agent state.
            handler: Calls the model (and any inner middleware).

        Returns:
            The model's response, untouched.

        Raises:
            TypeError: An error message holds a content block the model's provider does
                not take in a tool result; nothing is sent.

        Example:
            ```python
            import asyncio
            from typing import Any

            from langchain.agents.middleware import ModelRequest, ModelResponse
            from langchain_core.messages import AIMessage, ToolMessage

            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only
            from langchain_tool_errors.testing import ScriptedChatModel

            failed = ToolMessage("lookup failed", tool_call_id="c1", status="error")
            model = ScriptedChatModel(script=[AIMessage("ok")])
            model_request: ModelRequest[Any] = ModelRequest(model=model, messages=[failed])

            async def call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
                return ModelResponse(result=[AIMessage("Trying another id.")])

            middleware = ToolErrorMiddleware(report_type_only, error_prefix=None)
            response = asyncio.run(middleware.awrap_model_call(model_request, call_model))
            assert isinstance(response, ModelResponse)
            ```
        """
        provider = provider_of(request.model)
        messages = _sent(request.messages, provider, self._error_prefix)
        response = await handler(
            request if messages is None else request.override(messages=messages)
        )
        note_replies(response, provider)
        repair = self._repair
        if repair is None:
            return response
        repaired = self._repaired(repair, response, request)
        if repaired is None:
            return response
        result, records = repaired
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                await recorder.atell(record)
        return result

    # The narrowed `self` is what makes the sync path of an `AsyncOnly` middleware a type
    # error; ty reports any narrowed `self` in an override as incompatible with the base.
    @override
    def wrap_tool_call(  # ty: ignore[incompatible-method-override]
        self: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call and hand a selected failure to `on_error` (the sync path).

        Args:
            request: The tool call, its `BaseTool`, the agent state and runtime.
            handler: Runs the tool call (and any inner middleware).

        Returns:
            The tool's own result, or an error `ToolMessage` with the handler's content.

        Raises:
            NotImplementedError: The middleware is `AsyncOnly` (this is also a type error).
            TypeError: `on_error` returned something that is not content, chained to the
                tool's exception.

        Example:
            `create_agent` calls this for every tool call; a unit test may call it directly:
            ```python
            from typing import Any

            from langchain_core.messages import ToolCall, ToolMessage
            from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
            from langgraph.types import Command

            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only

            call = ToolCall(name="search", args={"query": "x"}, id="c1")
            runtime: ToolRuntime[None, dict[str, Any]] = ToolRuntime(
                state={},
                context=None,
                config={},
                stream_writer=print,
                tool_call_id="c1",
                store=None,
            )
            request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=runtime)

            def run_failing_tool(request: ToolCallRequest) -> ToolMessage | Command[Any]:
                raise TimeoutError("search timed out")

            middleware = ToolErrorMiddleware(report_type_only)
            message = middleware.wrap_tool_call(request, run_failing_tool)
            assert isinstance(message, ToolMessage) and message.status == "error"
            ```
        """
        # The routes (and their tool filters) are consulted only once the tool has failed:
        # a successful call passes through untouched, so the success path costs the same
        # with any number of routes and filters of any size.
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            # A failure's stages: its route, as an `except` clause picks one, then the
            # route's handler (its `None` re-raises). With a budget, a record or listeners,
            # the watching class's hooks also count, record and tell.
            route = self._table.route(exc, request)
            if route is None:
                raise
            message = handle(route, exc, request)
            if message is None:
                raise
            return _settled_answer(message, request)  # nothing counts or records here

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call and hand a selected failure to `aon_error`, else `on_error`.

        Args:
            request: The tool call, its `BaseTool`, the agent state and runtime.
            handler: Runs the tool call (and any inner middleware).

        Returns:
            The tool's own result, or an error `ToolMessage` with the handler's content.

        Raises:
            TypeError: `aon_error` returned something that cannot be awaited, or a handler
                gave something that is not content; chained to the tool's exception.

        Example:
            `create_agent` calls this for every tool call on `ainvoke`/`astream`:
            ```python
            import asyncio
            from typing import Any

            from langchain_core.messages import ToolCall, ToolMessage
            from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
            from langgraph.types import Command

            from langchain_tool_errors import ToolErrorMiddleware

            call = ToolCall(name="search", args={"query": "x"}, id="c1")
            runtime: ToolRuntime[None, dict[str, Any]] = ToolRuntime(
                state={},
                context=None,
                config={},
                stream_writer=print,
                tool_call_id="c1",
                store=None,
            )
            request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=runtime)

            async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
                return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

            async def run_failing_tool(request: ToolCallRequest) -> ToolMessage | Command[Any]:
                raise TimeoutError("search timed out")

            middleware = ToolErrorMiddleware(aon_error=aexplain)
            message = asyncio.run(middleware.awrap_tool_call(request, run_failing_tool))
            assert isinstance(message, ToolMessage) and message.status == "error"
            ```
        """
        # Only the `try` runs on the success path; the failure is handled in a second
        # coroutine so this one stays as small (and as cheap to create) as an `async def`
        # that only awaits. The tool filter is consulted after a failure, as on the sync path.
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            # The same stages as on the sync path: route, then handle.
            route = self._table.route(exc, request)
            if route is None:
                raise
            message = await ahandle(route, exc, request)
            if message is None:
                raise
            return _settled_answer(message, request)  # nothing counts or records here

    def _repaired(
        self,
        repair: RepairCall,
        response: ModelResponse[Any],
        request: ModelRequest[Any],
    ) -> tuple[ModelResponse[Any] | ExtendedModelResponse[Any], list[ToolFailure]] | None:
        """The response with the calls the repair corrected, and their records; else `None`.

        The reply is the response's last `AIMessage`. Each repaired call keeps its place
        (a repaired malformed call joins the valid calls) and its id, and is recorded as
        `"repaired"` with the kind of failure it was. A repair is not a failure the model
        reads: no budget counts it.
        """
        messages = response.result
        replies = [(at, m) for at, m in enumerate(messages) if isinstance(m, AIMessage)]
        if not replies:
            return None
        at, reply = replies[-1]
        corrected: dict[str, ToolCall] = {}
        records: list[ToolFailure] = []
        recorder = self._recorder
        # Only the calls of the tools `tools=` selects (all with `from_routes`).
        for failure, call_id in found_in(reply, request, self._tool_names):
            returned = repair(failure)
            if returned is None:
                continue
            corrected[call_id] = require_call(returned, failure, call_id)
            if recorder is not None:
                standing = standing_request(failure.tool, call_id, request.state, request.runtime)
                records.append(recorder.failure(failure, standing, None, "repaired"))
        if not corrected:
            return None
        result = [*messages[:at], with_repairs(reply, corrected), *messages[at + 1 :]]
        structured = response.structured_response
        repaired = ModelResponse(result=result, structured_response=structured)
        if recorder is None or not recorder.keeps:
            return repaired, records
        kept: Command[Any] = Command(update={FAILURES_KEY: records})
        return ExtendedModelResponse(model_response=repaired, command=kept), records

    def _pause(self, held: HeldTool, request: ToolCallRequest) -> BudgetPause:
        """What the person reads for this call to a held tool."""
        failures: list[ToolFailure] = request.state.get(FAILURES_KEY) or []
        return pause_of(held, request.tool_call, failures)

    def _decided(
        self, decision: BudgetDecision, held: HeldTool, request: ToolCallRequest
    ) -> Command[Any]:
        """The call's answer for a person's "answer" or "stop": the tool does not run.

        "stop" is the budget's stop, made durable as a "stop" budget's is: the call is
        answered with it and the next hook raises `ToolErrorBudgetExceeded`.
        """
        call_id = _call_id(request)
        tool = tool_name(request)
        if decision["type"] == "answer":
            answer = _person_s_answer(decision["text"], call_id, tool)
            mark = own(step_of(request.state), call_id)
            return Command(update={"messages": [answer], SETTLED_KEY: mark})
        record: ToolFailure = {
            "middleware": self._name,
            "tool": held["tool"],
            "call_id": call_id,
            "kind": held["kind"],
            "error_type": held["error_type"],
            "route": held["route"],
            "outcome": "stopped",
        }
        stop = _person_s_stop(held)
        stop.failure = record
        kept = stop_of(stop, call_id)
        answer = stopped_answer(kept, call_id, tool, by_person=True)  # the call never ran
        mark = own(step_of(request.state), call_id)
        update = {"messages": [answer], STOPS_KEY: {self._name: kept}, SETTLED_KEY: mark}
        return Command(update=update)

    def _ignores(self, request: ToolCallRequest) -> bool:
        """Whether the call is to a tool outside `tools=`: no stage sees its failures."""
        names = self._tool_names
        return names is not None and tool_name(request) not in names

    def _concluded(
        self,
        message: ToolMessage,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: int | None,
    ) -> tuple[ToolMessage | Command[Any], ToolFailure | None]:
        """The counting and recording stages of a failure that has its message.

        Returns what the hook returns and the failure's record (`None` when nothing records
        or listens). A spent "stop" budget does not raise here: the call is answered with
        the stop, which goes into the state beside the step's other results, and
        `before_model` raises it once the step is saved (see `stopping.py`).
        """
        accounts = self._accounts
        recorder = self._recorder
        record: ToolFailure | None = None
        # The call is settled here: `before_model` leaves its answer alone.
        step = step_of(request.state)
        mark = settled(step, message.tool_call_id)
        update: dict[str, Any]
        repeats = self._repeats
        remembered = None if repeats is None else repeats.remember(request)
        if accounts is None:  # nothing counts: the handler's message is the answer
            update = {"messages": [message], SETTLED_KEY: mark}
            if remembered is not None:
                update[COUNTS_KEY] = remembered
            if recorder is not None:
                record = recorder.failure(failure, request, route, "answered")
                if recorder.keeps:
                    update[FAILURES_KEY] = [record]
            return Command(update=update), record
        try:
            counts: dict[str, int] = request.state.get(COUNTS_KEY) or {}
            spent = accounts.spend(failure, request, counts, route, in_step=True)
        except ToolErrorBudgetExceeded as stop:
            call_id = _call_id(request)
            stop.failure = failure_record(self._name, failure, request, route, "stopped")
            kept = stop_of(stop, call_id)
            keep_cause(self._name, stop, call_id, running_config())
            answer = stopped_answer(kept, call_id, tool_name(request))
            update = {
                "messages": [answer],
                STOPS_KEY: {self._name: kept},
                SETTLED_KEY: own(step, call_id),
            }
            if recorder is not None:
                record = stop.failure
                if recorder.keeps:
                    update[FAILURES_KEY] = [record]
            return Command(update=update), record
        told, increments, held = (None, None, None) if spent is None else spent
        update = {"messages": [told or message], SETTLED_KEY: mark}
        if increments is not None or remembered is not None:
            update[COUNTS_KEY] = {**(increments or {}), **(remembered or {})}
        if held is not None:
            update[PAUSES_KEY] = dict([held])
        if recorder is not None:
            outcome: FailureOutcome = (
                "told" if told is not None else "held" if held is not None else "answered"
            )
            record = recorder.failure(failure, request, route, outcome)
            if recorder.keeps:
                update[FAILURES_KEY] = [record]
        return Command(update=update), record

    def _before_running(
        self: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any] | None:
        """The answer to a call that must not run as it is, or `None` to run it.

        A call to a tool a "tell" budget closed is answered as closed; one to a tool an
        "interrupt" budget holds pauses the run for a person, whose "go on" runs it; a
        repeat of a call that failed is answered by its route without running the tool.
        """
        closing = self._closing
        if closing is not None and closing[0] in (request.state.get(COUNTS_KEY) or ()):
            closed = closing[1].answer_closed(request)  # a closed tool's call never runs
            if closed is not None:
                return _settled_closed(closed, request)
        holding = self._holding
        held = None if holding is None else holding.held(request)
        if held is not None:
            decision = ask(self._pause(held[1], request))
            if decision["type"] != "go_on":
                return self._decided(decision, held[1], request)
            released = Accounts.released(*held)
            result = self.wrap_tool_call(_without(held, released, request), handler)
            return _with_release(result, held[0], released)
        repeats = self._repeats
        repeated = None if repeats is None else repeats.repeated(request)
        if repeated is None:  # no call of this tool with these arguments failed in the run
            return None
        route = self._table.route(repeated, request)
        try:
            answer = None if route is None else reply_to(route, repeated, request)
        except GraphBubbleUp:
            raise
        except Exception:
            self._propagated(repeated, request, route)
            raise
        if route is None or answer is None:  # no route answers it: the tool runs again
            return None
        return self._finish(answer, repeated, request, route[2])

    async def _abefore_running(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any] | None:
        """`_before_running` on the async path."""
        closing = self._closing
        if closing is not None and closing[0] in (request.state.get(COUNTS_KEY) or ()):
            closed = closing[1].answer_closed(request)
            if closed is not None:
                return _settled_closed(closed, request)
        holding = self._holding
        held = None if holding is None else holding.held(request)
        if held is not None:
            decision = ask(self._pause(held[1], request))
            if decision["type"] != "go_on":
                return self._decided(decision, held[1], request)
            released = Accounts.released(*held)
            result = await self.awrap_tool_call(_without(held, released, request), handler)
            return _with_release(result, held[0], released)
        repeats = self._repeats
        repeated = None if repeats is None else repeats.repeated(request)
        if repeated is None:
            return None
        route = self._table.route(repeated, request)
        try:
            answer = None if route is None else await areply_to(route, repeated, request)
        except GraphBubbleUp:
            raise
        except Exception:
            await self._apropagated(repeated, request, route)
            raise
        if route is None or answer is None:
            return None
        return await self._afinish(answer, repeated, request, route[2])

    def _answered(
        self, exc: Exception, request: ToolCallRequest
    ) -> ToolMessage | Command[Any] | None:
        """A tool's exception through the stages: its answer, or `None` to let it go on up.

        Called while the exception is handled, so whatever a handler raises is chained to it.
        """
        route = self._table.route(exc, request)  # an exception is its own kind
        try:
            message = None if route is None else handle(route, exc, request)
        except GraphBubbleUp:
            raise
        except Exception:  # the handler failed, or what it gave was refused
            self._propagated(exc, request, route)
            raise
        if route is None or message is None:  # no route took it, or it declined
            self._propagated(exc, request, route)
            return None
        return self._finish(message, exc, request, route[2])

    async def _aanswered(
        self, exc: Exception, request: ToolCallRequest
    ) -> ToolMessage | Command[Any] | None:
        """`_answered` on the async path."""
        route = self._table.route(exc, request)
        try:
            message = None if route is None else await ahandle(route, exc, request)
        except GraphBubbleUp:
            raise
        except Exception:
            await self._apropagated(exc, request, route)
            raise
        if route is None or message is None:
            await self._apropagated(exc, request, route)
            return None
        return await self._afinish(message, exc, request, route[2])

    def _after_result(
        self, result: ToolMessage | Command[Any], request: ToolCallRequest
    ) -> ToolMessage | Command[Any]:
        """A result that is not a plain success, through the stages.

        An error message is classified, routed and counted, and so is one an inner
        middleware's `Command` answers with; any other result is a success.
        """
        if not isinstance(result, ToolMessage):
            inner = answered_inside(result, request)
            if inner is None:
                return result
            error, rest = inner
        elif result.status != "error":
            return result
        else:
            error, rest = result, None
        if self._ignores(request):
            return result
        failure = classify(error, request)
        route = self._table.route(failure, request)
        if route is not None:
            try:
                error = replace(route, failure, error, request)
            except GraphBubbleUp:
                raise
            except Exception:
                self._propagated(failure, request, route)
                raise
        return self._finish(error, failure, request, None if route is None else route[2], rest)

    async def _aafter_result(
        self, result: ToolMessage | Command[Any], request: ToolCallRequest
    ) -> ToolMessage | Command[Any]:
        """`_after_result` on the async path."""
        if not isinstance(result, ToolMessage):
            inner = answered_inside(result, request)
            if inner is None:
                return result
            error, rest = inner
        elif result.status != "error":
            return result
        else:
            error, rest = result, None
        if self._ignores(request):
            return result
        failure = classify(error, request)
        route = self._table.route(failure, request)
        if route is not None:
            try:
                error = await areplace(route, failure, error, request)
            except GraphBubbleUp:
                raise
            except Exception:
                await self._apropagated(failure, request, route)
                raise
        position = None if route is None else route[2]
        return await self._afinish(error, failure, request, position, rest)

    def _finish(
        self,
        message: ToolMessage,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: int | None,
        rest: dict[str, Any] | None = None,
    ) -> ToolMessage | Command[Any]:
        """Count and record a failure, tell the listeners, then answer.

        `rest` is the rest of an inner middleware's update, when its `Command` held the
        message: the answer goes back beside it.
        """
        answer, record = self._concluded(message, failure, request, route)
        recorder = self._recorder
        if recorder is not None and record is not None:
            recorder.tell(record)
        return answer if rest is None else put_back(rest, answer)

    async def _afinish(
        self,
        message: ToolMessage,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: int | None,
        rest: dict[str, Any] | None = None,
    ) -> ToolMessage | Command[Any]:
        """`_finish` on the async path: async listeners are awaited."""
        answer, record = self._concluded(message, failure, request, route)
        recorder = self._recorder
        if recorder is not None and record is not None:
            await recorder.atell(record)
        return answer if rest is None else put_back(rest, answer)

    def _propagated(
        self,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: RouteHandlers | None,
    ) -> None:
        """Tell the listeners of a failure that goes on up.

        No route took it, or its route's handler declined (returned `None`) or failed. A
        resume value its interrupt's schema refused is control flow, not a failure: the
        tool never ran, and no one is told.
        """
        recorder = self._recorder
        if recorder is not None and not self._ignores(request) and not _is_control(failure):
            position = None if route is None else route[2]
            recorder.tell(recorder.failure(failure, request, position, "propagated"))

    async def _apropagated(
        self,
        failure: Exception | ReportedFailure,
        request: ToolCallRequest,
        route: RouteHandlers | None,
    ) -> None:
        """`_propagated` on the async path."""
        recorder = self._recorder
        if recorder is not None and not self._ignores(request) and not _is_control(failure):
            position = None if route is None else route[2]
            await recorder.atell(recorder.failure(failure, request, position, "propagated"))


def _sent(
    messages: list[AnyMessage], provider: Provider, prefix: str | None
) -> list[AnyMessage] | None:
    """What the model is sent (`None`: the messages as they are).

    Every call answered (a call a cancelled run left without an answer gets one), then
    every error message checked against the provider and marked.
    """
    answered = with_every_call_answered(messages)
    complete = messages if answered is None else answered
    marked = prepared(complete, provider, prefix)
    return answered if marked is None else marked


def _settled_answer(message: ToolMessage, request: ToolCallRequest) -> ToolMessage | Command[Any]:
    """A plain middleware's answer, marked as settled where a watching one keeps such marks.

    Only an agent with a watching middleware in it has the state key: there, the answer
    goes back with the mark, so that one inside this never counts what it declined and
    this answered. Elsewhere the message goes back alone.
    """
    if SETTLED_KEY not in request.state:
        return message
    mark = settled(step_of(request.state), message.tool_call_id)
    return Command(update={"messages": [message], SETTLED_KEY: mark})


def _settled_closed(answer: ToolMessage, request: ToolCallRequest) -> Command[Any]:
    """A closed tool's answer, marked as this package's own: no middleware counts it."""
    mark = own(step_of(request.state), answer.tool_call_id)
    return Command(update={"messages": [answer], SETTLED_KEY: mark})


_Settled: TypeAlias = tuple[
    MalformedToolCall | InnerMiddlewareError,
    ToolCallRequest,
    ToolMessage | None,
    int | None,
    str | None,
]
"""A failure met in a model hook, after its route: the failure, the request standing for it,
the route's answer (`None` if it gave none), the route's position (`None` if no route took
it), and the id of the message it answers with already (`None` for a malformed call)."""


class _PausingFailureState(FailureState, PauseState):
    """The same, for a middleware that also keeps the record."""


_STATES: dict[tuple[bool, bool], type[AgentState[Any]]] = {
    (True, False): FailureState,
    (False, True): PauseState,
    (True, True): _PausingFailureState,
}
"""The state schema of a middleware that keeps the record, holds tools, or both."""


def _person_s_answer(text: str, call_id: str, tool: str) -> ToolMessage:
    """The answer a person gave in place of running the held tool, as the model reads it."""
    return ToolMessage(content=text, tool_call_id=call_id, name=tool)


def _person_s_stop(held: HeldTool) -> ToolErrorBudgetExceeded:
    """The budget's stop, as a person chose it for the held tool."""
    return ToolErrorBudgetExceeded(
        held["tool"],
        held["count"],
        held["limit"],
        held["scope"],
        route=held["route"],
        kind=held["kind"],
    )


def _without(
    held: tuple[str, HeldTool], released: dict[str, int], request: ToolCallRequest
) -> ToolCallRequest:
    """The request as it runs after a person's "go on": the tool released, its counts zero."""
    state = request.state
    holding: dict[str, HeldTool] = dict(state.get(PAUSES_KEY) or {})
    holding.pop(held[0], None)
    counts: dict[str, int] = {**(state.get(COUNTS_KEY) or {}), **dict.fromkeys(released, 0)}
    return request.override(state={**state, PAUSES_KEY: holding, COUNTS_KEY: counts})


def _with_release(
    result: ToolMessage | Command[Any], key: str, released: dict[str, int]
) -> ToolMessage | Command[Any]:
    """The call's result, with the release of its tool and the counts started again.

    The counts the call's own failure adds, if it failed, come after the reset (a
    negative value sets a count, see `add_counts`), and so does a hold that failure makes
    (a budget it spends at once, its `per_run` say). A `Command` that does more than
    update this graph's state goes back as it is, and the tool stays held.
    """
    release: dict[str, HeldTool | None] = {key: None}
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], COUNTS_KEY: released, PAUSES_KEY: release})
    update: object = result.update
    if result.graph is not None or result.goto or result.resume is not None:
        return result
    if not is_state_update(update):
        return result
    inner: object = update.get(COUNTS_KEY)
    if inner is not None and not is_state_update(inner):
        return result
    holds: object = update.get(PAUSES_KEY)
    if holds is not None and not is_state_update(holds):
        return result
    counts: dict[str, int] = dict(inner or {})
    for name in released:
        added = counts.get(name, 0)
        counts[name] = added if added < 0 else set_to(added)
    release.update(holds or {})
    return Command(update={**update, COUNTS_KEY: counts, PAUSES_KEY: release})


def _is_control(failure: Exception | ReportedFailure) -> bool:
    """Whether a failure that goes on up is LangGraph's control flow (an invalid resume)."""
    return isinstance(failure, Exception) and is_invalid_resume(failure)


class _WatchingToolErrorMiddleware(ToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A middleware that also meets the failures that are not exceptions, counts and records.

    `ToolErrorMiddleware.__init__` and `from_routes` give an instance this class when a
    budget is set, a route takes a kind of failure that is not an exception, or failures are
    recorded or listened to. Its hooks read as the stages every failure goes through:
    classify, route, handle, then count, record and tell (`_finish`).
    """

    state_schema = SettledState
    """The agent state these hooks read and write: the run's counts, stop and settled calls."""

    @override
    def wrap_tool_call(
        self: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call; hand an exception or an error message through the stages."""
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            answer = self._answered(exc, request)
            if answer is None:  # no route took it, or its handler declined
                raise
            return answer
        # A plain success goes straight back. `type() is`: `isinstance` against a pydantic
        # model class goes through its ABC metaclass, several times slower, and this is the
        # success path; any other result (a subclass, a `Command`) takes the longer way.
        if type(result) is ToolMessage and result.status != "error":
            return result
        return self._after_result(result, request)

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The same stages on the async path."""
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            answer = await self._aanswered(exc, request)
            if answer is None:
                raise
            return answer
        if type(result) is ToolMessage and result.status != "error":
            return result
        return await self._aafter_result(result, request)

    @override
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero (resumes of an interrupt do not pass here)."""
        return self._reset(state)

    @override
    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero, on the async path."""
        return self._reset(state)

    # A stop found here ends the run: `after_agent` raises it once this step is saved.
    @hook_config(can_jump_to=["end"])
    @override
    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Stop the run if a budget was spent; else settle the step the model will read.

        A budget spent in the step before is raised here, now that the step is saved. The
        step's failures in a row are put in call order with its successes
        (`Accounts.in_call_order`). A middleware that watches replies first meets the
        malformed calls of the model's last reply that its hook after the model missed: a
        hook listed inside it sent the run back to the model, and LangGraph skipped the rest.
        The error answers to that reply that this middleware did not settle were written by
        another middleware's hook after the model (a limit, a person's review): each goes
        through the stages as a failure of the kind `"inner_middleware"`.

        Raises:
            ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
        """
        self._raise_stop(state)
        accounts = self._accounts
        ordered = None if accounts is None else accounts.in_call_order(state)
        found = self._malformed(state, runtime)
        for failure, request, message in answered_elsewhere(state, runtime, self._name):
            if self._ignores(request) or self._is_closed(request, state):
                continue
            route = self._table.route(failure, request)
            try:
                answer = message if route is None else replace(route, failure, message, request)
            except GraphBubbleUp:
                raise
            except Exception:
                self._propagated(failure, request, route)
                raise
            position = None if route is None else route[2]
            # Only a route's new text replaces the answer; else it stays as it was written.
            reply = None if answer is message else answer
            found.append((failure, request, reply, position, message.id))
        if not found:
            return None if ordered is None else {COUNTS_KEY: Overwrite(ordered)}
        update, records = self._settle(state, found, ordered)
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                recorder.tell(record)
        return update

    @hook_config(can_jump_to=["end"])
    @override
    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`before_model` on the async path."""
        self._raise_stop(state)
        accounts = self._accounts
        ordered = None if accounts is None else accounts.in_call_order(state)
        found = await self._amalformed(state, runtime)
        for failure, request, message in answered_elsewhere(state, runtime, self._name):
            if self._ignores(request) or self._is_closed(request, state):
                continue
            route = self._table.route(failure, request)
            try:
                answer = (
                    message if route is None else await areplace(route, failure, message, request)
                )
            except GraphBubbleUp:
                raise
            except Exception:
                await self._apropagated(failure, request, route)
                raise
            position = None if route is None else route[2]
            # Only a route's new text replaces the answer; else it stays as it was written.
            reply = None if answer is message else answer
            found.append((failure, request, reply, position, message.id))
        if not found:
            return None if ordered is None else {COUNTS_KEY: Overwrite(ordered)}
        update, records = self._settle(state, found, ordered)
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                await recorder.atell(record)
        return update

    @override
    def after_agent(self, state: Any, runtime: Runtime[Any]) -> None:
        """Stop the run if a budget was spent in its last step: that step is saved now.

        Raises:
            ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
        """
        self._raise_stop(state)

    @override
    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> None:
        """`after_agent` on the async path."""
        self._raise_stop(state)

    def _malformed(self, state: Any, runtime: Runtime[Any]) -> list[_Settled]:
        """The malformed calls this middleware has not met: none, with no hook after the model."""
        return []

    async def _amalformed(self, state: Any, runtime: Runtime[Any]) -> list[_Settled]:
        """`_malformed` on the async path."""
        return []

    def _is_closed(self, request: ToolCallRequest, state: Any) -> bool:
        """Whether the call is to a tool a "tell" budget closed: answered, never a failure.

        This middleware answers such a call as it comes to run; another that answers it
        first (a limit, a person) gives its one answer instead, and it is not counted.
        """
        closing = self._closing
        return closing is not None and closing[1].closed(
            tool_name(request), state.get(COUNTS_KEY) or {}
        )

    def _raise_stop(self, state: Any) -> None:
        """Raise this middleware's budget stop, if the state holds one."""
        stops: dict[str, BudgetStop] | None = state.get(STOPS_KEY)
        stop = None if not stops else stops.get(self._name)
        if stop is not None:
            raise raised(self._name, stop, running_config())

    def _settle(
        self, state: Any, found: list[_Settled], ordered: dict[str, int] | None = None
    ) -> tuple[dict[str, Any] | None, list[ToolFailure]]:
        """Count and record failures met in a model hook, then answer them.

        Malformed calls (after the model, or before the next model call when a hook listed
        inside sent the run back to it) and answers written elsewhere (before it). A
        malformed call no route answered is left to `create_agent`, which answers it before
        the next model call, unless a "tell" budget it spent answers it; an answer written
        elsewhere is replaced (keeping its id) only by a route's or a budget's. A "stop"
        budget one of them spends answers it, and every call of the reply still unanswered,
        with the stop, and ends the run, which `after_agent` stops. A failed call of a tool an
        "interrupt" budget holds is that tool's next call: the run pauses for the person's
        decision before the failure is counted.

        Before the model, `ordered` is the run's counts with the last step's failures in a
        row put in call order (`Accounts.in_call_order`), when that changed them: the
        failures are counted after it, and the update writes the whole counts.

        Returns:
            The state update and the records for the listeners.
        """
        accounts = self._accounts
        recorder = self._recorder
        holding = self._holding
        messages: list[ToolMessage] = []
        increments: dict[str, int] = {}
        counts: dict[str, int] = dict((state.get(COUNTS_KEY) or {}) if ordered is None else ordered)
        started_again: set[str] = set()
        step = step_of(state)
        marks: dict[str, int] = {}
        holds: dict[str, HeldTool | None] = {}
        records: list[ToolFailure] = []
        update: dict[str, Any] = {}
        by_person = False  # whether a person's "stop" at a pause is what stops the run
        for index, (failure, request, reply, route, replaces) in enumerate(found):
            answer = reply
            outcome: FailureOutcome = "answered"
            if accounts is not None:
                try:
                    # A call of a held tool that never runs (a limit blocked it, or it was
                    # cut short) is the tool's next call: the run pauses here.
                    held = None if holding is None else holding.held(request)
                    decision = None if held is None else ask(self._pause(held[1], request))
                    if held is None or decision is None:
                        spent = accounts.spend(failure, request, counts, route)
                    elif decision["type"] == "answer":  # in place of the answer it had
                        text = decision["text"]
                        answer = _person_s_answer(text, _call_id(request), tool_name(request))
                        spent = None
                    elif decision["type"] == "stop":
                        by_person = True
                        raise _person_s_stop(held[1])
                    else:  # go on: the tool's counts start again, and count this failure
                        released = Accounts.released(*held)
                        holds[held[0]] = None
                        started_again.update(released)
                        counts.update(dict.fromkeys(released, 0))
                        spent = accounts.spend(failure, request, counts, route)
                except ToolErrorBudgetExceeded as stop:
                    stop.failure = failure_record(self._name, failure, request, route, "stopped")
                    if recorder is not None:
                        records.append(stop.failure)
                    stopped = self._stopped(stop, state, found[index:], by_person=by_person)
                    messages += stopped
                    for answer in stopped:  # this middleware's own answers now
                        marks.update(own(step, answer.tool_call_id))
                    update[STOPS_KEY] = {self._name: stop_of(stop, _call_id(request))}
                    update["jump_to"] = "end"
                    break
                if spent is not None:
                    told, more, held = spent
                    if told is not None:
                        answer, outcome = told, "told"
                    if held is not None:
                        holds.update([held])
                        outcome = "held"
                    for key, value in more.items():
                        increments[key] = increments.get(key, 0) + value
                        counts[key] = counts.get(key, 0) + value
            if recorder is not None:
                records.append(recorder.failure(failure, request, route, outcome))
            # Met here: an answer written elsewhere is not met again before the next model
            # call, nor a malformed call (`_malformed`).
            marks[settled_key(self._name, step, _call_id(request))] = 1
            if answer is not None:
                messages.append(answer if replaces is None else _keeping(answer, replaces))
        if messages:
            update["messages"] = messages
        if ordered is not None:  # the whole counts, releases and this hook's failures in them
            update[COUNTS_KEY] = Overwrite(counts)
        else:
            for key in started_again:  # the count a person's "go on" reset, and what came after
                increments[key] = set_to(counts.get(key, 0))
            if increments:
                update[COUNTS_KEY] = increments
        if marks:
            update[SETTLED_KEY] = marks
        if holds:
            update[PAUSES_KEY] = holds
        if recorder is not None and recorder.keeps and records:
            update[FAILURES_KEY] = records
        return update or None, records

    def _stopped(
        self,
        stop: ToolErrorBudgetExceeded,
        state: Any,
        left: list[_Settled],
        *,
        by_person: bool = False,
    ) -> list[ToolMessage]:
        """The answers when a failure met in a model hook stops the run.

        The stopping call and the malformed calls after it, then the reply's valid calls
        that nothing has answered: none of them runs. A call answered elsewhere keeps that
        answer, the stopping one too when such an answer spends the budget. `by_person`:
        a person stopped the run at the stopping call's pause, and each answer says so.
        """
        stopping, replaces = _call_id(left[0][1]), left[0][4]
        keep_cause(self._name, stop, stopping, running_config())
        if replaces is not None:
            return []  # every call has its answer, the stopping one the one written for it
        kept = stop_of(stop, stopping)
        answers = [stopped_answer(kept, stopping, tool_name(left[0][1]), by_person=by_person)]
        answers += [
            stopped_answer(kept, _call_id(r), tool_name(r), by_person=by_person)
            for _, r, _, _, replaces in left[1:]
            if replaces is None  # an answer written elsewhere stays its call's one answer
        ]
        reply, answered = last_reply(state)
        for call in () if reply is None else reply.tool_calls:
            call_id = call["id"]
            if call_id is not None and call_id not in answered:
                answers.append(stopped_answer(kept, call_id, call["name"], by_person=by_person))
        return answers

    def _reset(self, state: Any) -> dict[str, Any]:
        """The update that empties the run's counts and record: empty values, made anew.

        Each is written as LangGraph's `Overwrite`, which only a deliberate writer sends:
        the reducers take any other empty value as adding nothing. Only the keys this
        middleware writes: nothing else shows in a stream's updates.
        """
        update: dict[str, Any] = {SETTLED_KEY: Overwrite(given(state))}
        if self._accounts is not None or self._repeats is not None:
            no_counts: dict[str, int] = {}
            no_stops: dict[str, BudgetStop] = {}
            update[COUNTS_KEY] = Overwrite(no_counts)
            update[STOPS_KEY] = Overwrite(no_stops)
        if self._holding is not None:
            none_held: dict[str, HeldTool] = {}
            update[PAUSES_KEY] = Overwrite(none_held)
        if self.record_failures:
            no_records: list[ToolFailure] = []
            update[FAILURES_KEY] = Overwrite(no_records)
        return update


def _keeping(answer: ToolMessage, replaces: str) -> ToolMessage:
    """`answer` with the id of the message it replaces, so it takes that one's place."""
    return answer.model_copy(update={"id": replaces})


class _ReplyingToolErrorMiddleware(_WatchingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A watching middleware that also answers after each model reply.

    Chosen when a budget counts malformed calls (every budget does, unless its `kinds` say
    otherwise), a route takes malformed calls, or failures are recorded or listened to:
    malformed calls are seen only in the model's reply, never in a tool call.
    """

    # A stop found here ends the run: `after_agent` raises it once this step is saved. A
    # reply of only malformed calls goes back to the model, which reads their answers.
    @hook_config(can_jump_to=["end", "model"])
    @override
    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Count, record and answer the model's malformed calls.

        A reply with no call but malformed ones goes back to the model in the same run:
        `create_agent` would otherwise end the run with it, an empty answer.
        """
        settled = self._malformed(state, runtime)
        update, records = self._settle(state, settled)
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                recorder.tell(record)
        return _back_to_the_model(state, settled, update)

    @hook_config(can_jump_to=["end", "model"])
    @override
    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The same answers on the async path."""
        settled = await self._amalformed(state, runtime)
        update, records = self._settle(state, settled)
        recorder = self._recorder
        if recorder is not None:
            for record in records:
                await recorder.atell(record)
        return _back_to_the_model(state, settled, update)

    @override
    def _malformed(self, state: Any, runtime: Runtime[Any]) -> list[_Settled]:
        """The last reply's malformed calls this middleware has not met, each routed.

        Met after the model; else before the next model call, when a hook after the model
        listed inside this one sent the run back to the model (a reply of only malformed
        calls, which another watching middleware of this package sends back) and LangGraph
        skipped this one's.
        """
        settled: list[_Settled] = []
        for failure, request in self._unmet(state, runtime):
            route = self._table.route(failure, request)
            try:
                reply = None if route is None else reply_to(route, failure, request)
            except GraphBubbleUp:
                raise
            except Exception:
                self._propagated(failure, request, route)
                raise
            settled.append((failure, request, reply, None if route is None else route[2], None))
        return settled

    @override
    async def _amalformed(self, state: Any, runtime: Runtime[Any]) -> list[_Settled]:
        """`_malformed` on the async path."""
        settled: list[_Settled] = []
        for failure, request in self._unmet(state, runtime):
            route = self._table.route(failure, request)
            try:
                reply = None if route is None else await areply_to(route, failure, request)
            except GraphBubbleUp:
                raise
            except Exception:
                await self._apropagated(failure, request, route)
                raise
            settled.append((failure, request, reply, None if route is None else route[2], None))
        return settled

    def _unmet(
        self, state: Any, runtime: Runtime[Any]
    ) -> Iterator[tuple[MalformedToolCall, ToolCallRequest]]:
        """The malformed calls nothing answered that this middleware takes and has not met."""
        marks: Mapping[str, int] | None = None  # read at the first call: this runs before
        step = ""  # every model call, and most replies have no malformed call
        for failure, request in malformed_calls(state, runtime):
            if self._ignores(request):
                continue
            if marks is None:
                kept: Mapping[str, int] = state.get(SETTLED_KEY) or {}
                marks, step = kept, step_of(state)
            if not met(marks, self._name, step, _call_id(request)):
                yield failure, request


class _LookingToolErrorMiddleware(_WatchingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A watching middleware that looks at each call before it runs.

    Chosen when a "tell" budget may close a tool, an "interrupt" budget may hold one, or a
    route takes repeated calls. A class of its own keeps the look off the success path of
    every other watching middleware. Its hooks are the watching ones with the look in front,
    written out rather than calling them: a call more costs the success path about as much
    as langchain's whole hook.
    """

    @override
    def wrap_tool_call(
        self: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """The watching stages, after a look at the call."""
        # Until a failure is counted in the run, no tool is closed, held or has a failed
        # call to repeat (a hold is written with the failure that spent its budget).
        if request.state.get(COUNTS_KEY):
            early = self._before_running(request, handler)
            if early is not None:
                return early
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            answer = self._answered(exc, request)
            if answer is None:
                raise
            return answer
        if type(result) is ToolMessage and result.status != "error":
            return result
        return self._after_result(result, request)

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The same look and stages on the async path."""
        if request.state.get(COUNTS_KEY):
            early = await self._abefore_running(request, handler)
            if early is not None:
                return early
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            answer = await self._aanswered(exc, request)
            if answer is None:
                raise
            return answer
        if type(result) is ToolMessage and result.status != "error":
            return result
        return await self._aafter_result(result, request)


class _LookingReplying(
    _LookingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co],
    _ReplyingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """A looking middleware that also answers after each model reply."""


def _back_to_the_model(
    state: Any, settled: list[_Settled], update: dict[str, Any] | None
) -> dict[str, Any] | None:
    """`update`, sending the run back to the model if its reply held only malformed calls.

    Only when this middleware met one of them (a call of a tool it leaves alone is
    langchain's to answer) and no budget stopped the run.
    """
    if not settled or (update is not None and "jump_to" in update):
        return update
    reply, _ = last_reply(state)
    if reply is None or reply.tool_calls:
        return update
    return {**(update or {}), "jump_to": "model"}


def _call_id(request: ToolCallRequest) -> str:
    """The id of a settled call (checked when its message was made; malformed ones have one)."""
    return str(request.tool_call["id"])


class _SyncPathRefused(ToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """An `AsyncOnly` middleware: its sync hook refuses, before the tool runs.

    The static twin is the narrowed `self` of `ToolErrorMiddleware.wrap_tool_call`. A class
    of its own, rather than a check in the shared hook, keeps the sync success path of every
    other middleware free of it.
    """

    @override
    def wrap_tool_call(
        self: ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable],
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Refuse the sync path: this middleware has only an async handler."""
        raise NotImplementedError(_ASYNC_ONLY.format(name=self.name))


class _AsyncOnlyWatching(
    _SyncPathRefused[_ContentT_co, _ExcT_co, _ModeT_co],
    _WatchingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """A watching middleware with only an async handler: the sync hook refuses."""


class _AsyncOnlyReplying(
    _SyncPathRefused[_ContentT_co, _ExcT_co, _ModeT_co],
    _ReplyingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """A replying middleware with only an async handler: the sync hook refuses."""


class _AsyncOnlyLooking(
    _SyncPathRefused[_ContentT_co, _ExcT_co, _ModeT_co],
    _LookingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """A looking middleware with only an async handler: the sync hook refuses."""


class _AsyncOnlyLookingReplying(
    _SyncPathRefused[_ContentT_co, _ExcT_co, _ModeT_co],
    _LookingReplying[_ContentT_co, _ExcT_co, _ModeT_co],
):
    """A looking, replying middleware with only an async handler: the sync hook refuses."""


_WATCHING: dict[tuple[bool, bool], type[ToolErrorMiddleware[Any, Any, Any]]] = {
    (False, False): _WatchingToolErrorMiddleware,
    (True, False): _ReplyingToolErrorMiddleware,
    (False, True): _LookingToolErrorMiddleware,
    (True, True): _LookingReplying,
}
"""The watching class for (whether it answers after model replies, whether it looks at
each call before it runs)."""

_REFUSING_SYNC_PATH: dict[
    type[ToolErrorMiddleware[Any, Any, Any]], type[ToolErrorMiddleware[Any, Any, Any]]
] = {
    ToolErrorMiddleware: _SyncPathRefused,
    _WatchingToolErrorMiddleware: _AsyncOnlyWatching,
    _ReplyingToolErrorMiddleware: _AsyncOnlyReplying,
    _LookingToolErrorMiddleware: _AsyncOnlyLooking,
    _LookingReplying: _AsyncOnlyLookingReplying,
}
"""Each middleware class's `AsyncOnly` counterpart."""
