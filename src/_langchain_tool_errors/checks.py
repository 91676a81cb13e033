"""Runtime checks that mirror the static guarantees, for callers who skip the type checker.

Each check is one function named for the guarantee it enforces. A failing check raises an
error that says what was given, what was expected and how to fix it. Checks made while a
tool's exception is being handled raise `from` that exception, so it is never lost.
"""

from __future__ import annotations

import functools
import inspect
import reprlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from langchain_core.tools import BaseTool
from typing_extensions import TypeIs, TypeVar

from _langchain_tool_errors.budget import ErrorBudget
from _langchain_tool_errors.control_flow import GraphBubbleUp
from _langchain_tool_errors.failures import FAILURE_CLASSES, ReportedFailure
from _langchain_tool_errors.record_types import Listener

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


class MissingHandlerError(TypeError, ValueError):
    """A middleware or a route was built without a handler.

    The runtime twin of the type error every checker reports for such a call: a
    `TypeError`, as the static error is, and a `ValueError`, as langchain's own
    `ToolErrorMiddleware` raises, so code that catches either keeps working. Its message
    names the calls that build one properly.

    Example:
        ```python
        from typing import Any

        from langchain_tool_errors import MissingHandlerError, ToolErrorMiddleware

        untyped: Any = ToolErrorMiddleware  # as code no checker reads would call it
        try:
            untyped()
        except MissingHandlerError as error:
            assert isinstance(error, ValueError)  # and a TypeError, as its class says
            assert "ToolErrorMiddleware.from_routes" in str(error)
        ```
    """

    # A traceback names the class by its module: the public one, where it is imported from.
    __module__ = "langchain_tool_errors"


def require_a_handler(
    on_error: object,
    aon_error: object,
    owner: str = "ToolErrorMiddleware(on_error)",
    instead: str = "",
) -> None:
    """At least one of `on_error` and `aon_error` is given.

    `owner` shows the call to make; `instead`, another way to build one, if there is.
    """
    if on_error is None and aon_error is None:
        called = owner.split("(")[0]
        msg = (
            f"{called}() was given no handler: pass a sync `on_error` "
            f"({owner}), an async `aon_error=`, or both{instead}."
        )
        raise MissingHandlerError(msg)


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


if sys.version_info >= (3, 14):
    import annotationlib

    # From 3.14 `inspect.signature` evaluates annotations, which may name what is imported
    # only for type checkers; the parameters are all this reads.
    _UNEVALUATED: dict[str, Any] = {"annotation_format": annotationlib.Format.FORWARDREF}
else:
    _UNEVALUATED: dict[str, Any] = {}

HANDLER_SHAPE = "def explain(exc: Exception, request: ToolCallRequest) -> str"
"""A handler's shape, as messages show it."""


def require_callable(argument: str, handler: object) -> None:
    """A handler, where given, can be called, and with the two arguments it is given."""
    if handler is None:
        return
    if not callable(handler):
        msg = (
            f"`{argument}` must be callable as {argument}(exc, request), "
            f"but got {describe(handler)}. Pass a function or other callable."
        )
        raise TypeError(msg)
    shape = f"async {HANDLER_SHAPE}" if argument == "aon_error" else HANDLER_SHAPE
    require_arguments(f"`{argument}`", handler, argument, ("exc", "request"), shape)


def require_handler_to_wrap(wrapper: str, handler: object) -> None:
    """What `log_handled`/`alog_handled` wrap is a callable (`None` is not a handler)."""
    if handler is None or not callable(handler):
        msg = (
            f"{wrapper}() wraps a handler called as handler(exc, request), but got "
            f"{describe(handler)}. Pass the handler itself, e.g. {wrapper}(report_type_only)."
        )
        raise TypeError(msg)
    shape = f"async {HANDLER_SHAPE}" if wrapper == "alog_handled" else HANDLER_SHAPE
    require_arguments(f"{wrapper}()'s handler", handler, "handler", ("exc", "request"), shape)


