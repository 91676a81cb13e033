"""Other packages' middleware, as the tests list them beside ours: each wraps the tool calls
or the model calls, and says what it does once for both paths.

A tool-call wrapper writes `around`, a generator: it runs up to its `yield` before the call
(or returns an answer in the call's place), is sent the call's result at the `yield` (or
has the call's exception raised there), and returns what the agent gets. The sync and async
hooks only drive it, and differ only where they await the call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeAlias

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from typing_extensions import override

ToolResult: TypeAlias = ToolMessage | Command[Any]
"""What a tool call gives the agent."""

Around: TypeAlias = Generator[None, ToolResult, ToolResult]
"""A wrapper's life around one tool call (see the module's docstring)."""


class AroundToolCalls(AgentMiddleware[Any, Any, Any]):
    """A middleware that wraps each tool call in `around`, on both paths."""

    def around(self, request: ToolCallRequest) -> Around:
        """The wrapper's life around the call: by default, the call's own result."""
        return (yield)

    @override
    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        steps = self.around(request)
        if (answer := _started(steps)) is not None:
            return answer
        try:
            outcome: ToolResult | Exception = handler(request)
        except Exception as exc:
            outcome = exc
        return _finished(steps, outcome)

    @override
    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        steps = self.around(request)
        if (answer := _started(steps)) is not None:
            return answer
        try:
            outcome: ToolResult | Exception = await handler(request)
        except Exception as exc:
            outcome = exc
        return _finished(steps, outcome)


def _started(steps: Around) -> ToolResult | None:
    """Run `around` up to its `yield`: `None`, or the answer it gives in the call's place."""
    try:
        next(steps)
    except StopIteration as answered:
        answer: ToolResult = answered.value
        return answer
    return None


def _finished(steps: Around, outcome: ToolResult | Exception) -> ToolResult:
    """Give `around` the call's result, or raise the call's exception at its `yield`; what
    it returns (or raises) is what the agent gets."""
    try:
        if isinstance(outcome, Exception):
            steps.throw(outcome)
        else:
            steps.send(outcome)
    except StopIteration as done:
        result: ToolResult = done.value
        return result
    raise RuntimeError("`around` must yield once")


ModelResult: TypeAlias = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]
"""What a model call gives the agent."""


class BeforeModelCalls(AgentMiddleware[Any, Any, Any]):
    """A middleware that sees, and may change, each model request before the call, on both
    paths."""

    def before(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request the model is called with: by default, the one given."""
        return request

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResult:
        return handler(self.before(request))

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResult:
        return await handler(self.before(request))
