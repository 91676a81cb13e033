"""`repair=` through real agents: a call the model got wrong, corrected before any tool runs.

The tool here, `lookup(record_id: int)`, counts its runs, so a test can tell what ran. The
repairs below fix the usual mistakes: a record id sent as "A-17", a tool name the agent
does not have, and arguments cut short.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import override

from langchain_tool_errors import (
    ErrorBudget,
    InvalidArguments,
    MalformedToolCall,
    RepairableFailure,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
    UnknownTool,
)
from langchain_tool_errors.handlers import report_invalid_fields, report_type_only
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import Agent, Path, call, run, tool_messages
from tests._wrapping import BeforeModelCalls

DONE = AIMessage("done")


def lookup_tool(ran: list[int]) -> BaseTool:
    @tool
    def lookup(record_id: int) -> str:
        """Look a record up by its number."""
        ran.append(record_id)
        return f"record {record_id}"

    return lookup


def reply(*calls: ToolCall) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


CUT_SHORT = AIMessage(
    "",
    invalid_tool_calls=[
        invalid_tool_call(name="lookup", args='{"record_id": 1', id="m", error="not JSON")
    ],
)


class Repairs:
    """A repair that fixes "A-<n>" ids, `find` for `lookup`, and cut-short ids; notes each."""

    def __init__(self) -> None:
        self.offered: list[RepairableFailure] = []

    def __call__(self, failure: RepairableFailure) -> ToolCall | None:
        self.offered.append(failure)
        if isinstance(failure, UnknownTool) and failure.tool == "find":
            return ToolCall(name="lookup", args=dict(failure.args), id="ignored")
        if isinstance(failure, InvalidArguments):
            raw = str(failure.args.get("record_id", ""))
            if raw.startswith("A-"):
                return ToolCall(name=failure.tool, args={"record_id": raw[2:]}, id=None)
        if isinstance(failure, MalformedToolCall) and failure.raw_arguments:
            return ToolCall(name=failure.tool, args={"record_id": 1}, id=None)
        return None


def agent_of(
    middleware: ToolErrorMiddleware[Any, Any, Any], script: Sequence[AIMessage], ran: list[int]
) -> Agent:
    built: Agent = create_agent(
        ScriptedChatModel(script=[*script, DONE]), tools=[lookup_tool(ran)], middleware=[middleware]
    )
    return built


def calls_in(result: dict[str, Any]) -> list[ToolCall]:
    return [c for m in result["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]


def test_arguments_the_schema_refuses_are_repaired_and_run_once(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, repair=repairs)
    agent = agent_of(middleware, [reply(call("lookup", "c1", record_id="A-17"))], ran)

    result = run(agent, path)

    assert ran == [17]  # "17" is coerced by the tool's schema
    answer = tool_messages(result)["c1"]
    assert (answer.status, answer.text) == ("success", "record 17")
    # The model reads the call as it ran, under the id it gave.
    assert calls_in(result) == [call("lookup", "c1", record_id="17")]
    [offered] = repairs.offered
    assert isinstance(offered, InvalidArguments)
    assert (offered.tool, offered.args) == ("lookup", {"record_id": "A-17"})
    assert [error.field for error in offered.errors] == ["record_id"]
    assert offered.text == (
        f"The arguments of `lookup` do not fit its schema: record_id: {offered.errors[0].expected}."
    )
    assert result["messages"][-1].text == "done"


def test_a_tool_the_agent_does_not_have_is_repaired(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, repair=repairs)
    agent = agent_of(middleware, [reply(call("find", "c1", record_id=3))], ran)

    result = run(agent, path)

    assert ran == [3]
    assert tool_messages(result)["c1"].text == "record 3"
    assert calls_in(result) == [call("lookup", "c1", record_id=3)]  # the returned id is not kept
    [offered] = repairs.offered
    assert isinstance(offered, UnknownTool)
    assert offered.known_tools == ("lookup",)
    assert offered.text == "`find` is not a tool of this agent; its tools are: lookup."


def test_a_malformed_call_is_repaired_into_one_that_runs(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    agent = agent_of(ToolErrorMiddleware(report_type_only, repair=repairs), [CUT_SHORT], ran)

    result = run(agent, path)

    assert ran == [1]
    assert tool_messages(result)["m"].text == "record 1"
    first_reply = next(m for m in result["messages"] if isinstance(m, AIMessage))
    assert first_reply.invalid_tool_calls == []
    [offered] = repairs.offered
    assert isinstance(offered, MalformedToolCall)
    assert (offered.tool, offered.args) == ("lookup", {})
    assert (offered.raw_arguments, offered.error) == ('{"record_id": 1', "not JSON")
    assert "The call to `lookup` could not be run" in offered.text
    assert result["messages"][-1].text == "done"


@pytest.mark.parametrize("order", ["repair outside", "repair inside"])
def test_a_repaired_call_is_never_met_as_a_failure_by_another_middleware(
    path: Path, order: str
) -> None:
    # Beside a middleware that only watches, in either order: the repair corrects the
    # cut-short call before the watching one could meet it, so it is told of nothing.
    ran: list[int] = []
    told: list[ToolFailure] = []
    fixing = ToolErrorMiddleware(report_type_only, repair=Repairs(), name="fixing")
    watching = ToolErrorMiddleware(report_type_only, listeners=[told.append], name="watching")
    middleware = [fixing, watching] if order == "repair outside" else [watching, fixing]
    agent: Agent = create_agent(
        ScriptedChatModel(script=[CUT_SHORT, DONE]),
        tools=[lookup_tool(ran)],
        middleware=middleware,
    )

    result = run(agent, path)

    assert ran == [1]
    assert tool_messages(result)["m"].text == "record 1"
    assert told == []


def test_valid_calls_are_never_offered_and_a_declined_repair_changes_nothing(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, repair=repairs)
    script = [reply(call("lookup", "ok", record_id=5), call("lookup", "bad", record_id="B-1"))]

    result = run(agent_of(middleware, script, ran), path)

    assert ran == [5]
    assert len(repairs.offered) == 1  # only the bad call, and the repair declined it
    answers = tool_messages(result)
    assert answers["bad"].status == "error"
    assert "B-1" in answers["bad"].text  # ToolNode's own answer, as without a repair


def test_a_repaired_call_that_fails_goes_through_the_routes_and_is_not_repaired_again(
    path: Path,
) -> None:
    ran: list[int] = []
    offered: list[RepairableFailure] = []

    def still_wrong(failure: RepairableFailure) -> ToolCall | None:
        offered.append(failure)
        return ToolCall(name="lookup", args={"record_id": "still not a number"}, id=None)

    middleware = ToolErrorMiddleware.from_routes(
        [Route(InvalidArguments, report_invalid_fields), Route(Exception, report_type_only)],
        budget=ErrorBudget(per_run=5),
        record_failures=True,
        repair=still_wrong,
    )
    agent = agent_of(middleware, [reply(call("lookup", "c1", record_id="A-1"))], ran)

    result = run(agent, path)

    assert ran == []
    assert len(offered) == 1
    answer = tool_messages(result)["c1"]
    assert answer.status == "error"
    assert "record_id" in answer.text
    assert "still not a number" not in answer.text  # the route's answer, not ToolNode's
    outcomes = [(f["kind"], f["outcome"]) for f in result["tool_failures"]]
    assert outcomes == [("invalid_arguments", "repaired"), ("invalid_arguments", "answered")]


def test_the_record_and_the_listeners_show_each_repair_and_no_budget_counts_it(
    path: Path,
) -> None:
    ran: list[int] = []
    told: list[ToolFailure] = []
    middleware = ToolErrorMiddleware(
        report_type_only,
        budget=ErrorBudget(per_run=1),
        record_failures=True,
        listeners=[told.append],
        repair=Repairs(),
    )
    script = [
        reply(
            call("lookup", "a", record_id="A-1"),
            call("lookup", "ok", record_id=9),
            call("find", "b", record_id=2),
        ),
        CUT_SHORT,
    ]

    result = run(agent_of(middleware, script, ran), path)  # three repairs, a budget of one

    assert sorted(ran) == [1, 1, 2, 9]
    assert calls_in(result)[:3] == [
        call("lookup", "a", record_id="1"),
        call("lookup", "ok", record_id=9),
        call("lookup", "b", record_id=2),
    ]
    records = [(f["call_id"], f["tool"], f["kind"], f["outcome"]) for f in result["tool_failures"]]
    assert records == [
        ("a", "lookup", "invalid_arguments", "repaired"),
        ("b", "find", "unknown_tool", "repaired"),
        ("m", "lookup", "malformed_call", "repaired"),
    ]
    assert told == result["tool_failures"]


def test_only_the_selected_tools_calls_are_offered(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, tools=["search"], repair=repairs)
    agent = agent_of(middleware, [reply(call("lookup", "c1", record_id="A-17"))], ran)

    result = run(agent, path)

    assert repairs.offered == []
    assert ran == []
    assert tool_messages(result)["c1"].status == "error"


BAD_RETURNS: list[tuple[object, str]] = [
    ("lookup", "returned 'lookup' (str), not a tool call"),
    ({"args": {}}, "returned a call whose name is None, not a tool's name"),
    ({"name": "lookup"}, "a call to `lookup` whose args are None (NoneType), not a dict"),
    (
        {"record_id": "A-17"},  # the arguments alone
        "returned {'record_id': 'A-17'} (dict), which has no name and no args",
    ),
    (
        {"name": "lookup", "args": ["A"]},
        "a call to `lookup` whose args are ['A'] (list), not a dict",
    ),
    (
        {"name": "lookup", "args": {"record_id": {1, 2}}},
        "a call to `lookup` whose args are not JSON",
    ),
    (
        {"name": "lookup", "args": {"record_id": float("nan")}},
        "a call to `lookup` whose args are not JSON",
    ),
    ({"name": "", "args": {}}, "returned a call whose name is '', not a tool's name"),
    ({"name": 7, "args": {}}, "returned a call whose name is 7, not a tool's name"),
]


@pytest.mark.parametrize(("returned", "said"), BAD_RETURNS)
def test_a_repair_that_returns_no_valid_call_is_a_clear_error(
    path: Path, returned: object, said: str
) -> None:
    def broken(failure: RepairableFailure) -> Any:
        return returned

    middleware = ToolErrorMiddleware(report_type_only, repair=broken)
    agent = agent_of(middleware, [reply(call("lookup", "c1", record_id="A-17"))], [])

    with pytest.raises(TypeError) as refused:
        run(agent, path)

    message = str(refused.value)
    assert said in message
    assert "for the call `lookup` (invalid arguments, id 'c1')" in message
    assert 'ToolCall(name="lookup", args={...}, id=None), or None' in message
    assert any("InvalidArguments(" in note for note in refused.value.__notes__)


def test_a_repair_that_raises_propagates_unchanged() -> None:
    problem = LookupError("the repair's own bug")

    def broken(failure: RepairableFailure) -> ToolCall | None:
        raise problem

    middleware = ToolErrorMiddleware(report_type_only, repair=broken)
    agent = agent_of(middleware, [reply(call("find", "c1"))], [])

    with pytest.raises(LookupError) as raised:
        run(agent, "sync")

    assert raised.value is problem


def test_repair_must_be_a_sync_callable() -> None:
    async def arepair(failure: RepairableFailure) -> ToolCall | None:
        return None

    with pytest.raises(TypeError, match=r"`repair` must be a sync function .* got an async"):
        ToolErrorMiddleware(report_type_only, repair=arepair)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
    with pytest.raises(TypeError, match=r"got 'fix' \(str\)\. Pass a plain function"):
        ToolErrorMiddleware.from_routes([Route(Exception, report_type_only)], repair="fix")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
    asyncio.run(arepair(UnknownTool(tool="x", args={}, text="", known_tools=())))


def test_the_repair_is_shown_and_read_back() -> None:
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, repair=repairs)

    assert middleware.repair is repairs
    assert f"repair={repairs!r}" in repr(middleware)
    assert ToolErrorMiddleware(report_type_only).repair is None
    assert "repair=" not in repr(ToolErrorMiddleware(report_type_only))


def test_an_async_listener_is_awaited_for_a_repair_on_the_async_path() -> None:
    told: list[ToolFailure] = []

    async def alisten(failure: ToolFailure) -> None:
        await asyncio.sleep(0)
        told.append(failure)

    middleware = ToolErrorMiddleware(report_type_only, listeners=[alisten], repair=Repairs())
    agent = agent_of(middleware, [reply(call("find", "c1", record_id=3))], [])

    run(agent, "async")

    assert [(f["call_id"], f["outcome"]) for f in told] == [("c1", "repaired")]


def test_a_person_reviews_the_call_as_repaired(path: Path) -> None:
    ran: list[int] = []
    review = HumanInTheLoopMiddleware(interrupt_on={"lookup": True})
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply(call("lookup", "c1", record_id="A-17")), DONE]),
        tools=[lookup_tool(ran)],
        middleware=[ToolErrorMiddleware(report_type_only, repair=Repairs()), review],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    paused = run(agent, path, config=config)
    [asked] = paused["__interrupt__"]
    [action] = asked.value["action_requests"]
    assert (action["name"], action["args"]) == ("lookup", {"record_id": "17"})
    result = run(agent, path, Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert ran == [17]
    assert tool_messages(result)["c1"].text == "record 17"


class Answer(BaseModel):
    """The agent's structured answer."""

    record: str


