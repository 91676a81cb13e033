"""`LLMToolSelectorMiddleware` beside this middleware: calls to tools the selector hid.

The selector narrows the tools of each model request; the agent's `ToolNode` keeps them all.
So a call to a hidden tool still runs it: its exception is an exception (kind
`"exception"`), arguments its schema refuses are invalid arguments, and it may even
succeed. Only a tool the agent does not have at all is an unknown tool, and `ToolNode`'s
answer, which routes read as `UnknownTool.known_tools`, lists the hidden tools too.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import (
    LLMToolSelectorMiddleware,
    ModelRequest,
)
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import override

from langchain_tool_errors import (
    InvalidArguments,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
    UnknownTool,
)
from langchain_tool_errors.testing import Repeat, ScriptedChatModel
from tests._agents import Path, call, echo_tool, failing_tool, run, tool_messages
from tests._composing import ORDERS, Order, Plan, agent_of, calls, stacked
from tests._wrapping import BeforeModelCalls


class OfferedTools(BeforeModelCalls):
    """Innermost around the model: keeps the names of the tools each model call offered."""

    def __init__(self) -> None:
        super().__init__()
        self.offered: list[list[str]] = []

    @override
    def before(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        self.offered.append([tool.name for tool in request.tools if isinstance(tool, BaseTool)])
        return request


def selecting_only(*names: str) -> LLMToolSelectorMiddleware:
    """A selector whose model always picks `names` (its structured reply is a tool call)."""
    pick = AIMessage(
        "",
        tool_calls=[{"name": "ToolSelectionResponse", "args": {"tools": list(names)}, "id": "p"}],
    )
    return LLMToolSelectorMiddleware(model=ScriptedChatModel(script=[Repeat(pick)]))


def _record(record_id: int) -> str:
    return f"record {record_id}"


def tools() -> list[BaseTool]:
    lookup = StructuredTool.from_function(_record, name="lookup", description="A record.")
    return [failing_tool("search", LookupError("index offline")), lookup, echo_tool()]


class Handlers:
    """Routes for unknown tools, invalid arguments and exceptions; keeps the known tools."""

    def __init__(self) -> None:
        self.known_tools: list[tuple[str, ...]] = []

    def unknown(self, failure: UnknownTool, request: ToolCallRequest) -> str:
        self.known_tools.append(failure.known_tools)
        return f"There is no tool `{failure.tool}`."

    def invalid(self, failure: InvalidArguments, request: ToolCallRequest) -> str:
        return f"`{failure.tool}` got invalid arguments."

    def exception(self, exc: Exception, request: ToolCallRequest) -> str:
        return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."

    def middleware(self) -> ToolErrorMiddleware:
        return ToolErrorMiddleware.from_routes(
            [
                Route(UnknownTool, self.unknown),
                Route(InvalidArguments, self.invalid),
                Route(Exception, self.exception),
            ],
            record_failures=True,
        )


Selected = tuple[OfferedTools, Handlers, dict[str, Any]]
"""A run behind the selector: the tools each model call offered, the routes' handlers, and
the run's result."""


@pytest.fixture(params=ORDERS)
def selected(request: pytest.FixtureRequest, path: Path) -> Selected:
    """The run, the selector listed outside ours or inside it."""
    return run_selected(path, request.param)


def run_selected(path: Path, order: Order) -> Selected:
    offered, handlers = OfferedTools(), Handlers()
    selector, mine = selecting_only("echo"), handlers.middleware()
    middleware = [*stacked(order, selector, mine), offered]
    plan = Plan(
        calls(
            call("search", "hidden-fails"),
            call("lookup", "hidden-works", record_id=7),
            call("lookup", "hidden-invalid", record_id="A-7"),
            call("nowhere", "missing"),
            call("echo", "offered", query="hi"),
        ),
        AIMessage("done"),
    )
    return offered, handlers, run(agent_of(plan, tools(), middleware), path)


def test_a_tool_the_selector_hid_still_runs_and_only_a_missing_tool_is_unknown(
    selected: Selected,
) -> None:
    offered, _, result = selected

    assert offered.offered == [["echo"], ["echo"]]  # the model was offered echo only
    messages = {call_id: (m.text, m.status) for call_id, m in tool_messages(result).items()}
    assert messages == {
        "hidden-fails": ("`search` failed with LookupError.", "error"),
        "hidden-works": ("record 7", "success"),
        "hidden-invalid": ("`lookup` got invalid arguments.", "error"),
        "missing": ("There is no tool `nowhere`.", "error"),
        "offered": ("echo: hi", "success"),
    }
    failures: list[ToolFailure] = result["tool_failures"]
    assert [(f["call_id"], f["kind"], f["route"]) for f in failures] == [
        ("hidden-fails", "exception", 2),
        ("hidden-invalid", "invalid_arguments", 1),
        ("missing", "unknown_tool", 0),
    ]


def test_an_unknown_tools_known_tools_list_the_tools_the_selector_hid(
    selected: Selected,
) -> None:
    _, handlers, _ = selected

    assert handlers.known_tools == [("search", "lookup", "echo")]
