"""ToolErrorMiddleware's behaviour, proven through real `create_agent` agents on both paths."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    TextContentBlock,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphBubbleUp, ParentCommand
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt, omit_payload

from _langchain_tool_errors.state import COUNTS_KEY
from langchain_tool_errors import (
    ErrorBudget,
    MissingHandlerError,
    RepairableFailure,
    Route,
    SyncCapable,
    ToolErrorMiddleware,
)
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import (
    Agent,
    Calls,
    Path,
    Ready,
    Sent,
    build_agent,
    call,
    direct_request,
    echo_tool,
    failing_tool,
    question,
    run,
    tool_messages,
)


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} failed: {type(exc).__name__}"


async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
    return f"async: {request.tool_call['name']} failed: {type(exc).__name__}"


def give_up(exc: Exception, request: ToolCallRequest) -> None:
    return None


def _hook(
    middleware: ToolErrorMiddleware[str, Exception, SyncCapable],
    request: ToolCallRequest,
    path: Path,
    error: Exception | None = None,
) -> object:
    """Call `middleware`'s hook for `path` directly, on a tool call that raises `error`.

    The default is a fresh `KeyError`.
    """
    raised = error if error is not None else KeyError("k")

    def execute(_request: ToolCallRequest) -> ToolMessage:
        raise raised

    async def aexecute(_request: ToolCallRequest) -> ToolMessage:
        raise raised

    if path == "sync":
        return middleware.wrap_tool_call(request, execute)
    return asyncio.run(middleware.awrap_tool_call(request, aexecute))


# --- parity with langchain's class -------------------------------------------------------


def test_handler_content_becomes_an_error_tool_message_the_model_reads(path: Path) -> None:
    tool = failing_tool("search", TimeoutError("upstream timed out"))
    agent = build_agent([tool], [ToolErrorMiddleware(explain)], [call("search", "c1")])

    result = run(agent, path)

    message = tool_messages(result)["c1"]
    assert message.content == "search failed: TimeoutError"
    assert message.status == "error"
    assert message.name == "search"
    assert message.tool_call_id == "c1"
    final = result["messages"][-1]
    assert isinstance(final, AIMessage)
    assert final.content == "done"


@pytest.mark.parametrize("container", [list, tuple], ids=["list", "tuple"])
def test_content_blocks_reach_the_model_as_a_list(
    path: Path, container: Callable[[list[TextContentBlock]], Any]
) -> None:
    blocks: list[TextContentBlock] = [
        {"type": "text", "text": "search failed"},
        {"type": "text", "text": "try again later"},
    ]

    def as_blocks(exc: Exception, request: ToolCallRequest) -> Any:
        return container(blocks)

    tool = failing_tool("search", TimeoutError())
    agent = build_agent([tool], [ToolErrorMiddleware(as_blocks)], [call("search", "c1")])

    message = tool_messages(run(agent, path))["c1"]

    assert message.content == blocks
    assert message.status == "error"


def test_handler_returning_none_reraises_the_original_exception_object(path: Path) -> None:
    error = PermissionError("no access")
    agent = build_agent(
        [failing_tool("search", error)], [ToolErrorMiddleware(give_up)], [call("search", "c1")]
    )

    with pytest.raises(PermissionError) as raised:
        run(agent, path)

    assert raised.value is error


def test_async_path_uses_aon_error_and_sync_path_uses_on_error() -> None:
    middleware = ToolErrorMiddleware(explain, aon_error=aexplain)
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [middleware], [call("search", "c1")]
    )

    assert tool_messages(run(agent, "sync"))["c1"].content == "search failed: KeyError"
    assert tool_messages(run(agent, "async"))["c1"].content == "async: search failed: KeyError"


def test_async_path_falls_back_to_on_error() -> None:
    agent = build_agent(
        [failing_tool("search", KeyError("k"))],
        [ToolErrorMiddleware(explain)],
        [call("search", "c1")],
    )

    assert tool_messages(run(agent, "async"))["c1"].content == "search failed: KeyError"


@pytest.mark.parametrize("made", ["one handler", "a route"])
def test_a_sync_on_error_on_the_async_path_runs_on_the_event_loop(made: str) -> None:
    ran_on: list[tuple[asyncio.AbstractEventLoop, int]] = []

    def on_the_loop(exc: Exception, request: ToolCallRequest) -> str:
        # Raises RuntimeError in a thread that runs no event loop.
        ran_on.append((asyncio.get_running_loop(), threading.get_ident()))
        return explain(exc, request)

    middleware: AgentMiddleware[Any, Any, Any] = (
        ToolErrorMiddleware(on_the_loop)
        if made == "one handler"
        else ToolErrorMiddleware.from_routes([Route(KeyError, on_the_loop)])
    )
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [middleware], [call("search", "c1")]
    )

    async def main() -> tuple[dict[str, Any], asyncio.AbstractEventLoop, int]:
        result = await agent.ainvoke(question())
        return result, asyncio.get_running_loop(), threading.get_ident()

    result, loop, thread = asyncio.run(main())

    assert tool_messages(result)["c1"].content == "search failed: KeyError"
    assert ran_on == [(loop, thread)]


def test_async_only_middleware_handles_the_async_path() -> None:
    agent = build_agent(
        [failing_tool("search", KeyError("k"))],
        [ToolErrorMiddleware(aon_error=aexplain)],
        [call("search", "c1")],
    )

    assert tool_messages(run(agent, "async"))["c1"].content == "async: search failed: KeyError"


def test_async_only_middleware_refuses_the_sync_path_before_the_tool_runs() -> None:
    ran: list[str] = []

    def record(query: str = "") -> str:
        ran.append(query)
        return "ok"

    tool = StructuredTool.from_function(record, name="search", description="records calls")
    middleware = ToolErrorMiddleware(aon_error=aexplain, name="refund_errors")
    agent = build_agent([tool], [middleware], [call("search", "c1")])

    with pytest.raises(NotImplementedError) as raised:
        run(agent, "sync")

    assert isinstance(raised.value, RuntimeError)
    assert str(raised.value).startswith("refund_errors has only an async handler")
    assert "ainvoke" in str(raised.value)
    assert "on_error" in str(raised.value)
    assert ran == []


@pytest.mark.parametrize("by", ["name", "tool"])
def test_tools_filter_leaves_other_tools_untouched(path: Path, by: str) -> None:
    search = failing_tool("search", TimeoutError())
    error = ValueError("lookup broke")
    lookup = failing_tool("lookup", error)
    calls = Calls()
    selected: list[str | BaseTool] = ["search"] if by == "name" else [search]
    middleware = ToolErrorMiddleware(calls.handler, tools=selected)

    handled = run(build_agent([search, lookup], [middleware], [call("search", "c1")]), path)
    assert tool_messages(handled)["c1"].content == "handled"

    with pytest.raises(ValueError, match="lookup broke") as raised:
        run(build_agent([search, lookup], [middleware], [call("lookup", "c2")]), path)
    assert raised.value is error
    assert len(calls.seen) == 1
    # The filter is consulted after the failure; the exception leaves exactly as it came.
    assert error.__cause__ is None
    assert error.__context__ is None
    assert raised.traceback[-1].name == "run_tool"

    succeeding = run(
        build_agent([echo_tool()], [middleware], [call("echo", "c3", query="x")]), path
    )
    assert tool_messages(succeeding)["c3"].content == "echo: x"
    assert len(calls.seen) == 1


def test_interrupt_pauses_the_run_and_never_reaches_the_handler(path: Path) -> None:
    def approve(query: str = "") -> str:
        answer = interrupt({"question": "approve?"})
        return f"approved: {answer}"

    tool = StructuredTool.from_function(approve, name="approve", description="asks a human")
    calls = Calls()
    agent = build_agent(
        [tool],
        [ToolErrorMiddleware(calls.handler)],
        [call("approve", "c1")],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": f"interrupt-{path}"}}

    paused = run(agent, path, config=config)
    assert "__interrupt__" in paused
    resumed = run(agent, path, Command(resume="yes"), config=config)

    message = tool_messages(resumed)["c1"]
    assert message.content == "approved: yes"
    assert message.status == "success"
    assert calls.seen == []


def test_control_flow_signals_propagate_even_when_all_exceptions_are_selected(path: Path) -> None:
    signal = ParentCommand(Command(graph=Command.PARENT, goto="elsewhere"))
    calls = Calls()
    middleware = ToolErrorMiddleware(calls.handler, exceptions=Exception)
    request = direct_request(None, call("search", "c1"))

    with pytest.raises(GraphBubbleUp) as raised:
        _hook(middleware, request, path, signal)

    assert raised.value is signal
    assert calls.seen == []


@pytest.mark.parametrize(
    "result",
    [ToolMessage(content="fine", tool_call_id="c1"), Command(update={"messages": []})],
    ids=["ToolMessage", "Command"],
)
def test_successful_results_pass_through_as_the_same_object(
    path: Path, result: ToolMessage | Command[Any]
) -> None:
    middleware = ToolErrorMiddleware(explain)
    request = direct_request(echo_tool(), call("echo", "c1"))

    async def aexecute(_request: ToolCallRequest) -> ToolMessage | Command[Any]:
        return result

    if path == "sync":
        returned = middleware.wrap_tool_call(request, lambda _request: result)
    else:
        returned = asyncio.run(middleware.awrap_tool_call(request, aexecute))

    assert returned is result


def test_successful_tool_calls_in_an_agent_are_untouched(path: Path) -> None:
    calls = Calls()
    agent = build_agent(
        [echo_tool()], [ToolErrorMiddleware(calls.handler)], [call("echo", "c1", query="hi")]
    )

    message = tool_messages(run(agent, path))["c1"]

    assert message.content == "echo: hi"
    assert message.status == "success"
    assert calls.seen == []


def test_trace_policy_omits_the_payloads() -> None:
    policy = ToolErrorMiddleware(explain).trace_policy

    assert policy is not None
    assert policy.process_inputs is omit_payload
    assert policy.process_outputs is omit_payload


def test_no_handler_is_a_public_error_both_a_type_error_and_a_value_error() -> None:
    with pytest.raises(MissingHandlerError) as raised:
        ToolErrorMiddleware()  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]  # ty: ignore[no-matching-overload]  # pyrefly: ignore[no-matching-overload]

    assert isinstance(raised.value, TypeError)
    assert isinstance(raised.value, ValueError)
    # A traceback names it where it is imported from, not by a private module.
    assert f"{type(raised.value).__module__}.{type(raised.value).__qualname__}" == (
        "langchain_tool_errors.MissingHandlerError"
    )
    assert "on_error" in str(raised.value)
    assert "aon_error" in str(raised.value)


@pytest.mark.parametrize(
    ("path", "handler"), [("sync", "on_error"), ("async", "on_error"), ("async", "aon_error")]
)
def test_a_raising_handler_propagates_with_the_tool_exception_as_context(
    path: Path, handler: str
) -> None:
    tool_error = ConnectionError("reset")
    handler_error = RuntimeError("handler bug")

    def broken(exc: Exception, request: ToolCallRequest) -> str:
        raise handler_error

    async def abroken(exc: Exception, request: ToolCallRequest) -> str:
        raise handler_error

    middleware = (
        ToolErrorMiddleware(broken)
        if handler == "on_error"
        else ToolErrorMiddleware(aon_error=abroken)
    )
    agent = build_agent([failing_tool("search", tool_error)], [middleware], [call("search", "c1")])

    with pytest.raises(RuntimeError) as raised:
        run(agent, path)

    assert raised.value is handler_error
    assert raised.value.__context__ is tool_error


# --- beyond langchain's class -------------------------------------------------------------


def test_exceptions_selects_which_failures_reach_the_handler(path: Path) -> None:
    def narrow(exc: LookupError, request: ToolCallRequest) -> str:
        return f"missing: {exc.args[0]}"

    middleware = ToolErrorMiddleware(narrow, exceptions=LookupError)
    lookup = failing_tool("lookup", KeyError("user 7"))
    error = ConnectionError("reset")
    search = failing_tool("search", error)

    handled = run(build_agent([lookup, search], [middleware], [call("lookup", "c1")]), path)
    assert tool_messages(handled)["c1"].content == "missing: user 7"

    with pytest.raises(ConnectionError) as raised:
        run(build_agent([lookup, search], [middleware], [call("search", "c2")]), path)
    assert raised.value is error


def test_named_instances_give_each_tool_its_own_policy_in_one_agent(path: Path) -> None:
    search = failing_tool("search", TimeoutError())
    lookup = failing_tool("lookup", KeyError("k"))
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        ToolErrorMiddleware(lambda e, r: "search is down", tools=["search"], name="search_errors"),
        ToolErrorMiddleware(lambda e, r: "no such record", tools=["lookup"], name="lookup_errors"),
    ]
    agent = build_agent([search, lookup], middleware, [call("search", "c1"), call("lookup", "c2")])

    messages = tool_messages(run(agent, path))

    assert messages["c1"].content == "search is down"
    assert messages["c2"].content == "no such record"
    assert [m.name for m in middleware] == ["search_errors", "lookup_errors"]


def test_two_instances_sharing_a_name_stop_the_agent_being_built_as_the_guide_says() -> None:
    # langchain's assertion, which the package cannot intercept: the selecting guide and the
    # `name` parameter's documentation quote it and say that `name=` is the fix.
    search = failing_tool("search", TimeoutError())
    unnamed: list[AgentMiddleware[Any, Any, Any]] = [
        ToolErrorMiddleware(lambda e, r: "search is down", tools=["search"]),
        ToolErrorMiddleware(lambda e, r: "no such record", tools=["lookup"]),
    ]
    with pytest.raises(AssertionError, match="Please remove duplicate middleware instances"):
        build_agent([search], unnamed, [])

    named = [*unnamed[:1], ToolErrorMiddleware(lambda e, r: "no record", name="lookup_errors")]
    build_agent([search], named, [])


def test_a_call_without_an_id_raises_a_clear_error_chained_to_the_tool_exception(
    path: Path,
) -> None:
    error = ConnectionError("reset")
    tool_call = call("search", "c1")
    tool_call["id"] = None
    agent = build_agent(
        [failing_tool("search", error)], [ToolErrorMiddleware(explain)], [tool_call]
    )

    with pytest.raises(ValueError, match="`search` has no id") as raised:
        run(agent, path)

    assert raised.value.__cause__ is error


def test_middleware_repr_shows_its_configuration() -> None:
    middleware = ToolErrorMiddleware(
        explain, exceptions=(KeyError, TimeoutError), tools=["b", "a"], name="mine"
    )

    text = repr(middleware)

    assert text == (
        f"ToolErrorMiddleware(on_error={explain!r}, aon_error=None, "
        "exceptions=('KeyError', 'TimeoutError'), tools=['a', 'b'], name='mine')"
    )


class Reply(str, Enum):  # noqa: UP042  # not StrEnum: str() of this one is its name
    """A handler's canned replies: `str` members, whose `str()` is not their text."""

    FAILED = "search failed"