def test_the_call_that_gives_a_structured_answer_is_never_offered(path: Path) -> None:
    repairs = Repairs()
    structured = reply(call("Answer", "s1", record="record 3"))
    agent: Agent = create_agent(
        ScriptedChatModel(script=[structured]),
        tools=[lookup_tool([])],
        middleware=[ToolErrorMiddleware(report_type_only, repair=repairs)],
        response_format=ToolStrategy(Answer),
    )

    result = run(agent, path)

    assert repairs.offered == []
    assert result["structured_response"] == Answer(record="record 3")


def test_a_structured_answer_beside_a_malformed_call_is_kept(path: Path) -> None:
    # The malformed call is met in the model call's step and answered after the reply:
    # the step still writes the structured answer the reply gave.
    told: list[ToolFailure] = []
    structured = AIMessage(
        "",
        tool_calls=[call("Answer", "s1", record="record 3")],
        invalid_tool_calls=[invalid_tool_call(name="lookup", args="{", id="cut")],
    )
    agent: Agent = create_agent(
        ScriptedChatModel(script=[structured]),
        tools=[lookup_tool([])],
        middleware=[
            ToolErrorMiddleware.from_routes(
                [Route(MalformedToolCall, lambda failure, request: "send it again")],
                listeners=[told.append],
            )
        ],
        response_format=ToolStrategy(Answer),
    )

    result = run(agent, path)

    assert result["structured_response"] == Answer(record="record 3")
    assert [(f["call_id"], f["kind"]) for f in told] == [("cut", "malformed_call")]
    assert tool_messages(result)["cut"].text == "send it again"


