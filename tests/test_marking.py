"""Error messages reach a model whose integration drops the error flag marked, in what is sent only.

The scripted model stands for an integration the package does not know, which gets the
marked form; the real provider classes are driven in tests/test_providers_*.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import uuid4

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolRetryMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import SecretStr

from _langchain_tool_errors import asked_by
from _langchain_tool_errors.marking import prepared
from _langchain_tool_errors.providers import Provider, provider_of
from langchain_tool_errors import (
    ErrorBudget,
    Route,
    SyncCapable,
    ToolErrorContent,
    ToolErrorMiddleware,
)
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import (
    Agent,
    Path,
    Sent,
    build_agent,
    call,
    direct_request,
    echo_tool,
    explaining,
    failing_tool,
    run,
)


def _lookup(record_id: int) -> str:
    raise KeyError(record_id)


LOOKUP = StructuredTool.from_function(_lookup, name="lookup", description="A record by id.")


def _run(
    path: Path,
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    *calls: tuple[str, str, dict[str, object]],
) -> tuple[Sent, dict[str, ToolMessage]]:
    sent = Sent()
    agent = build_agent(
        tools, middleware, [call(name, id_, **args) for name, id_, args in calls], answer=sent
    )
    result = run(agent, path)
    kept = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    return sent, kept


def test_the_model_is_sent_the_handlers_text_marked_and_the_state_keeps_it_as_written(
    path: Path,
) -> None:
    sent, kept = _run(
        path, [LOOKUP], [ToolErrorMiddleware(explaining)], ("lookup", "c1", {"record_id": 7})
    )

    assert sent.contents() == {"c1": "Error: lookup failed with KeyError"}
    assert kept["c1"].content == "lookup failed with KeyError"
    assert kept["c1"].status == "error"


def test_errors_the_middleware_did_not_write_are_marked_too_and_results_never(
    path: Path,
) -> None:
    sent, kept = _run(
        path,
        [LOOKUP, echo_tool()],
        [ToolErrorMiddleware(explaining)],
        ("lookup", "invalid", {"record_id": "abc"}),
        ("lookkup", "unknown", {}),
        ("echo", "fine", {"query": "Error: not a failure"}),
    )

    contents = sent.contents()
    for call_id in ("invalid", "unknown"):
        original = kept[call_id].text
        assert kept[call_id].status == "error"
        # ToolNode's own unknown-tool text already starts with the mark: sent as it is.
        expected = original if original.startswith("Error: ") else "Error: " + original
        assert contents[call_id] == expected
    assert not str(contents["unknown"]).startswith("Error: Error: ")
    assert contents["fine"] == kept["fine"].content


def _archive(shelf: str) -> str:
    raise ToolException(f"archive {shelf} is offline")


ARCHIVE = StructuredTool.from_function(
    _archive, name="archive", description="An archive.", handle_tool_error=True
)


def test_a_tools_own_error_and_an_inner_middlewares_answer_are_marked(path: Path) -> None:
    retry = ToolRetryMiddleware(max_retries=1, initial_delay=0, on_failure="continue")
    sent, kept = _run(
        path,
        [ARCHIVE, LOOKUP],
        [ToolErrorMiddleware(explaining, exceptions=TimeoutError), retry],
        ("archive", "own", {"shelf": "x"}),
        ("lookup", "inner", {"record_id": 7}),
    )

    for call_id in ("own", "inner"):
        assert kept[call_id].status == "error"
        assert not kept[call_id].text.startswith("Error: ")
        assert sent.contents()[call_id] == "Error: " + kept[call_id].text


def test_two_middleware_in_one_agent_mark_a_message_once(path: Path) -> None:
    middleware = [
        ToolErrorMiddleware(explaining, name="outer"),
        ToolErrorMiddleware(explaining, name="inner"),
    ]
    sent, _ = _run(path, [LOOKUP], middleware, ("lookup", "c1", {"record_id": 7}))

    assert sent.contents() == {"c1": "Error: lookup failed with KeyError"}


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (None, "lookup failed with KeyError"),
        ("Tool error: ", "Tool error: lookup failed with KeyError"),
    ],
)
def test_error_prefix_turns_marking_off_or_chooses_the_mark(
    path: Path, prefix: str | None, expected: str
) -> None:
    middleware = ToolErrorMiddleware(explaining, error_prefix=prefix)
    sent, kept = _run(path, [LOOKUP], [middleware], ("lookup", "c1", {"record_id": 7}))

    assert sent.contents() == {"c1": expected}
    assert kept["c1"].content == "lookup failed with KeyError"


def test_a_budgeted_middleware_with_routes_marks_the_same_way(path: Path) -> None:
    middleware = ToolErrorMiddleware.from_routes(
        [Route(KeyError, explaining)], budget=ErrorBudget(per_tool=5), error_prefix="E: "
    )
    sent, _ = _run(
        path, [failing_tool("lookup", KeyError("x"))], [middleware], ("lookup", "c1", {})
    )

    assert sent.contents() == {"c1": "E: lookup failed with KeyError"}


UNKNOWN = Provider("a class the package does not know", "prefix", None)
TEXT = {"type": "text", "text": "it failed"}
IMAGE = {"type": "image", "url": "https://example.com/a.png"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("it failed", "Error: it failed"),
        ("Error: it failed", None),
        ("", "Error: "),
        ([TEXT, IMAGE], [{"type": "text", "text": "Error: it failed"}, IMAGE]),
        (["it failed", IMAGE], ["Error: it failed", IMAGE]),
        ([IMAGE], [{"type": "text", "text": "Error: "}, IMAGE]),
        ([], [{"type": "text", "text": "Error: "}]),
        ([{"type": "text", "text": "Error: it failed"}, IMAGE], None),
        (
            [{"type": "text", "text": 3}],
            [{"type": "text", "text": "Error: "}, {"type": "text", "text": 3}],
        ),
    ],
)
def test_the_mark_goes_before_the_first_text_once(
    content: str | list[str | dict[str, Any]], expected: object
) -> None:
    message = ToolMessage(content=content, tool_call_id="c1", status="error")
    original = message.model_copy(deep=True)

    result = prepared([message], UNKNOWN, "Error: ")

    if expected is None:
        assert result is None
    else:
        assert result is not None
        assert result[0].content == expected
        assert result[0] is not message
        assert isinstance(result[0], ToolMessage)
        assert result[0].tool_call_id == "c1"
        assert result[0].status == "error"
    assert message == original  # never changed in place


def test_only_error_tool_messages_are_copied_and_the_rest_kept_by_identity() -> None:
    ok = ToolMessage("Error-free", tool_call_id="a")
    failed = ToolMessage("boom", tool_call_id="b", status="error")
    question = AIMessage("hi")
    messages: list[AnyMessage] = [question, ok, failed]

    result = prepared(messages, UNKNOWN, "Error: ")

    assert result is not None
    assert result[0] is question
    assert result[1] is ok
    assert result[2].content == "Error: boom"
    assert prepared([question, ok], UNKNOWN, "Error: ") is None


def test_each_provider_class_has_its_form_known_by_name_with_its_subclasses() -> None:
    pytest.importorskip("langchain_anthropic")
    pytest.importorskip("langchain_aws")
    pytest.importorskip("langchain_google_genai")
    from langchain_anthropic import ChatAnthropic
    from langchain_aws import ChatBedrock, ChatBedrockConverse
    from langchain_google_genai import ChatGoogleGenerativeAI

    class Tuned(ChatAnthropic):
        pass

    def bare(model_class: type[BaseChatModel]) -> BaseChatModel:
        return model_class.model_construct()  # no validation: no keys or clients needed

    assert provider_of(bare(ChatAnthropic)).form == "flag"
    assert provider_of(bare(Tuned)).form == "flag"
    assert provider_of(bare(ChatBedrockConverse)).form == "flag"
    assert provider_of(bare(ChatGoogleGenerativeAI)).form == "error_key"
    assert provider_of(bare(ChatBedrock)).form == "prefix"
    assert (
        provider_of(ChatBedrock.model_construct(model_id="m", beta_use_converse_api=True)).form
        == "flag"
    )
    assert provider_of(bare(ChatBedrock)).form == "prefix"  # the class's own form, still
    assert provider_of(ScriptedChatModel(script=[])).form == "prefix"


@pytest.mark.parametrize("text", ['{"error": "it failed"}', '{"error": {"code": 3}}'])
def test_a_text_already_in_geminis_error_key_is_sent_as_it_is(text: str) -> None:
    failed = ToolMessage(text, tool_call_id="b", status="error")

    assert prepared([failed], Provider("gemini", "error_key", None), "Error: ") is None


def test_two_middleware_put_a_text_in_geminis_error_key_once() -> None:
    gemini = Provider("gemini", "error_key", None)
    failed = ToolMessage("it failed", tool_call_id="b", status="error")

    once = prepared([failed], gemini, "Error: ")
    assert once is not None
    assert prepared(once, gemini, "Error: ") is None
    assert once[0].content == '{"error": "it failed"}'


def test_a_flagged_form_changes_nothing() -> None:
    failed = ToolMessage("boom", tool_call_id="b", status="error")

    assert prepared([failed], Provider("flagging", "flag", None), "Error: ") is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("it failed", '{"error": "it failed"}'),
        ('{"error": "x", "code": 3}', '{"error": "{\\"error\\": \\"x\\", \\"code\\": 3}"}'),
        ('{"error": ', '{"error": "{\\"error\\": "}'),
        ([TEXT], [{"type": "text", "text": "Error: it failed"}]),
    ],
)
def test_gemini_is_sent_a_text_as_its_error_key_and_blocks_with_the_prefix(
    content: str | list[str | dict[str, Any]], expected: object
) -> None:
    failed = ToolMessage(content=content, tool_call_id="b", status="error")
    fine = ToolMessage("it failed", tool_call_id="a")

    result = prepared([fine, failed], Provider("gemini", "error_key", None), "Error: ")

    assert result is not None
    assert result[0] is fine
    assert result[1].content == expected


def test_a_model_that_keeps_the_flag_is_sent_the_handlers_text_untouched(path: Path) -> None:
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic

    model = ChatAnthropic(
        model_name="claude-test", api_key=SecretStr("sk-test"), timeout=1, stop=None
    )
    failed = ToolMessage("lookup failed", tool_call_id="c1", status="error")
    request: ModelRequest[Any] = ModelRequest(model=model, messages=[failed])
    sent: list[ModelRequest[Any]] = []
    reply = ModelResponse[Any](result=[AIMessage("ok")])

    def call_model(given: ModelRequest[Any]) -> ModelResponse[Any]:
        sent.append(given)
        return reply

    async def acall_model(given: ModelRequest[Any]) -> ModelResponse[Any]:
        return call_model(given)

    middleware = ToolErrorMiddleware(explaining)
    if path == "sync":
        middleware.wrap_model_call(request, call_model)
    else:
        asyncio.run(middleware.awrap_model_call(request, acall_model))

    assert sent[0] is request


Block = dict[str, Any]
PNG_BLOCK: Block = {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}
URL_IMAGE: Block = {"type": "image", "url": "https://example.com/a.png"}
PDF_BLOCK: Block = {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"}


def _bare(model_class: type[BaseChatModel], **fields: Any) -> BaseChatModel:
    """A model built without validation: no keys, clients or required settings."""
    return model_class.model_construct(**fields)


def _failed(*blocks: Block | str) -> ToolMessage:
    content: list[str | dict[str, Any]] = [TEXT, *blocks]
    return ToolMessage(content=content, tool_call_id="c7", name="lookup", status="error")


def test_each_known_class_takes_the_blocks_its_api_takes_in_a_tool_result() -> None:
    for module in ("langchain_anthropic", "langchain_aws", "langchain_openai", "langchain_ollama"):
        pytest.importorskip(module)
    pytest.importorskip("langchain_google_genai")
    from langchain_anthropic import ChatAnthropic
    from langchain_aws import ChatBedrock, ChatBedrockConverse
    from langchain_google_genai import ChatGoogleGenerativeAI
    from langchain_ollama import ChatOllama
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    def taken(model: BaseChatModel) -> frozenset[str] | None:
        return provider_of(model).taken

    everything = frozenset({"image/base64", "image/url", "file/base64", "file/url"})
    assert taken(_bare(ChatAnthropic)) == everything
    assert taken(_bare(ChatBedrockConverse)) == frozenset({"image/base64", "file/base64"})
    assert taken(_bare(ChatBedrock, model_id="m")) == frozenset()
    on_converse = _bare(ChatBedrock, model_id="m", beta_use_converse_api=True)
    assert taken(on_converse) == frozenset({"image/base64", "file/base64"})
    assert taken(_bare(ChatOpenAI)) == frozenset()
    assert taken(_bare(AzureChatOpenAI)) == frozenset()
    responses = _bare(ChatOpenAI, use_responses_api=True)
    assert taken(responses) == frozenset({"image/base64", "image/url", "file/base64"})
    assert taken(_bare(ChatGoogleGenerativeAI)) == frozenset(
        {"image/base64", "image/url", "file/base64"}
    )
    assert taken(_bare(ChatOllama)) == frozenset({"image/base64"})
    assert taken(ScriptedChatModel(script=[])) is None


@pytest.mark.parametrize("prefix", ["Error: ", None])
@pytest.mark.parametrize(
    ("taken", "blocks", "refused"),
    [
        (frozenset[str](), [PNG_BLOCK], "image/base64"),
        (frozenset({"image/base64"}), [PNG_BLOCK, URL_IMAGE], "image/url"),
        (frozenset({"image/base64", "image/url"}), [PDF_BLOCK], "file/base64"),
        (frozenset({"image/base64"}), [{"type": "audio", "id": "a1"}], "audio/other"),
    ],
)
def test_a_block_the_provider_does_not_take_is_refused_naming_call_kind_and_fix(
    prefix: str | None, taken: frozenset[str], blocks: list[Block], refused: str
) -> None:
    provider = Provider("langchain_openai.chat_models.base.BaseChatOpenAI", "prefix", taken)

    with pytest.raises(TypeError) as raised:
        prepared([_failed(*blocks)], provider, prefix)

    message = str(raised.value)
    assert "`lookup`" in message
    assert "'c7'" in message
    assert f" {refused} block" in message
    assert "langchain_openai.chat_models.base.BaseChatOpenAI cannot send" in message
    assert "ChatOpenAI(use_responses_api=True)" in message
    assert "nothing was sent" in message


@pytest.mark.parametrize(
    "blocks",
    [[], [PNG_BLOCK], [PNG_BLOCK, URL_IMAGE, PDF_BLOCK], ["plain text", TEXT]],
)
def test_blocks_a_provider_takes_or_an_unknown_provider_pass(blocks: list[Block | str]) -> None:
    everything = frozenset({"image/base64", "image/url", "file/base64"})
    taking = Provider("langchain_anthropic.chat_models.ChatAnthropic", "flag", everything)
    message = _failed(*blocks)

    assert prepared([message], taking, "Error: ") is None
    assert prepared([message], UNKNOWN, None) is None


def test_a_successful_message_is_never_checked() -> None:
    fine = ToolMessage(content=[PNG_BLOCK], tool_call_id="c1", name="lookup")
    refusing = Provider("langchain_aws.chat_models.bedrock.ChatBedrock", "prefix", frozenset())

    assert prepared([fine], refusing, "Error: ") is None


def test_the_fix_names_only_blocks_taken_when_there_is_no_other_api() -> None:
    ollama = Provider(
        "langchain_ollama.chat_models.ChatOllama", "prefix", frozenset({"image/base64"})
    )

    with pytest.raises(TypeError) as raised:
        prepared([_failed(URL_IMAGE)], ollama, "Error: ")

    assert "(image/base64)" in str(raised.value)
    assert "use_responses_api" not in str(raised.value)


def test_a_model_already_on_the_responses_api_is_not_offered_it_as_the_fix() -> None:
    from langchain_openai import ChatOpenAI

    responses = provider_of(_bare(ChatOpenAI, use_responses_api=True))
    file_by_url = {"type": "file", "url": "https://example.com/report.pdf"}

    with pytest.raises(TypeError) as raised:
        prepared([_failed(file_by_url)], responses, "Error: ")

    message = str(raised.value)
    assert " file/url block" in message
    assert "(file/base64, image/base64, image/url)." in message
    assert "use_responses_api" not in message


def _image_handler(exc: Exception, request: ToolCallRequest) -> list[dict[str, Any]]:
    return [TEXT, PNG_BLOCK]


def _raise_key_error(request: ToolCallRequest) -> ToolMessage:
    raise KeyError("record 7")


async def _araise_key_error(request: ToolCallRequest) -> ToolMessage:
    raise KeyError("record 7")


SEVEN = call("lookup", "c7", record_id=7)


def _asking(reply_id: str | None, tool_call: ToolCall = SEVEN) -> AIMessage:
    """A model's reply that asks for `tool_call`."""
    return AIMessage("", id=reply_id, tool_calls=[tool_call])


