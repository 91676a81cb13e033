"""The middleware in deepagents' `create_deep_agent`: its tools, sub-agents, approvals, stops.

Real deep agents on the scripted model, on both paths. `create_deep_agent` puts the
middleware it is given after its own filesystem, sub-agent and dangling-call middleware, so
around a tool call it runs inside them; since deepagents 0.2.2 it also comes before the
approval middleware that `interrupt_on` adds (until then, after it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any, NamedTuple, Protocol

import pytest
from deepagents import SubAgent
from langchain.agents.middleware import AgentMiddleware, InterruptOnConfig
from langchain.agents.middleware import ToolErrorMiddleware as LangchainToolErrorMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import END, START

# pyright finds no stubs for langgraph.graph (the other langgraph modules used here resolve).
from langgraph.graph.state import StateGraph  # pyright: ignore[reportMissingTypeStubs]
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, StateSnapshot
from packaging.version import Version

from _langchain_tool_errors.state import STOPS_KEY, FailureState
from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    InnerMiddlewareError,
    InvalidArguments,
    Route,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.testing import Repeat, ScriptedChatModel, ScriptStep
from tests._agents import Agent, Path, call, failing_tool, run, tool_messages

FILE_TOOLS_ANSWER_ERRORS = Version(version("deepagents")) >= Version("0.5.7")
"""Whether deepagents' file tools answer a failure with `status="error"` (0.5.7 and later).

Before 0.5.7 they answered an ordinary message whose text starts with "Error:", which no
middleware sees as a failure. 0.5.3 is the newest release that installs beside
typing-extensions 4.13.0 (the lowest this package supports), so both behaviours are tested.
"""


class DeepAgent(Agent, Protocol):
    """What the tests use of a compiled deep agent: running it, and its checkpointed state."""

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state as its last checkpoint holds it."""
        ...


def deep_agent(
    script: Sequence[ScriptStep],
    *,
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    subagents: Sequence[SubAgent] = (),
    interrupt_on: dict[str, bool | InterruptOnConfig] | None = None,
    checkpointer: InMemorySaver | None = None,
) -> DeepAgent:
    """A `create_deep_agent` agent whose model plays `script`."""
    # For pyright strict: its `tools`, `checkpointer` and `cache` parameters are partially
    # unknown there (a bare `Callable`; type parameters left unset, as for create_agent).
    from deepagents import create_deep_agent  # pyright: ignore[reportUnknownVariableType]

    agent: DeepAgent = create_deep_agent(
        ScriptedChatModel(script=list(script)),
        tools=list(tools),
        middleware=list(middleware),
        subagents=list(subagents),
        interrupt_on=interrupt_on,
        checkpointer=checkpointer,
    )
    return agent


def sub_agent(
    script: Sequence[ScriptStep],
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
) -> SubAgent:
    """The sub-agent `helper`, on a scripted model of its own."""
    spec: SubAgent = {
        "name": "helper",
        "description": "Helps with one task.",
        "system_prompt": "Do the task.",
        "model": ScriptedChatModel(script=list(script)),
        "tools": list(tools),
    }
    if middleware:
        spec["middleware"] = list(middleware)
    return spec


def fine_tool() -> BaseTool:
    """A tool that succeeds, answering `fine <query>`."""

    def ok(query: str = "") -> str:
        return f"fine {query}"

    return StructuredTool.from_function(ok, name="ok", description="ok (succeeds)")


def ask_helper(call_id: str) -> ToolCall:
    """The parent's call of the `task` tool, for the sub-agent `helper`."""
    return call("task", call_id, description="Look it up.", subagent_type="helper")


def steps(*turns: Sequence[ToolCall]) -> list[ScriptStep]:
    """A script: one model reply per turn, making its calls, then a final answer."""
    return [*(AIMessage("", tool_calls=list(calls)) for calls in turns), AIMessage("done")]


def records(result: dict[str, Any]) -> list[tuple[str, str | None, str, str]]:
    failures: list[ToolFailure] = result["tool_failures"]
    return [(f["middleware"], f["call_id"], f["kind"], f["outcome"]) for f in failures]


def answers_per_call(messages: Sequence[BaseMessage]) -> Counter[str]:
    """How many tool messages answer each call id."""
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


