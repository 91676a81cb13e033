"""`ToolErrorMiddleware`: tool failures handed back to the model as error `ToolMessage`s."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, Never, cast, overload

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, hook_config
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command, TracePolicy, omit_payload
from typing_extensions import TypeVar, override

from _langchain_tool_errors.budget import ErrorBudget
from _langchain_tool_errors.call_checks import refuse_the_sync_path
from _langchain_tool_errors.checks import (
    reject_routes_keyword,
    require_exception_types,
    require_tool_selection,
)
from _langchain_tool_errors.control_flow import GraphBubbleUp
from _langchain_tool_errors.effects import arun, run
from _langchain_tool_errors.handler_checks import (
    StoredAsyncHandler,
    StoredHandler,
    require_handlers,
)
from _langchain_tool_errors.handler_types import AOnError, OnError, ToolErrorContent, ToolSelection
from _langchain_tool_errors.lifecycle import (
    after_exception,
    after_model,
    after_result,
    before_model,
    before_running,
    repaired_reply,
    told,
)
from _langchain_tool_errors.marking import DEFAULT_ERROR_PREFIX, sent
from _langchain_tool_errors.model_step import closed, finished, opened, started
from _langchain_tool_errors.modes import AsyncOnly, HandlerMode, SyncCapable
from _langchain_tool_errors.pausing import Release
from _langchain_tool_errors.plan import Plan, Shape, compile_plan
from _langchain_tool_errors.providers import provider_of
from _langchain_tool_errors.record_types import AFailureListener, FailureListener
from _langchain_tool_errors.repair import RepairCall
from _langchain_tool_errors.repeats import Rerun
from _langchain_tool_errors.route_table import widest
from _langchain_tool_errors.routes import Route, require_routes
from _langchain_tool_errors.settling import reset, sent_back, stopped_call
from _langchain_tool_errors.state import COUNTS_KEY, SettledState, schema_for
from _langchain_tool_errors.stopping import StopBeforeTheModel, plain_stop, raise_stop

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
    _plan: Plan

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
        require_handlers(on_error, aon_error, instead=_FROM_ROUTES)
        checked = require_exception_types(exceptions)
        tool_names = require_tool_selection(tools)
        # The configuration as one route, so that the hooks route every failure alike. Its
        # arguments were checked above; `Any` for the overloads' sake.
        given: Any = (checked, on_error, aon_error, tools)
        route = Route(given[0], given[1], aon_error=given[2], tools=given[3])
        options = (budget, error_prefix, record_failures, listeners, name, repair)
        self._configure(compile_plan((route,), tool_names, *options))
        # The overloads tie the handlers' content type and `exceptions=` to the class's type
        # parameters; the implementation's signature cannot name them (mypy checks it
        # against every overload), so the casts restate what the overloads proved.
        self._on_error = cast("OnError[_ContentT_co, Any] | None", on_error)
        self._aon_error = cast("AOnError[_ContentT_co, Any] | None", aon_error)
        self._exceptions = cast("tuple[type[_ExcT_co], ...]", checked)  # as above

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
            error_prefix: The text put once in front of every error message this
                middleware's routes write, or any other error message, in what is sent
                to a chat model whose integration drops the error flag (the state keeps
                the message as written). `ChatAnthropic` and `ChatBedrockConverse` keep
                the flag and get no mark; `ChatGoogleGenerativeAI` is sent the text as
                Gemini's `error` key. `None` sends every message as written.
            record_failures: Keep, in the agent state's `"tool_failures"`, one
                `ToolFailure` per failure of any kind, whichever route took it (its
                `route` is the route's position, `None` for none): one list per run, part
                of the output of `invoke`/`ainvoke`. Defaults to `False`.
            listeners: Callables told of each failure with its `ToolFailure`, as it is
                settled, whichever route took it: sync ones (`FailureListener`) are called,
                async ones (`AFailureListener`) awaited. What one raises is logged, and the
                run goes on as if it had not.
            repair: A `RepairCall`, offered each call of a model reply that names a tool
                the model was not offered, has arguments its tool's schema refuses, or has
                arguments that are not JSON. A corrected call it returns runs once in the
                original's place, under its id; `None` leaves the call to the routes.
                `None` (the default) repairs nothing.
            name: The middleware's name in the agent (`"ToolErrorMiddleware"` unless
                given); give each instance in one agent its own.

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
        options = (budget, error_prefix, record_failures, listeners, name, repair)
        middleware._configure(compile_plan(checked_routes, None, *options))
        middleware._on_error = None
        middleware._aon_error = None
        middleware._exceptions = widest(checked_routes)
        return middleware

    def _configure(self, plan: Plan) -> None:
        """Keep the plan the hooks read, and pick the class its graph needs."""
        # langchain adds a graph node for each of `before_agent`, `before_model`,
        # `after_model` and `after_agent` that a middleware's class defines, so a class
        # exists for each graph a configuration needs (`Plan.shape`), chosen here: users only
        # ever construct and annotate `ToolErrorMiddleware`.
        chosen = _CLASSES[plan.shape]
        if chosen is not type(self):
            object.__setattr__(self, "__class__", chosen)
        AgentMiddleware.__init__(self)
        self._plan = plan
        self.tools: Sequence[BaseTool] = ()  # this middleware registers no tools of its own
        if plan.keeps or plan.holding is not None:
            self.state_schema = schema_for(plan.keeps, plan.holding is not None)

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
        return self._plan.name

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
        return self._plan.tool_names

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
        return self._plan.routes

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
        return self._plan.budget

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
        return self._plan.error_prefix

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
        return self._plan.keeps

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
        recorder = self._plan.recorder
        return () if recorder is None else recorder.listeners

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
        return self._plan.repair

    @override
    def __repr__(self) -> str:
        plan = self._plan
        options = "" if plan.budget is None else f"budget={plan.budget!r}, "
        if plan.error_prefix != DEFAULT_ERROR_PREFIX:
            options += f"error_prefix={plan.error_prefix!r}, "
        if self.record_failures:
            options += "record_failures=True, "
        if self.listeners:
            options += f"listeners={list(self.listeners)!r}, "
        if plan.repair is not None:
            options += f"repair={plan.repair!r}, "
        if self._on_error is None and self._aon_error is None:
            routes = list(plan.routes)
            return f"ToolErrorMiddleware.from_routes({routes!r}, {options}name={plan.name!r})"
        tools = None if plan.tool_names is None else sorted(plan.tool_names)
        exceptions = tuple(exc.__name__ for exc in self._exceptions)
        return (
            f"ToolErrorMiddleware(on_error={self._on_error!r}, aon_error={self._aon_error!r}, "
            f"exceptions={exceptions}, tools={tools}, {options}name={plan.name!r})"
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

        A middleware with a budget, the record or listeners also settles the step the
        model reads as the call starts, and meets the reply's malformed calls once the
        model answers (see the budgets guide's "Graph steps").

        Returns:
            The model's response; where `repair=` corrects calls of its reply, with those;
            with what the step writes (counts, record, answers to malformed calls), as an
            `ExtendedModelResponse`.

        Raises:
            TypeError: An error message holds a content block the model's provider does
                not take in a tool result (see the providers guide); nothing is sent.
            ToolErrorBudgetExceeded: A "stop" budget was spent in the step before, or by
                an answer another middleware wrote, met as the call starts.

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
        plan, provider = self._plan, provider_of(request.model)
        opening = opened(plan, request)  # the outermost of ours meets the reply, for each
        try:
            begun = None
            if plan.settles_in_model_step:  # here, where no node is needed
                begun = run(started(plan, request))
                request = begun.request
            messages = sent(request.messages, provider, plan.error_prefix)
            try:
                response = handler(
                    request if messages is None else request.override(messages=messages)
                )
            except StopBeforeTheModel:  # one listed inside stopped the run: tell what was met
                if begun is not None:
                    run(told(plan, begun.records))
                raise
            if begun is None and opening is None and not plan.replies:
                return run(repaired_reply(plan, response, request, provider))
            return run(finished(plan, begun, response, request, provider))
        finally:
            closed(opening)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send the model its error messages marked, on the async path (`ainvoke`, `astream`).

        Args:
            request: What the model is asked: its chat model, messages and agent state.
            handler: Awaited; calls the model, through any middleware listed inside this one.

        Returns:
            What the model answered, with the calls of its reply `repair=` corrected, if any,
            and what the step writes around it (see `wrap_model_call`).

        Raises:
            TypeError: A content block of an error message is one the model's provider
                refuses in a tool result; nothing is sent (see the providers guide).
            ToolErrorBudgetExceeded: As in `wrap_model_call`.

        Example:
            ```python
            import asyncio
            from typing import Any

            from langchain.agents.middleware import ModelRequest, ModelResponse
            from langchain_core.messages import AIMessage, ToolMessage

            from langchain_tool_errors import ToolErrorMiddleware
            from langchain_tool_errors.handlers import report_type_only
            from langchain_tool_errors.testing import ScriptedChatModel

            answered = ToolMessage("42", tool_call_id="c0")
            failed = ToolMessage("no such id", tool_call_id="c1", status="error")
            conversation: ModelRequest[Any] = ModelRequest(
                model=ScriptedChatModel(script=[AIMessage("ok")]), messages=[answered, failed]
            )

            async def call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
                texts = [message.text for message in request.messages]
                return ModelResponse(result=[AIMessage(" | ".join(texts))])

            middleware = ToolErrorMiddleware(report_type_only)
            response = asyncio.run(middleware.awrap_model_call(conversation, call_model))
            assert isinstance(response, ModelResponse)
            assert response.result[0].text == "42 | Error: no such id"  # only errors are marked
            ```
        """
        plan, provider = self._plan, provider_of(request.model)
        opening = opened(plan, request)
        try:
            begun = None
            if plan.settles_in_model_step:
                begun = await arun(started(plan, request))
                request = begun.request
            messages = sent(request.messages, provider, plan.error_prefix)
            try:
                response = await handler(
                    request if messages is None else request.override(messages=messages)
                )
            except StopBeforeTheModel:
                if begun is not None:
                    await arun(told(plan, begun.records))
                raise
            if begun is None and opening is None and not plan.replies:
                return await arun(repaired_reply(plan, response, request, provider))
            return await arun(finished(plan, begun, response, request, provider))
        finally:
            closed(opening)

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
                state={}, context=None, config={}, stream_writer=print,
                tool_call_id="c1", store=None,
            )  # fmt: skip
            request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=runtime)

            def run_failing_tool(request: ToolCallRequest) -> ToolMessage | Command[Any]:
                raise TimeoutError("search timed out")

            middleware = ToolErrorMiddleware(report_type_only)
            message = middleware.wrap_tool_call(request, run_failing_tool)
            assert isinstance(message, ToolMessage) and message.status == "error"
            ```
        """
        plan = self._plan
        if not plan.sync_capable:  # the static twin is the narrowed `self` above
            refuse_the_sync_path(plan.name)
        if plan.replies and (stopped := stopped_call(plan.name, request)) is not None:
            return stopped  # beside a malformed call that spent the budget: it never runs
        # Until a failure is counted in the run, no tool is closed, held or has a failed
        # call to repeat (a hold is written with the failure that spent its budget).
        if plan.looks and request.state.get(COUNTS_KEY):
            early = run(before_running(plan, request))
            # A person's "go on", or a repeat no route answered: the call runs after all.
            if isinstance(early, (Release, Rerun)):
                return early.applied(self.wrap_tool_call(early.request, handler))
            if early is not None:
                return early
        try:
            try:
                result = handler(request)
            except StopBeforeTheModel as stop:  # a sub-agent's: a failure of the tool it ran in
                raise plain_stop(stop) from stop.__cause__
        except GraphBubbleUp:
            raise
        except plan.caught as exc:
            answer = run(after_exception(plan, exc, request))
            if answer is None:  # no route took it, or its handler declined
                raise
            return answer
        # A success, and anything a plain middleware does not watch, goes straight back.
        # `type() is`: `isinstance` against a pydantic model class goes through its ABC
        # metaclass, several times slower; any other result takes the longer way.
        if not plan.watches or (type(result) is ToolMessage and result.status != "error"):
            return result
        return run(after_result(plan, result, request))

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call and hand a selected failure to `aon_error`, else `on_error`.

        Args:
            request: The call to run: the model's tool call, its `BaseTool`, the agent
                state and the runtime.
            handler: Awaited; runs the tool, through any middleware listed inside this one.

        Returns:
            What the tool returned; for a failure a route handles, an error `ToolMessage`
            holding what the handler gave (in a `Command`, with what the state keeps of it,
            where a budget counts it or the record keeps it).

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

            runtime: ToolRuntime[None, dict[str, Any]] = ToolRuntime(
                state={}, context=None, config={}, stream_writer=print,
                tool_call_id="c2", store=None,
            )  # fmt: skip
            request = ToolCallRequest(
                tool_call=ToolCall(name="fetch", args={"url": "https://example.com"}, id="c2"),
                tool=None, state={}, runtime=runtime,
            )  # fmt: skip

            async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
                return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

            async def run_failing_tool(request: ToolCallRequest) -> ToolMessage | Command[Any]:
                raise TimeoutError("fetch timed out")

            middleware = ToolErrorMiddleware(aon_error=aexplain)
            message = asyncio.run(middleware.awrap_tool_call(request, run_failing_tool))
            assert isinstance(message, ToolMessage) and message.status == "error"
            ```
        """
        plan = self._plan
        if plan.replies and (stopped := stopped_call(plan.name, request)) is not None:
            return stopped
        if plan.looks and request.state.get(COUNTS_KEY):
            early = await arun(before_running(plan, request))
            if isinstance(early, (Release, Rerun)):
                return early.applied(await self.awrap_tool_call(early.request, handler))
            if early is not None:
                return early
        try:
            try:
                result = await handler(request)
            except StopBeforeTheModel as stop:
                raise plain_stop(stop) from stop.__cause__
        except GraphBubbleUp:
            raise
        except plan.caught as exc:
            answer = await arun(after_exception(plan, exc, request))
            if answer is None:
                raise
            return answer
        if not plan.watches or (type(result) is ToolMessage and result.status != "error"):
            return result
        return await arun(after_result(plan, result, request))


class _WatchingToolErrorMiddleware(ToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A middleware that also meets the failures that are not exceptions, counts and records.

    `ToolErrorMiddleware.__init__` and `from_routes` give an instance this class when a
    budget is set, a route takes a kind of failure that is not an exception, or failures are
    recorded or listened to (`Plan.shape`). Its hooks are the graph nodes that start a run
    from zero and raise a stop of the run's last step once saved; each step is settled as
    the model call starts, in the model call's own step (`model_step.started`).
    """

    state_schema = SettledState
    """The agent state these hooks read and write: the run's counts, stop and settled calls."""

    @override
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero (resumes of an interrupt do not pass here)."""
        return reset(self._plan, state)

    @override
    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero, on the async path."""
        return reset(self._plan, state)

    @override
    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Stop the run if a budget was spent in its last step: that step is saved now.

        Raises:
            ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
        """
        raise_stop(self._plan.name, state)
        return None

    @override
    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`after_agent` on the async path."""
        raise_stop(self._plan.name, state)
        return None