def _answering(reply: AIMessage) -> Callable[[ModelRequest[Any]], ModelResponse[Any]]:
    """A model call that answers with `reply`."""

    def answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return ModelResponse(result=[reply])

    return answer


def _aanswering(reply: AIMessage) -> Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]:
    async def answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return ModelResponse(result=[reply])

    return answer


def _reply(request: ModelRequest[Any]) -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage("ok")])


def _after(reply: AIMessage, tool_call: ToolCall = SEVEN) -> ToolCallRequest:
    """The tool call's request in a run whose messages end with `reply`."""
    request = direct_request(LOOKUP, tool_call)
    return request.override(state={"messages": [HumanMessage("Show record 7."), reply]})


def _model_call(model: BaseChatModel) -> ModelRequest[Any]:
    return ModelRequest(model=model, messages=[HumanMessage("Show record 7.")])


def test_a_block_the_asking_model_cannot_send_is_refused_at_the_failure(path: Path) -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    middleware = ToolErrorMiddleware(_image_handler)
    reply = _asking("reply-openai")

    if path == "sync":
        middleware.wrap_model_call(_model_call(_bare(ChatOpenAI)), _answering(reply))
        with pytest.raises(TypeError) as raised:
            middleware.wrap_tool_call(_after(reply), _raise_key_error)
    else:
        asyncio.run(middleware.awrap_model_call(_model_call(_bare(ChatOpenAI)), _aanswering(reply)))
        with pytest.raises(TypeError) as raised:
            asyncio.run(middleware.awrap_tool_call(_after(reply), _araise_key_error))

    assert isinstance(raised.value.__cause__, KeyError)
    assert "`lookup`" in str(raised.value)
    assert " image/base64 block" in str(raised.value)


