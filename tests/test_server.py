"""Agents with this middleware, served by a real LangGraph API server and driven over HTTP.

`langgraph dev` (from langgraph-cli[inmem]) serves tests/server/graph.py on loopback; the
tests talk to it only through `langgraph_sdk.get_client`, as a deployed app's clients do.
There the graph runs on the async path, in the server's process, with threads and
checkpoints managed by the server. The server is stopped after the tests, also when one
fails, and no process of it may be left; nothing in it may try to reach another host.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from langgraph import errors as langgraph_errors

from tests._processes import run_python
from tests._server import Api, Json, Server, serve_for_tests
from tests.conftest import FIGURES

pytestmark = pytest.mark.server


server = pytest.fixture(scope="module", name="server")(serve_for_tests)


@pytest_asyncio.fixture
async def api(server: Server) -> AsyncIterator[Api]:
    connection = Api(server.url)
    try:
        yield connection
    finally:
        await connection.close()


def ask(text: str) -> Json:
    return {"messages": [{"role": "user", "content": text}]}


def handler_calls(server: Server) -> list[str]:
    return server.handler_log.read_text(encoding="utf-8").split()


def tool_messages(state: Json) -> list[Json]:
    return [m for m in state["messages"] if m["type"] == "tool"]


async def interrupted(api: Api, text: str, graph: str = "agent") -> tuple[str, Json]:
    """A new thread whose first run, asked `text`, pauses: the thread, and the run's state."""
    thread = await api.new_thread()
    return thread, await api.wait(thread, graph, input=ask(text))


def asked(paused: Json) -> list[object]:
    """What the paused run's interrupts ask for."""
    return [i["value"] for i in paused["__interrupt__"]]


@pytest.mark.asyncio
async def test_a_handled_failure_returns_the_handlers_error_message(api: Api) -> None:
    thread = await api.new_thread()

    state = await api.wait(thread, input=ask("lookup missing-1"))

    [message] = tool_messages(state)
    assert message["status"] == "error"
    assert message["content"] == "No record 'missing-1' (call call-missing-1)."
    assert message["tool_call_id"] == "call-missing-1"
    # The model (scripted, a class that drops the flag) was sent it marked; the thread keeps
    # it as the handler wrote it.
    assert state["messages"][-1]["content"].startswith("The tool said (error): Error: No record")


@pytest.mark.asyncio
async def test_an_unhandled_exception_fails_the_run_with_its_type_visible(api: Api) -> None:
    thread = await api.new_thread()

    with pytest.raises(Exception, match="PermissionError") as raised:
        await api.wait(thread, input=ask("crash secrets"))

    assert "secrets" not in str(raised.value)  # the server shows the type, not the message
    assert await api.run_statuses(thread) == ["error"]
    assert not any(m["type"] == "tool" for m in await api.messages(thread))


@pytest.mark.asyncio
async def test_an_interrupt_pauses_and_a_resume_completes_without_the_handler(
    api: Api, server: Server
) -> None:
    before = handler_calls(server)

    thread, paused = await interrupted(api, "approve deploy")
    assert asked(paused) == [{"approve": "deploy"}]
    assert tool_messages(paused) == []

    done = await api.wait(thread, command={"resume": "yes"})

    [message] = tool_messages(done)
    assert (message["status"], message["content"]) == ("success", "deploy: yes")
    assert handler_calls(server) == before  # the interrupt never reached the handler


@pytest.mark.skipif(
    not hasattr(langgraph_errors, "is_invalid_resume"),
    reason="this langgraph has no response_schema and marks no invalid resume",
)
@pytest.mark.asyncio
async def test_an_invalid_resume_value_fails_the_run_and_the_interrupt_can_be_answered_again(
    api: Api, server: Server
) -> None:
    before = handler_calls(server)
    thread, paused = await interrupted(api, "approve_refund 120")
    assert asked(paused) == [{"refund": "120"}]

    with pytest.raises(Exception, match="ValidationError"):
        await api.wait(thread, command={"resume": {"approved": "maybe"}})
    assert (await api.run_statuses(thread))[0] == "error"  # newest first
    done = await api.wait(thread, command={"resume": {"approved": True}})

    [message] = tool_messages(done)
    assert (message["status"], message["content"]) == ("success", "refund of 120: approved=True")
    assert handler_calls(server) == before  # the ValidationError never reached the handler