def test_every_wrong_call_of_a_reply_is_offered_whatever_comes_before_it(path: Path) -> None:
    ran: list[int] = []
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, tools=["lookup", "find"], repair=repairs)
    script = [
        AIMessage(
            "",
            tool_calls=[
                call("lookup", "declined", record_id="B-1"),  # offered, left as it is
                call("other", "unselected", record_id="A-5"),  # not a selected tool
                call("find", "unknown", record_id=6),
                call("lookup", "invalid", record_id="A-7"),
            ],
            invalid_tool_calls=[
                invalid_tool_call(name="lookup", args=None, id="no-text"),  # declined
                invalid_tool_call(name="lookup", args="{", id=None),  # no id
                invalid_tool_call(name="other", args="{", id="unselected-m"),
                invalid_tool_call(name="lookup", args="{", id="cut"),
            ],
        )
    ]

    result = run(agent_of(middleware, script, ran), path)

    offered = [(type(f).__name__, f.tool) for f in repairs.offered]
    assert offered == [
        ("InvalidArguments", "lookup"),
        ("UnknownTool", "find"),
        ("InvalidArguments", "lookup"),
        ("MalformedToolCall", "lookup"),
        ("MalformedToolCall", "lookup"),
    ]
    assert sorted(ran) == [1, 6, 7]
    first = next(m for m in result["messages"] if isinstance(m, AIMessage))
    assert [c.get("id") for c in first.invalid_tool_calls] == [
        "no-text",
        None,
        "unselected-m",
    ]