def test_each_failure_follows_the_model_that_asked_for_its_call_not_the_last_one_called() -> None:
    """One instance, two agents: Anthropic's reply, then OpenAI's, then both tools fail."""
    pytest.importorskip("langchain_openai")
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    middleware = ToolErrorMiddleware(_image_handler)
    from_claude = _asking("reply-claude", call("lookup", "a1", record_id=7))
    from_gpt = _asking("reply-gpt", call("lookup", "b1", record_id=7))
    middleware.wrap_model_call(_model_call(_bare(ChatAnthropic)), _answering(from_claude))
    middleware.wrap_model_call(_model_call(_bare(ChatOpenAI)), _answering(from_gpt))

    answered = middleware.wrap_tool_call(
        _after(from_claude, call("lookup", "a1", record_id=7)), _raise_key_error
    )
    with pytest.raises(TypeError) as raised:
        middleware.wrap_tool_call(
            _after(from_gpt, call("lookup", "b1", record_id=7)), _raise_key_error
        )

    assert isinstance(answered, ToolMessage)
    assert answered.content == [TEXT, PNG_BLOCK]
    assert "'b1'" in str(raised.value)


@pytest.mark.parametrize("openai_first", [True, False])
def test_a_reply_id_two_models_share_is_checked_at_the_next_model_call_instead(
    openai_first: bool,
) -> None:
    """Whichever model wrote the id last, neither's blocks are checked at the failure."""
    pytest.importorskip("langchain_openai")
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    middleware = ToolErrorMiddleware(_image_handler)
    reply = _asking(f"reply-shared-{uuid4()}")
    models = [_bare(ChatOpenAI), _bare(ChatAnthropic)]
    for model in models if openai_first else reversed(models):
        middleware.wrap_model_call(_model_call(model), _answering(reply))

    message = middleware.wrap_tool_call(_after(reply), _raise_key_error)

    assert isinstance(message, ToolMessage)  # not refused for either model's sake
    later: ModelRequest[Any] = ModelRequest(model=_bare(ChatOpenAI), messages=[message])
    with pytest.raises(TypeError, match="image/base64"):
        middleware.wrap_model_call(later, _reply)
    sent = middleware.wrap_model_call(
        ModelRequest(model=_bare(ChatAnthropic), messages=[message]), _reply
    )
    assert isinstance(sent, ModelResponse)


