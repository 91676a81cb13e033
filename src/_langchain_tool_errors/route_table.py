"""The routing stage: which route of a middleware takes a failure, as an `except` clause would.

A middleware's checked routes become a `RouteTable` once, at construction; after a failure
the hooks ask it for the first route whose exceptions and tools match. A successful call
never reaches it.
"""

from __future__ import annotations

from typing import Any, TypeAlias, cast

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.control_flow import is_invalid_resume
from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.handler_types import AOnError, OnError
from _langchain_tool_errors.routes import Route
from _langchain_tool_errors.tool_calls import tool_name

RouteHandlers: TypeAlias = tuple["OnError[Any, Any] | None", "AOnError[Any, Any] | None", int]
"""A route's handlers as the hooks call them, and the route's position in the routes.

With `Any` exception, since the hooks' `except` clause only lets through instances of the
route's `exceptions`, which the overloads tie to the handler's exception type. The
position finds the budgets that count the route's failures.
"""

_Compiled: TypeAlias = tuple[
    tuple[type[Exception | ReportedFailure], ...], frozenset[str] | None, RouteHandlers
]

_CACHE_SIZE = 1024
"""How many (exception type, tool name) pairs a table remembers the route of."""


def _compile(routes: tuple[Route[Any], ...]) -> tuple[_Compiled, ...]:
    """The routes as plain tuples, the form read after a failure."""
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


def _first_match(
    compiled: tuple[_Compiled, ...], exc: Exception | ReportedFailure, name: str
) -> RouteHandlers | None:
    """The handlers of the first compiled route that matches, as an `except` clause would."""
    for exceptions, names, handlers in compiled:
        if isinstance(exc, exceptions) and (names is None or name in names):
            return handlers
    return None


def widest(routes: tuple[Route[Any], ...]) -> tuple[type[Exception], ...]:
    """Every exception type some route catches, less those another of them already covers.

    Empty when the routes take only failures that are not exceptions: an `except ()`
    clause catches nothing.
    """
    caught = {exc for route in routes for exc in route.exceptions if issubclass(exc, Exception)}
    return tuple(exc for exc in caught if not issubclass(exc, tuple(caught - {exc})))


def selects_reported(routes: tuple[Route[Any], ...]) -> bool:
    """Whether some route takes a kind of failure that is not an exception."""
    return any(issubclass(exc, ReportedFailure) for route in routes for exc in route.exceptions)


def except_clause(types: tuple[type[Exception], ...]) -> tuple[type[Exception], ...]:
    """What the hooks' `except` clause catches, before a failure is routed.

    The configured types, so that a catch-all makes it one check, unless one of them has a
    custom metaclass: an `except` clause matches by real inheritance only and so misses the
    classes registered with an ABC, which `isinstance` (what routing uses) sees. Then the
    clause catches every `Exception`, and routing re-raises what no route matches.
    """
    if all(type(exc) is type for exc in types):
        return types
    return (Exception,)


def _cache_for(
    routes: tuple[Route[Any], ...],
) -> dict[tuple[type, str], RouteHandlers | None] | None:
    """An empty route cache where the route only depends on the exception's type and tool.

    That holds for several routes whose exception classes are plain classes: an `isinstance`
    check against them depends on the class alone. A metaclass with `__instancecheck__`
    (an ABC with registered classes) could answer differently over time, so such routes
    and a single route (one check, cheaper than a lookup) are matched afresh each time.
    """
    plain = all(type(exc) is type for route in routes for exc in route.exceptions)
    return {} if len(routes) > 1 and plain else None


def _catch_all(compiled: tuple[_Compiled, ...]) -> RouteHandlers | None:
    """The handlers of a lone route that takes every exception of every tool, else `None`.

    The default configuration: every exception goes to it, with no walk and no tool name.
    """
    if len(compiled) != 1:
        return None
    exceptions, names, handlers = compiled[0]
    return handlers if exceptions == (Exception,) and names is None else None


class RouteTable:
    """A middleware's routes in the form read after a failure, with a cache of answers."""

    __slots__ = ("_cache", "_catch_all", "_compiled")

    def __init__(self, routes: tuple[Route[Any], ...]) -> None:
        self._compiled = _compile(routes)
        self._cache = _cache_for(routes)
        self._catch_all = _catch_all(self._compiled)

    def route(
        self, exc: Exception | ReportedFailure, request: ToolCallRequest
    ) -> RouteHandlers | None:
        """The handlers of the first route that matches this failure, or `None` for none.

        An invalid resume value is never routed: the human, not the model, must answer it.
        """
        if isinstance(exc, Exception):
            if is_invalid_resume(exc):
                return None
            if self._catch_all is not None:
                return self._catch_all
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
