"""LangGraph's control flow: the exceptions that always propagate and never reach a handler.

LangGraph decides in two ways that an exception raised while a tool runs is control flow
rather than a failure, and this package follows both:

- `GraphBubbleUp` and its subclasses (`GraphInterrupt` from `interrupt()`, `ParentCommand`
  from a `Command(graph=Command.PARENT)`, `GraphDrained` from a drained run) are signals to
  the graph runner, by type.
- A `pydantic.ValidationError` raised by `interrupt(..., response_schema=...)` for a resume
  value that does not fit the schema is marked on the exception object and recognised by
  `langgraph.errors.is_invalid_resume`: the run fails and the interrupt stays pending, so
  the human can answer again. The model cannot fix a human's answer.

`BaseException`s that are not `Exception`s (`asyncio.CancelledError`, `KeyboardInterrupt`,
`SystemExit`) are never caught at all: `exceptions=` only takes `Exception` subclasses.
"""

from __future__ import annotations

from langgraph.errors import GraphBubbleUp

try:
    from langgraph.errors import is_invalid_resume
except ImportError:  # langgraph < 1.2.15 never marks a resume value as invalid

    def is_invalid_resume(error: BaseException) -> bool:
        """Always `False`: this langgraph has no invalid-resume marker to read."""
        return False


__all__ = ["GraphBubbleUp", "is_invalid_resume"]
