"""The deploying guide's worker, as printed: a run done, paused for a person, or stopped.

The guide's block is run with a model that calls `lookup` five times, then says "done",
and a `lookup` that always raises: the budget (`per_tool=3`, "interrupt") is spent by the
fourth failure, so the run pauses at the fifth call.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import call
from tests._markdown import fenced_blocks
from tests._processes import ROOT

GUIDE = ROOT / "docs" / "guides" / "deploying.md"
DEMO = "# In production:"
"""Where the block's definitions end and its demonstration begins."""


def failing_lookup(runs: list[str]) -> BaseTool:
    @tool
    def lookup(record_id: str) -> str:
        """A record by id."""
        runs.append(record_id)
        raise KeyError(record_id)

    return lookup


def guide_worker(runs: list[str]) -> Any:
    """A `Worker` of the guide on an `InMemorySaver`, its model and tool the test's."""
    [block] = [b.text for b in fenced_blocks(GUIDE) if "class Worker" in b.text]
    definitions = block[: block.index(DEMO)]
    script = [
        AIMessage("", tool_calls=[call("lookup", f"c{n}", record_id=str(n))]) for n in range(1, 6)
    ]
    model = ScriptedChatModel(script=[*script, AIMessage("done")])
    namespace: dict[str, Any] = {"model": model, "lookup": failing_lookup(runs)}
    exec(compile(definitions, str(GUIDE), "exec"), namespace)
    return namespace["Worker"](InMemorySaver())


def test_a_spent_budget_pauses_the_run_and_go_on_runs_the_waiting_call() -> None:
    runs: list[str] = []
    worker = guide_worker(runs)

    paused = worker.ask("t", "Find record 7")

    assert paused.status == "paused"
    [pause] = paused.pauses
    assert (pause.value["tool"], pause.value["call_id"], pause.value["count"]) == (
        "lookup",
        "c5",
        4,
    )
    assert runs == ["1", "2", "3", "4"]
    done = worker.resume("t", {pause.id: {"type": "go_on"}})
    assert (done.status, done.text) == ("done", "done")
    assert runs == ["1", "2", "3", "4", "5"]


def test_a_person_s_stop_is_reported_and_the_thread_goes_on_at_its_next_input() -> None:
    runs: list[str] = []
    worker = guide_worker(runs)
    [pause] = worker.ask("t", "Find record 7").pauses

    stopped = worker.resume("t", {pause.id: {"type": "stop"}})

    assert stopped.status == "stopped"
    assert "`lookup`" in stopped.text
    assert "4" in stopped.text
    assert runs == ["1", "2", "3", "4"]  # the waiting call never ran
    again = worker.ask("t", "And now?")
    assert (again.status, again.text) == ("done", "done")