@pytest.mark.parametrize(
    "content",
    ["search failed", [{"type": "text", "text": "search failed"}], Reply.FAILED],
    ids=["str", "blocks", "str subclass"],
)
def test_error_message_equals_one_built_and_validated_the_ordinary_way(content: Any) -> None:
    middleware = ToolErrorMiddleware(lambda exc, request: content)
    request = direct_request(failing_tool("search", KeyError("k")), call("search", "c1"))

    def execute(_request: ToolCallRequest) -> ToolMessage:
        raise KeyError("k")

    first = middleware.wrap_tool_call(request, execute)
    second = middleware.wrap_tool_call(request, execute)

    assert isinstance(first, ToolMessage)
    assert isinstance(second, ToolMessage)
    ordinary = ToolMessage(content=content, tool_call_id="c1", name="search", status="error")
    assert first == ordinary
    assert first.model_dump() == ordinary.model_dump()
    assert first.model_fields_set == ordinary.model_fields_set  # what exclude_unset reads
    assert first.model_fields_set is not second.model_fields_set
    assert type(first.content) is type(ordinary.content)  # a str subclass is sent as a str
    assert str(first) == str(ordinary)
    assert first.additional_kwargs is not second.additional_kwargs
    assert first.response_metadata is not second.response_metadata
    if isinstance(content, list):
        assert first.content is not content
        assert first.content[0] is not content[0], "blocks are copied, as pydantic would"


