"""`ToolRetryMiddleware` beside this middleware, in both list orders and both failure modes.

The first middleware in the list is the outer layer around the tool. Ours outside a retry
that raises (`on_failure="error"`) sees the last exception once, after every attempt ran;
ours outside a retry that answers (`on_failure="continue"`) sees that answer as an
`InnerMiddlewareError`, which routes rewrite, budgets count and the record keeps. A retry
outside ours gets our answer, not an exception, so it retries nothing, unless our handler
declines the failure. tests/test_composition.py has the plain handler cases; these add
routes, budgets, the record and listeners.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from langchain.agents.middleware import AgentMiddleware, ToolRetryMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    InnerMiddlewareError,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from tests._agents import Path, build_agent, call, run, tool_messages
from tests._composing import Flaky, Plan, agent_of, calls

SECRET = "token=sk-live-0123"
"""What the tool's exception carries and the model must not read."""

Order = Literal["ours outside", "retry outside"]
OnFailure = Literal["error", "continue"]
INNER_ROUTE_TEXT = "`fetch` is failing; answer without it."


class Handlers:
    """A route for inner middleware answers and one for exceptions; each keeps what it got."""

    def __init__(self) -> None:
        self.exceptions: list[str] = []
        self.inner_texts: list[str] = []

    def inner(self, failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
        self.inner_texts.append(failure.text)
        return f"`{failure.tool}` is failing; answer without it."

    def exception(self, exc: Exception, request: ToolCallRequest) -> str:
        self.exceptions.append(str(exc))
        return f"fetch failed with {type(exc).__name__}"

    def routes(self) -> list[Route[Any]]:
        return [Route(InnerMiddlewareError, self.inner), Route(Exception, self.exception)]


def retry(on_failure: OnFailure) -> ToolRetryMiddleware:
    return ToolRetryMiddleware(max_retries=2, on_failure=on_failure, initial_delay=0, jitter=False)


def stacked(
    order: Order, ours: ToolErrorMiddleware, on_failure: OnFailure
) -> list[AgentMiddleware[Any, Any, Any]]:
    retrying = retry(on_failure)
    return [ours, retrying] if order == "ours outside" else [retrying, ours]


def record_view(failures: list[ToolFailure]) -> list[tuple[str | None, str, str, int | None, str]]:
    return [(f["call_id"], f["kind"], f["error_type"], f["route"], f["outcome"]) for f in failures]


INNER = "langchain_tool_errors.InnerMiddlewareError"

# order, on_failure -> tool runs, the record's one entry (kind, error type, route), the
# content the model reads, the exceptions the exception route was given
WHO_ANSWERS: list[tuple[Order, OnFailure, int, tuple[FailureKind, str, int], str, list[str]]] = [
    (
        "ours outside",
        "error",
        3,
        ("exception", "TimeoutError", 1),
        "fetch failed with TimeoutError",
        [f"attempt 3 timed out; {SECRET}"],
    ),
    ("ours outside", "continue", 3, ("inner_middleware", INNER, 0), INNER_ROUTE_TEXT, []),
    (
        "retry outside",
        "error",
        1,
        ("exception", "TimeoutError", 1),
        "fetch failed with TimeoutError",
        [f"attempt 1 timed out; {SECRET}"],
    ),
    (
        "retry outside",
        "continue",
        1,
        ("exception", "TimeoutError", 1),
        "fetch failed with TimeoutError",
        [f"attempt 1 timed out; {SECRET}"],
    ),
]


@pytest.mark.parametrize(
    ("order", "on_failure", "runs", "recorded", "content", "exceptions"), WHO_ANSWERS
)
def test_who_answers_a_failing_call_in_each_order_and_mode(
    path: Path,
    order: Order,
    on_failure: OnFailure,
    runs: int,
    recorded: tuple[FailureKind, str, int],
    content: str,
    exceptions: list[str],
) -> None:
    flaky, handlers = Flaky(failures=10, secret=SECRET), Handlers()
    ours = ToolErrorMiddleware.from_routes(handlers.routes(), record_failures=True)
    agent = build_agent([flaky.tool()], stacked(order, ours, on_failure), [call("fetch", "c1")])

    result = run(agent, path)

    message = tool_messages(result)["c1"]
    assert flaky.runs == runs
    assert (message.text, message.status) == (content, "error")
    assert SECRET not in message.text
    assert handlers.exceptions == exceptions
    kind, error_type, route = recorded
    assert record_view(result["tool_failures"]) == [("c1", kind, error_type, route, "answered")]


def test_a_route_for_inner_middleware_errors_reads_the_retrys_answer_and_replaces_it(
    path: Path,
) -> None:
    flaky, handlers = Flaky(failures=10, secret=SECRET), Handlers()
    ours = ToolErrorMiddleware.from_routes(handlers.routes())
    agent = build_agent(
        [flaky.tool()], stacked("ours outside", ours, "continue"), [call("fetch", "c1")]
    )

    message = tool_messages(run(agent, path))["c1"]

    [retry_text] = handlers.inner_texts
    assert "3 attempts" in retry_text
    assert SECRET in retry_text  # what the retry would have sent
    assert message.text == INNER_ROUTE_TEXT


def test_without_a_route_the_retrys_answer_reaches_the_model_as_written_and_is_recorded(
    path: Path,
) -> None:
    flaky, handlers = Flaky(failures=10, secret=SECRET), Handlers()
    ours = ToolErrorMiddleware(handlers.exception, record_failures=True)
    agent = build_agent(
        [flaky.tool()], stacked("ours outside", ours, "continue"), [call("fetch", "c1")]
    )

    result = run(agent, path)

    message = tool_messages(result)["c1"]
    assert handlers.exceptions == []  # a single handler takes exceptions only
    assert message.status == "error"
    assert "3 attempts" in message.text
    assert SECRET in message.text
    assert record_view(result["tool_failures"]) == [
        ("c1", "inner_middleware", INNER, None, "answered")
    ]


# order, on_failure -> the kind that spends the budget, tool runs for the two calls
BUDGETS: list[tuple[Order, OnFailure, FailureKind, int]] = [
    ("ours outside", "error", "exception", 6),
    ("ours outside", "continue", "inner_middleware", 6),
    ("retry outside", "error", "exception", 2),
    ("retry outside", "continue", "exception", 2),
]


@pytest.mark.parametrize(("order", "on_failure", "kind", "runs"), BUDGETS)
def test_a_budget_counts_one_failure_per_call_whatever_the_retries(
    path: Path, order: Order, on_failure: OnFailure, kind: FailureKind, runs: int
) -> None:
    flaky, handlers = Flaky(failures=10, secret=SECRET), Handlers()
    told: list[ToolFailure] = []
    ours = ToolErrorMiddleware.from_routes(
        handlers.routes(), budget=ErrorBudget(per_tool=1), listeners=[told.append]
    )
    plan = Plan(calls(call("fetch", "c1")), calls(call("fetch", "c2")))
    agent = agent_of(plan, [flaky.tool()], stacked(order, ours, on_failure))

    with pytest.raises(ToolErrorBudgetExceeded) as stopped:
        run(agent, path)

    assert (stopped.value.kind, stopped.value.count, stopped.value.limit) == (kind, 2, 1)
    assert flaky.runs == runs
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == [
        ("c1", kind, "answered"),
        ("c2", kind, "stopped"),
    ]


def decline(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


def handled(exc: KeyError, request: ToolCallRequest) -> str:
    return "handled"


Declined = Literal["handler returns None", "not selected by exceptions="]


def declining(declined: Declined, told: list[ToolFailure]) -> AgentMiddleware[Any, Any, Any]:
    """Ours, declining every TimeoutError one way or the other."""
    if declined == "handler returns None":
        return ToolErrorMiddleware(decline, listeners=[told.append])
    return ToolErrorMiddleware(handled, exceptions=KeyError, listeners=[told.append])


@pytest.mark.parametrize(
    ("declined", "outcomes"),
    [("handler returns None", ["propagated", "propagated"]), ("not selected by exceptions=", [])],
)
def test_a_failure_ours_declines_goes_on_up_and_an_outer_retry_retries_it(
    path: Path, declined: Declined, outcomes: list[str]
) -> None:
    flaky, told = Flaky(failures=2, secret=SECRET), list[ToolFailure]()
    middleware = [retry("error"), declining(declined, told)]
    agent = build_agent([flaky.tool()], middleware, [call("fetch", "c1")])

    message = tool_messages(run(agent, path))["c1"]

    assert (flaky.runs, message.text, message.status) == (3, "fetched on run 3", "success")
    assert [f["outcome"] for f in told] == outcomes


def test_failures_that_go_on_up_are_told_to_listeners_and_never_kept_in_the_record(
    path: Path,
) -> None:
    # A declined failure goes on up: the hook that met it raised, so it writes nothing,
    # even when a retry outside absorbs the exception and the step then completes.
    flaky, told = Flaky(failures=2, secret=SECRET), list[ToolFailure]()
    ours = ToolErrorMiddleware(decline, record_failures=True, listeners=[told.append])
    agent = build_agent(
        [flaky.tool()], stacked("retry outside", ours, "error"), [call("fetch", "c1")]
    )

    result = run(agent, path)

    assert [(f["call_id"], f["outcome"]) for f in told] == [("c1", "propagated")] * 2
    assert result["tool_failures"] == []


def test_an_outer_retrys_answer_to_a_failure_ours_declined_is_an_inner_middleware_failure(
    path: Path,
) -> None:
    # Ours declines each TimeoutError, so it goes on up to the retry outside, which runs the
    # tool again and, out of attempts, answers the call itself (on_failure="continue"). To
    # ours that answer was written elsewhere: it meets it before the next model call as an
    # "inner_middleware" failure, which it records, tells and counts like any other.
    flaky, told = Flaky(failures=10, secret=SECRET), list[ToolFailure]()
    ours = ToolErrorMiddleware(
        decline, budget=ErrorBudget(per_tool=1), record_failures=True, listeners=[told.append]
    )
    plan = Plan(calls(call("fetch", "c1")), calls(call("fetch", "c2")))
    agent = agent_of(
        plan,
        [flaky.tool()],
        stacked("retry outside", ours, "continue"),
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "declined"}}

    with pytest.raises(ToolErrorBudgetExceeded) as stopped:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    assert (stopped.value.kind, stopped.value.count, stopped.value.limit) == (
        "inner_middleware",
        2,
        1,
    )
    assert flaky.runs == 6  # three attempts for each call
    # Each attempt's exception went on up ("propagated"); each call's answer was met once.
    propagated = [("c1", "exception", "propagated")] * 3
    assert [(f["call_id"], f["kind"], f["outcome"]) for f in told] == [
        *propagated,
        ("c1", "inner_middleware", "answered"),
        *[("c2", kind, outcome) for _, kind, outcome in propagated],
        ("c2", "inner_middleware", "stopped"),
    ]
    # c2's answer spends the budget as the next model call starts, inside that call's step,
    # which then writes nothing: its entry is on the exception, not in the checkpoint.
    assert record_view(agent.get_state(config).values["tool_failures"]) == [
        ("c1", "inner_middleware", INNER, None, "answered"),
    ]
    assert stopped.value.failure is not None
    assert record_view([stopped.value.failure]) == [
        ("c2", "inner_middleware", INNER, None, "stopped")
    ]
