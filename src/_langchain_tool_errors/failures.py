"""The failures a model reads that were never raised to this middleware, one class per kind.

A tool call fails in more ways than a tool raising: `ToolNode` answers invalid arguments and
unknown tools itself, a tool may report its own error (`handle_tool_error`, MCP error
results), an inner middleware may answer a failure, and `create_agent` answers a malformed
call. Each comes back as an error message instead of an exception; each has a class here,
so that a `Route` selects it as it selects an exception type, and a kind, so that an
`ErrorBudget` can count it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal, NamedTuple, TypeAlias, final

from typing_extensions import override

FailureKind: TypeAlias = Literal[
    "exception",
    "invalid_arguments",
    "unknown_tool",
    "tool_reported",
    "inner_middleware",
    "malformed_call",
    "repeated_call",
]
"""How a tool call failed, as budgets count it and messages name it.

- `"exception"`: the tool raised, and the exception reached this middleware.
- `"invalid_arguments"`: the arguments do not fit the tool's schema (`InvalidArguments`).
- `"unknown_tool"`: the model called a tool the agent does not have (`UnknownTool`).
- `"tool_reported"`: the tool answered its own failure (`ToolReportedError`).
- `"inner_middleware"`: another middleware answered it (`InnerMiddlewareError`).
- `"malformed_call"`: the call's arguments could not be parsed (`MalformedToolCall`).
- `"repeated_call"`: the same call already failed in this run, so it was not run again
  (`RepeatedCall`; only where a route takes it).

Example:
    ```python
    from langchain_tool_errors import ErrorBudget, FailureKind

    kinds: tuple[FailureKind, ...] = ("invalid_arguments", "unknown_tool")
    budget = ErrorBudget(per_tool=3, kinds=kinds)
    ```