# A. Inside a deep agent, the middleware listed in `middleware=` sees its tools' failures.


def tool_said_no(failure: InnerMiddlewareError, request: ToolCallRequest) -> str:
    return f"`{failure.tool}` answered with an error"


def wrong_arguments(failure: InvalidArguments, request: ToolCallRequest) -> str:
    return f"`{failure.tool}` cannot take those arguments"


def raised(exc: Exception, request: ToolCallRequest) -> str:
    return f"`{request.tool_call['name']}` raised {type(exc).__name__}"


class FailureInADeepAgent(NamedTuple):
    """A failing call (after `setup`'s calls), and what the middleware makes of it."""

    setup: tuple[ToolCall, ...]
    failing: ToolCall
    kind: FailureKind | None  # None: the tool's answer is an ordinary one, no failure
    error_type: str
    route: int | None
    answer: str  # what the model reads (for no failure: a part of the tool's own text)


OWN_ERROR_KIND: FailureKind | None = "inner_middleware" if FILE_TOOLS_ANSWER_ERRORS else None

FAILURES_IN_A_DEEP_AGENT = {
    # The file tools never raise: they answer with an error message of their own, since
    # 0.5.7 with `status="error"` (before, an ordinary answer: no failure). They set no
    # `handle_tool_error`, so the middleware classes it as an inner middleware's answer,
    # and the route for InnerMiddlewareError takes it.
    "read_file of a missing path": FailureInADeepAgent(
        (),
        call("read_file", "f", file_path="/missing.txt"),
        OWN_ERROR_KIND,
        "langchain_tool_errors.InnerMiddlewareError",
        1,
        "`read_file` answered with an error" if FILE_TOOLS_ANSWER_ERRORS else "not found",
    ),
    "edit_file of a string the file lacks": FailureInADeepAgent(
        (call("write_file", "w", file_path="/notes.txt", content="hello"),),
        call("edit_file", "f", file_path="/notes.txt", old_string="absent", new_string="x"),
        OWN_ERROR_KIND,
        "langchain_tool_errors.InnerMiddlewareError",
        1,
        "`edit_file` answered with an error" if FILE_TOOLS_ANSWER_ERRORS else "not found",
    ),
    # Arguments the tool's schema refuses: ToolNode answers, the tool never runs.
    "read_file with an offset that is not a number": FailureInADeepAgent(
        (),
        call("read_file", "f", file_path="/notes.txt", offset="the end"),
        "invalid_arguments",
        "langchain_tool_errors.InvalidArguments",
        0,
        "`read_file` cannot take those arguments",
    ),
    # A sub-agent with no error middleware lets its tool's exception go up through `task`.
    "task whose sub-agent's tool raises": FailureInADeepAgent(
        (),
        ask_helper("f"),
        "exception",
        "LookupError",
        2,
        "`task` raised LookupError",
    ),
    "a tool of the caller's that raises": FailureInADeepAgent(
        (),
        call("inventory", "f"),
        "exception",
        "KeyError",
        2,
        "`inventory` raised KeyError",
    ),
}


@pytest.mark.parametrize(
    "case", FAILURES_IN_A_DEEP_AGENT.values(), ids=FAILURES_IN_A_DEEP_AGENT.keys()
)
def test_a_failure_in_a_deep_agent_is_classed_recorded_and_answered_by_its_route(
    path: Path, case: FailureInADeepAgent
) -> None:
    routes = ToolErrorMiddleware.from_routes(
        [
            Route(InvalidArguments, wrong_arguments),
            Route(InnerMiddlewareError, tool_said_no),
            Route(Exception, raised),
        ],
        record_failures=True,
    )
    helper = sub_agent(
        steps([call("records", "s1")]), [failing_tool("records", LookupError("no record"))]
    )
    script = steps(*([list(case.setup)] if case.setup else []), [case.failing])
    agent = deep_agent(
        script,
        tools=[failing_tool("inventory", KeyError("sku"))],
        middleware=[routes],
        subagents=[helper],
    )

    result = run(agent, path)

    answer = tool_messages(result)["f"]
    failures: list[ToolFailure] = result["tool_failures"]
    if case.kind is None:
        assert failures == []
        assert (answer.status, case.answer in answer.text) == ("success", True)
        return
    assert [
        (f["tool"], f["call_id"], f["kind"], f["error_type"], f["route"], f["outcome"])
        for f in failures
    ] == [(case.failing["name"], "f", case.kind, case.error_type, case.route, "answered")]
    assert (answer.status, answer.text) == ("error", case.answer)