@pytest.mark.parametrize("reply_id", [None, "reply-never-seen"])
def test_a_reply_this_process_did_not_see_is_checked_at_the_next_model_call(
    reply_id: str | None,
) -> None:
    """As when the run went on in another process after the model call, or had no id."""
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    middleware = ToolErrorMiddleware(_image_handler)

    message = middleware.wrap_tool_call(_after(_asking(reply_id)), _raise_key_error)
    assert isinstance(message, ToolMessage)
    assert message.content == [TEXT, PNG_BLOCK]
    later: ModelRequest[Any] = ModelRequest(model=_bare(ChatOpenAI), messages=[message])
    with pytest.raises(TypeError) as raised:
        middleware.wrap_model_call(later, _reply)

    assert raised.value.__cause__ is None
    assert " image/base64 block" in str(raised.value)


def test_a_model_that_takes_the_block_lets_the_failure_be_answered() -> None:
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic

    middleware = ToolErrorMiddleware(_image_handler)
    reply = _asking("reply-claude-alone")
    middleware.wrap_model_call(_model_call(_bare(ChatAnthropic)), _answering(reply))

    message = middleware.wrap_tool_call(_after(reply), _raise_key_error)

    assert isinstance(message, ToolMessage)
    assert message.content == [TEXT, PNG_BLOCK]


