"""`ModelFallbackMiddleware` and `ModelRetryMiddleware` beside this middleware: what each
model that is actually called is sent for a failed tool call.

Real `ChatOpenAI` (Chat Completions, which drops `status="error"`, so the middleware adds
the `"Error: "` prefix) and `ChatAnthropic` (which sends `is_error: true`, so the text goes
as written) run against a loopback server of the test's own that records every request.
A model that must fail answers HTTP 500.

Marking follows the model our model-call hook is given. With the fallback listed before
ours (outside it), each attempt passes through our hook with its own model, so each is
sent its own provider's form. With the fallback listed after ours (inside it), our hook
runs once, for the primary, and the fallback is sent the primary's form: an OpenAI
fallback behind an Anthropic primary reads the failure unmarked, as a result. A retried
model call is sent the same form either way, since the model does not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
)
from langchain_core.language_models import BaseChatModel

from langchain_tool_errors import ToolErrorMiddleware
from tests import _wire_anthropic, _wire_openai
from tests._agents import Agent, Path, run, tool_messages
from tests._loopback import FINAL_ANSWER, Recorded, Reply, Respond
from tests._providers import (
    HANDLER_TEXT,
    Mount,
    Provider,
    ProviderServer,
    chat_model,
    explain,
    lookup_tool,
    provider_script,
)

pytest.importorskip("langchain_openai", reason="needs langchain-openai")
pytest.importorskip("langchain_anthropic", reason="needs langchain-anthropic")

pytestmark = pytest.mark.providers

Order = Literal["fallback outside", "fallback inside"]
MARKED = "Error: " + HANDLER_TEXT
CALL_IDS: dict[Provider, str] = {
    "openai": _wire_openai.CALL_ID,
    "anthropic": _wire_anthropic.TOOL_USE_ID,
}
"""The id of the one tool call each provider's script makes."""

Sent = tuple[str, object, bool | None]
"""A tool result as a request carried it: the call id, the content, and `is_error` (`None`
where the API has no such flag)."""


def refuse(recorded: Recorded) -> Reply:
    """A provider that is down: every request gets HTTP 500."""
    return Reply.of_json({"error": {"type": "server_error", "message": "unavailable"}}, 500)


def sent_results(provider: Provider, body: Mapping[str, Any]) -> list[Sent]:
    """The tool results a request body carries, at the place its API puts them."""
    if provider == "openai":
        return [
            (result["tool_call_id"], result["content"], None)
            for result in _wire_openai.tool_results("chat_completions", body)
        ]
    return [
        (block["tool_use_id"], block["content"], block["is_error"])
        for block in _wire_anthropic.tool_results(body)
    ]


def model_at(
    server: ProviderServer, provider: Provider, respond: Respond
) -> tuple[Mount, BaseChatModel]:
    """A real chat model of `provider` at a new mount, whose requests `respond` answers."""
    mount = server.mount(respond)
    return mount, chat_model(provider, mount.url)


def bodies(mount: Mount) -> list[dict[str, Any]]:
    """The JSON bodies the model at `mount` sent, in order."""
    return [recorded.json() for recorded in mount.requests()]


def agent_with(model: BaseChatModel, middleware: list[AgentMiddleware[Any, Any, Any]]) -> Agent:
    agent: Agent = create_agent(model, tools=[lookup_tool()], middleware=middleware)
    return agent


def fallback_run(
    server: ProviderServer, path: Path, order: Order, primary: Provider, fallback: Provider
) -> tuple[list[Sent], list[Sent], dict[str, Any]]:
    """A run whose primary model is down: the tool results its last request and the
    fallback's last request carried, and the agent's result."""
    primary_mount, primary_model = model_at(server, primary, refuse)
    fallback_mount, fallback_model = model_at(server, fallback, provider_script(fallback))
    ours = ToolErrorMiddleware(explain)
    falling_back = ModelFallbackMiddleware(fallback_model)
    middleware: list[AgentMiddleware[Any, Any, Any]] = (
        [falling_back, ours] if order == "fallback outside" else [ours, falling_back]
    )

    result = run(agent_with(primary_model, middleware), path)

    primary_bodies = bodies(primary_mount)
    fallback_bodies = bodies(fallback_mount)
    assert (len(primary_bodies), len(fallback_bodies)) == (2, 2)  # each model call tried both
    return (
        sent_results(primary, primary_bodies[-1]),
        sent_results(fallback, fallback_bodies[-1]),
        result,
    )