@pytest.mark.asyncio
async def test_streaming_delivers_the_error_message_as_it_happens(api: Api) -> None:
    thread = await api.new_thread()
    nodes: list[str] = []
    errors: list[Json] = []

    async for node, update in api.stream_updates(thread, input=ask("lookup missing-2")):
        nodes.append(node)
        if node == "tools":
            errors += update["messages"]

    assert nodes == ["model", "tools", "model"]  # the error arrives before the answer
    [error] = errors
    assert error["status"] == "error"
    assert error["content"] == "No record 'missing-2' (call call-missing-2)."


@pytest.mark.asyncio
async def test_fifty_concurrent_threads_each_get_their_own_error_message(
    api: Api, server: Server
) -> None:
    async def one(index: int) -> tuple[int, Json]:
        thread = await api.new_thread()
        return index, await api.wait(thread, input=ask(f"lookup missing-{index}-x"))

    results = await asyncio.gather(*(one(index) for index in range(50)))

    for index, state in results:
        [message] = tool_messages(state)
        assert message["status"] == "error"
        assert message["content"] == f"No record 'missing-{index}-x' (call call-missing-{index}-x)."
    calls = [call for call in handler_calls(server) if call.endswith("-x")]
    assert sorted(calls) == sorted(f"call-missing-{index}-x" for index in range(50))
    FIGURES.append("LangGraph server: 50 concurrent threads, 50 error messages, each its own")


@pytest.mark.asyncio
async def test_routes_answer_each_failure_from_the_first_matching_route(api: Api) -> None:
    answers: dict[str, str] = {}
    for text in ("lookup missing-r", "slow feed", "crash secrets"):
        thread = await api.new_thread()
        [message] = tool_messages(await api.wait(thread, "routed", input=ask(text)))
        assert message["status"] == "error"
        answers[text] = message["content"]

    assert answers == {
        "lookup missing-r": "No record 'missing-r' (call call-missing-r).",
        "slow feed": "Timed out (call call-feed); try once more.",
        "crash secrets": "Failed with PermissionError (call call-secrets).",
    }


@pytest.mark.skipif(
    not hasattr(langgraph_errors, "is_invalid_resume"),
    reason="this langgraph has no response_schema and marks no invalid resume",
)
@pytest.mark.asyncio
async def test_routes_never_see_an_interrupt_or_an_invalid_resume_value(
    api: Api, server: Server
) -> None:
    before = handler_calls(server)
    thread, paused = await interrupted(api, "approve_refund 75", "routed")
    assert asked(paused) == [{"refund": "75"}]

    with pytest.raises(Exception, match="ValidationError"):
        await api.wait(thread, "routed", command={"resume": {"approved": "maybe"}})
    done = await api.wait(thread, "routed", command={"resume": {"approved": False}})

    [message] = tool_messages(done)
    assert (message["status"], message["content"]) == ("success", "refund of 75: approved=False")
    assert handler_calls(server) == before  # neither the pause nor the bad value was routed


@pytest.mark.asyncio
async def test_fifty_concurrent_threads_each_spend_their_own_error_budget(api: Api) -> None:
    async def one(index: int) -> list[str]:
        thread = await api.new_thread()
        state = await api.wait(thread, "budgeted", input=ask(f"lookup missing-b{index}"))
        return [m["content"] for m in tool_messages(state)]

    results = await asyncio.gather(*(one(index) for index in range(50)))

    for index, contents in enumerate(results):
        handled = [
            f"No record 'missing-b{index}' (call call-missing-b{index}-{t})." for t in (0, 1)
        ]
        assert contents == [*handled, *["`lookup` is closed (3)."] * 3], contents
    FIGURES.append("LangGraph server: 50 concurrent threads, each its own error budget")


