"""Runtime checks made as a tool call runs, for callers who skip the type checker.

An `AsyncOnly` middleware refuses the sync path before the tool runs. After a failure,
what a handler returned must be content (a `str` or content blocks), what `aon_error`
returned must be awaitable, and the failed call must have an id and a name for its error
`ToolMessage` to answer it; those checks raise `from` the tool's exception, so it is never
lost. Each says what was given, what was expected and how to fix it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Never

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import TypeIs, TypeVar

from _langchain_tool_errors.checks import describe

_T = TypeVar("_T")


def refuse_the_sync_path(name: str) -> Never:
    """An `AsyncOnly` middleware's sync tool-call hook refuses, before the tool runs.

    The static twin is the narrowed `self` of `ToolErrorMiddleware.wrap_tool_call`.
    """
    msg = (
        f"{name} has only an async handler (`aon_error`), and the agent is running on the "
        "sync path (invoke/stream). Run the agent with `ainvoke`/`astream`, or also pass a "
        "sync `on_error`."
    )
    raise NotImplementedError(msg)


def require_awaitable(result: _T, exc: Exception | None) -> _T:
    """What `aon_error` returned can be awaited.

    Returns:
        `result`, unchanged.
    """
    if not inspect.isawaitable(result):
        msg = (
            f"`aon_error` must return an awaitable (be an async function), but it returned "
            f"{describe(result)}. Define it with `async def`, or pass a sync handler as "
            "`on_error` instead."
        )
        raise TypeError(msg) from exc
    return result


def reject_awaitable(argument: str, result: object, exc: Exception | None) -> None:
    """A handler's content is not an awaitable (nothing would await it).

    A coroutine is closed first, so Python reports no "never awaited" warning for it.
    """
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        msg = (
            f"`{argument}` returned an awaitable ({type(result).__name__}) where content was "
            "expected; nothing awaits it. Pass an async handler as `aon_error=` and, for "
            "the sync path, a sync `on_error`."
        )
        raise TypeError(msg) from exc


def _is_mapping(value: object) -> TypeIs[Mapping[object, object]]:
    return isinstance(value, Mapping)


def _is_content_block(value: object) -> TypeIs[Mapping[str, object]]:
    return _is_mapping(value) and isinstance(value.get("type"), str)


def _is_list_or_tuple(value: object) -> TypeIs[list[object] | tuple[object, ...]]:
    return isinstance(value, (list, tuple))


def _plain(text: str) -> str:
    """`text` as a plain `str`, as pydantic stores a message's fields.

    A `str` subclass (a `(str, Enum)` member, say) becomes the text it holds, so the message
    holds no user type and its `str()` is that text, not the member's name.
    """
    return text if type(text) is str else str.__str__(text)


def require_content(
    argument: str, content: object, exc: Exception | None
) -> str | list[str | dict[Any, Any]]:
    """A handler's content is a `str` or a list or tuple of content blocks.

    A content block is a mapping with a string `"type"`.

    Returns:
        The content as `ToolMessage` takes it: the `str`, or the blocks in a list.
    """
    if isinstance(content, str):
        return _plain(content)
    if _is_list_or_tuple(content):
        blocks: list[str | dict[Any, Any]] = []
        for index, block in enumerate(content):
            if not _is_content_block(block):
                msg = (
                    f"`{argument}` returned a list whose item {index} is {describe(block)}; "
                    'every item must be a content block, a dict with a str "type" such as '
                    '{"type": "text", "text": "..."}. Nothing was sent to the model.'
                )
                raise TypeError(msg) from exc
            blocks.append(dict(block))  # a copy, as pydantic would make: no shared blocks
        return blocks
    reject_awaitable(argument, content, exc)
    msg = (
        f"`{argument}` must return a str, a list of content blocks, or None (to re-raise), "
        f"but it returned {describe(content)}. Nothing was sent to the model; return "
        'str(...) or a list such as [{"type": "text", "text": "..."}].'
    )
    raise TypeError(msg) from exc


def _get(mapping: Mapping[str, object], key: str) -> object:
    """`mapping.get(key)`, typed `object` whatever `mapping`'s TypedDict says about `key`."""
    return mapping.get(key)


def require_tool_call_id(request: ToolCallRequest, tool_name: str, exc: Exception | None) -> str:
    """The failed tool call has an id, which the error `ToolMessage` must answer."""
    call_id = _get(request.tool_call, "id")
    if not isinstance(call_id, str) or not call_id:
        msg = (
            f"The call to tool `{tool_name}` has no id (got {describe(call_id)}), so its "
            "failure cannot be answered with a ToolMessage. The tool's exception is chained "
            "below; make sure the model's tool calls carry ids."
        )
        raise ValueError(msg) from exc
    return _plain(call_id)


def require_tool_name(name: object, exc: Exception | None) -> str:
    """The failed call names its tool with a `str`, as a `ToolMessage`'s `name` must be."""
    if not isinstance(name, str):
        msg = (
            f"The failed tool call's name is {describe(name)}, not a str, so its failure "
            "cannot be answered with a ToolMessage. The tool's exception is chained below."
        )
        raise TypeError(msg) from exc
    return _plain(name)
