"""`Route`: one `except` clause of a `ToolErrorMiddleware.from_routes([...])`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, Never, cast, overload

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import TypeIs, TypeVar, override

from _langchain_tool_errors.budget import ErrorBudget
from _langchain_tool_errors.checks import (
    require_budget,
    require_failure_types,
    require_retryable,
    require_tool_selection,
)
from _langchain_tool_errors.failures import TRANSIENT, ReportedFailure
from _langchain_tool_errors.handler_checks import (
    StoredAsyncHandler,
    StoredHandler,
    require_handlers,
)
from _langchain_tool_errors.handler_types import AOnError, OnError, ToolErrorContent, ToolSelection
from _langchain_tool_errors.modes import AsyncOnly, HandlerMode, SyncCapable

_ModeT_co = TypeVar("_ModeT_co", bound=HandlerMode, default=HandlerMode, covariant=True)

# The constructor's type parameters, named as in ToolErrorMiddleware's: mypy names them in
# its errors.
# A route selects exception types and the kinds of failure that are not exceptions
# (`ReportedFailure` and its subclasses) alike.
_ExceptionT = TypeVar("_ExceptionT", bound=Exception | ReportedFailure)
_FirstExceptionT = TypeVar("_FirstExceptionT", bound=Exception | ReportedFailure)
_SecondExceptionT = TypeVar("_SecondExceptionT", bound=Exception | ReportedFailure)


class Route(Generic[_ModeT_co]):
    """One `except` clause of a middleware: exception types, a handler, optionally tools.

    Give `ToolErrorMiddleware.from_routes` an ordered list of routes. When a tool fails, the
    first route whose exception types and tools both match handles the failure, as
    the first matching `except` clause does; if its handler returns `None` the exception
    propagates unchanged (there is no falling through to later routes), and a failure no
    route matches propagates unchanged too. A last `Route(Exception, ...)` is the fallback.

    The handler may be typed for exactly the route's exceptions: with
    `Route((KeyError, IndexError), handler)` it takes `KeyError | IndexError`, in every
    checker (with three or more types mypy joins them, so type the handler for their
    common base there). The route checks its handler against its exceptions where it is
    written, so its one type parameter is its mode, `SyncCapable` or `AsyncOnly`, as on
    `ToolErrorMiddleware`: a route typed `Route[SyncCapable]` has a sync handler.

    A route may have an `ErrorBudget` of its own, counting only the failures it handles.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import Route, ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only


        def missing_record(exc: KeyError, request: ToolCallRequest) -> str:
            return f"No record {exc.args[0]!r}; check the id and try again."


        def try_later(exc: TimeoutError | ConnectionError, request: ToolCallRequest) -> str:
            return f"`{request.tool_call['name']}` is unreachable; try again later."


        middleware = ToolErrorMiddleware.from_routes(
            [
                Route(KeyError, missing_record, tools=["lookup"]),
                Route((TimeoutError, ConnectionError), try_later),
                Route(Exception, report_type_only),
            ]
        )
        ```
    """

    __slots__ = ("_aon_error", "_budget", "_exceptions", "_on_error", "_retryable", "_tool_names")

    _on_error: OnError[ToolErrorContent, Any] | None
    _aon_error: AOnError[ToolErrorContent, Any] | None
    _exceptions: tuple[type[Exception | ReportedFailure], ...]
    _tool_names: frozenset[str] | None
    _budget: ErrorBudget | None
    _retryable: tuple[type[Exception | ReportedFailure], ...]

    # The shapes in the order of ToolErrorMiddleware's overloads (see there, for editors): the
    # one with every parameter first, both handlers before one. A tuple of two types has
    # overloads of its own, first as the narrower form, so that mypy does not join the two
    # into their base. The handlers are typed as plain callables (an `OnError` fits them), so
    # that mypy solves the exception type from `exceptions` before it looks at a handler and,
    # when the two differ, names both; what a handler returns is `ToolErrorContent` itself (a
    # route has no content type parameter), which mypy names when a handler returns another.
    @overload
    def __init__(
        self: Route[SyncCapable],
        exceptions: tuple[type[_FirstExceptionT], type[_SecondExceptionT]],
        on_error: Callable[
            [_FirstExceptionT | _SecondExceptionT, ToolCallRequest], ToolErrorContent | None
        ],
        *,
        aon_error: Callable[
            [_FirstExceptionT | _SecondExceptionT, ToolCallRequest],
            Awaitable[ToolErrorContent | None],
        ],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    @overload
    def __init__(
        self: Route[SyncCapable],
        exceptions: tuple[type[_FirstExceptionT], type[_SecondExceptionT]],
        on_error: Callable[
            [_FirstExceptionT | _SecondExceptionT, ToolCallRequest], ToolErrorContent | None
        ],
        *,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    @overload
    def __init__(
        self: Route[AsyncOnly],
        exceptions: tuple[type[_FirstExceptionT], type[_SecondExceptionT]],
        *,
        aon_error: Callable[
            [_FirstExceptionT | _SecondExceptionT, ToolCallRequest],
            Awaitable[ToolErrorContent | None],
        ],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    @overload
    def __init__(
        self: Route[SyncCapable],
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        on_error: Callable[[_ExceptionT, ToolCallRequest], ToolErrorContent | None],
        *,
        aon_error: Callable[[_ExceptionT, ToolCallRequest], Awaitable[ToolErrorContent | None]],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    @overload
    def __init__(
        self: Route[SyncCapable],
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        on_error: Callable[[_ExceptionT, ToolCallRequest], ToolErrorContent | None],
        *,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    @overload
    def __init__(
        self: Route[AsyncOnly],
        exceptions: type[_ExceptionT] | tuple[type[_ExceptionT], ...],
        *,
        aon_error: Callable[[_ExceptionT, ToolCallRequest], Awaitable[ToolErrorContent | None]],
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None: ...
    def __init__(
        self,
        exceptions: object,
        on_error: StoredHandler | None = None,
        *,
        aon_error: StoredAsyncHandler | None = None,
        tools: ToolSelection | None = None,
        budget: ErrorBudget | None = None,
        retryable: type[Exception | ReportedFailure]
        | tuple[type[Exception | ReportedFailure], ...] = (TimeoutError, ConnectionError),
    ) -> None:
        """Catch `exceptions` (from `tools`, if given) and hand them to the handlers.

        Args:
            exceptions: The exception type, or tuple of types, this route catches; or the
                kinds of failure that are not exceptions it takes (`InvalidArguments`,
                `UnknownTool`, `ToolReportedError`, `InnerMiddlewareError`,
                `MalformedToolCall`, or their base `ReportedFailure`), alone or mixed with
                exception types.
            on_error: Sync handler, as for `ToolErrorMiddleware`: content for the error
                `ToolMessage`, or `None` to re-raise. For a failure that is not an
                exception, the content replaces the text the model would read, and `None`
                leaves that message as it was. Positional or keyword.
            aon_error: Async handler for the async path. Given alone, the route is
                `AsyncOnly`, and so is every middleware it is part of.
            tools: Names or `BaseTool`s of the tools this route covers, in a list or
                tuple; `None` (the default) covers every tool.
            budget: An `ErrorBudget` for the failures this route handles: at most so
                many per tool, or in all, in one run. It counts alongside the
                middleware's own `budget=`, if any; whichever is spent first decides.
            retryable: Only on a route for `RepeatedCall`: the failures that do not make
                the same call again a repeat, so that the model's retry runs the tool
                (subclasses included, as in `except`). By default a timeout and a lost
                connection, which may pass on their own; `()` makes every failure count.

        Raises:
            TypeError: A handler is missing, not callable, or async where a sync one is
                expected; or `exceptions`, `tools` or `budget` has the wrong type. A missing handler
                raises an error that is also a `ValueError`.
            ValueError: `exceptions` or `tools` is empty, `exceptions` names a
                LangGraph control-flow signal, or `retryable` is given to a route that
                does not take `RepeatedCall`.
        """
        require_handlers(
            on_error,
            aon_error,
            owner="Route(exceptions, on_error)",
            fix="Route(..., aon_error=...)",
        )
        # As in ToolErrorMiddleware: the overloads tie the handlers to the type
        # parameters, which the implementation's signature cannot name.
        self._on_error = cast("OnError[ToolErrorContent, Any] | None", on_error)
        self._aon_error = cast("AOnError[ToolErrorContent, Any] | None", aon_error)
        self._exceptions = require_failure_types(exceptions)
        self._tool_names = require_tool_selection(tools)
        self._budget = require_budget(budget)
        self._retryable = require_retryable(retryable, self._exceptions)

    @property
    def exceptions(self) -> tuple[type[Exception | ReportedFailure], ...]:
        """The exception types (and kinds of failure that are not exceptions) it takes.

        Example:
            ```python
            from langchain_tool_errors import Route
            from langchain_tool_errors.handlers import report_type_only

            assert Route(KeyError, report_type_only).exceptions == (KeyError,)
            ```
        """
        return self._exceptions

    @property
    def on_error(self) -> OnError[ToolErrorContent, Never] | None:
        """The route's sync handler, or `None` for an `AsyncOnly` route.

        Its exception type reads as `Never` for the reason `ToolErrorMiddleware.on_error`
        gives.

        Example:
            ```python
            from langchain_tool_errors import Route
            from langchain_tool_errors.handlers import report_type_only

            assert Route(Exception, report_type_only).on_error is report_type_only
            ```
        """
        return self._on_error

    @property
    def aon_error(self) -> AOnError[ToolErrorContent, Never] | None:
        """The route's async handler, or `None` if it has none.

        Example:
            ```python
            from langgraph.prebuilt.tool_node import ToolCallRequest

            from langchain_tool_errors import Route


            async def name_the_type(exc: Exception, request: ToolCallRequest) -> str:
                return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."


            assert Route(Exception, aon_error=name_the_type).aon_error is name_the_type
            ```
        """
        return self._aon_error

    @property
    def selected_tools(self) -> frozenset[str] | None:
        """The names of the tools this route covers, or `None` for every tool.

        Example:
            ```python
            from langchain_tool_errors import Route
            from langchain_tool_errors.handlers import report_type_only

            route = Route(KeyError, report_type_only, tools=["lookup"])
            assert route.selected_tools == frozenset({"lookup"})
            ```
        """
        return self._tool_names

    @property
    def budget(self) -> ErrorBudget | None:
        """The route's own error budget, or `None` if its failures are not counted apart.

        Example:
            ```python
            from langchain_tool_errors import ErrorBudget, Route
            from langchain_tool_errors.handlers import report_type_only

            route = Route(TimeoutError, report_type_only, budget=ErrorBudget(per_tool=2))
            assert route.budget is not None and route.budget.per_tool == 2
            ```
        """
        return self._budget

    @property
    def retryable(self) -> tuple[type[Exception | ReportedFailure], ...]:
        """The failures after which the same call is not a repeat (a route for `RepeatedCall`).

        Example:
            ```python
            from langchain_tool_errors import RepeatedCall, Route
            from langchain_tool_errors.handlers import report_kind_only

            route = Route(RepeatedCall, report_kind_only)
            assert route.retryable == (TimeoutError, ConnectionError)
            assert Route(RepeatedCall, report_kind_only, retryable=()).retryable == ()
            ```
        """
        return self._retryable

    @override
    def __repr__(self) -> str:
        exceptions = tuple(exc.__name__ for exc in self._exceptions)
        tools = None if self._tool_names is None else sorted(self._tool_names)
        budget = "" if self._budget is None else f", budget={self._budget!r}"
        retryable = (
            ""
            if self._retryable == TRANSIENT
            else f", retryable={tuple(exc.__name__ for exc in self._retryable)}"
        )
        return (
            f"Route({exceptions}, on_error={self._on_error!r}, "
            f"aon_error={self._aon_error!r}, tools={tools}{budget}{retryable})"
        )


def covering(earlier: Sequence[Route[Any]], later: Route[Any]) -> list[int] | None:
    """The positions of earlier routes that together catch every failure `later` would.

    `None` when some failure of `later` reaches it. Each of its exception types must be
    caught, for each of its tools, by an earlier route: one for every tool, or several
    whose tools together include all of `later`'s.
    """
    found: set[int] = set()
    for exc in later.exceptions:
        missing = later.selected_tools  # the tools still to cover; `None` for every tool
        for position, route in enumerate(earlier):
            tools = route.selected_tools
            if not issubclass(exc, route.exceptions):
                continue
            if tools is None:
                found.add(position)
                break
            if missing is not None and missing & tools:
                found.add(position)
                missing -= tools
                if not missing:
                    break
        else:
            return None  # some failure of this type reaches `later`
    return sorted(found)


def _unreachable(
    index: int, route: Route[Any], before: list[int], checked: list[Route[Any]]
) -> str:
    """Why `routes[index]` can never match, naming the earlier routes that catch it all."""
    if len(before) == 1:
        [position] = before
        who = f"routes[{position}] ({checked[position]!r}) comes first and already catches"
    else:
        names = ", ".join(f"routes[{position}]" for position in before[:-1])
        who = f"{names} and routes[{before[-1]}] come first and together catch"
    return (
        f"routes[{index}] ({route!r}) can never match: {who} all of its exceptions for "
        "its tools, as an unreachable `except` clause. Move the narrower route above the "
        "wider ones, or remove it."
    )


def _is_route(value: object) -> TypeIs[Route[Any]]:
    return isinstance(value, Route)


def require_routes(routes: object) -> tuple[Route[Any], ...]:
    """`from_routes` is given a non-empty list or tuple of `Route`s, each of which can match."""
    if not isinstance(routes, (list, tuple)):
        msg = (
            f"`routes` must be a list or tuple of Route, but got {type(routes).__name__}. "
            "Write ToolErrorMiddleware.from_routes([Route(KeyError, handler), Route(Exception, "
            "fallback)])."
        )
        raise TypeError(msg)
    if not routes:
        msg = (
            "`routes` is empty, so the middleware would handle nothing. Give at least one "
            "Route, for example ToolErrorMiddleware.from_routes([Route(Exception, "
            "report_type_only)])."
        )
        raise ValueError(msg)
    checked: list[Route[Any]] = []
    # isinstance() narrows `object` to lists and tuples of unknown items; they are objects.
    for index, route in enumerate(cast("list[object] | tuple[object, ...]", routes)):
        if not _is_route(route):
            msg = (
                f"routes[{index}] is {type(route).__name__}, not a Route. Wrap each handler "
                "in a Route with the exceptions it catches: Route(KeyError, handler)."
            )
            raise TypeError(msg)
        before = covering(checked, route)
        if before is not None:
            raise ValueError(_unreachable(index, route, before, checked))
        checked.append(route)
    return tuple(checked)