def test_deepagents_file_tools_answer_errors_with_error_status_from_0_5_7() -> None:
    # The table above expects what the installed release does; this pins which one it is.
    agent = deep_agent(
        steps([call("read_file", "f", file_path="/missing.txt")]),
        tools=[],
        middleware=[],
    )

    answer = tool_messages(run(agent, "sync"))["f"]

    assert answer.status == ("error" if FILE_TOOLS_ANSWER_ERRORS else "success")
    assert "/missing.txt" in answer.text


# B. A sub-agent's run, or a later node, never erases the run's record (D9).


class SubAgentRun(NamedTuple):
    """A sub-agent's own middleware and tool call, and the parent's record after it."""

    records: bool
    sub_tool: str
    expected: list[tuple[str, str | None, str, str]]


PARENT_RECORD = ("ToolErrorMiddleware", "p1", "exception", "answered")

SUB_AGENT_RUNS = {
    "sub-agent recording, no failure": SubAgentRun(True, "ok", [PARENT_RECORD]),
    "sub-agent not recording, no failure": SubAgentRun(False, "ok", [PARENT_RECORD]),
    # Its record comes back through `task` and follows the parent's.
    "sub-agent recording its own failure": SubAgentRun(
        True, "bad", [PARENT_RECORD, ("sub", "s1", "exception", "answered")]
    ),
}


@pytest.mark.parametrize("case", SUB_AGENT_RUNS.values(), ids=SUB_AGENT_RUNS.keys())
def test_a_sub_agents_run_keeps_the_parents_record(path: Path, case: SubAgentRun) -> None:
    tools = [failing_tool("bad", LookupError("x")), fine_tool()]
    own = [ToolErrorMiddleware(report_type_only, record_failures=True, name="sub")]
    helper = sub_agent(
        steps([call(case.sub_tool, "s1", query="y")]), tools, own if case.records else []
    )
    agent = deep_agent(
        steps([call("bad", "p1")], [ask_helper("p2")]),
        tools=tools,
        middleware=[ToolErrorMiddleware(report_type_only, record_failures=True)],
        subagents=[helper],
    )

    result = run(agent, path)

    assert records(result) == case.expected
    assert tool_messages(result)["p2"].text == "done"  # the sub-agent's final answer


class Shared(FailureState):
    """A graph's state with the agent's messages and the record, under its reducer."""


def clear_record(state: Shared) -> dict[str, Any]:
    """A node that hands back an empty record, as a sub-agent with no failure does."""
    return {"tool_failures": []}


def test_a_record_survives_a_later_node_that_writes_an_empty_one(path: Path) -> None:
    # create_agent's own graph, as one node of a plain StateGraph.
    # For pyright strict: create_agent's `checkpointer` parameter is partially unknown.
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]

    agent = create_agent(
        ScriptedChatModel(script=steps([call("bad", "p1")])),
        tools=[failing_tool("bad", LookupError("x"))],
        middleware=[ToolErrorMiddleware(report_type_only, record_failures=True)],
    )
    # Any: `add_node` and `compile` are partially unknown in pyright strict, and the
    # compiled graph's `invoke` takes langgraph's bare `Command` (see tests/_agents.py).
    # ty and pyrefly: langgraph's Protocol bound on the state type does not admit an
    # `AgentState` TypedDict (astral-sh/ty#2826, facebook/pyrefly#3745), as in
    # tests/test_control_flow.py; mypy and pyright accept it.
    graph: Any = StateGraph(Shared)  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-specialization]
    graph.add_node("agent", agent)
    graph.add_node("clear", clear_record)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "clear")
    graph.add_edge("clear", END)
    compiled: Agent = graph.compile()

    result = run(compiled, path)

    assert records(result) == [PARENT_RECORD]


# C. Approvals: `interrupt_on`, resumed with each decision.