class _ReplyingToolErrorMiddleware(_WatchingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A watching middleware that also meets the malformed calls of each model reply.

    Chosen when a budget counts malformed calls (every budget does, unless its `kinds` say
    otherwise), a route takes malformed calls, or failures are recorded or listened to:
    malformed calls are seen only in the model's reply, never in a tool call. They are met
    in the model call's own step (`model_step.finished`).
    """

    # A reply of only malformed calls goes back to the model from the model call's step;
    # where another middleware's hook after the model drops that, from here.
    @hook_config(can_jump_to=["model"])
    @override
    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Stop the run if a budget was spent in its last step, else send back a reply.

        A reply of only malformed calls another middleware's hook kept from the model goes
        back to it here (see `settling.sent_back`).

        Raises:
            ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
        """
        raise_stop(self._plan.name, state)
        return sent_back(self._plan.name, state)

    @hook_config(can_jump_to=["model"])
    @override
    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`after_agent` on the async path."""
        raise_stop(self._plan.name, state)
        return sent_back(self._plan.name, state)


class _PausingToolErrorMiddleware(_WatchingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A watching middleware with an "interrupt" budget: it settles each step in a hook.

    A person's decision at a pause as the model call starts ends that pause only in a
    step that is saved; a model call's step that stops the run writes nothing, and would
    leave the pause pending. So the step is settled in a node before the model.
    """

    # A stop found here ends the run: `after_agent` raises it once this step is saved.
    @hook_config(can_jump_to=["end"])
    @override
    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Stop the run if a budget was spent; else settle the step the model will read.

        See `lifecycle.before_model`.

        Raises:
            ToolErrorBudgetExceeded: A "stop" budget of this middleware was spent.
        """
        return run(before_model(self._plan, state, runtime))

    @hook_config(can_jump_to=["end"])
    @override
    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`before_model` on the async path."""
        return await arun(before_model(self._plan, state, runtime))


class _PausingReplyingToolErrorMiddleware(
    _PausingToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]
):
    """A pausing middleware that also answers after each model reply, in a node.

    A held tool's call cut short in a reply is that tool's next call: the run pauses for
    the person, which only a node can do without calling the model again on resume.
    """

    # A stop found here ends the run: `after_agent` raises it once this step is saved. A
    # reply of only malformed calls goes back to the model, which reads their answers.
    @hook_config(can_jump_to=["end", "model"])
    @override
    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Count, record and answer the model's malformed calls (see `lifecycle.after_model`)."""
        return run(after_model(self._plan, state, runtime))

    @hook_config(can_jump_to=["end", "model"])
    @override
    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The same answers on the async path."""
        return await arun(after_model(self._plan, state, runtime))


_CLASSES: dict[Shape, type[ToolErrorMiddleware[Any, Any, Any]]] = {
    "plain": ToolErrorMiddleware,
    "watching": _WatchingToolErrorMiddleware,
    "replying": _ReplyingToolErrorMiddleware,
    "pausing": _PausingToolErrorMiddleware,
    "pausing_replying": _PausingReplyingToolErrorMiddleware,
}
"""The class of each graph shape: langchain makes a node of each model and agent hook."""