class Named(str, Enum):  # noqa: UP042  # not StrEnum: str() of this one is its name
    """A call id and a tool name that are `str` subclasses, as a model client might give."""

    CALL = "c7"
    TOOL = "search"


def test_a_call_id_and_tool_name_that_subclass_str_are_answered_as_plain_str() -> None:
    middleware = ToolErrorMiddleware(lambda exc, request: "search failed")
    request = direct_request(None, call(Named.TOOL, Named.CALL))

    def execute(_request: ToolCallRequest) -> ToolMessage:
        raise KeyError("k")

    message = middleware.wrap_tool_call(request, execute)

    assert isinstance(message, ToolMessage)
    assert (type(message.tool_call_id), type(message.name)) == (str, str)
    assert (message.tool_call_id, message.name) == ("c7", "search")
    assert message == ToolMessage(
        content="search failed", tool_call_id="c7", name="search", status="error"
    )


# --- the configuration, read back -------------------------------------------------------


def test_the_configuration_reads_back_as_given() -> None:
    lookup = echo_tool("lookup")
    middleware = ToolErrorMiddleware(
        explain, aon_error=aexplain, exceptions=(KeyError, TimeoutError), tools=("search", lookup)
    )

    assert middleware.on_error is explain
    assert middleware.aon_error is aexplain
    assert middleware.exceptions == (KeyError, TimeoutError)
    assert middleware.selected_tools == frozenset({"search", "lookup"})
    assert list(middleware.tools) == [], "it registers no tools with the agent"