class Deploys:
    """A `deploy` tool that fails for "prod", and the targets it ran for."""

    def __init__(self) -> None:
        self.targets: list[str] = []

    def tool(self) -> BaseTool:
        def deploy(target: str) -> str:
            self.targets.append(target)
            if target == "prod":
                raise PermissionError(target)
            return f"deployed to {target}"

        return StructuredTool.from_function(deploy, name="deploy", description="fails on prod")


class Decision(NamedTuple):
    """A reviewer's decision on the gated call `d1`, and what follows from it."""

    decision: dict[str, Any]
    ran: list[str]  # the targets `deploy` ran for
    status: str
    answer: str  # how the answer to `d1` ends
    recorded: tuple[FailureKind, ...]  # the kinds `d1` is recorded as


DECISIONS = {
    # The approved call runs and raises: the middleware answers it.
    "approve": Decision(
        {"type": "approve"}, ["prod"], "error", "`deploy` raised PermissionError", ("exception",)
    ),
    # The edited call runs instead, and succeeds; langchain notes the edit before it.
    "edit": Decision(
        {"type": "edit", "edited_action": {"name": "deploy", "args": {"target": "staging"}}},
        ["staging"],
        "success",
        "deployed to staging",
        (),
    ),
    # The rejected call never runs: the approval middleware answers it, with an error the
    # model reads, which this middleware meets before the next model call and records.
    "reject": Decision(
        {"type": "reject", "message": "not today"}, [], "error", "not today", ("inner_middleware",)
    ),
}


@pytest.mark.parametrize("case", DECISIONS.values(), ids=DECISIONS.keys())
def test_each_approval_decision_leaves_every_call_answered_exactly_once(
    path: Path, case: Decision
) -> None:
    deploys = Deploys()
    agent = deep_agent(
        steps([call("bad", "b1")], [call("deploy", "d1", target="prod"), call("bad", "b2")]),
        tools=[deploys.tool(), failing_tool("bad", LookupError("x"))],
        middleware=[
            ToolErrorMiddleware.from_routes([Route(Exception, raised)], record_failures=True)
        ],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "approvals"}}

    paused = run(agent, path, {"messages": [HumanMessage("deploy")]}, config)
    resumed = run(agent, path, Command(resume={"decisions": [case.decision]}), config)

    assert "__interrupt__" in paused
    assert records(paused) == [("ToolErrorMiddleware", "b1", "exception", "answered")]
    assert deploys.targets == case.ran
    assert answers_per_call(resumed["messages"]) == {"b1": 1, "d1": 1, "b2": 1}
    d1 = tool_messages(resumed)["d1"]
    assert d1.status == case.status
    assert d1.text.endswith(case.answer)
    ran = [(call_id, kind) for _, call_id, kind, _ in records(resumed) if call_id != "d1"]
    assert ran == [("b1", "exception"), ("b2", "exception")]
    d1_kinds = tuple(kind for _, call_id, kind, _ in records(resumed) if call_id == "d1")
    assert d1_kinds == case.recorded


# D. A budget's stop, and the thread's next input (D10).


class Stopped(NamedTuple):
    """A thread whose run a budget stopped, and the messages its next model call read."""

    agent: DeepAgent
    config: RunnableConfig
    read: list[BaseMessage]


def stop_a_run(path: Path) -> Stopped:
    """`bad` fails twice under `per_tool=1`: the second failure, beside `ok1`, stops the run."""
    read: list[BaseMessage] = []

    def next_reply(messages: Sequence[BaseMessage]) -> AIMessage:
        read.extend(messages)
        return AIMessage("understood")

    agent = deep_agent(
        [
            AIMessage("", tool_calls=[call("bad", "b1")]),
            AIMessage("", tool_calls=[call("bad", "b2"), call("ok", "ok1", query="y")]),
            next_reply,
        ],
        tools=[failing_tool("bad", LookupError("x")), fine_tool()],
        middleware=[
            ToolErrorMiddleware(
                report_type_only, budget=ErrorBudget(per_tool=1), record_failures=True
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "stopped"}}
    with pytest.raises(ToolErrorBudgetExceeded) as stopped:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)
    assert (stopped.value.tool, stopped.value.count) == ("bad", 2)
    return Stopped(agent, config, read)