def _sent_to(
    model: BaseChatModel, *messages: AnyMessage, prefix: str | None = "Error: "
) -> list[AnyMessage]:
    """The messages the middleware's model-call hook sends `model` for `messages`."""
    sent: list[list[AnyMessage]] = []

    def call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
        sent.append(request.messages)
        return ModelResponse(result=[AIMessage("ok")])

    request: ModelRequest[Any] = ModelRequest(model=model, messages=list(messages))
    ToolErrorMiddleware(explaining, error_prefix=prefix).wrap_model_call(request, call_model)
    return sent[0]


def test_a_chat_model_class_met_for_the_first_time_is_sent_its_errors_marked(path: Path) -> None:
    """A class of the user's own, made in this test: no earlier call has seen it."""

    class InHouseChatModel(ScriptedChatModel):
        """A chat model class the package does not know."""

    sent = Sent()
    model = InHouseChatModel(script=[AIMessage("", tool_calls=[SEVEN]), sent])
    agent: Agent = create_agent(model, tools=[LOOKUP], middleware=[ToolErrorMiddleware(explaining)])

    run(agent, path)

    assert sent.contents() == {"c7": "Error: lookup failed with KeyError"}


def test_a_subclass_met_for_the_first_time_refuses_the_blocks_its_base_refuses() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    class TunedChatOpenAI(ChatOpenAI):
        """A subclass made in this test: no earlier call has seen it."""

    with pytest.raises(TypeError) as raised:
        _sent_to(_bare(TunedChatOpenAI), _failed(PNG_BLOCK))

    assert " image/base64 block" in str(raised.value)