def test_the_defaults_read_back_as_every_exception_and_every_tool() -> None:
    sync_only = ToolErrorMiddleware(explain)
    async_only = ToolErrorMiddleware(aon_error=aexplain)

    assert sync_only.aon_error is None
    assert async_only.on_error is None
    assert sync_only.exceptions == (Exception,)
    assert sync_only.selected_tools is None


@pytest.mark.parametrize("attribute", ["on_error", "aon_error", "exceptions", "selected_tools"])
def test_the_configuration_cannot_be_reassigned(attribute: str) -> None:
    middleware = ToolErrorMiddleware(explain)

    with pytest.raises(AttributeError):
        setattr(middleware, attribute, give_up)

    assert middleware.on_error is explain


def test_the_handler_given_at_construction_keeps_running_after_an_attempted_swap(
    path: Path,
) -> None:
    middleware = ToolErrorMiddleware(explain)
    with pytest.raises(AttributeError):
        setattr(middleware, "on_error", give_up)  # noqa: B010 (what code that skips the checker does)
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [middleware], [call("search", "c1")]
    )

    result = run(agent, path)

    assert tool_messages(result)["c1"].content == "search failed: KeyError"


# --- the tool a failed call names -----------------------------------------------------------


def test_a_failure_without_a_tool_object_is_named_and_selected_by_the_calls_name(
    path: Path,
) -> None:
    request = direct_request(None, call("search", "c1"))

    message = _hook(ToolErrorMiddleware(explain, tools=["search"]), request, path)

    assert isinstance(message, ToolMessage)
    assert message.name == "search"
    assert message.tool_call_id == "c1"
    with pytest.raises(KeyError):
        _hook(ToolErrorMiddleware(explain, tools=["other"]), request, path)


