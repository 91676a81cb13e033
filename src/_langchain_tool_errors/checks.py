"""Runtime checks that mirror the static guarantees, for callers who skip the type checker.

Here, the checks of the constructors' arguments that are not callables; those of the
handlers and listeners are in `handler_checks.py` (the repair's in `repair.py`), and those
made as a call runs in `call_checks.py`. Each check is one function named for the
guarantee it enforces. A failing check raises an error that says what was given, what was
expected and how to fix it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import Literal, cast

from langchain_core.tools import BaseTool
from typing_extensions import TypeIs, TypeVar

from _langchain_tool_errors.budget import ErrorBudget
from _langchain_tool_errors.control_flow import GraphBubbleUp
from _langchain_tool_errors.failures import (
    FAILURE_CLASSES,
    TRANSIENT,
    RepeatedCall,
    ReportedFailure,
)

_T = TypeVar("_T")

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = 4
_short.maxdict = 4
_short.maxlevel = 2


def describe(value: object) -> str:
    """`value` as an error message shows it: a short repr and its type."""
    return f"{_short.repr(value)} ({type(value).__name__})"


def shown(value: object) -> str:
    """`value` as an error message shows it where its type goes without saying."""
    return _short.repr(value)


def reject_routes_keyword(routes: object) -> None:
    """`ToolErrorMiddleware()` takes no `routes=`: routes have a constructor of their own."""
    if routes is not None:
        msg = (
            "ToolErrorMiddleware() takes one handler, not `routes=`. Build a middleware from "
            "routes with ToolErrorMiddleware.from_routes([Route(KeyError, on_error), ...]), "
            "which takes `budget=` and `name=` too."
        )
        raise TypeError(msg)


def require_budget(budget: object) -> ErrorBudget | None:
    """`budget=` is an `ErrorBudget` or `None`."""
    if budget is None or isinstance(budget, ErrorBudget):
        return budget
    msg = (
        f"`budget` must be an ErrorBudget or None, but got {describe(budget)}. "
        "Write budget=ErrorBudget(per_tool=3)."
    )
    raise TypeError(msg)


def _is_type(value: object) -> TypeIs[type[object]]:
    return isinstance(value, type)


def _is_tuple(value: object) -> TypeIs[tuple[object, ...]]:
    return isinstance(value, tuple)


def require_exception_types(
    exceptions: object, argument: str = "exceptions"
) -> tuple[type[Exception], ...]:
    """`exceptions` is an `Exception` subclass, or a non-empty tuple of them.

    LangGraph's control-flow signals are refused: they always propagate, so naming them
    would select nothing. A kind of failure that is not an exception (`InvalidArguments`,
    ...) is refused with the fix: only a `Route` takes those.

    Returns:
        The exception types as a tuple, ready for an `except` clause.
    """
    selected = _require_types(exceptions, argument, reported="refused")
    # `_require_types` refused every type that is not an `Exception` subclass.
    return cast("tuple[type[Exception], ...]", selected)


def require_failure_types(exceptions: object) -> tuple[type[Exception | ReportedFailure], ...]:
    """A route's `exceptions`: exception types and kinds of `ReportedFailure`, or a tuple."""
    return _require_types(exceptions, "exceptions", reported="accepted")


def require_retryable(
    retryable: object, exceptions: tuple[type[Exception | ReportedFailure], ...]
) -> tuple[type[Exception | ReportedFailure], ...]:
    """A route's `retryable`: failure types, or none; given only where it takes `RepeatedCall`."""
    if retryable == TRANSIENT:
        return TRANSIENT
    if not any(issubclass(taken, RepeatedCall) for taken in exceptions):
        names = ", ".join(taken.__name__ for taken in exceptions)
        msg = (
            f"`retryable=` says which failures do not make the same call again a repeat, "
            f"but this route takes {names}, not RepeatedCall, so nothing would read it. "
            "Give it to the route for RepeatedCall: Route(RepeatedCall, handler, "
            f"retryable={shown(retryable)})."
        )
        raise ValueError(msg)
    if retryable == ():
        return ()
    return _require_types(retryable, "retryable", reported="accepted")