OPENAI_CLASS = "langchain_openai.chat_models.base.BaseChatOpenAI"
CONVERSE_CLASS = "langchain_aws.chat_models.bedrock_converse.ChatBedrockConverse"
FILE_URL: Block = {"type": "file", "url": "https://example.com/a.pdf"}


def _model(api: str) -> BaseChatModel:
    """A bare model of a known class, by the API it sends through."""
    if api in ("chat completions", "responses"):
        pytest.importorskip("langchain_openai")
        from langchain_openai import ChatOpenAI

        return _bare(ChatOpenAI, use_responses_api=api == "responses")
    pytest.importorskip("langchain_aws")
    if api == "bedrock on converse":
        from langchain_aws import ChatBedrock

        return _bare(ChatBedrock, model_id="m", beta_use_converse_api=True)
    if api == "converse":
        from langchain_aws import ChatBedrockConverse

        return _bare(ChatBedrockConverse)
    pytest.importorskip("langchain_ollama")
    from langchain_ollama import ChatOllama

    return _bare(ChatOllama)


@pytest.mark.parametrize(
    ("api", "block", "named"),
    [
        ("responses", FILE_URL, OPENAI_CLASS),
        ("bedrock on converse", URL_IMAGE, CONVERSE_CLASS),
    ],
)
def test_a_refusal_names_the_class_whose_api_the_request_goes_through(
    api: str, block: Block, named: str
) -> None:
    with pytest.raises(TypeError) as raised:
        _sent_to(_model(api), _failed(block))

    assert f"{named} cannot send" in str(raised.value)


