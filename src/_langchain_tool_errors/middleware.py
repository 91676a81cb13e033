"""`ToolErrorMiddleware`: tool failures handed back to the model as error `ToolMessage`s."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, Literal, Never, TypeAlias, cast, overload

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, TracePolicy, omit_payload
from typing_extensions import TypeVar, override

from _langchain_tool_errors.budget import (
    COUNTS_KEY,
    RESET_UPDATE,
    BudgetState,
    ErrorBudget,
    ToolErrorBudgetExceeded,
)
from _langchain_tool_errors.checks import (
    reject_async_on_error,
    reject_with_routes,
    require_a_handler,
    require_awaitable,
    require_budget,
    require_callable,
    require_content,
    require_exception_types,
    require_name,
    require_tool_call_id,
    require_tool_name,
    require_tool_selection,
)
from _langchain_tool_errors.control_flow import GraphBubbleUp, is_invalid_resume
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
from _langchain_tool_errors.routes import Route, require_routes

_ContentT_co = TypeVar(
    "_ContentT_co", bound=ToolErrorContent, default=ToolErrorContent, covariant=True
)
_ExcT_co = TypeVar("_ExcT_co", bound=Exception, default=Exception, covariant=True)
_ModeT_co = TypeVar("_ModeT_co", bound=HandlerMode, default=HandlerMode, covariant=True)

_C = TypeVar("_C", bound=ToolErrorContent)
_C2 = TypeVar("_C2", bound=ToolErrorContent)
_E = TypeVar("_E", bound=Exception)
_M = TypeVar("_M", bound=HandlerMode)


# A route's handlers as the hooks call them, and the route's position: with `Any`
# exception, since the `except` clause only lets through instances of the route's
# `exceptions`, which the overloads tie to the handler's exception type (see
# `StoredHandler`). The position finds the budgets that count the route's failures.
_Handlers: TypeAlias = tuple["OnError[Any, Any] | None", "AOnError[Any, Any] | None", int]
_Compiled: TypeAlias = tuple[tuple[type[Exception], ...], frozenset[str] | None, _Handlers]
# The budgets that count one route's failures, each with the prefix of its state keys and
# the position of the route it belongs to (`None` for the middleware's): the route's own
# first, then the middleware's.
_Plan: TypeAlias = tuple[tuple[ErrorBudget, str, "int | None"], ...]


def _compile(routes: tuple[Route[Any], ...]) -> tuple[_Compiled, ...]:
    """The routes as plain tuples, the form the hooks read after a failure."""
    # A route exposes its handlers typed for `Never` exceptions (its exception type is
    # covariant); each was checked against the route's `exceptions`, which are the only
    # exceptions it is given, so calling it with `Any` is what the overloads proved safe.
    return tuple(
        (
            route.exceptions,
            route.selected_tools,
            (
                cast("OnError[Any, Any] | None", route.on_error),  # see the comment above
                cast("AOnError[Any, Any] | None", route.aon_error),  # see the comment above
                index,
            ),
        )
        for index, route in enumerate(routes)
    )


def _first_match(compiled: tuple[_Compiled, ...], exc: Exception, name: str) -> _Handlers | None:
    """The handlers of the first compiled route that matches, as an `except` clause would."""
    for exceptions, names, handlers in compiled:
        if isinstance(exc, exceptions) and (names is None or name in names):
            return handlers
    return None


def _plans(
    name: str, budget: ErrorBudget | None, routes: tuple[Route[Any], ...]
) -> tuple[_Plan, ...]:
    """For each route, the budgets that count its failures, with their state-key prefixes.

    The keys of one middleware start with its name, which is unique in an agent, so two
    budgeted middleware never share a count.
    """
    shared: _Plan = () if budget is None else ((budget, f"{name}\x00", None),)
    return tuple(
        (
            ((route.budget, f"{name}\x00routes[{index}]\x00", index),)
            if route.budget is not None
            else ()
        )
        + shared
        for index, route in enumerate(routes)
    )


def _except_clause(types: tuple[type[Exception], ...]) -> tuple[type[Exception], ...]:
    """What the hooks' `except` clause catches, before a failure is routed.

    The configured types, so that a catch-all makes it one check, unless one of them has a
    custom metaclass: an `except` clause matches by real inheritance only and so misses the
    classes registered with an ABC, which `isinstance` (what routing uses) sees. Then the
    clause catches every `Exception`, and routing re-raises what no route matches.
    """
    if all(type(exc) is type for exc in types):
        return types
    return (Exception,)


_CACHE_SIZE = 1024
"""How many (exception type, tool name) pairs a routed middleware remembers the route of."""


def _cache_for(routes: tuple[Route[Any], ...]) -> dict[tuple[type, str], _Handlers | None] | None:
    """An empty route cache where the route only depends on the exception's type and tool.

    That holds for several routes whose exception classes are plain classes: an `isinstance`
    check against them depends on the class alone. A metaclass with `__instancecheck__`
    (an ABC with registered classes) could answer differently over time, so such routes
    and a single route (one check, cheaper than a lookup) are matched afresh each time.
    """
    plain = all(type(exc) is type for route in routes for exc in route.exceptions)
    return {} if len(routes) > 1 and plain else None


_ASYNC_ONLY = (
    "{name} has only an async handler (`aon_error`), and the agent is running on the sync "
    "path (invoke/stream). Run the agent with `ainvoke`/`astream`, or also pass a sync "
    "`on_error`."
)


_ERROR_TEMPLATE = ToolMessage(content="", tool_call_id="template", status="error")

_SPENT = "\x00spent"
"""The end of the state key that marks a tool closed by a "tell" budget for the run."""


def _with_counts(message: ToolMessage, counts: dict[str, int]) -> Command[Any]:
    """A counted failure's answer: the message, and the state update that counts it."""
    return Command(update={"messages": [message], COUNTS_KEY: counts})