"""


KIND_PHRASES: dict[FailureKind, str] = {
    "exception": "an exception",
    "invalid_arguments": "a call with invalid arguments",
    "unknown_tool": "a call to a tool the agent does not have",
    "tool_reported": "an error the tool reported",
    "inner_middleware": "an error another middleware answered",
    "malformed_call": "a call whose arguments could not be parsed",
    "repeated_call": "a call that already failed with the same arguments",
}
"""Each kind as messages name it."""

FAILURE_KINDS: tuple[FailureKind, ...] = tuple(KIND_PHRASES)
"""Every kind, in the order the docs list them."""


class ReportedFailure:
    """A failed tool call the model reads as an error message, never raised to this middleware.

    The base of the six kinds that are not exceptions. A `Route` selects them by class, as
    it selects exception types: `Route(InvalidArguments, handler)` takes invalid arguments,
    `Route(ReportedFailure, handler)` every kind that is not an exception, and
    `Route(Exception, ...)` none of them. The handler returns the content that replaces
    `text` (the message stays an error), or `None` to leave the message as it was. The
    middleware makes these failures itself, as the classes here: a class of yours derived
    from one would never be made, so a route naming it is refused (and the six kinds are
    `@final`, so a type checker refuses the class).

    Attributes:
        tool: The name of the tool the model called, as it sent it.
        args: The arguments as the model sent them (empty for a malformed call).
        text: What the model would read: the error message's text.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import ReportedFailure, Route, ToolErrorMiddleware

        def short(failure: ReportedFailure, request: ToolCallRequest) -> str:
            return f"`{failure.tool}` did not run ({failure.kind.replace('_', ' ')})."

        middleware = ToolErrorMiddleware.from_routes([Route(ReportedFailure, short)])
        ```
    """

    __slots__ = ("args", "text", "tool")

    kind: ClassVar[FailureKind]
    tool: str
    args: Mapping[str, object]
    text: str

    def __init__(self, *, tool: str, args: Mapping[str, object], text: str) -> None:
        """Describe the failure (the middleware makes these; tests may too)."""
        self.tool = tool
        self.args = args
        self.text = text

    def _fields(self) -> tuple[tuple[str, object], ...]:
        names = [
            name
            for cls in reversed(type(self).__mro__)
            for name in cls.__dict__.get("__slots__", ())
        ]
        return tuple((name, getattr(self, name)) for name in names)

    @override
    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self._fields())
        return f"{type(self).__name__}({fields})"


class FieldError(NamedTuple):
    """One argument that does not fit the tool's schema, and what the schema expects there.

    Attributes:
        field: The argument's path, dotted for nested values (`"address.zip"`, `"ids.0"`).
        expected: What the schema says of it, never the value given (`"Field required"`,
            `"Input should be a valid integer"`).

    Example:
        ```python
        from langchain_tool_errors import FieldError

        error = FieldError("record_id", "Input should be a valid integer")
        assert f"{error.field}: {error.expected}" == "record_id: Input should be a valid integer"
        ```
    """

    field: str
    expected: str


@final
class InvalidArguments(ReportedFailure):
    """The arguments do not fit the tool's schema, so the tool never ran.

    `ToolNode` answers such a call itself ("Error invoking tool ... Please fix the error and
    try again."), with the values the model sent in the text. A tool with a JSON-schema dict
    (an MCP tool) is answered by the tool or its server, in its own words.

    Attributes:
        errors: Each argument that does not fit, with what the schema expects there.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import InvalidArguments, Route

        def fields_only(failure: InvalidArguments, request: ToolCallRequest) -> str:
            wrong = "; ".join(f"{e.field}: {e.expected}" for e in failure.errors)
            return f"Fix the arguments of `{failure.tool}`: {wrong}."

        route = Route(InvalidArguments, fields_only)
        ```
    """

    __slots__ = ("errors",)

    kind: ClassVar[FailureKind] = "invalid_arguments"
    errors: tuple[FieldError, ...]

    def __init__(
        self, *, tool: str, args: Mapping[str, object], text: str, errors: tuple[FieldError, ...]
    ) -> None:
        """Describe the failure, with each argument that does not fit."""
        super().__init__(tool=tool, args=args, text=text)
        self.errors = errors


@final
class UnknownTool(ReportedFailure):
    """The model called a tool the agent does not have.

    `ToolNode` answers such a call itself ("Error: ... is not a valid tool, try one of
    [...]").

    Attributes:
        known_tools: The names of the agent's tools, as `ToolNode` listed them.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import Route, UnknownTool

        def suggest(failure: UnknownTool, request: ToolCallRequest) -> str:
            return f"There is no `{failure.tool}`; use one of {', '.join(failure.known_tools)}."

        route = Route(UnknownTool, suggest)
        ```
    """

    __slots__ = ("known_tools",)

    kind: ClassVar[FailureKind] = "unknown_tool"
    known_tools: tuple[str, ...]

    def __init__(
        self, *, tool: str, args: Mapping[str, object], text: str, known_tools: tuple[str, ...]
    ) -> None:
        """Describe the failure, with the agent's tools."""
        super().__init__(tool=tool, args=args, text=text)
        self.known_tools = known_tools


@final
class ToolReportedError(ReportedFailure):
    """The tool answered its own failure with an error message.

    A `BaseTool` with `handle_tool_error` (or `handle_validation_error`) set does, and so do
    MCP tools, whose servers report errors as results. Only for arguments the tool's schema
    accepts: an answer to arguments it refuses is an `InvalidArguments`.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import Route, ToolReportedError

        def plain(failure: ToolReportedError, request: ToolCallRequest) -> str:
            return f"`{failure.tool}` reported an error; try other arguments."

        route = Route(ToolReportedError, plain)
        ```
    """

    __slots__ = ()

    kind: ClassVar[FailureKind] = "tool_reported"


@final
class InnerMiddlewareError(ReportedFailure):
    """Another middleware answered the call with an error message.

    One inside this one, as the call ran: `ToolRetryMiddleware(on_failure="continue")`
    does, once its retries are spent, with the exception's text in the message; so does any
    other error message from a known tool called with valid arguments that does not report
    its own errors. Or one whose hook after the model answered the call in place of running
    it (`ToolCallLimitMiddleware` blocking it, a person rejecting it). Or one listed outside
    this one that answered the call itself in place of running it (deepagents' filesystem
    middleware refusing a second change to one file in one reply). Those last two answers
    are met before the next model call, and the request the handler gets has no tool
    (`tool` is `None`), since the call never reached one.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import InnerMiddlewareError, Route

        def no_details(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
            return f"`{failure.tool}` is failing; answer without it."

        route = Route(InnerMiddlewareError, no_details)
        ```
    """

    __slots__ = ()

    kind: ClassVar[FailureKind] = "inner_middleware"


@final
class MalformedToolCall(ReportedFailure):
    """The model's call could not be parsed (`AIMessage.invalid_tool_calls`), so no tool ran.

    `create_agent` answers it before the next model call ("... arguments were malformed or
    truncated."); a middleware that watches for it answers first.

    Attributes:
        raw_arguments: The arguments as the model wrote them, or `None`.
        error: The parser's complaint, or `None`.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import MalformedToolCall, Route

        def resend(failure: MalformedToolCall, request: ToolCallRequest) -> str:
            return f"The call to `{failure.tool}` was not valid JSON; send it again."

        route = Route(MalformedToolCall, resend)
        ```
    """

    __slots__ = ("error", "raw_arguments")

    kind: ClassVar[FailureKind] = "malformed_call"
    raw_arguments: str | None
    error: str | None

    def __init__(
        self,
        *,
        tool: str,
        args: Mapping[str, object],
        text: str,
        raw_arguments: str | None,
        error: str | None,
    ) -> None:
        """Describe the failure, with what the model wrote and what the parser said."""
        super().__init__(tool=tool, args=args, text=text)
        self.raw_arguments = raw_arguments
        self.error = error


TRANSIENT: tuple[type[Exception], ...] = (TimeoutError, ConnectionError)
"""The failures that may pass on their own: by default, none makes the same call a repeat."""


@final
class RepeatedCall(ReportedFailure):
    """The model called a tool again with the arguments of a call that failed in this run.

    Looked for only where a route names this class (for the tools that route selects): the
    call is then routed before it runs, and a handler's content answers it in place of
    running the tool again; a handler that returns `None` lets it run as usual. Arguments
    are compared as JSON (the order of keys does not matter). Only calls that reached the
    tool and failed count as earlier failures: a call another middleware answered in
    place of running it (a limit, a person who rejected it) does not, nor does a failure
    the route's `retryable` names (by default a `TimeoutError` or a `ConnectionError`,
    whose retry runs). A success of the same call ends the repeat: it is none until it
    fails again. `text` is this package's own answer, naming the tool and how often the
    call failed, for a handler to send as it is.

    Attributes:
        failures: How many times this same call has failed in this run, since its last
            success.

    Example:
        ```python
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from langchain_tool_errors import RepeatedCall, Route

        def not_again(failure: RepeatedCall, request: ToolCallRequest) -> str:
            return failure.text

        route = Route(RepeatedCall, not_again)
        ```
    """

    __slots__ = ("failures",)

    kind: ClassVar[FailureKind] = "repeated_call"
    failures: int

    def __init__(self, *, tool: str, args: Mapping[str, object], text: str, failures: int) -> None:
        """Describe the failure, with how many times the same call failed before."""
        super().__init__(tool=tool, args=args, text=text)
        self.failures = failures


REPEATED_TEXT = (
    "`{tool}` was not run again: the same call, with the same arguments, already failed "
    "{times} in this run. Change the arguments, or try another way."
)
"""What `RepeatedCall.text` says, with the tool's name and how often the call failed."""


def kind_of(failure: Exception | ReportedFailure) -> FailureKind:
    """The kind of a failure: `"exception"` for an exception, else its class's kind."""
    return "exception" if isinstance(failure, BaseException) else failure.kind


FAILURE_CLASSES: tuple[type[ReportedFailure], ...] = (
    InvalidArguments,
    UnknownTool,
    ToolReportedError,
    InnerMiddlewareError,
    MalformedToolCall,
    RepeatedCall,
)
"""The kinds of failure that are not exceptions, as the middleware makes them: these alone."""