def test_the_tools_own_name_wins_over_the_name_in_the_call(path: Path) -> None:
    request = direct_request(failing_tool("search_v2", KeyError("k")), call("search", "c1"))

    message = _hook(ToolErrorMiddleware(explain, tools=["search_v2"]), request, path)

    assert isinstance(message, ToolMessage)
    assert message.name == "search_v2"
    with pytest.raises(KeyError):
        _hook(ToolErrorMiddleware(explain, tools=["search"]), request, path)


@pytest.mark.parametrize(
    ("call_id", "shown"), [("", "'' (str)"), (7, "7 (int)")], ids=["empty", "int"]
)
def test_a_call_id_that_is_empty_or_not_a_str_fails_chained_to_the_tool_exception(
    path: Path, call_id: object, shown: str
) -> None:
    tool_call: Any = {"name": "search", "args": {}, "id": call_id, "type": "tool_call"}
    request = direct_request(failing_tool("search", KeyError("k")), tool_call)

    with pytest.raises(ValueError, match="`search` has no id") as raised:
        _hook(ToolErrorMiddleware(explain), request, path)

    assert f"(got {shown})" in str(raised.value)
    assert isinstance(raised.value.__cause__, KeyError)


def test_a_call_name_that_is_not_a_str_fails_chained_to_the_tool_exception(path: Path) -> None:
    tool_call: Any = {"name": 7, "args": {}, "id": "c1", "type": "tool_call"}
    request = direct_request(None, tool_call)

    with pytest.raises(TypeError, match="7 \\(int\\)") as raised:
        _hook(ToolErrorMiddleware(lambda exc, request: "handled"), request, path)

    assert isinstance(raised.value.__cause__, KeyError)