def _unavailable(budget: ErrorBudget, tool_call_id: str, tool: str, count: int) -> ToolMessage:
    """The message a "tell" budget answers a closed tool's calls with."""
    content = budget.message.format(tool=tool, count=count)
    return ToolMessage(content=content, tool_call_id=tool_call_id, name=tool, status="error")


def tool_name(request: ToolCallRequest) -> str:
    """The name of the tool a request calls: its `BaseTool`'s, else the name the model gave."""
    tool = request.tool
    return tool.name if tool is not None else request.tool_call["name"]


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
        from langchain_tool_errors import ToolErrorMiddleware

        def on_error(exc: Exception, request: ToolCallRequest) -> str:
            return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

        agent = create_agent(model, tools=[search], middleware=[ToolErrorMiddleware(on_error)])
        ```
    """

    trace_policy: TracePolicy | None = TracePolicy(process_inputs=omit_payload)
    """Hook spans record no request payload (the tool call's arguments and the state)."""

    _on_error: OnError[_ContentT_co, Any] | None
    _aon_error: AOnError[_ContentT_co, Any] | None
    _exceptions: tuple[type[_ExcT_co], ...]
    _tool_names: frozenset[str] | None
    _caught: tuple[type[Exception], ...]

    # The overloads list only what each shape takes, and those that take more come first:
    # an editor's signature help highlights the first overload whose parameters fit what is
    # typed so far, and none then shows a handler typed `None` for an argument just given.
    # A sync handler, and an async one for the async path; no exception filter.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C | _C2, Exception, SyncCapable],
        on_error: OnError[_C, Exception],
        *,
        aon_error: AOnError[_C2, Exception],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    # A sync handler, on both paths; no exception filter.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C, Exception, SyncCapable],
        on_error: OnError[_C, Exception],
        *,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    # An async handler only (the sync path is a type error); no exception filter.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C, Exception, AsyncOnly],
        *,
        aon_error: AOnError[_C, Exception],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    # The same three, for the exception types in `exceptions=`.
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C | _C2, _E, SyncCapable],
        on_error: OnError[_C, _E],
        *,
        aon_error: AOnError[_C2, _E],
        exceptions: type[_E] | tuple[type[_E], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C, _E, SyncCapable],
        on_error: OnError[_C, _E],
        *,
        exceptions: type[_E] | tuple[type[_E], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: ToolErrorMiddleware[_C, _E, AsyncOnly],
        *,
        aon_error: AOnError[_C, _E],
        exceptions: type[_E] | tuple[type[_E], ...],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    # Ordered routes, each an `except` clause with its own exceptions, handlers and tools.
    # Each route checked its handlers against its exceptions where it was written; the
    # middleware's content type is the general one, so routes returning text and routes
    # returning blocks mix in one list in every checker (mypy joins a list's items).
    @overload
    def __init__(
        self: ToolErrorMiddleware[ToolErrorContent, Exception, _M],
        *,
        routes: Sequence[Route[_M]],
        budget: ErrorBudget | None = None,
        name: str | None = None,
    ) -> None: ...
    def __init__(
        self,
        on_error: StoredHandler | None = None,
        *,
        aon_error: StoredAsyncHandler | None = None,
        exceptions: type[Exception] | tuple[type[Exception], ...] = Exception,
        tools: ToolSelection | None = None,
        routes: Sequence[Route[Any]] | None = None,
        budget: ErrorBudget | None = None,
        name: str | None = None,
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
            routes: Instead of the four arguments above, an ordered list of `Route`s: the
                first whose exceptions and tools match a failure handles it, as the first
                matching `except` clause does (see `Route`).
            budget: An `ErrorBudget`: at most so many handled failures per tool, or in
                all, in one run of the agent; what happens then is the budget's choice.
                It counts every failure handed back, whatever its route (a `Route` may
                have a budget of its own too). `None` (the default) sets no limit.
            name: The middleware's name in the agent; defaults to `"ToolErrorMiddleware"`.
                Give each instance in one agent its own name.

        Raises:
            TypeError: A handler is missing, not callable, or async where a sync one is
                expected; or `exceptions`, `tools` or `name` has the wrong type; or
                `routes` is not a list or tuple of `Route`s, or comes with a handler. A
                missing handler raises an error that is also a `ValueError`.
            ValueError: `exceptions`, `tools` or `routes` is empty, `exceptions` names a
                LangGraph control-flow signal, or a route can never match.
        """
        checked_budget = require_budget(budget)
        if routes is not None:
            reject_with_routes(
                on_error=on_error, aon_error=aon_error, exceptions=exceptions, tools=tools
            )
            checked_routes = require_routes(routes)
        else:
            checked_routes = ()
        budgets = [checked_budget, *(route.budget for route in checked_routes)]
        if any(budgets):
            # The budgets' hooks (a reset at the start of each run, the counting, and for
            # "tell" the answers to closed tools) live in subclasses: langchain adds a graph
            # node for `before_agent` or `after_model` only to middleware whose class defines
            # it, so a middleware without a budget runs as before. The class is chosen
            # before any attribute is set, so attribute access stays fast.
            telling = any(spent.when_spent == "tell" for spent in budgets if spent)
            chosen = _TellingToolErrorMiddleware if telling else _BudgetedToolErrorMiddleware
            object.__setattr__(self, "__class__", chosen)
            self.state_schema = BudgetState
        super().__init__()
        self._name = require_name(name)
        self._budget = checked_budget
        self.tools: Sequence[BaseTool] = ()  # this middleware registers no tools of its own
        if checked_routes:
            self._set_routes(checked_routes)
            self._sync_capable = all(route.on_error is not None for route in self._routes)
            self._on_error = None
            self._aon_error = None
            self._tool_names = None
            # Every type some route catches, less those another of them already covers. The
            # overload types a routed middleware's exception parameter as `Exception`.
            caught = {exc for route in self._routes for exc in route.exceptions}
            widest = [exc for exc in caught if not issubclass(exc, tuple(caught - {exc}))]
            self._exceptions = cast("tuple[type[_ExcT_co], ...]", tuple(widest))
            self._caught = _except_clause(self._exceptions)
            return
        require_a_handler(on_error, aon_error)
        require_callable("on_error", on_error)
        require_callable("aon_error", aon_error)
        reject_async_on_error(on_error)
        # The overloads tie the handlers' content type and `exceptions=` to the class's
        # type parameters; the implementation's signature cannot name them (mypy checks it
        # against every overload), so the casts restate what the overloads proved.
        self._on_error = cast("OnError[_ContentT_co, Any] | None", on_error)
        self._aon_error = cast("AOnError[_ContentT_co, Any] | None", aon_error)
        self._exceptions = cast("tuple[type[_ExcT_co], ...]", require_exception_types(exceptions))
        self._tool_names = require_tool_selection(tools)
        self._sync_capable = on_error is not None
        # The same configuration as one route, so that the hooks route every failure alike.
        # Its arguments were checked above and are typed `Any` for the overloads' sake.
        self._caught = _except_clause(self._exceptions)
        given: Any = (exceptions, on_error, aon_error, tools)
        self._set_routes((Route(given[0], given[1], aon_error=given[2], tools=given[3]),))

    def _set_routes(self, routes: tuple[Route[Any], ...]) -> None:
        """Keep the checked routes, and the forms the hooks read them in after a failure."""
        self._routes = routes
        self._compiled = _compile(routes)
        self._cache = _cache_for(routes)
        self._plans = _plans(self._name, self._budget, routes)
        self._telling = tuple(
            dict.fromkeys(
                (budget, prefix)
                for plan in self._plans
                for budget, prefix, _ in plan
                if budget.when_spent == "tell"
            )
        )

    @property
    @override
    def name(self) -> str:
        """The middleware's name in the agent, unique among its middleware.

        Example:
            ```python
            assert ToolErrorMiddleware(explain, name="search_errors").name == "search_errors"
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
            middleware = ToolErrorMiddleware(explain, exceptions=TimeoutError)
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
            middleware = ToolErrorMiddleware(explain, tools=("search", lookup))
            assert middleware.selected_tools == frozenset({"search", "lookup"})
            ```
        """
        return self._tool_names

    @property
    def routes(self) -> tuple[Route[HandlerMode], ...]:
        """The routes, in order: those given as `routes=`, or the one the arguments make.

        Read-only. A middleware built with `routes=` reports `None` for `on_error`,
        `aon_error` and `selected_tools`; each route has its own.

        Example:
            ```python
            middleware = ToolErrorMiddleware(
                routes=[Route(KeyError, explain), Route(Exception, report_type_only)]
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
            middleware = ToolErrorMiddleware(explain, budget=ErrorBudget(per_run=5))
            assert middleware.budget is not None and middleware.budget.per_run == 5
            ```
        """
        return self._budget

    @override
    def __repr__(self) -> str:
        budget = "" if self._budget is None else f"budget={self._budget!r}, "
        if self._on_error is None and self._aon_error is None:
            return (
                f"ToolErrorMiddleware(routes={list(self._routes)!r}, {budget}name={self._name!r})"
            )
        tools = None if self._tool_names is None else sorted(self._tool_names)
        exceptions = tuple(exc.__name__ for exc in self._exceptions)
        return (
            f"ToolErrorMiddleware(on_error={self._on_error!r}, aon_error={self._aon_error!r}, "
            f"exceptions={exceptions}, tools={tools}, {budget}name={self._name!r})"
        )

    def _route(self, exc: Exception, request: ToolCallRequest) -> _Handlers | None:
        """The handlers of the first route that matches this failure, or `None` to re-raise.

        An invalid resume value is never routed: the human, not the model, must answer it.
        """
        if is_invalid_resume(exc):
            return None
        name = tool_name(request)
        cache = self._cache
        if cache is None:
            return _first_match(self._compiled, exc, name)
        key = (type(exc), name)
        if key in cache:
            return cache[key]
        found = _first_match(self._compiled, exc, name)
        if len(cache) < _CACHE_SIZE:
            cache[key] = found
        return found

    def _error_message(
        self, argument: str, content: object, exc: Exception, request: ToolCallRequest
    ) -> ToolMessage:
        name = tool_name(request)
        # Every field is checked above, so the message is copied from a validated template
        # rather than validated again by pydantic (a third of the cost); the dicts are fresh
        # so no two messages share one. tests/test_middleware.py compares the result with a
        # ToolMessage built the ordinary way.
        return _ERROR_TEMPLATE.model_copy(
            update={
                "content": require_content(argument, content, exc),
                "tool_call_id": require_tool_call_id(request, name, exc),
                "name": require_tool_name(name, exc),
                "additional_kwargs": {},
                "response_metadata": {},
            }
        )

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
            message = ToolErrorMiddleware(explain).wrap_tool_call(request, run_failing_tool)
            assert isinstance(message, ToolMessage) and message.status == "error"
            ```
        """
        if not self._sync_capable:
            raise NotImplementedError(_ASYNC_ONLY.format(name=self._name))
        # The routes (and their tool filters) are consulted only once the tool has failed:
        # a successful call passes through untouched, so the success path costs the same
        # with any number of routes and filters of any size.
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            message = self._handle(exc, request, self._route(exc, request))
            if message is None:
                raise
            return message

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
            middleware = ToolErrorMiddleware(aon_error=aexplain)
            message = asyncio.run(middleware.awrap_tool_call(request, arun_failing_tool))
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
            message = await self._ahandle(exc, request, self._route(exc, request))
            if message is None:
                raise
            return message

    async def _ahandle(
        self, exc: Exception, request: ToolCallRequest, route: _Handlers | None
    ) -> ToolMessage | None:
        """The error message for a failure on the async path, or `None` to re-raise it."""
        if route is None:
            return None
        on_error, aon_error, _ = route
        if aon_error is not None:
            argument = "aon_error"
            content = await require_awaitable(aon_error(exc, request), exc)
        else:
            # Every route has a handler: with no `aon_error` there is an `on_error`.
            argument = "on_error"
            content = on_error(exc, request) if on_error else None
        if content is None:
            return None
        return self._error_message(argument, content, exc, request)

    def _handle(
        self, exc: Exception, request: ToolCallRequest, route: _Handlers | None
    ) -> ToolMessage | None:
        """The error message for a failure on the sync path, or `None` to re-raise it."""
        # Every route of a sync-capable middleware has an `on_error`.
        on_error = None if route is None else route[0]
        if on_error is None:
            return None
        content = on_error(exc, request)
        if content is None:
            return None
        return self._error_message("on_error", content, exc, request)


class _BudgetedToolErrorMiddleware(ToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A `ToolErrorMiddleware` built with `budget=`: counts handled failures per run.

    `ToolErrorMiddleware.__init__` gives an instance this class when a budget is set.
    """

    @override
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero (resumes of an interrupt do not pass here)."""
        return {COUNTS_KEY: RESET_UPDATE}

    @override
    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        """A new run starts from zero, on the async path."""
        return {COUNTS_KEY: RESET_UPDATE}

    def _counted(
        self,
        message: ToolMessage,
        exc: Exception,
        request: ToolCallRequest,
        route: int,
    ) -> ToolMessage | Command[Any]:
        """Count a handled failure against the budgets of its route and of the middleware.

        Returns the handler's message with the state update that counts it; or, once a
        budget is spent, raises `ToolErrorBudgetExceeded` ("stop") or answers the call with
        the budget's message instead ("tell"). A route no budget counts keeps its message.
        """
        plan = self._plans[route]
        if not plan:
            return message
        tool = tool_name(request)
        counts: dict[str, int] = request.state.get(COUNTS_KEY) or {}
        increments: dict[str, int] = {}
        over: tuple[ErrorBudget, str, int | None, int, int, Literal["tool", "run"]] | None = None
        for budget, prefix, owner in plan:
            tool_key = f"{prefix}{tool}"
            tool_count = counts.get(tool_key, 0) + 1
            run_count = counts.get(prefix, 0) + 1
            increments[tool_key] = increments[prefix] = 1
            if over is not None:
                continue
            if budget.per_tool is not None and tool_count > budget.per_tool:
                over = (budget, prefix, owner, tool_count, budget.per_tool, "tool")
            elif budget.per_run is not None and run_count > budget.per_run:
                over = (budget, prefix, owner, run_count, budget.per_run, "run")
        if over is None:
            return _with_counts(message, increments)
        budget, prefix, owner, count, limit, scope = over
        if budget.when_spent == "stop":
            raise ToolErrorBudgetExceeded(tool, count, limit, scope, route=owner) from exc
        tool_count = counts.get(f"{prefix}{tool}", 0) + 1
        message = _unavailable(budget, require_tool_call_id(request, tool, exc), tool, tool_count)
        increments[f"{prefix}{tool}{_SPENT}"] = 1
        return Command(update={"messages": [message], COUNTS_KEY: increments})

    # Users only ever see `ToolErrorMiddleware`'s signature (the type checkers know nothing
    # of this class), so `self` needs no narrowing here: the base's keeps the guarantee.
    @override
    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """As `ToolErrorMiddleware.wrap_tool_call`, counting each handled failure."""
        if not self._sync_capable:
            raise NotImplementedError(_ASYNC_ONLY.format(name=self._name))
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            # The handler decides first: its `None` re-raises the same exception and
            # counts nothing, however spent the budget; only a handled failure is counted.
            route = self._route(exc, request)
            if route is None:
                raise
            message = self._handle(exc, request, route)
            if message is None:
                raise
            return self._counted(message, exc, request, route[2])

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """As `ToolErrorMiddleware.awrap_tool_call`, counting each handled failure."""
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except self._caught as exc:
            # As on the sync path, the handler decides before anything is counted.
            route = self._route(exc, request)
            if route is None:
                raise
            message = await self._ahandle(exc, request, route)
            if message is None:
                raise
            return self._counted(message, exc, request, route[2])


class _TellingToolErrorMiddleware(_BudgetedToolErrorMiddleware[_ContentT_co, _ExcT_co, _ModeT_co]):
    """A budgeted middleware whose spent budget closes a tool for the rest of the run.

    After each model reply, calls to a closed tool are answered with the budget's message
    at once, so they never reach the tools node (and the tool never runs again).
    """

    def _answer_closed(self, state: Any) -> dict[str, Any] | None:
        counts: dict[str, int] | None = state.get(COUNTS_KEY)
        if not counts:
            return None
        last = state["messages"][-1]
        if not isinstance(last, AIMessage):
            return None
        answers: list[ToolMessage] = []
        for tool_call in last.tool_calls:
            tool, call_id = tool_call["name"], tool_call["id"]
            if call_id is None:
                continue
            for budget, prefix in self._telling:
                if f"{prefix}{tool}{_SPENT}" in counts:
                    count = counts.get(f"{prefix}{tool}", 0)
                    answers.append(_unavailable(budget, call_id, tool, count))
                    break
        return {"messages": answers} if answers else None

    @override
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Answer the model's calls to tools the budget has closed in this run."""
        return self._answer_closed(state)

    @override
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Answer the model's calls to closed tools, on the async path."""
        return self._answer_closed(state)
