"""How the middleware composes with others, and what a partial failure does to siblings.

- With `ToolRetryMiddleware` inside it (`on_failure="error"`), retries run first and only
  the final exception reaches the handler.
- With `ToolRetryMiddleware` outside it, this middleware turns the first failure into a
  message, so nothing is retried.
- `ToolRetryMiddleware`'s default `on_failure="continue"` writes `str(exc)` to the model
  itself; this middleware's handler then never sees the exception (the answer is an
  `"inner_middleware"` failure: tests/test_with_tool_retry.py).
- One unhandled failure among parallel calls fails the step: no sibling's message reaches
  the model in that run. Rerunning the thread from its checkpoint completes it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from tests._agents import Path, build_agent, call, rerun, run, tool_messages
from tests._composing import Flaky

LEAK = "dsn=postgres://admin:hunter2@db.internal"


class Seen:
    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def handler(self, exc: Exception, request: ToolCallRequest) -> str:
        self.errors.append(exc)
        return f"fetch failed with {type(exc).__name__}"


def retry(on_failure: Any = "error") -> ToolRetryMiddleware:
    return ToolRetryMiddleware(max_retries=2, on_failure=on_failure, initial_delay=0, jitter=False)


def test_retry_inside_runs_every_attempt_then_hands_the_last_exception_over(path: Path) -> None:
    flaky, seen = Flaky(failures=10, secret=LEAK), Seen()
    agent = build_agent(
        [flaky.tool()], [ToolErrorMiddleware(seen.handler), retry()], [call("fetch", "c1")]
    )

    message = tool_messages(run(agent, path))["c1"]

    assert flaky.runs == 3
    assert [str(e) for e in seen.errors] == [f"attempt 3 timed out; {LEAK}"]
    assert message.content == "fetch failed with TimeoutError"
    assert message.status == "error"


def test_retry_inside_that_succeeds_never_reaches_the_handler(path: Path) -> None:
    flaky, seen = Flaky(failures=2, secret=LEAK), Seen()
    agent = build_agent(
        [flaky.tool()], [ToolErrorMiddleware(seen.handler), retry()], [call("fetch", "c1")]
    )

    message = tool_messages(run(agent, path))["c1"]

    assert (flaky.runs, seen.errors) == (3, [])
    assert message.content == "fetched on run 3"


def test_retry_outside_sees_a_message_not_an_exception_so_nothing_is_retried(path: Path) -> None:
    flaky, seen = Flaky(failures=10, secret=LEAK), Seen()
    agent = build_agent(
        [flaky.tool()], [retry(), ToolErrorMiddleware(seen.handler)], [call("fetch", "c1")]
    )

    message = tool_messages(run(agent, path))["c1"]

    assert flaky.runs == 1
    assert len(seen.errors) == 1
    assert message.content == "fetch failed with TimeoutError"


def test_retry_with_its_default_on_failure_sends_the_raw_message_itself(path: Path) -> None:
    flaky, seen = Flaky(failures=10, secret=LEAK), Seen()
    agent = build_agent(
        [flaky.tool()],
        [ToolErrorMiddleware(seen.handler), retry(on_failure="continue")],
        [call("fetch", "c1")],
    )

    message = tool_messages(run(agent, path))["c1"]

    assert seen.errors == []
    assert LEAK in str(message.content)  # why the README says: use on_failure="error"


class Payments:
    """`charge` fails unhandled until `fixed`; `lookup` succeeds; `search` fails handled."""

    def __init__(self) -> None:
        self.fixed = False
        self.error = LookupError("payment gateway unreachable")
        self.runs: dict[str, int] = {"lookup": 0, "search": 0, "charge": 0}

    def tools(self) -> list[BaseTool]:
        def lookup(query: str = "") -> str:
            self.runs["lookup"] += 1
            return "order 7 found"

        def search(query: str = "") -> str:
            self.runs["search"] += 1
            raise TimeoutError("search timed out")

        def charge(query: str = "") -> str:
            self.runs["charge"] += 1
            if not self.fixed:
                raise self.error
            return "charged"

        return [
            StructuredTool.from_function(f, name=f.__name__, description=f.__name__)
            for f in (lookup, search, charge)
        ]


def test_an_unhandled_failure_fails_the_step_and_a_rerun_completes_it(path: Path) -> None:
    payments = Payments()
    checkpointer = InMemorySaver()
    agent = build_agent(
        payments.tools(),
        [ToolErrorMiddleware(lambda exc, request: "search is down", exceptions=TimeoutError)],
        [call("lookup", "c1"), call("search", "c2"), call("charge", "c3")],
        checkpointer=checkpointer,
    )
    config: Any = {"configurable": {"thread_id": f"partial-{path}"}}

    with pytest.raises(LookupError) as raised:
        run(agent, path, config=config)

    assert raised.value is payments.error
    saved = checkpointer.get(config)
    assert saved is not None
    saved_messages: list[object] = saved["channel_values"]["messages"]
    kinds = [type(m) for m in saved_messages]
    assert kinds == [HumanMessage, AIMessage], "no sibling's message reached the model"

    payments.fixed = True
    result = rerun(agent, path, config)

    messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.tool_call_id for m in messages) == ["c1", "c2", "c3"]
    by_id = tool_messages(result)
    assert (by_id["c1"].content, by_id["c1"].status) == ("order 7 found", "success")
    assert (by_id["c2"].content, by_id["c2"].status) == ("search is down", "error")
    assert (by_id["c3"].content, by_id["c3"].status) == ("charged", "success")
    assert result["messages"][-1].content == "done"
    assert payments.runs["charge"] == 2
    # Siblings that finished before the failure are kept and not run again; the others are.
    assert 1 <= payments.runs["lookup"] <= 2
    assert 1 <= payments.runs["search"] <= 2