def test_repr_shows_the_handlers_and_every_default() -> None:
    middleware = ToolErrorMiddleware(aon_error=aexplain)

    assert repr(middleware) == (
        f"ToolErrorMiddleware(on_error=None, aon_error={aexplain!r}, "
        "exceptions=('Exception',), tools=None, name='ToolErrorMiddleware')"
    )


def _a_future(exc: Exception, request: ToolCallRequest) -> asyncio.Future[str]:
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    future.set_result(f"from a future: {type(exc).__name__}")
    return future


def _an_awaitable(exc: Exception, request: ToolCallRequest) -> Ready:
    return Ready(f"from an awaitable: {type(exc).__name__}")


NOT_COROUTINES: dict[str, tuple[Callable[[Exception, ToolCallRequest], Awaitable[str]], str]] = {
    "an asyncio Future": (_a_future, "from a future: KeyError"),
    "an object with __await__": (_an_awaitable, "from an awaitable: KeyError"),
}


@pytest.mark.parametrize("case", NOT_COROUTINES)
def test_aon_error_may_return_any_awaitable_not_only_a_coroutine(case: str) -> None:
    aon_error, content = NOT_COROUTINES[case]
    agent = build_agent(
        [failing_tool("search", KeyError("k"))],
        [ToolErrorMiddleware(aon_error=aon_error)],
        [call("search", "c1")],
    )

    result = run(agent, "async")

    assert tool_messages(result)["c1"].content == content


def leave_it(failure: RepairableFailure) -> ToolCall | None:
    return None


def test_the_repr_shows_a_budget_and_a_repair_beside_every_other_option() -> None:
    budget = ErrorBudget(per_tool=3)
    middleware = ToolErrorMiddleware(
        explain,
        budget=budget,
        error_prefix="Oops: ",
        record_failures=True,
        listeners=[print],
        repair=leave_it,
    )

    text = repr(middleware)

    assert (
        f"budget={budget!r}, error_prefix='Oops: ', record_failures=True, "
        f"listeners=[<built-in function print>], repair={leave_it!r}, name=" in text
    )


