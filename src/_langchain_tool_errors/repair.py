"""The repairing stage: a call the model got wrong, corrected before any tool runs.

Only with `repair=`. After each model reply, each of its calls to a tool this middleware
selects is checked against the tools the model was offered: a name none of them has is an
unknown tool, arguments the tool's schema refuses are invalid arguments, and a call whose
arguments were not JSON is a malformed call. The repair gets each such failure and
returns a corrected call or `None`; a corrected call takes the original's place in the
reply, under the original's id, so the tool node runs it once, its result answers that
id, and the model reads the call as it ran. A corrected call is never checked again: if
it fails, the failure goes through the routes and budgets as any other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeAlias, cast

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langchain_core.tools import BaseTool
from langgraph.types import Command
from typing_extensions import TypeIs

from _langchain_tool_errors.checks import describe
from _langchain_tool_errors.classifying import field_errors, malformed, standing_request
from _langchain_tool_errors.failures import InvalidArguments, MalformedToolCall, UnknownTool
from _langchain_tool_errors.handler_checks import is_async_callable, require_arguments
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.recording import Recorder
from _langchain_tool_errors.state import FAILURES_KEY

RepairableFailure: TypeAlias = InvalidArguments | UnknownTool | MalformedToolCall
"""The failures a repair is offered: each found in the model's reply, before any tool ran.

Example:
    ```python
    from langchain_tool_errors import InvalidArguments, RepairableFailure

    def tool_of(failure: RepairableFailure) -> str:
        return failure.tool if isinstance(failure, InvalidArguments) else "(none)"
    ```