def test_after_a_budget_stop_the_next_model_call_reads_each_call_answered_once(
    path: Path,
) -> None:
    stopped = stop_a_run(path)

    run(stopped.agent, path, {"messages": [HumanMessage("and now?")]}, stopped.config)

    assert answers_per_call(stopped.read) == {"b1": 1, "b2": 1, "ok1": 1}
    answers = {m.tool_call_id: m for m in stopped.read if isinstance(m, ToolMessage)}
    assert (answers["ok1"].status, answers["ok1"].text) == ("success", "fine y")
    stopping = answers["b2"]
    assert stopping.status == "error"
    assert "did not complete" not in stopping.text
    assert "budget" in stopping.text
    assert "stopped" in stopping.text


def test_a_budget_stop_keeps_the_stopping_failure_in_the_checkpoints_record(
    path: Path,
) -> None:
    stopped = stop_a_run(path)

    kept: list[ToolFailure] = stopped.agent.get_state(stopped.config).values["tool_failures"]

    assert [(f["call_id"], f["outcome"]) for f in kept] == [("b1", "answered"), ("b2", "stopped")]


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "not recorded"])
def test_a_sub_agents_budget_stop_is_a_failure_of_task_to_the_parent(
    path: Path, recorded: bool
) -> None:
    # The sub-agent's run is stopped: its ToolErrorBudgetExceeded reaches the `task` tool
    # as an exception, which the parent's middleware handles as any tool's failure. With no
    # record and a budget of exceptions only, the sub-agent raises it from its model call's
    # step, as a signal no model-call wrapper retries: to the parent it is a failure all
    # the same.
    tools = [failing_tool("bad", LookupError("x"))]
    budgeted = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, kinds=None if recorded else ["exception"]),
        record_failures=recorded,
        name="sub",
    )
    helper = sub_agent(steps([call("bad", "s1")], [call("bad", "s2")]), tools, [budgeted])
    agent = deep_agent(
        steps([ask_helper("t1")]),
        tools=tools,
        middleware=[ToolErrorMiddleware(report_type_only, record_failures=True)],
        subagents=[helper],
    )

    result = run(agent, path)

    answer = tool_messages(result)["t1"]
    assert (answer.status, answer.text) == (
        "error",
        "Tool `task` failed with ToolErrorBudgetExceeded.",
    )
    failures: list[ToolFailure] = result["tool_failures"]
    assert [(f["middleware"], f["call_id"], f["error_type"]) for f in failures] == [
        ("ToolErrorMiddleware", "t1", "langchain_tool_errors.ToolErrorBudgetExceeded")
    ]


def test_a_sub_agents_stop_passes_through_langchains_middleware_in_the_parent(
    path: Path,
) -> None:
    # The sub-agent's stop is raised as its next model call starts, as a LangGraph signal
    # that no model-call wrapper retries. langchain's `ToolErrorMiddleware` in the parent
    # lets LangGraph's signals through: the parent's run stops with the sub-agent's.
    tools = [failing_tool("bad", LookupError("x"))]
    budgeted = ToolErrorMiddleware(report_type_only, budget=ErrorBudget(per_tool=1), name="sub")
    helper = sub_agent(steps([call("bad", "s1")], [call("bad", "s2")]), tools, [budgeted])
    theirs = LangchainToolErrorMiddleware(on_error=lambda exc, request: "failed")
    agent = deep_agent(
        steps([ask_helper("t1")]), tools=tools, middleware=[theirs], subagents=[helper]
    )

    with pytest.raises(ToolErrorBudgetExceeded) as stopped:
        run(agent, path)
    assert (stopped.value.tool, stopped.value.count) == ("bad", 2)


# E. A forked sub-agent: the parent's state, and the parent's middleware instance (C28).


FORKS = "mode" in SubAgent.__annotations__
"""Whether deepagents has forked sub-agents (`mode="fork"`)."""

needs_forks = pytest.mark.skipif(not FORKS, reason="this deepagents has no forked sub-agents")
beta = pytest.mark.filterwarnings("ignore:The feature `forked subagents` is in beta")