@pytest.mark.parametrize(
    "middleware",
    [ToolErrorMiddleware(explain), ToolErrorMiddleware.from_routes([Route(KeyError, explain)])],
    ids=["constructor", "from_routes"],
)
def test_the_model_reads_an_error_marked_error_by_default_however_the_middleware_is_made(
    path: Path, middleware: ToolErrorMiddleware[str, Exception, SyncCapable]
) -> None:
    sent = Sent()
    agent = build_agent(
        [failing_tool("search", KeyError("k"))], [middleware], [call("search", "c1")], answer=sent
    )

    run(agent, path)

    assert [(m.tool_call_id, m.content) for m in sent.messages] == [
        ("c1", "Error: search failed: KeyError")
    ]


def test_the_model_is_sent_an_answer_for_an_unanswered_call_beside_a_marked_error(
    path: Path,
) -> None:
    sent = Sent()
    # The scripted model counts the replies in the conversation: the history holds one.
    model = ScriptedChatModel(script=[AIMessage("never sent"), sent])
    agent: Agent = create_agent(
        model, tools=[echo_tool("search")], middleware=[ToolErrorMiddleware(explain)]
    )
    cancelled = AIMessage("", tool_calls=[call("search", "left"), call("search", "failed")])
    failed = ToolMessage("boom", tool_call_id="failed", name="search", status="error")
    history: InputAgentState = {
        "messages": [HumanMessage("go"), cancelled, failed, HumanMessage("again")]
    }

    run(agent, path, history)

    contents = {m.tool_call_id: m.content for m in sent.messages}
    assert set(contents) == {"left", "failed"}
    assert contents["failed"] == "Error: boom"


# The counts of a run in which a "tell" budget closed `weather` after two failures, as a
# release that did not keep the count a tool was closed at checkpointed them.
CLOSED_WITHOUT_ITS_COUNT = {
    "ToolErrorMiddleware\x00weather": 2,
    "ToolErrorMiddleware\x00weather\x00spent": 1,
    "ToolErrorMiddleware\x00\x00closed": 1,
}


def test_a_tool_closed_without_its_count_kept_reads_the_tools_count(path: Path) -> None:
    budget = ErrorBudget(per_tool=1, when_spent="tell", message="`{tool}` off after {count}")
    middleware = ToolErrorMiddleware(explain, budget=budget)
    request = direct_request(failing_tool("weather", KeyError("k")), call("weather", "c3"))
    request = request.override(state={"messages": [], COUNTS_KEY: CLOSED_WITHOUT_ITS_COUNT})

    answer = _hook(middleware, request, path)

    assert isinstance(answer, Command)
    update: Any = answer.update
    [message] = update["messages"]
    assert (message.tool_call_id, message.text) == ("c3", "`weather` off after 2")


def test_a_call_id_the_input_ends_with_answered_may_fail_again_in_the_run(path: Path) -> None:
    # An input may end with the model's reply and the caller's answers to it. A model that
    # uses that call's id again in the run (some servers number ids per reply) meets a
    # failure as any other: it is answered and recorded.
    model = ScriptedChatModel(
        script=[
            AIMessage("never sent"),  # the input holds the first reply
            AIMessage("", tool_calls=[call("search", "c1")]),
            AIMessage("done"),
        ]
    )
    middleware = ToolErrorMiddleware(explain, record_failures=True)
    agent: Agent = create_agent(
        model, tools=[failing_tool("search", KeyError("k"))], middleware=[middleware]
    )
    given = ToolMessage("sunny", tool_call_id="c1", name="search")
    history: InputAgentState = {
        "messages": [HumanMessage("go"), AIMessage("", tool_calls=[call("search", "c1")]), given]
    }

    result = run(agent, path, history)

    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["sunny", "search failed: KeyError"]
    assert [(f["call_id"], f["outcome"]) for f in result["tool_failures"]] == [("c1", "answered")]
    assert result["messages"][-1].text == "done"
