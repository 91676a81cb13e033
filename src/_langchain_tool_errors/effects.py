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
from typing import Generic, NamedTuple, TypeAlias, TypeVar

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


def run(life: Life[_T]) -> _T:
    """Carry out a life on the sync path: sync handlers are called, listeners told.

    Called from inside the hook's `except` clause when the failure is an exception, so
    whatever a handler raises is chained to it.
    """
    step = _Step(life)
    while step.effect is not None:
        try:
            step.answer = _carried_out(step.effect)
        except BaseException as error:  # the life decides what goes on up, and tells
            step.raised = error
        step.resume()
    return step.value


async def arun(life: Life[_T]) -> _T:
    """Carry out a life on the async path: async handlers and listeners are awaited."""
    step = _Step(life)
    while step.effect is not None:
        try:
            step.answer = await _acarried_out(step.effect)
        except BaseException as error:
            step.raised = error
        step.resume()
    return step.value


class _Step(Generic[_T]):
    """Where a life stands between its effects: what it asks next, or what it returned.

    The drivers set `answer` or `raised` from the effect, and `resume` hands that back.
    """

    __slots__ = ("_life", "answer", "effect", "raised", "value")

    value: _T  # set once the life has returned, when `effect` becomes `None`

    def __init__(self, life: Life[_T]) -> None:
        self._life = life
        self.answer: Answer | None = None
        self.raised: BaseException | None = None
        self.effect: Effect | None = None
        self.resume()

    def resume(self) -> None:
        """Send the effect's answer, or throw what it raised, and keep what comes back."""
        answer, raised = self.answer, self.raised
        self.answer = self.raised = None
        try:
            self.effect = self._life.send(answer) if raised is None else self._life.throw(raised)
        except StopIteration as done:
            self.effect = None
            self.value = done.value
        finally:
            raised = None  # what goes up holds this frame: no cycle through it


def _carried_out(effect: Effect) -> Answer | None:
    """What an effect gives on the sync path: a sync handler's answer."""
    if isinstance(effect, Tell):
        effect.recorder.tell(effect.record)
        return None
    return answer_of(*effect)


async def _acarried_out(effect: Effect) -> Answer | None:
    """What an effect gives on the async path: an async handler's answer, awaited."""
    if isinstance(effect, Tell):
        await effect.recorder.atell(effect.record)
        return None
    return await aanswer_of(*effect)