def test_the_responses_api_is_sent_its_errors_marked() -> None:
    """Its `function_call_output` has no error field either."""
    failed = ToolMessage("it failed", tool_call_id="c1", name="lookup", status="error")

    sent = _sent_to(_model("responses"), failed)

    assert sent[0].content == "Error: it failed"


@pytest.mark.parametrize(
    ("api", "kinds"),
    [("ollama", "(image/base64)"), ("converse", "(file/base64, image/base64)")],
)
def test_a_refusal_for_a_model_with_no_other_api_ends_with_the_kinds_it_takes(
    api: str, kinds: str
) -> None:
    with pytest.raises(TypeError) as raised:
        _sent_to(_model(api), _failed(URL_IMAGE))

    assert str(raised.value).endswith(f" {kinds}.")


class _OwnToolMessage(ToolMessage):
    """A tool message of a class of the user's own."""


def test_an_error_message_of_a_tool_message_subclass_is_marked_too() -> None:
    failed = _OwnToolMessage(content="it failed", tool_call_id="c1", status="error")

    result = prepared([failed], UNKNOWN, "Error: ")

    assert result is not None
    assert result[0].content == "Error: it failed"


@pytest.mark.parametrize(("api", "prefix"), [("converse", "Error: "), ("chat completions", None)])
def test_each_error_message_is_checked_not_only_the_first(api: str, prefix: str | None) -> None:
    """A flagged form, or no prefix: nothing is marked, and every message is still checked."""
    first = ToolMessage("it failed", tool_call_id="c1", name="lookup", status="error")

    with pytest.raises(TypeError) as raised:
        _sent_to(_model(api), first, _failed(URL_IMAGE), prefix=prefix)

    assert "'c7'" in str(raised.value)


def test_an_error_that_already_has_the_mark_leaves_the_next_ones_to_be_marked(
    path: Path,
) -> None:
    """ToolNode's unknown-tool text begins with the mark; the failure after it gets one."""
    sent, _ = _run(
        path,
        [LOOKUP],
        [ToolErrorMiddleware(explaining)],
        ("lookkup", "unknown", {}),
        ("lookup", "c1", {"record_id": 7}),
    )

    assert sent.contents()["c1"] == "Error: lookup failed with KeyError"


def _asked_many(
    middleware: ToolErrorMiddleware, model: BaseChatModel, replies: Sequence[AIMessage]
) -> None:
    """The model called once for each reply, in order."""
    for reply in replies:
        middleware.wrap_model_call(_model_call(model), _answering(reply))


RoomForTwo = tuple[ToolErrorMiddleware[ToolErrorContent, Exception, SyncCapable], BaseChatModel]


@pytest.fixture
def room_for_two(monkeypatch: pytest.MonkeyPatch) -> RoomForTwo:
    """Our middleware, remembering at most two replies that asked for tools, and a bare
    `ChatOpenAI`, whose Chat Completions take no image in a tool message."""
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    monkeypatch.setattr(asked_by, "_KEPT", 2)
    return ToolErrorMiddleware(_image_handler), _bare(ChatOpenAI)


def test_the_latest_replies_that_ask_for_tools_are_remembered_and_the_oldest_dropped(
    room_for_two: RoomForTwo,
) -> None:
    """With room for two, the third reply pushes the first out: its check comes later."""
    middleware, model = room_for_two
    replies = [_asking(f"reply-{n}-{uuid4()}") for n in range(3)]
    _asked_many(middleware, model, replies)

    for kept in replies[1:]:
        with pytest.raises(TypeError) as raised:
            middleware.wrap_tool_call(_after(kept), _raise_key_error)
        assert isinstance(raised.value.__cause__, KeyError)
    dropped = middleware.wrap_tool_call(_after(replies[0]), _raise_key_error)
    assert isinstance(dropped, ToolMessage)  # checked at the next model call instead


def test_final_answers_never_push_out_a_reply_whose_tools_have_not_run(
    room_for_two: RoomForTwo,
) -> None:
    """Replies without tool calls (other runs' final answers) are not remembered."""
    middleware, model = room_for_two
    reply = _asking(f"reply-{uuid4()}")
    answers = [AIMessage("done", id=f"answer-{n}-{uuid4()}") for n in range(2)]
    _asked_many(middleware, model, [reply, *answers])

    with pytest.raises(TypeError) as raised:
        middleware.wrap_tool_call(_after(reply), _raise_key_error)

    assert isinstance(raised.value.__cause__, KeyError)