def test_a_malformed_call_without_a_name_is_named_so_in_the_error() -> None:
    nameless = AIMessage("", invalid_tool_calls=[invalid_tool_call(args="{", id="m")])

    def broken(failure: RepairableFailure) -> Any:
        assert failure.tool == ""
        return "lookup"

    middleware = ToolErrorMiddleware(report_type_only, repair=broken)

    with pytest.raises(TypeError) as refused:
        run(agent_of(middleware, [nameless], []), "sync")

    assert "for the call `(no name)` (malformed call, id 'm')" in str(refused.value)
    assert 'ToolCall(name="tool", args={...}, id=None)' in str(refused.value)


def test_the_messages_after_the_reply_and_the_structured_answer_are_kept() -> None:
    middleware = ToolErrorMiddleware(report_type_only, repair=Repairs())
    model = ScriptedChatModel(script=[DONE])
    request: ModelRequest[Any] = ModelRequest(
        model=model, messages=[HumanMessage("go")], tools=[lookup_tool([])]
    )
    after = ToolMessage("structured", tool_call_id="s")
    no_id = ToolCall(name="find", args={"record_id": 2}, id=None, type="tool_call")  # never offered
    answered = ModelResponse(
        result=[reply(no_id, call("find", "c1", record_id=1)), after],
        structured_response={"answer": 1},
    )

    response = middleware.wrap_model_call(request, lambda _: answered)

    assert isinstance(response, ModelResponse)
    assert response.result[1] is after
    assert response.structured_response == {"answer": 1}
    first = response.result[0]
    assert isinstance(first, AIMessage)
    assert first.tool_calls == [no_id, call("lookup", "c1", record_id=1)]