@pytest.mark.asyncio
async def test_a_served_budget_pauses_for_a_person_who_answers_over_http(api: Api) -> None:
    thread = await api.new_thread()

    waiting = await api.wait(thread, "paused", input=ask("lookup missing-p"))

    [pause] = waiting["__interrupt__"]
    value = pause["value"]
    assert (value["tool"], value["call_id"], value["count"], value["limit"]) == (
        "lookup",
        "call-missing-p-3",
        3,
        2,
    )
    assert value["args"] == {"key": "missing-p"}
    schema = pause["response_schema"]  # the decision's schema, read from the thread
    kinds = {d["properties"]["type"]["const"] for d in schema["$defs"].values()}
    assert kinds == {"go_on", "answer", "stop"}
    assert schema["$defs"]["AnswerDecision"]["required"] == ["type", "text"]
    with pytest.raises(Exception, match="ValidationError"):
        await api.wait(thread, "paused", command={"resume": {"type": "retry"}})
    answered = await api.wait(
        thread, "paused", command={"resume": {"type": "answer", "text": "No such record."}}
    )

    contents = [m["content"] for m in tool_messages(answered)]
    assert contents[3] == "No such record."  # in place of the call that waited
    [again] = answered["__interrupt__"]  # the tool stays held: its next call waits too
    assert again["value"]["call_id"] == "call-missing-p-4"
    FIGURES.append("LangGraph server: a spent budget pauses; the decision comes over HTTP")


@pytest.mark.asyncio
async def test_a_served_model_looping_on_invalid_arguments_is_stopped_by_its_budget(
    api: Api,
) -> None:
    thread = await api.new_thread()

    with pytest.raises(Exception, match="ToolErrorBudgetExceeded"):
        await api.wait(thread, "arguments_budgeted", input=ask("a few"))

    assert await api.run_statuses(thread) == ["error"]
    messages = [m for m in await api.messages(thread) if m["type"] == "tool"]
    # The stopping step is saved: its call is answered with the stop, so the thread's
    # next input finds every call answered.
    assert [m["tool_call_id"] for m in messages] == ["count-0", "count-1", "count-2"]
    assert all("Error invoking tool 'count'" in m["content"] for m in messages[:2])
    assert messages[2]["status"] == "error"
    assert messages[2]["content"].startswith(
        "This call to `count` failed, and the error budget stopped the run (3 failures of "
        "`count` in this run, over the limit of 2)."
    )


@pytest.mark.asyncio
async def test_a_served_route_rewrites_the_invalid_arguments_message(api: Api) -> None:
    thread = await api.new_thread()

    state = await api.wait(thread, "arguments_routed", input=ask("a few"))

    [message] = tool_messages(state)
    assert message["status"] == "error"
    assert message["content"].startswith(
        "The arguments of `count` do not fit its schema: `items`: Input should be a valid integer"
    )
    assert "a few" not in message["content"]


@pytest.mark.asyncio
async def test_a_served_run_keeps_its_record_of_failures_across_an_interrupt(api: Api) -> None:
    thread = await api.new_thread()

    def summary(values: Json) -> list[tuple[str, str, str, str]]:
        records: list[Json] = values["tool_failures"]
        return [(f["call_id"], f["kind"], f["error_type"], f["outcome"]) for f in records]

    paused = await api.wait(thread, "recorded", input=ask("look it up"))
    assert "__interrupt__" in paused
    first = [("rec1-0", "exception", "KeyError", "answered")]
    assert summary(paused) == first
    assert summary(await api.values(thread)) == first  # the thread state, over HTTP

    done = await api.wait(thread, "recorded", command={"resume": "yes"})
    both = [*first, ("rec1-2", "exception", "KeyError", "told")]
    assert summary(done) == both
    assert summary(await api.values(thread)) == both

    again = await api.wait(thread, "recorded", input=ask("and again"))
    assert summary(again) == [("rec2-0", "exception", "KeyError", "answered")]  # a new run
    FIGURES.append("LangGraph server: a run's record of failures kept across an interrupt")


def test_a_failing_test_still_stops_the_server_and_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pgid_file = tmp_path / "pgid"
    monkeypatch.setenv("SERVER_PGID_FILE", str(pgid_file))

    done = run_python(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/server/probe_failing.py"
    )

    assert done.returncode == 1, done.stdout + done.stderr  # the probe's test failed...
    assert "1 failed" in done.stdout
    group = int(pgid_file.read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)  # ...and no process of the server's group is left
    FIGURES.append("LangGraph server: stopped after a failing test too, no process left")
