"""Runtime checks of the callables a user gives: handlers and listeners.

A middleware or a route needs a handler; each handler must be callable with what it will
be given, and `on_error` must not be async (its coroutine would never be awaited); a
listener takes one `ToolFailure`. (`repair.py` checks the repair with `require_arguments`.)
Each check is one function named for the guarantee it
enforces, and its error says what was given, what was expected and how to fix it.
`StoredHandler` and `StoredAsyncHandler` are what the constructors take a handler as,
before these checks.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import TypeIs

from _langchain_tool_errors.checks import describe, is_sequence, shown
from _langchain_tool_errors.record_types import Listener

if sys.version_info >= (3, 14):
    import annotationlib

    # From 3.14 `inspect.signature` evaluates annotations, which may name what is imported
    # only for type checkers; the parameters are all this reads.
    _UNEVALUATED: dict[str, Any] = {"annotation_format": annotationlib.Format.FORWARDREF}
else:
    _UNEVALUATED: dict[str, Any] = {}

StoredHandler: TypeAlias = Callable[[Any, ToolCallRequest], object]
"""A sync handler as the implementation stores it (not public): any exception, any result.

The overloads of `ToolErrorMiddleware` and `Route` tie a handler to its exceptions and
content; their shared implementation cannot name those types, and what a handler returns
is checked at run time before anything reaches the model.
"""

StoredAsyncHandler: TypeAlias = Callable[[Any, ToolCallRequest], Awaitable[object]]
"""An async handler as the implementation stores it (not public); see `StoredHandler`."""

HANDLER_SHAPE = "def explain(exc: Exception, request: ToolCallRequest) -> str"
"""A handler's shape, as messages show it."""


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
    named: str,
    function: Callable[..., object],
    called: str,
    arguments: tuple[str, ...],
    shape: str,
) -> None:
    """`function` can be called as `called(*arguments)`, positionally, as a checker proves.

    The signature read is the function's own (not the one a `functools.wraps` wrapper
    copies from what it wraps), and its annotations are never evaluated. A callable whose
    signature cannot be read (some builtins) is trusted. `named` names the argument in the
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
            f"{named} {describe(function)} cannot be called as {called}"
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
            f"{shown(on_error)}; its coroutine would never be awaited. "
            f"Pass it as `aon_error=` instead ({fix})."
        )
        raise TypeError(msg)


def require_handlers(
    on_error: object,
    aon_error: object,
    *,
    owner: str = "ToolErrorMiddleware(on_error)",
    instead: str = "",
    fix: str = "ToolErrorMiddleware(aon_error=...)",
) -> None:
    """A handler is given, each handler given is callable, and `on_error` is not async.

    `owner`, `instead` and `fix` name the calls to write, as `require_a_handler` and
    `reject_async_on_error` take them.
    """
    require_a_handler(on_error, aon_error, owner, instead)
    require_callable("on_error", on_error)
    require_callable("aon_error", aon_error)
    reject_async_on_error(on_error, fix)


def require_listeners(listeners: object) -> tuple[Listener, ...]:
    """`listeners=` is a sequence of callables that each take one positional argument."""
    if isinstance(listeners, str) or not is_sequence(listeners):
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