def require_arguments(
    shown: str,
    function: Callable[..., object],
    called: str,
    arguments: tuple[str, ...],
    shape: str,
) -> None:
    """`function` can be called as `called(*arguments)`, positionally, as a checker proves.

    The signature read is the function's own (not the one a `functools.wraps` wrapper
    copies from what it wraps), and its annotations are never evaluated. A callable whose
    signature cannot be read (some builtins) is trusted. `shown` names the argument in the
    message, `shape` is an example of the right signature.
    """
    try:
        signature = inspect.signature(function, follow_wrapped=False, **_UNEVALUATED)
    except (TypeError, ValueError):  # no signature to read (a builtin): trust it
        return
    try:
        signature.bind(*(None,) * len(arguments))
    except TypeError as exc:
        # Its parameters by name and kind only: annotations may be strings, or long.
        bare = signature.replace(
            parameters=[
                parameter.replace(annotation=inspect.Parameter.empty)
                for parameter in signature.parameters.values()
            ],
            return_annotation=inspect.Signature.empty,
        )
        count = len(arguments)
        msg = (
            f"{shown} {describe(function)} cannot be called as {called}"
            f"({', '.join(arguments)}): it takes {bare}. It is called with {count} "
            f"positional argument{'s' if count > 1 else ''}, such as `{shape}`."
        )
        raise TypeError(msg) from exc


def _is_partial(value: object) -> TypeIs[functools.partial[object]]:
    return isinstance(value, functools.partial)


def is_async_callable(handler: object) -> bool:
    """Whether calling `handler` gives a coroutine or an async generator by its definition.

    Sees through `functools.partial` and looks at the `__call__` of callable objects.
    `handler` must be callable (checked before this is asked).
    """
    while _is_partial(handler):
        handler = handler.func
    if inspect.iscoroutinefunction(handler) or inspect.isasyncgenfunction(handler):
        return True
    # What calling an object runs is its type's `__call__`: a function's or a class's is
    # sync (a class builds an instance), a callable object's may be async.
    call = inspect.getattr_static(type(handler), "__call__")
    return inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)


def reject_async_on_error(
    on_error: object, fix: str = "ToolErrorMiddleware(aon_error=...)"
) -> None:
    """The sync `on_error` is not an async function (its result would never be awaited).

    `fix` is the call to write instead, with the handler as `aon_error=`.
    """
    if on_error is not None and is_async_callable(on_error):
        msg = (
            f"`on_error` must be a sync function, but got the async callable "
            f"{_short.repr(on_error)}; its coroutine would never be awaited. "
            f"Pass it as `aon_error=` instead ({fix})."
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
                f"but got {describe(exceptions)}. For example: exceptions=ValueError "
                "or exceptions=(ValueError, KeyError)."
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


def _is_sequence(value: object) -> TypeIs[Sequence[object]]:
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
            f"{describe(tools)}. Wrap a single tool in a list: tools=[{_short.repr(tools)}]."
        )
        raise TypeError(msg)
    if not _is_sequence(tools):
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


def require_listeners(listeners: object) -> tuple[Listener, ...]:
    """`listeners=` is a sequence of callables that each take one positional argument."""
    if isinstance(listeners, str) or not _is_sequence(listeners):
        msg = (
            f"`listeners` must be a list (or another sequence) of callables, but got "
            f"{listeners!r} ({type(listeners).__name__}). Write for example "
            "listeners=[count_failure]."
        )
        raise TypeError(msg)
    checked: list[Listener] = []
    for index, listener in enumerate(listeners):
        if not _is_listener(listener):
            msg = (
                f"`listeners[{index}]` must be callable, but got {listener!r} "
                f"({type(listener).__name__}). A listener is a function that takes the "
                "failure's ToolFailure, such as `def count(failure: ToolFailure) -> None`."
            )
            raise TypeError(msg)
        require_arguments(
            f"`listeners[{index}]`",
            listener,
            "listener",
            ("failure",),
            "def count(failure: ToolFailure) -> None",
        )
        checked.append(listener)
    return tuple(checked)


def _is_listener(value: object) -> TypeIs[Listener]:
    """Whether a listener is callable (its signature is checked next, its result when called)."""
    return callable(value)
