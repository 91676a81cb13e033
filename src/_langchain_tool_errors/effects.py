"""What a failure's life asks of the world, and the two drivers that carry it out.

A failure's life (`lifecycle.py`) is written once, as a generator that performs no I/O:
where it needs a route's handler to answer, or the listeners to be told, it yields an
effect, and the driver of the path it runs on carries that out and sends back the result.
`run` calls sync handlers and listeners; `arun` awaits async ones. That is the only place
the two paths differ. A handler's exception is thrown back into the life at the effect
that asked for it, so the life tells the listeners it went on up before it is raised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import NamedTuple, TypeAlias, TypeVar

from langgraph.prebuilt.tool_node import ToolCallRequest

from _langchain_tool_errors.failures import ReportedFailure
from _langchain_tool_errors.handling import Answer, aask, ask
from _langchain_tool_errors.record_types import ToolFailure
from _langchain_tool_errors.recording import Recorder
from _langchain_tool_errors.route_table import RouteHandlers

_T = TypeVar("_T")


class Ask(NamedTuple):
    """Ask a route's handler for the content that answers a failure.

    The driver sends back the handler's `Answer`, or `None` when it declined.
    """

    route: RouteHandlers
    failure: Exception | ReportedFailure
    request: ToolCallRequest


class Tell(NamedTuple):
    """Tell the listeners of a settled failure. The driver sends back `None`."""

    recorder: Recorder
    record: ToolFailure


Effect: TypeAlias = Ask | Tell

Life: TypeAlias = Generator[Effect, Answer | None, _T]
"""A stage of a failure's life: it yields effects and returns its result."""


def run(life: Life[_T]) -> _T:
    """Carry out a life on the sync path: sync handlers are called, listeners told.

    Called from inside the hook's `except` clause when the failure is an exception, so
    whatever a handler raises is chained to it. The driver is the async one, given effects
    that never wait: it finishes at its first step.
    """
    driving = _drive(life, _carried_out)
    try:
        driving.send(None)
    except StopIteration as done:
        finished: _T = done.value
        return finished
    # Not reached: a sync effect never waits, so the driver ends at its first step.
    driving.close()
    msg = "a failure's life waited on the sync path"
    raise RuntimeError(msg)


async def arun(life: Life[_T]) -> _T:
    """Carry out a life on the async path: async handlers and listeners are awaited."""
    return await _drive(life, _acarried_out)


async def _drive(life: Life[_T], carry_out: Callable[[Effect], Awaitable[Answer | None]]) -> _T:
    """Feed a life the results of its effects until it returns; throw it what one raised."""
    result: Answer | None = None
    raised: BaseException | None = None
    while True:
        try:
            effect = life.send(result) if raised is None else life.throw(raised)
        except StopIteration as done:
            returned: _T = done.value
            return returned
        try:
            result, raised = await carry_out(effect), None
        except BaseException as error:  # the life decides what goes on up, and tells
            result, raised = None, error


async def _carried_out(effect: Effect) -> Answer | None:
    """What an effect gives on the sync path: a sync handler's answer (never waits)."""
    if isinstance(effect, Tell):
        effect.recorder.tell(effect.record)
        return None
    return ask(*effect)


async def _acarried_out(effect: Effect) -> Answer | None:
    """What an effect gives on the async path: an async handler's answer, awaited."""
    if isinstance(effect, Tell):
        await effect.recorder.atell(effect.record)
        return None
    return await aask(*effect)
