"""The agent the LangGraph server test serves: `create_agent`, the scripted model, this middleware.

The user's message names a tool and its argument ("lookup missing-7"); the scripted model
calls that tool, then answers with what the tool returned. The tools:

- `lookup` raises `KeyError` for keys that start with "missing": the middleware hands that
  back to the model (its handler is async, as the server runs the async path);
- `crash` raises `PermissionError`, which the middleware does not select: the run fails;
- `approve` calls `interrupt()`: the run pauses until a `Command(resume=...)` arrives;
- `approve_refund` calls `interrupt()` with a `response_schema`: a resume value that does
  not fit it fails the run and leaves the interrupt pending, although a second middleware
  selects `ValidationError` for that very tool.

`routed` serves the same tools plus `slow` (raises `TimeoutError`) with one middleware of
ordered routes: `KeyError` from `lookup`, then `TimeoutError`, then `ValidationError` from
`approve_refund`, then a catch-all fallback.

`budgeted` has a model that calls the tool the user named again and again, with an error
budget of two failures per tool that then tells the model once; every later call in the
run gets that message without the tool running.

`recorded` keeps the record of each run's failures in the thread state: its model calls
`lookup` for a missing key, then `approve` (which interrupts), then `lookup` again, whose
second failure spends a budget of one that tells the model the tool is closed.

`arguments_budgeted` has a model that calls `count(items: int)` with words, turn after turn:
`ToolNode` answers each call itself, and the budget of two per tool stops the run at the
third. `arguments_routed` answers the same call with a route for invalid arguments.

Every handler call is appended to the file named by `TOOL_ERRORS_HANDLER_LOG`, so the test
can tell whether the handler ran.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# create_agent's `checkpointer` parameter is langgraph's `Checkpointer` alias, which leaves
# `BaseCheckpointSaver`'s type parameter unset, so pyright strict calls the import unknown.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import interrupt
from pydantic import BaseModel, ValidationError

from langchain_tool_errors import ErrorBudget, InvalidArguments, Route, ToolErrorMiddleware
from langchain_tool_errors.handlers import report_invalid_fields
from langchain_tool_errors.testing import Repeat, ScriptedChatModel


@tool
def lookup(key: str) -> str:
    """The value stored under `key`."""
    if key.startswith("missing"):
        raise KeyError(key)
    return f"value of {key}"


@tool
def crash(key: str) -> str:
    """A tool whose failure no middleware handles."""
    raise PermissionError(f"the agent may not read {key}")


@tool
def slow(key: str) -> str:
    """A tool that times out."""
    raise TimeoutError(f"{key} timed out")


@tool
def approve(action: str) -> str:
    """Ask a human to approve `action`."""
    answer = interrupt({"approve": action})
    return f"{action}: {answer}"


class Approval(BaseModel):
    """A human's answer to a refund."""

    approved: bool


@tool
def approve_refund(amount: str) -> str:
    """Ask a human to approve a refund of `amount`; the answer must be an `Approval`."""
    approval = interrupt({"refund": amount}, response_schema=Approval)
    return f"refund of {amount}: approved={approval.approved}"


def _record(line: str) -> None:
    log = os.environ.get("TOOL_ERRORS_HANDLER_LOG")
    if log:
        with Path(log).open("a", encoding="utf-8") as file:
            file.write(line + "\n")


async def explain_missing(exc: KeyError, request: ToolCallRequest) -> str:
    """Tell the model which key is missing; record the call (off the event loop)."""
    await asyncio.to_thread(_record, str(request.tool_call["id"]))
    return f"No record {exc.args[0]!r} (call {request.tool_call['id']})."


async def explain_invalid(exc: ValidationError, request: ToolCallRequest) -> str:
    """Would answer any validation error of `approve_refund`; record the call."""
    await asyncio.to_thread(_record, str(request.tool_call["id"]))
    return "The refund tool got an invalid value."


FIELDS = {"approve": "action", "approve_refund": "amount"}


def call_the_named_tool(messages: Sequence[BaseMessage]) -> AIMessage:
    """The model's first reply: call the tool the user named, with the argument given."""
    question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    name, argument = str(question.content).split(maxsplit=1)
    field = FIELDS.get(name, "key")
    call = {"name": name, "args": {field: argument}, "id": f"call-{argument}"}
    return AIMessage("", tool_calls=[call])


def answer_with_the_result(messages: Sequence[BaseMessage]) -> AIMessage:
    """The model's second reply: what the tool answered."""
    result = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    return AIMessage(f"The tool said ({result.status}): {result.content}")


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent."""
    model = ScriptedChatModel(script=[call_the_named_tool, answer_with_the_result])
    middleware = [
        ToolErrorMiddleware(aon_error=explain_missing, exceptions=KeyError),
        ToolErrorMiddleware(
            aon_error=explain_invalid,
            exceptions=ValidationError,
            tools=[approve_refund],
            name="refund_validation_errors",
        ),
    ]
    tools = [lookup, crash, approve, approve_refund]
    return create_agent(model, tools=tools, middleware=middleware)


agent = build_agent()


async def explain_slow(exc: TimeoutError, request: ToolCallRequest) -> str:
    """The timeout route's answer; record the call."""
    await asyncio.to_thread(_record, str(request.tool_call["id"]))
    return f"Timed out (call {request.tool_call['id']}); try once more."