def test_a_provider_s_own_tool_is_never_an_unknown_tool(path: Path) -> None:
    repairs = Repairs()
    web_search: dict[str, Any] = {"type": "web_search", "name": "web_search"}
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply(call("web_search", "w", query="x")), DONE]),
        tools=[lookup_tool([]), web_search],
        middleware=[ToolErrorMiddleware(report_type_only, repair=repairs)],
    )

    run(agent, path)

    assert repairs.offered == []


def test_a_wrong_call_after_the_structured_answer_is_offered() -> None:
    repairs = Repairs()
    middleware = ToolErrorMiddleware(report_type_only, repair=repairs)
    request: ModelRequest[Any] = ModelRequest(
        model=ScriptedChatModel(script=[DONE]),
        messages=[HumanMessage("go")],
        tools=[lookup_tool([])],
        response_format=ToolStrategy(Answer),
    )
    answering = reply(call("Answer", "s1", record="record 3"), call("find", "c1", record_id=1))

    response = middleware.wrap_model_call(request, lambda _: ModelResponse(result=[answering]))

    assert [(type(f).__name__, f.tool) for f in repairs.offered] == [("UnknownTool", "find")]
    assert isinstance(response, ModelResponse)
    first = response.result[0]
    assert isinstance(first, AIMessage)
    assert first.tool_calls == [
        call("Answer", "s1", record="record 3"),
        call("lookup", "c1", record_id=1),
    ]


