"""A chat model that plays a fixed script, so agents run offline with no API key.

It answers the n-th model call of a conversation with the n-th step of its script, where n
is the number of AI messages already in the conversation. It keeps no state of its own, so
one instance serves any number of threads and concurrent runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Final, TypeAlias, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import SkipValidation
from typing_extensions import override

ScriptStep: TypeAlias = AIMessage | Callable[[Sequence[BaseMessage]], AIMessage]
"""One model reply: a fixed `AIMessage`, or a function of the conversation so far.

A function step lets the scripted model react to what the tools answered, as a real model
would: it gets every message so far and returns the reply.

Example:
    ```python
    from collections.abc import Sequence

    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

    def retry_elsewhere(messages: Sequence[BaseMessage]) -> AIMessage:
        failed = isinstance(messages[-1], ToolMessage) and messages[-1].status == "error"
        return AIMessage("The tool failed; I'll answer from memory." if failed else "Done.")
    ```
"""


def _require_step(step: object) -> ScriptStep:
    if isinstance(step, AIMessage):
        return step
    if callable(step):
        # A callable of unknown signature: a function step is called with the conversation
        # and must return an `AIMessage`, which `_generate` relies on as the static type does.
        return cast("ScriptStep", step)
    msg = (
        f"Repeat() needs an AIMessage or a function of the conversation, but got "
        f"{step!r} ({type(step).__name__}). Write for example "
        'Repeat(AIMessage("", tool_calls=[...]), times=3).'
    )
    raise TypeError(msg)


def _require_times(times: object) -> int | None:
    if times is None:
        return None
    if isinstance(times, bool) or not isinstance(times, int):
        msg = (
            f"`times` must be a positive int or None, but got {times!r} "
            f"({type(times).__name__}). Write for example times=3, or leave it None to "
            "repeat the step for every later model call."
        )
        raise TypeError(msg)
    if times < 1:
        msg = (
            f"`times` must be at least 1, but got {times}. Remove the step instead, or "
            "leave `times` None to repeat it for every later model call."
        )
        raise ValueError(msg)
    return times


class Repeat:
    """One step of a script, played several times in a row, or for every call from there on.

    A model that keeps making the same call, whatever the tools answer, is one line:
    `ScriptedChatModel(script=[Repeat(call_weather)])`. With `times=None` (the default) the
    step answers every later model call, so it must be the script's last step; with
    `times=n` it answers the next `n` calls and the script goes on after it.

    The tool call ids of a repeated `AIMessage`, its malformed calls' (`invalid_tool_calls`)
    included, get the repetition's number appended (`"c1"` becomes `"c1-1"`, `"c1-2"`, ...),
    so every call in the conversation has an id of its own, as a real model's calls do. A
    function step is called each time and makes its own ids.

    Args:
        step: The reply to repeat: an `AIMessage`, or a function of the conversation.
        times: How many model calls it answers; `None` for all that follow.

    Raises:
        TypeError: `step` is not an `AIMessage` or a callable, or `times` is not an int.
        ValueError: `times` is below 1.

    Example:
        ```python
        from langchain_core.messages import AIMessage

        from langchain_tool_errors.testing import Repeat, ScriptedChatModel

        call_weather = AIMessage(
            "", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c"}]
        )
        looping = ScriptedChatModel(script=[Repeat(call_weather, times=3), AIMessage("I give up.")])
        ```
    """

    __slots__ = ("step", "times")

    step: Final[ScriptStep]
    """The reply repeated."""
    times: Final[int | None]
    """How many model calls it answers, or `None` for every one that follows."""

    def __init__(self, step: ScriptStep, /, *, times: int | None = None) -> None:
        """Repeat `step` `times` times, or for every later model call."""
        self.step = _require_step(step)
        self.times = _require_times(times)

    @override
    def __repr__(self) -> str:
        return f"Repeat({self.step!r}, times={self.times!r})"


def _numbered(reply: AIMessage, repetition: int) -> AIMessage:
    """`reply` with `-{repetition}` after each call's id, malformed calls' included."""
    calls = [
        {**call, "id": None if call["id"] is None else f"{call['id']}-{repetition}"}
        for call in reply.tool_calls
    ]
    malformed = [
        {**call, "id": None if call["id"] is None else f"{call['id']}-{repetition}"}
        for call in reply.invalid_tool_calls
    ]
    return reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": malformed})


def _length(script: Sequence[ScriptStep | Repeat]) -> int:
    """How many model calls a script without an endless `Repeat` answers."""
    return sum((step.times or 0) if isinstance(step, Repeat) else 1 for step in script)


def _reply(
    script: Sequence[ScriptStep | Repeat], turn: int, messages: Sequence[BaseMessage]
) -> AIMessage | None:
    """The reply to model call `turn` (counted from 0) of a conversation; `None` past the end."""
    first = 0  # the model call that the step being looked at answers first
    for step in script:
        if isinstance(step, Repeat):
            if step.times is not None and turn >= first + step.times:
                first += step.times
                continue
            inner = step.step
            if not isinstance(inner, AIMessage):
                return inner(messages)
            return _numbered(inner, turn - first + 1)
        if turn == first:
            return step if isinstance(step, AIMessage) else step(messages)
        first += 1
    return None


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies with the steps of `script` in order, offline.

    Step n answers the n-th model call of a conversation, where n counts the AI messages
    already in it. A thread of several inputs is one conversation: script every input's
    replies in order, the second input's after the first's. It keeps no state of its own,
    so one instance serves any number of threads and concurrent runs. Tool binding is
    accepted and ignored: the script already says which tools are called. A `Repeat` step
    answers several calls in a row, or every later one; a conversation that needs more
    steps than the script has raises `IndexError`.

    Raises:
        ValueError: A `Repeat` with no `times` is followed by other steps, which it would
            never let play.

    Example:
        ```python
        # For pyright strict: create_agent's own signature is partially unknown there.
        from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool

        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only
        from langchain_tool_errors.testing import ScriptedChatModel

        @tool(description="Search the web.")
        def search(query: str) -> str:
            raise TimeoutError(f"search for {query!r} timed out")

        model = ScriptedChatModel(
            script=[
                AIMessage("", tool_calls=[{"name": "search", "args": {"query": "x"}, "id": "c1"}]),
                AIMessage("Search is down; here is what I know."),
            ]
        )
        middleware = ToolErrorMiddleware(report_type_only)
        agent = create_agent(model, tools=[search], middleware=[middleware])
        ```
    """

    script: Annotated[Sequence[ScriptStep | Repeat], SkipValidation]
    """The replies, in order. Kept as given: pydantic would read a function as a message."""

    @override
    def model_post_init(self, context: Any, /) -> None:  # pydantic's signature
        """Refuse a script with steps after an endless `Repeat` (pydantic calls this).

        Example:
            ```python
            from langchain_core.messages import AIMessage

            from langchain_tool_errors.testing import Repeat, ScriptedChatModel

            try:
                ScriptedChatModel(script=[Repeat(AIMessage("again")), AIMessage("never")])
            except ValueError as refused:
                assert "would never play" in str(refused)
            ```
        """
        super().model_post_init(context)
        for index, step in enumerate(self.script[:-1]):
            if isinstance(step, Repeat) and step.times is None:
                msg = (
                    f"script[{index}] is {step!r}, which answers every later model call, so "
                    f"the {len(self.script) - index - 1} step(s) after it would never play. "
                    "Give it times=N, or make it the last step."
                )
                raise ValueError(msg)

    @property
    @override
    def _llm_type(self) -> str:
        return "scripted"

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # BaseChatModel's signature
    ) -> ChatResult:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        reply = _reply(self.script, turn, messages)
        if reply is None:
            msg = (
                f"the script answers {_length(self.script)} model calls; model call "
                f"{turn + 1} has no step. Add steps, or end the script with "
                "Repeat(step) to answer every later call."
            )
            raise IndexError(msg)
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])

    @override
    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,  # BaseChatModel's signature
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The script already says which tools are called; binding changes nothing.

        Example:
            ```python
            from langchain_core.messages import AIMessage
            from langchain_core.tools import tool

            from langchain_tool_errors.testing import ScriptedChatModel

            @tool(description="Search the web.")
            def search(query: str) -> str:
                return f"results for {query}"

            bound = ScriptedChatModel(script=[AIMessage("done")]).bind_tools([search])
            ```
        """
        return self