def _require_types(
    exceptions: object, argument: str, *, reported: Literal["accepted", "refused"]
) -> tuple[type[Exception | ReportedFailure], ...]:
    items: tuple[object, ...] = exceptions if _is_tuple(exceptions) else (exceptions,)
    if not items:
        msg = (
            f"`{argument}=()` selects no exception, so no failure would ever be handled. "
            "Pass an exception type, a tuple of them, or leave the default (Exception)."
        )
        raise ValueError(msg)
    selected: list[type[Exception | ReportedFailure]] = []
    for item in items:
        if _is_type(item) and issubclass(item, ReportedFailure):
            if reported == "refused":
                msg = (
                    f"`{argument}` names {item.__name__}, a failure that is not an exception: "
                    "only a Route takes those. Write ToolErrorMiddleware.from_routes(["
                    f"Route({item.__name__}, handler)]), with more routes in the list for "
                    "the exceptions."
                )
                raise TypeError(msg)
            if item is not ReportedFailure and item not in FAILURE_CLASSES:
                raise TypeError(_derived_failure(argument, item))
            selected.append(item)
            continue
        if not (_is_type(item) and issubclass(item, Exception)):
            also = (
                " (or a kind of failure that is not an exception, such as InvalidArguments)"
                if reported == "accepted"
                else ""
            )
            msg = (
                f"`{argument}` must be an Exception subclass{also} or a tuple of them, "
                f"but got {describe(exceptions)}. For example: {argument}=ValueError "
                f"or {argument}=(ValueError, KeyError)."
            )
            raise TypeError(msg)
        if issubclass(item, GraphBubbleUp):
            msg = (
                f"`{argument}` names {item.__name__}, a LangGraph control-flow signal; "
                "those always propagate and never reach a handler. Remove it."
            )
            raise ValueError(msg)
        selected.append(item)
    return tuple(selected)


def _derived_failure(argument: str, derived: type[ReportedFailure]) -> str:
    """Why a route may not name a class of the user's derived from a kind of failure."""
    made = next((base for base in derived.__mro__ if base in FAILURE_CLASSES), ReportedFailure)
    if made is ReportedFailure:
        kinds = ", ".join(kind.__name__ for kind in FAILURE_CLASSES)
        instead = "one of those, or ReportedFailure for every kind"
        made_as = f"as the kinds derived from ReportedFailure ({kinds})"
    else:
        instead = (
            f"{made.__name__} (a handler can look at the failure's fields to tell cases apart)"
        )
        made_as = f"as {made.__name__}"
    return (
        f"`{argument}` names {derived.__qualname__}, a class derived from {made.__name__}. "
        f"The middleware makes these failures itself, {made_as}, never as a class of yours, "
        f"so the route would never be taken. Name {instead}."
    )


def is_sequence(value: object) -> TypeIs[Sequence[object]]:
    return isinstance(value, Sequence)


def require_tool_selection(tools: object) -> frozenset[str] | None:
    """`tools` is `None`, or a non-empty list or tuple of tool names and `BaseTool`s.

    Returns:
        The selected tool names, or `None` when every tool is selected.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, BaseTool)):
        msg = (
            f"`tools` must be a list of tool names or BaseTool instances, but got "
            f"{describe(tools)}. Wrap a single tool in a list: tools=[{shown(tools)}]."
        )
        raise TypeError(msg)
    if not is_sequence(tools):
        msg = (
            f"`tools` must be a list of tool names or BaseTool instances, but got "
            f"{describe(tools)}. Pass a list, e.g. tools=list(...)."
        )
        raise TypeError(msg)
    if not tools:
        msg = (
            "`tools=[]` selects no tool, so no failure would ever be handled. "
            "Name the tools to handle, or pass tools=None to handle every tool."
        )
        raise ValueError(msg)
    names: set[str] = set()
    for index, tool in enumerate(tools):
        if isinstance(tool, str):
            names.add(tool)
        elif isinstance(tool, BaseTool):
            names.add(tool.name)
        else:
            msg = (
                f"`tools[{index}]` must be a tool name (str) or a BaseTool, but got "
                f"{describe(tool)}. Pass the tool itself or its name."
            )
            raise TypeError(msg)
    return frozenset(names)


def require_name(name: object) -> str:
    """`name`, where given, is a non-empty `str`.

    Returns:
        The middleware's name: `name`, or the class name when it is `None`.
    """
    if name is None:
        return "ToolErrorMiddleware"
    if not isinstance(name, str) or not name:
        msg = (
            f"`name` must be a non-empty str, but got {describe(name)}. Give each "
            'ToolErrorMiddleware in one agent its own name, e.g. name="search_errors".'
        )
        raise TypeError(msg)
    return name


def require_flag(argument: str, value: object) -> bool:
    """A yes-or-no option is a `bool` (not a truthy value that might mean something else)."""
    if isinstance(value, bool):
        return value
    msg = f"`{argument}` must be True or False, but got {describe(value)}. Write {argument}=True."
    raise TypeError(msg)


def require_error_prefix(error_prefix: object) -> str | None:
    """`error_prefix` is a non-empty `str`, or `None` to send error messages unmarked.

    Returns:
        The prefix, or `None`.
    """
    if error_prefix is None:
        return None
    if not isinstance(error_prefix, str):
        msg = (
            f"`error_prefix` must be a str or None, but got {describe(error_prefix)}. Pass "
            'the text that marks an error message, e.g. error_prefix="Tool error: ", or '
            "error_prefix=None to send error messages unmarked."
        )
        raise TypeError(msg)
    if not error_prefix:
        msg = (
            '`error_prefix` is empty (""), which would mark nothing. To send error '
            "messages unmarked, pass error_prefix=None; otherwise give the text, e.g. "
            'error_prefix="Tool error: ".'
        )
        raise ValueError(msg)
    return error_prefix