def forked_helper(turns: Sequence[Sequence[ToolCall]], tools: Sequence[BaseTool]) -> SubAgent:
    """`helper` as a fork: deepagents hands it the parent's state, private channels
    included, and gives it the parent's middleware (the same instances).

    Its model makes one reply per turn, then answers "done". The fork's conversation is the
    parent's, then the task as a human message: its replies are counted from that message.
    """
    replies = [AIMessage("", tool_calls=list(calls)) for calls in turns]

    def reply(messages: Sequence[BaseMessage]) -> AIMessage:
        task = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        made = sum(isinstance(m, AIMessage) for m in messages[task:])
        return replies[made] if made < len(replies) else AIMessage("done")

    spec = sub_agent([], tools)
    spec["model"] = ScriptedChatModel(script=[Repeat(reply)])
    spec["mode"] = "fork"
    return spec


@needs_forks
@beta
def test_a_forked_sub_agent_counts_and_records_its_own_run_with_the_parents_instance(
    path: Path,
) -> None:
    bad = failing_tool("bad", LookupError("x"))
    shared = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_tool=1, when_spent="tell", message="`{tool}` closed at {count}"),
        record_failures=True,
    )
    agent = deep_agent(
        steps([call("bad", "p1")], [ask_helper("t1")], [call("bad", "p3")]),
        tools=[bad],
        middleware=[shared],
        subagents=[forked_helper([[call("bad", "s1")]], [bad])],
    )

    result = run(agent, path)

    # The fork is handed the parent's state (p1's count and record) and runs the parent's
    # instance (it has no middleware of its own): its run starts from zero all the same
    # (LangGraph keeps these channels out of a graph's input, and a run's start empties
    # them), so s1 is its first failure (answered, not told), and its record holds s1
    # alone, which `task` hands back after p1.
    assert records(result) == [
        ("ToolErrorMiddleware", "p1", "exception", "answered"),
        ("ToolErrorMiddleware", "s1", "exception", "answered"),
        ("ToolErrorMiddleware", "p3", "exception", "told"),
    ]
    answers = tool_messages(result)
    assert (answers["t1"].status, answers["t1"].text) == ("success", "done")
    # The parent counts its own run only: p3 is its second failure of `bad`, not its third.
    assert (answers["p3"].status, answers["p3"].text) == ("error", "`bad` closed at 2")


def stopped_at(spent: ToolErrorBudgetExceeded) -> tuple[str | None, int]:
    """The call whose failure spent the budget, and the count it was spent at."""
    assert spent.failure is not None
    return spent.failure["call_id"], spent.count


@needs_forks
@beta
def test_a_forked_sub_agents_stop_stays_in_its_run_and_the_parent_counts_its_own(
    path: Path,
) -> None:
    fork_stops: list[tuple[str | None, int]] = []

    def answer(exc: Exception, request: ToolCallRequest) -> str:
        if isinstance(exc, ToolErrorBudgetExceeded):  # the fork's stop, through `task`
            fork_stops.append(stopped_at(exc))
        return report_type_only(exc, request)

    bad = failing_tool("bad", LookupError("x"))
    shared = ToolErrorMiddleware(answer, budget=ErrorBudget(per_tool=1), record_failures=True)
    agent = deep_agent(
        steps([call("bad", "p1")], [ask_helper("t1")], [call("bad", "p3")]),
        tools=[bad],
        middleware=[shared],
        subagents=[forked_helper([[call("bad", "s1")], [call("bad", "s2")]], [bad])],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "forked"}}

    with pytest.raises(ToolErrorBudgetExceeded) as stopped:
        run(agent, path, {"messages": [HumanMessage("go")]}, config)

    # The fork counted from zero: its second failure (s2) stopped it, not its first.
    assert fork_stops == [("s2", 2)]
    # The parent was not stopped by the fork's stop: it went on, and its own budget,
    # which counted its own failures of `bad` only, stopped it at p3, the second.
    assert stopped_at(stopped.value) == ("p3", 2)
    values = agent.get_state(config).values
    assert {name: stop["call_id"] for name, stop in values[STOPS_KEY].items()} == {
        "ToolErrorMiddleware": "p3"
    }
    assert records(values) == [
        ("ToolErrorMiddleware", "p1", "exception", "answered"),
        ("ToolErrorMiddleware", "t1", "exception", "answered"),
        ("ToolErrorMiddleware", "p3", "exception", "stopped"),
    ]