def search_tool() -> BaseTool:
    @tool
    def search(query: str) -> str:
        """Search the records."""
        return f"found {query}"

    return search


def test_an_unknown_tool_is_offered_with_each_tool_the_agent_has(path: Path) -> None:
    repairs = Repairs()
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply(call("find", "c1", record_id=3)), DONE]),
        tools=[lookup_tool([]), search_tool()],
        middleware=[ToolErrorMiddleware(report_type_only, repair=repairs)],
    )

    run(agent, path)

    [offered] = repairs.offered
    assert isinstance(offered, UnknownTool)
    assert offered.known_tools == ("lookup", "search")
    assert offered.text == "`find` is not a tool of this agent; its tools are: lookup, search."


def span_tool() -> BaseTool:
    @tool
    def span(low: int, high: int) -> str:
        """The numbers from `low` to `high`."""
        return f"{low}..{high}"

    return span


def test_invalid_arguments_are_offered_with_each_refused_field_in_the_text(path: Path) -> None:
    repairs = Repairs()
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply(call("span", "c1", low="one", high="two")), DONE]),
        tools=[span_tool()],
        middleware=[ToolErrorMiddleware(report_type_only, repair=repairs)],
    )

    run(agent, path)

    [offered] = repairs.offered
    assert isinstance(offered, InvalidArguments)
    low, high = offered.errors
    assert (low.field, high.field) == ("low", "high")
    assert offered.text == (
        f"The arguments of `span` do not fit its schema: low: {low.expected}; "
        f"high: {high.expected}."
    )


def test_a_malformed_call_without_a_name_is_offered_where_tools_selects_no_name(
    path: Path,
) -> None:
    # `tools=` selects a malformed call by the name the model gave, "" for none, as the
    # routes do (its failure's `tool` is "").
    nameless = AIMessage("", invalid_tool_calls=[invalid_tool_call(args="{", id="m")])
    offered: list[RepairableFailure] = []

    def declines(failure: RepairableFailure) -> None:
        offered.append(failure)

    middleware = ToolErrorMiddleware(report_type_only, tools=["", "lookup"], repair=declines)

    run(agent_of(middleware, [nameless], []), path, config={"recursion_limit": 10})

    [failure] = offered
    assert isinstance(failure, MalformedToolCall)
    assert (failure.tool, failure.raw_arguments) == ("", "{")


class WithoutSearch(BeforeModelCalls):
    """Listed first, so outside ours: takes `search` out of the tools each model call offers."""

    @override
    def before(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        kept = [t for t in request.tools if not (isinstance(t, BaseTool) and t.name == "search")]
        return request.override(tools=kept)


def test_the_tools_a_call_may_name_are_the_model_calls_as_they_reach_the_middleware(
    path: Path,
) -> None:
    # The agent has `search`, but the model call that reaches ours no longer offers it.
    repairs = Repairs()
    agent: Agent = create_agent(
        ScriptedChatModel(script=[reply(call("search", "c1", query="q")), DONE]),
        tools=[lookup_tool([]), search_tool()],
        middleware=[WithoutSearch(), ToolErrorMiddleware(report_type_only, repair=repairs)],
    )

    run(agent, path)

    [offered] = repairs.offered
    assert isinstance(offered, UnknownTool)
    assert (offered.tool, offered.known_tools) == ("search", ("lookup",))
    assert offered.text == "`search` is not a tool of this agent; its tools are: lookup."