def assert_state_kept_as_written(result: dict[str, Any], call_id: str) -> None:
    message = tool_messages(result)[call_id]
    assert (message.content, message.status) == (HANDLER_TEXT, "error")


# primary, fallback -> what the primary's failed request carried, what the fallback's did
OWN_FORMS: list[
    tuple[Provider, Provider, tuple[object, bool | None], tuple[object, bool | None]]
] = [
    ("anthropic", "openai", (HANDLER_TEXT, True), (MARKED, None)),
    ("openai", "anthropic", (MARKED, None), (HANDLER_TEXT, True)),
]


@pytest.mark.parametrize(("primary", "fallback", "to_primary", "to_fallback"), OWN_FORMS)
def test_a_fallback_listed_before_ours_is_sent_the_failure_in_its_own_providers_form(
    provider_server: ProviderServer,
    path: Path,
    primary: Provider,
    fallback: Provider,
    to_primary: tuple[object, bool | None],
    to_fallback: tuple[object, bool | None],
) -> None:
    call_id = CALL_IDS[fallback]  # the fallback made the call

    sent_primary, sent_fallback, result = fallback_run(
        provider_server, path, "fallback outside", primary, fallback
    )

    assert sent_primary == [(call_id, *to_primary)]
    assert sent_fallback == [(call_id, *to_fallback)]
    assert_state_kept_as_written(result, call_id)
    assert result["messages"][-1].text == FINAL_ANSWER


# primary, fallback -> what the fallback's request carried: the primary's form
PRIMARY_FORMS: list[tuple[Provider, Provider, tuple[object, bool | None]]] = [
    # Anthropic needs no mark, so none is added, and OpenAI drops the flag: unmarked.
    ("anthropic", "openai", (HANDLER_TEXT, None)),
    # The prefix OpenAI needs, and Anthropic's own flag as well: marked twice, harmlessly.
    ("openai", "anthropic", (MARKED, True)),
]


@pytest.mark.parametrize(("primary", "fallback", "to_fallback"), PRIMARY_FORMS)
def test_a_fallback_listed_after_ours_is_sent_the_failure_in_the_primarys_form(
    provider_server: ProviderServer,
    path: Path,
    primary: Provider,
    fallback: Provider,
    to_fallback: tuple[object, bool | None],
) -> None:
    call_id = CALL_IDS[fallback]

    sent_primary, sent_fallback, result = fallback_run(
        provider_server, path, "fallback inside", primary, fallback
    )

    assert sent_fallback == [(call_id, *to_fallback)]
    # The content the fallback got is what our hook prepared for the primary.
    assert [content for _, content, _ in sent_fallback] == [
        content for _, content, _ in sent_primary
    ]
    assert_state_kept_as_written(result, call_id)


def down_once_with_a_result(provider: Provider) -> Respond:
    """The provider's script, except that the first request carrying a tool result gets
    HTTP 500 (a failure `ModelRetryMiddleware` retries)."""
    script = provider_script(provider)
    failed: list[Recorded] = []

    def respond(recorded: Recorded) -> Reply:
        if not failed and sent_results(provider, recorded.json()):
            failed.append(recorded)
            return refuse(recorded)
        return script(recorded)

    return respond


RETRIED_FORMS: dict[Provider, tuple[object, bool | None]] = {
    "openai": (MARKED, None),
    "anthropic": (HANDLER_TEXT, True),
}


@pytest.mark.parametrize("order", ["retry outside", "retry inside"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_retried_model_call_is_sent_the_same_marked_failure_in_either_order(
    provider_server: ProviderServer, path: Path, order: str, provider: Provider
) -> None:
    mount, model = model_at(provider_server, provider, down_once_with_a_result(provider))
    ours = ToolErrorMiddleware(explain)
    retrying = ModelRetryMiddleware(max_retries=1, initial_delay=0, jitter=False)
    middleware: list[AgentMiddleware[Any, Any, Any]] = (
        [retrying, ours] if order == "retry outside" else [ours, retrying]
    )
    call_id = CALL_IDS[provider]

    result = run(agent_with(model, middleware), path)

    first, failed, retried = (sent_results(provider, body) for body in bodies(mount))
    assert first == []
    assert failed == retried == [(call_id, *RETRIED_FORMS[provider])]
    assert_state_kept_as_written(result, call_id)
    assert result["messages"][-1].text == FINAL_ANSWER