async def fallback(exc: Exception, request: ToolCallRequest) -> str:
    """The last route's answer: the type only; record the call."""
    await asyncio.to_thread(_record, str(request.tool_call["id"]))
    return f"Failed with {type(exc).__name__} (call {request.tool_call['id']})."


def build_routed_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent with one middleware of ordered routes."""
    model = ScriptedChatModel(script=[call_the_named_tool, answer_with_the_result])
    middleware = ToolErrorMiddleware.from_routes(
        [
            Route(KeyError, aon_error=explain_missing, tools=[lookup]),
            Route(TimeoutError, aon_error=explain_slow),
            Route(ValidationError, aon_error=explain_invalid, tools=[approve_refund]),
            Route(Exception, aon_error=fallback),
        ]
    )
    tools = [lookup, crash, slow, approve, approve_refund]
    return create_agent(model, tools=tools, middleware=[middleware])


routed = build_routed_agent()


def call_the_named_tool_again(messages: Sequence[BaseMessage]) -> AIMessage:
    """Every model reply: call the tool the user named, as a model that does not give up."""
    reply = call_the_named_tool(messages)
    turn = sum(isinstance(m, AIMessage) for m in messages)
    reply.tool_calls[0]["id"] = f"{reply.tool_calls[0]['id']}-{turn}"
    return reply


def build_budgeted_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent whose model loops on a failing tool, with an error budget."""
    script: list[Any] = [call_the_named_tool_again] * 5 + [answer_with_the_result]
    model = ScriptedChatModel(script=script)
    budget = ErrorBudget(per_tool=2, when_spent="tell", message="`{tool}` is closed ({count}).")
    middleware = ToolErrorMiddleware(aon_error=explain_missing, exceptions=KeyError, budget=budget)
    return create_agent(model, tools=[lookup], middleware=[middleware])


budgeted = build_budgeted_agent()


def build_paused_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent whose spent budget pauses the run for a person."""
    script: list[Any] = [call_the_named_tool_again] * 5 + [answer_with_the_result]
    model = ScriptedChatModel(script=script)
    budget = ErrorBudget(per_tool=2, when_spent="interrupt")
    middleware = ToolErrorMiddleware(aon_error=explain_missing, exceptions=KeyError, budget=budget)
    return create_agent(model, tools=[lookup], middleware=[middleware])


paused = build_paused_agent()


@tool
def count(items: int) -> str:
    """How many items there are, as a number."""
    return f"{items} items"


def call_count_with_words(messages: Sequence[BaseMessage]) -> AIMessage:
    """Every model reply: call `count` with the user's words, never a number."""
    question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    turn = sum(isinstance(m, AIMessage) for m in messages)
    call = {"name": "count", "args": {"items": str(question.content)}, "id": f"count-{turn}"}
    return AIMessage("", tool_calls=[call])


def build_arguments_budgeted_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent whose model loops on invalid arguments, stopped by its budget."""
    model = ScriptedChatModel(script=[call_count_with_words] * 10 + [answer_with_the_result])
    middleware = ToolErrorMiddleware(aon_error=fallback, budget=ErrorBudget(per_tool=2))
    return create_agent(model, tools=[count], middleware=[middleware])


arguments_budgeted = build_arguments_budgeted_agent()


def build_arguments_routed_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent whose route tells the model which argument is wrong, not its value."""
    model = ScriptedChatModel(script=[call_count_with_words, answer_with_the_result])
    middleware = ToolErrorMiddleware.from_routes(
        [Route(InvalidArguments, report_invalid_fields), Route(Exception, aon_error=fallback)]
    )
    return create_agent(model, tools=[count], middleware=[middleware])


arguments_routed = build_arguments_routed_agent()


RECORDED_PLAN = [("lookup", {"key": "missing-r"}), ("approve", {"action": "refund"})] * 2


def call_the_planned_tool(messages: Sequence[BaseMessage]) -> AIMessage:
    """Each reply of a run: the next call of `RECORDED_PLAN`, then an answer."""
    run = sum(isinstance(m, HumanMessage) for m in messages)
    last_question = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    turn = sum(isinstance(m, AIMessage) for m in messages[last_question:])
    if turn >= 3:
        return AIMessage("done")
    name, args = RECORDED_PLAN[turn]
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"rec{run}-{turn}"}])


def build_recorded_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """The served agent that keeps a record of each run's failures."""
    model = ScriptedChatModel(script=[Repeat(call_the_planned_tool)])
    middleware = ToolErrorMiddleware(
        aon_error=explain_missing,
        exceptions=KeyError,
        budget=ErrorBudget(per_tool=1, when_spent="tell"),
        record_failures=True,
    )
    return create_agent(model, tools=[lookup, approve], middleware=[middleware])


recorded = build_recorded_agent()