"""


class RepairCall(Protocol):
    """A repair: a corrected call for a call the model got wrong, or `None` to leave it.

    Called as `repair(failure)`, synchronously, for each call of a model reply that calls
    a tool the model was not offered (`UnknownTool`), with arguments the tool's schema
    refuses (`InvalidArguments`), or with arguments that are not JSON
    (`MalformedToolCall`). Returns a tool call, `{"name": ..., "args": {...}}` (its `id`,
    if any, is replaced by the original's), or `None` to leave the call to fail as usual.

    Example:
        ```python
        from langchain_core.messages import ToolCall

        from langchain_tool_errors import (
            InvalidArguments,
            RepairableFailure,
            ToolErrorMiddleware,
            UnknownTool,
        )
        from langchain_tool_errors.handlers import report_type_only

        def fix_ids(failure: RepairableFailure) -> ToolCall | None:
            if isinstance(failure, UnknownTool) and failure.tool == "find_record":
                return ToolCall(name="lookup", args=dict(failure.args), id=None)
            if isinstance(failure, InvalidArguments):
                raw = str(failure.args.get("record_id", ""))
                if raw.startswith("A-") and raw[2:].isdigit():
                    return ToolCall(name=failure.tool, args={"record_id": int(raw[2:])}, id=None)
            return None

        middleware = ToolErrorMiddleware(report_type_only, repair=fix_ids)
        ```
    """

    def __call__(self, failure: RepairableFailure, /) -> ToolCall | None:
        """The corrected call, or `None` to leave the call as the model sent it."""
        ...


def require_repair(repair: object) -> RepairCall | None:
    """`repair=` is `None` or a sync callable taking the failure."""
    if repair is None:
        return None
    if not callable(repair) or is_async_callable(repair):
        kind = "an async function" if callable(repair) else describe(repair)
        msg = (
            f"`repair` must be a sync function called as repair(failure) that returns a "
            f"corrected tool call or None, but got {kind}. Pass a plain function, e.g. "
            "def repair(failure: RepairableFailure) -> ToolCall | None."
        )
        raise TypeError(msg)
    require_arguments(
        "`repair`", repair, "repair", ("failure",), "def repair(failure: RepairableFailure) -> ..."
    )
    # `callable()` narrows to `(...) -> object`: the number of parameters is checked above,
    # but not their types or the return type (what it returns is, at each call, by
    # `require_call`), so the rest is the checkers' to prove, and the cast restates it.
    return cast("RepairCall", repair)


def _is_mapping(value: object) -> TypeIs[Mapping[object, object]]:
    return isinstance(value, Mapping)


def _is_json(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def require_call(returned: object, failure: RepairableFailure, call_id: str) -> ToolCall:
    """What a repair returned, as a tool call with the original's id; else a `TypeError`.

    The error names the call it was repairing and what a tool call is, and carries the
    failure (`error.failure`) for a debugger or a log.
    """
    problem: str | None = None
    if not _is_mapping(returned):
        problem = f"{describe(returned)}, not a tool call"
    else:
        name, args = returned.get("name"), returned.get("args")
        if "name" not in returned and "args" not in returned:
            problem = f"{describe(returned)}, which has no name and no args (only arguments?)"
        elif not isinstance(name, str) or not name:
            problem = f"a call whose name is {name!r}, not a tool's name"
        elif not _is_mapping(args) or not all(isinstance(key, str) for key in args):
            problem = f"a call to `{name}` whose args are {describe(args)}, not a dict"
        elif not _is_json(args):
            problem = f"a call to `{name}` whose args are not JSON: {args!r}"
        else:
            fields = {str(key): value for key, value in args.items()}
            return ToolCall(name=name, args=fields, id=call_id, type="tool_call")
    msg = (
        f"`repair` returned {problem}, for the call `{failure.tool or '(no name)'}` "
        f"({failure.kind.replace('_', ' ')}, id {call_id!r}). Return a tool call, "
        f'ToolCall(name="{failure.tool or "tool"}", args={{...}}, id=None), or None to '
        "leave the call as the model sent it."
    )
    error = TypeError(msg)
    error.add_note(f"the failure it was repairing: {failure!r}")
    raise error


def _tool_names(tools: Iterable[BaseTool | Mapping[str, Any]]) -> dict[str, BaseTool | None]:
    """The tools the model was offered, by name (`None` for a provider's own tool dict)."""
    offered: dict[str, BaseTool | None] = {}
    for tool in tools:
        if isinstance(tool, BaseTool):
            offered[tool.name] = tool
        else:
            name = tool.get("name")
            if isinstance(name, str):
                offered[name] = None
    return offered


def _structured_output_names(response_format: object) -> tuple[str, ...]:
    """The names of the tools `create_agent` adds for a `ToolStrategy` response format.

    The model is offered them beside the agent's tools, and the agent reads their calls
    itself: they are never an unknown tool.
    """
    if not isinstance(response_format, ToolStrategy):
        return ()
    return tuple(spec.name for spec in response_format.schema_specs)


def found_in(
    reply: AIMessage, request: ModelRequest[Any], selected: frozenset[str] | None
) -> list[tuple[RepairableFailure, str]]:
    """The reply's calls a repair is offered, each with its id, in the reply's order.

    Calls without an id are left out: the corrected call must answer the original id.
    Only calls to the selected tools (`None`: all), by the name the model gave.
    """
    offered = _tool_names(request.tools)
    answers = _structured_output_names(request.response_format)
    found: list[tuple[RepairableFailure, str]] = []
    for call in reply.tool_calls:
        name, call_id, args = call["name"], call.get("id"), call["args"]
        if not call_id or (selected is not None and name not in selected):
            continue
        if name in answers:  # the agent's own structured answer
            continue
        if name not in offered:
            known = tuple(offered)
            text = f"`{name}` is not a tool of this agent; its tools are: {', '.join(known)}."
            found.append((UnknownTool(tool=name, args=args, text=text, known_tools=known), call_id))
            continue
        tool = offered[name]
        errors = () if tool is None else field_errors(tool, args)
        if errors:
            wrong = "; ".join(f"{error.field}: {error.expected}" for error in errors)
            text = f"The arguments of `{name}` do not fit its schema: {wrong}."
            found.append(
                (InvalidArguments(tool=name, args=args, text=text, errors=errors), call_id)
            )
    for invalid in reply.invalid_tool_calls:
        name, call_id = invalid.get("name") or "", invalid.get("id")
        if not call_id or (selected is not None and name not in selected):
            continue
        found.append((malformed(invalid), call_id))
    return found


def with_repairs(reply: AIMessage, repairs: Mapping[str, ToolCall]) -> AIMessage:
    """The reply with each repaired call in place of the original, under the same id.

    A repaired malformed call moves from `invalid_tool_calls` to `tool_calls`, where the
    tool node runs it; the other calls keep their order.
    """
    calls: list[ToolCall] = [repairs.get(str(call.get("id")), call) for call in reply.tool_calls]
    invalid: list[InvalidToolCall] = []
    for bad in reply.invalid_tool_calls:
        repaired = repairs.get(str(bad.get("id")))
        if repaired is None:
            invalid.append(bad)
        else:
            calls.append(repaired)
    return reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})


def repaired(
    repair: RepairCall,
    recorder: Recorder | None,
    tool_names: frozenset[str] | None,
    response: ModelResponse[Any],
    request: ModelRequest[Any],
) -> tuple[ModelResponse[Any] | ExtendedModelResponse[Any], list[ToolFailure]] | None:
    """The response with the calls the repair corrected, and their records; else `None`.

    The reply is the response's last `AIMessage`. Each repaired call keeps its place
    (a repaired malformed call joins the valid calls) and its id, and is recorded as
    `"repaired"` with the kind of failure it was. A repair is not a failure the model
    reads: no budget counts it. Only the calls of the tools `tools=` selects are offered.
    """
    messages = response.result
    replies = [(at, m) for at, m in enumerate(messages) if isinstance(m, AIMessage)]
    if not replies:
        return None
    at, reply = replies[-1]
    corrected: dict[str, ToolCall] = {}
    records: list[ToolFailure] = []
    for failure, call_id in found_in(reply, request, tool_names):
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
    fixed = ModelResponse(result=result, structured_response=structured)
    if recorder is None or not recorder.keeps:
        return fixed, records
    kept: Command[Any] = Command(update={FAILURES_KEY: records})
    return ExtendedModelResponse(model_response=fixed, command=kept), records
