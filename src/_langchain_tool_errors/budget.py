"""Error budgets: how many handled failures a run may have before the middleware stops it."""

from __future__ import annotations

import difflib
import string
from collections.abc import Collection
from typing import ClassVar, Literal, TypeAlias

from typing_extensions import TypeIs, override

from _langchain_tool_errors.failures import (
    FAILURE_KINDS,
    KIND_PHRASES,
    FailureKind,
    ReportedFailure,
)
from _langchain_tool_errors.record_types import ToolFailure

BudgetScope: TypeAlias = Literal["tool", "run", "consecutive"]
"""Which limit of a budget was exceeded: `per_tool`, `per_run` or `consecutive`."""


def _require_limit(argument: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        msg = (
            f"`{argument}` must be a positive int or None, but got {value!r} "
            f"({type(value).__name__}). Write for example {argument}=3."
        )
        raise TypeError(msg)
    if value < 1:
        msg = (
            f"`{argument}` must be at least 1, but got {value}: a budget of {value} would "
            f"stop the run at its first handled failure. Write {argument}=1 or more, or "
            "leave it None for no limit."
        )
        raise ValueError(msg)
    return value


def _require_when_spent(when_spent: object) -> Literal["stop", "tell", "interrupt"]:
    if when_spent == "stop":
        return "stop"
    if when_spent == "tell":
        return "tell"
    if when_spent == "interrupt":
        return "interrupt"
    msg = (
        f'`when_spent` must be "stop", "tell" or "interrupt", but got {when_spent!r} '
        f'({type(when_spent).__name__}). "stop" ends the run with ToolErrorBudgetExceeded; '
        '"tell" tells the model once; "interrupt" pauses the run for a person. Write for '
        'example when_spent="tell".'
    )
    raise (ValueError if isinstance(when_spent, str) else TypeError)(msg)


def _require_message(message: object) -> str:
    if not isinstance(message, str) or not message:
        msg = (
            f"`message` must be a non-empty str, but got {message!r}. It is what the model "
            "reads once the budget is spent; {tool}, {count} and {times} are filled in."
        )
        raise TypeError(msg)
    try:
        fields = {field for _, field, _, _ in _FORMATTER.parse(message) if field is not None}
        unknown = sorted(fields - {"tool", "count", "times"})
        if not unknown:
            # Does each format spec suit its value?
            message.format(tool="search", count=1, times=times(1))
    except ValueError as exc:
        msg = (
            f"`message` {message!r} cannot be filled in ({exc}). Only {{tool}}, {{count}} and "
            "{times} are filled in; double any other brace ({{ or }})."
        )
        raise ValueError(msg) from exc
    if unknown:
        # `{tool.x}` or `{tool[3]}` would reach into the tool's name, which no sample can
        # vouch for, so only the plain fields are accepted (with conversions and specs).
        msg = (
            f"`message` {message!r} has the field {{{unknown[0]}}}, but only {{tool}}, "
            "{count} and {times} are filled in, as they are (no attribute or index); double "
            "any other brace ({{ or }})."
        )
        raise ValueError(msg)
    return message


_FORMATTER = string.Formatter()


def times(count: int) -> str:
    """A count of failures or calls as a message says it: "once", "2 times"."""
    return "once" if count == 1 else f"{count} times"


def _is_collection(value: object) -> TypeIs[Collection[object]]:
    return isinstance(value, Collection)


def _kind_shown(kind: object) -> str:
    """A value given in `kinds=`, as a message names it: a class by its name."""
    return f"the class {kind.__name__}" if isinstance(kind, type) else repr(kind)


def _kind_meant(kind: object) -> str:
    """The kind meant by a wrong value in `kinds=`, where one can be told; else nothing."""
    if isinstance(kind, type):
        if issubclass(kind, ReportedFailure):  # a class of failure: kinds are strings
            meant: object = getattr(kind, "kind", None)
            if meant in FAILURE_KINDS:
                return f"Name its kind instead: {meant!r}. "
            return "Name the kinds it stands for as strings, or leave kinds=None for all. "
        if issubclass(kind, BaseException):
            return (
                "Every exception is the kind 'exception'; to count only some types, give "
                "their Route a budget of its own. "
            )
        return ""
    close = difflib.get_close_matches(str(kind), FAILURE_KINDS, n=1)
    return f"Did you mean {close[0]!r}? " if close else ""


def _require_kinds(kinds: object) -> tuple[FailureKind, ...]:
    """`kinds=` is `None` (every kind) or a non-empty collection of known kinds."""
    if kinds is None:
        return FAILURE_KINDS
    if isinstance(kinds, str) or not _is_collection(kinds):
        msg = (
            f"`kinds` must be a tuple (or list or set) of failure kinds, but got {kinds!r} "
            f'({type(kinds).__name__}). Write for example kinds=("invalid_arguments",).'
        )
        raise TypeError(msg)
    given = kinds
    if not given:
        msg = (
            "`kinds=()` counts no failure, so the budget could never be spent. Leave it "
            f"None to count every kind, or name some of {', '.join(FAILURE_KINDS)}."
        )
        raise ValueError(msg)
    for kind in given:
        if kind not in FAILURE_KINDS:
            msg = (
                f"`kinds` has {_kind_shown(kind)}, which is not a kind of failure. "
                f"{_kind_meant(kind)}The kinds are "
                f"{', '.join(repr(known) for known in FAILURE_KINDS)}."
            )
            raise ValueError(msg)
    return tuple(kind for kind in FAILURE_KINDS if kind in given)


class ErrorBudget:
    """How many handled failures one run of the agent may have, and what happens then.

    A run is one turn of the agent: from the input that starts it to its final answer,
    resumes of its interrupts included; each new input on a thread starts from zero. The
    counts live in the agent's state (checkpointed with it), so they survive an interrupt
    and a resume in another process, and concurrent threads never share them.

    Args:
        per_tool: At most this many handled failures of any one tool in a run.
        per_run: At most this many handled failures of all tools together in a run.
        consecutive: At most this many handled failures of any one tool in a row: a
            success of that tool starts its count again. Parallel calls of one step each
            see the counts from before the step, as for the other limits; after the step,
            the count follows call order (a success resets the failures before it, not
            those after it).
        when_spent: `"stop"` (the default) raises `ToolErrorBudgetExceeded`, chained to
            the tool's last exception, and ends the run. `"tell"` sends the model one final
            error message saying the tool is unavailable, and answers every further call
            to that tool in the run with it, without running the tool. `"interrupt"`
            answers the failure as usual and holds the tool: its next call pauses the run
            with LangGraph's `interrupt()` before it runs, for a person to decide (see
            `BudgetPause` and `BudgetDecision`); it needs a checkpointer.
        message: A `"tell"` budget's final message (refused with another `when_spent`,
            which would never send it): `{tool}` is the tool's name, `{count}` its
            failures (calls, for a tool the agent does not have) when the budget closed
            it, and `{times}` the same count in words ("once", "3 times"). One text
            answers every call to that tool for the rest of the run.
            Defaults to `DEFAULT_MESSAGE` (`UNKNOWN_TOOL_MESSAGE` for a tool the agent
            does not have).
        kinds: The kinds of failure it counts (see `FailureKind`): every kind by default,
            invalid arguments, unknown tools, errors tools report and malformed calls as
            well as exceptions.

    Raises:
        TypeError: A limit is not an int (or is a bool), or `when_spent`, `message` or
            `kinds` has the wrong type.
        ValueError: A limit is below 1, no limit is given, or `when_spent` or a kind is
            unknown, or `kinds` is empty, or `message` is given to a budget whose
            `when_spent` is not `"tell"`.

    Example:
        ```python
        from langchain_tool_errors import ErrorBudget, ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only

        middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=3))
        ```
    """

    __slots__ = ("consecutive", "kinds", "message", "per_run", "per_tool", "when_spent")

    DEFAULT_MESSAGE: ClassVar[str] = (
        "The tool `{tool}` failed {times} in this run and is unavailable until the run ends. "
        "Do not call it again; answer with what you have."
    )
    """What `"tell"` sends the model unless `message=` says otherwise; it shows no detail
    of any exception."""

    UNKNOWN_TOOL_MESSAGE: ClassVar[str] = (
        "There is no tool `{tool}`; it was called {times} in this run. Do not call it "
        "again; use only the tools you were given."
    )
    """What `"tell"` sends, unless `message=` says otherwise, once calls to a tool the agent
    does not have spend the budget."""

    per_tool: int | None
    per_run: int | None
    consecutive: int | None
    when_spent: Literal["stop", "tell", "interrupt"]
    message: str
    kinds: tuple[FailureKind, ...]

    def __init__(
        self,
        *,
        per_tool: int | None = None,
        per_run: int | None = None,
        consecutive: int | None = None,
        when_spent: Literal["stop", "tell", "interrupt"] = "stop",
        message: str = DEFAULT_MESSAGE,
        kinds: Collection[FailureKind] | None = None,
    ) -> None:
        """Set the limits; see the class docstring."""
        self.per_tool = _require_limit("per_tool", per_tool)
        self.per_run = _require_limit("per_run", per_run)
        self.consecutive = _require_limit("consecutive", consecutive)
        if self.per_tool is None and self.per_run is None and self.consecutive is None:
            msg = (
                "ErrorBudget() was given no limit. Pass per_tool=, per_run=, consecutive= "
                "or several, for example ErrorBudget(per_tool=3)."
            )
            raise ValueError(msg)
        self.when_spent = _require_when_spent(when_spent)
        self.message = _require_message(message)
        if self.when_spent != "tell" and message != self.DEFAULT_MESSAGE:
            msg = (
                f'`message` is the text a when_spent="tell" budget sends the model once '
                f"it closes a tool, but this budget's when_spent is {self.when_spent!r}, so "
                f'nothing would ever send it. Set when_spent="tell", or remove message=.'
            )
            raise ValueError(msg)
        self.kinds = _require_kinds(kinds)

    @override
    def __repr__(self) -> str:
        kinds = "" if self.kinds == FAILURE_KINDS else f", kinds={self.kinds!r}"
        consecutive = "" if self.consecutive is None else f", consecutive={self.consecutive}"
        return (
            f"ErrorBudget(per_tool={self.per_tool}, per_run={self.per_run}{consecutive}, "
            f"when_spent={self.when_spent!r}{kinds})"
        )


_LIMITS: dict[BudgetScope, str] = {
    "tool": "per_tool",
    "run": "per_run",
    "consecutive": "consecutive",
}
"""The argument of `ErrorBudget` that sets each scope's limit."""


class ToolErrorBudgetExceeded(Exception):
    """A run spent its error budget: raised instead of handing one more failure back.

    Chained (`__cause__`) to the tool's last exception, when the last failure was one; a
    failure of another kind (invalid arguments, an unknown tool, ...) has none to chain.

    Attributes:
        tool: The tool whose failure spent the budget.
        count: The handled failures counted, this one included.
        limit: The limit that was exceeded.
        scope: `"tool"` for `per_tool`, `"run"` for `per_run`, `"consecutive"` for
            `consecutive` (then `count` is the tool's failures in a row).
        route: The position in the middleware's routes of the route whose own budget was
            spent, or `None` when it was the middleware's `budget=`.
        kind: The kind of the last failure (see `FailureKind`).
        failure: The failure that spent the budget, as the record keeps it (its
            `outcome` is `"stopped"`), whether or not `record_failures=True`; the same
            entry the checkpointed record ends with when it is on. `None` only for an
            exception made by hand.

    Example:
        ```python
        from typing import Any

        # For pyright strict: create_agent's own signature is partially unknown there.
        from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
        from langchain.agents.middleware.types import InputAgentState
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.runnables import Runnable
        from langchain_core.tools import tool

        from langchain_tool_errors import ErrorBudget, ToolErrorBudgetExceeded, ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only
        from langchain_tool_errors.testing import Repeat, ScriptedChatModel

        @tool(description="The weather in a city.")
        def get_weather(city: str) -> str:
            raise LookupError(city)

        def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
            call = {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "c1"}
            model = ScriptedChatModel(script=[Repeat(AIMessage("", tool_calls=[call]))])
            middleware = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=2))
            return create_agent(model, tools=[get_weather], middleware=[middleware])

        try:
            build_agent().invoke({"messages": [HumanMessage("What is the weather in Atlantis?")]})
        except ToolErrorBudgetExceeded as spent:
            print(f"{spent.tool} failed {spent.count} times; the limit is {spent.limit}")
            assert spent.failure is not None and spent.failure["outcome"] == "stopped"
        ```
    """

    def __init__(
        self,
        tool: str,
        count: int,
        limit: int,
        scope: Literal["tool", "run", "consecutive"],
        *,
        route: int | None = None,
        kind: FailureKind = "exception",
        failure: ToolFailure | None = None,
    ) -> None:
        """Describe the spent budget."""
        self.failure = failure
        self.tool = tool
        self.count = count
        self.limit = limit
        self.scope: Literal["tool", "run", "consecutive"] = scope
        self.route = route
        self.kind: FailureKind = kind
        where = "of all tools" if scope == "run" else f"of `{tool}`"
        if scope == "consecutive":
            where += " in a row"
        if route is not None:
            where += f" handled by routes[{route}]"
        owner = "The error budget" if route is None else f"The budget of routes[{route}]"
        last = (
            f"the last failure of `{tool}` is chained below."
            if kind == "exception"
            else f"the last failure was {KIND_PHRASES[kind]} (`{tool}`)."
        )
        super().__init__(
            f"{owner} is spent: {count} failures {where} in this run, over the "
            f"limit of {limit} ({_LIMITS[scope]}). The run is stopped; {last}"
        )

    @override
    def __str__(self) -> str:
        """The message; it says the last exception is chained below only when it is."""
        text = super().__str__()
        chained = f"the last failure of `{self.tool}` is chained below."
        if self.__cause__ is not None or not text.endswith(chained):
            return text
        return text.removesuffix(chained) + (
            f"the last failure of `{self.tool}` was an exception, not chained here (it was met "
            "in another process, or a person stopped the run at a pause)."
        )
