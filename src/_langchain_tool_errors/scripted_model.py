"""A chat model that plays a fixed script, so agents run offline with no API key.

It answers the n-th model call of a conversation with the n-th step of its script, where n
is the number of AI messages already in the conversation. It keeps no state of its own, so
one instance serves any number of threads and concurrent runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeAlias

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
    def retry_elsewhere(messages: Sequence[BaseMessage]) -> AIMessage:
        failed = isinstance(messages[-1], ToolMessage) and messages[-1].status == "error"
        return AIMessage("The tool failed; I'll answer from memory." if failed else "Done.")
    ```
"""


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies with the steps of `script` in order, offline.

    Step n answers the n-th model call of a conversation, where n counts the AI messages
    already in it. It keeps no state of its own, so one instance serves any number of
    threads and concurrent runs. Tool binding is accepted and ignored: the script already
    says which tools are called. A conversation that needs more steps than the script has
    raises `IndexError`.

    Example:
        ```python
        model = ScriptedChatModel(
            script=[
                AIMessage("", tool_calls=[{"name": "search", "args": {"query": "x"}, "id": "c1"}]),
                AIMessage("Search is down; here is what I know."),
            ]
        )
        agent = create_agent(model, tools=[search], middleware=[ToolErrorMiddleware(explain)])
        ```
    """

    script: Annotated[Sequence[ScriptStep], SkipValidation]
    """The replies, in order. Kept as given: pydantic would read a function as a message."""

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
        if turn >= len(self.script):
            msg = f"the script has {len(self.script)} steps; model call {turn + 1} has none"
            raise IndexError(msg)
        step = self.script[turn]
        reply = step if isinstance(step, AIMessage) else step(messages)
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
            bound = ScriptedChatModel(script=[AIMessage("done")]).bind_tools([search])
            ```
        """
        return self
