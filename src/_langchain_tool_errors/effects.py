"""What a failure's life asks of the world, and the two drivers that carry it out.

A failure's life (`lifecycle.py`) is written once, as a generator that never awaits:
where it needs a route's handler to answer, or the listeners to be told, it yields an
effect, and the driver of the path it runs on carries that out and sends back the result.
`run` calls sync handlers and tells listeners; `arun` awaits async ones. That is the only
place the two paths differ. A handler's exception is thrown back into the life at the
effect that asked for it, so the life tells the listeners it went on up before it is raised.

An `Ask` is a plain tuple, since every handled failure makes one: a handled failure costs
what langchain's class costs, give or take a microsecond.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NamedTuple, TypeAlias, TypeVar

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.handling import Answer, aanswer_of, answer_of
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.recording import Recorder
from _langchain_tool_errors.route_table import RouteHandlers

_T = TypeVar("_T")

Ask: TypeAlias = tuple[RouteHandlers, Exception | ReportedFailure, ToolCallRequest]
"""Ask a route's handler for the content that answers a failure (of this call).

The driver sends back the handler's `Answer`, or `None` when it declined."""


class Tell(NamedTuple):
    """Tell the listeners of a settled failure. The driver sends back `None`."""

    recorder: Recorder
    record: ToolFailure


Effect: TypeAlias = Ask | Tell

Life: TypeAlias = Generator[Effect, Answer | None, _T]
"""A stage of a failure's life: it yields effects and returns its result."""


Outcome: TypeAlias = tuple[Answer | None, list[BaseException] | None]
"""What carrying out an effect gave: an answer, or (in a list the life's resumption empties)
what it raised."""


def run(life: Life[_T]) -> _T:
    """Carry out a life on the sync path: sync handlers are called, listeners told.

    Called from inside the hook's `except` clause when the failure is an exception, so
    whatever a handler raises is chained to it.
    """
    try:
        effect = life.send(None)
        while True:
            answer, raised = _carried_out(effect)
            effect = life.send(answer) if raised is None else _thrown(life, raised)
    except StopIteration as done:
        value: _T = done.value
        return value


async def arun(life: Life[_T]) -> _T:
    """Carry out a life on the async path: async handlers and listeners are awaited."""
    try:
        effect = life.send(None)
        while True:
            answer, raised = await _acarried_out(effect)
            effect = life.send(answer) if raised is None else _thrown(life, raised)
    except StopIteration as done:
        value: _T = done.value
        return value


def _thrown(life: Life[Any], raised: list[BaseException]) -> Effect:
    """Throw what an effect raised into the life, and return the life's next effect.

    Thrown outside any `except` clause, so what the life raises is chained as where the
    failure happened. The list is emptied first: what goes up holds the drivers' frames,
    and no cycle runs through them.
    """
    return life.throw(raised.pop())


def _carried_out(effect: Effect) -> Outcome:
    """What an effect gives on the sync path: a sync handler's answer, or what it raised."""
    try:
        if isinstance(effect, Tell):
            effect.recorder.tell(effect.record)
            return (None, None)
        return (answer_of(*effect), None)
    except BaseException as error:  # the life decides what goes on up, and tells
        return (None, [error])


async def _acarried_out(effect: Effect) -> Outcome:
    """What an effect gives on the async path: an async handler's answer, or what it raised."""
    try:
        if isinstance(effect, Tell):
            await effect.recorder.atell(effect.record)
            return (None, None)
        return (await aanswer_of(*effect), None)
    except BaseException as error:
        return (None, [error])
