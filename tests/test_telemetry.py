"""`OpenTelemetryListener` through real agents, recorded by the OpenTelemetry SDK in memory.

Each test builds its own tracer and meter providers (an in-memory span exporter and metric
reader) and hands them to the listener; the global providers are never set.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any

import pytest

# create_agent's `checkpointer` parameter is partially unknown in pyright strict.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint, Sum
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import INVALID_SPAN_CONTEXT, NonRecordingSpan, SpanKind, StatusCode, Tracer
from typing_extensions import override

from langchain_tool_errors import (
    ErrorBudget,
    FailureKind,
    ToolErrorBudgetExceeded,
    ToolErrorMiddleware,
    ToolFailure,
)
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.telemetry import OpenTelemetryListener
from langchain_tool_errors.testing import ScriptedChatModel
from tests._agents import (
    Agent,
    Path,
    build_agent,
    call,
    echo_tool,
    failing_tool,
    run,
    tool_messages,
)
from tests._processes import run_python
from tests._wrapping import Around, AroundToolCalls

COUNTER = "langchain_tool_errors.tool.failures"


class Telemetry:
    """In-memory SDK providers, the listener that reports to them, and what they recorded."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.listener = OpenTelemetryListener(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
        )
        self.tracer: Tracer = self.tracer_provider.get_tracer("tests")

    def middleware(self, **options: Any) -> ToolErrorMiddleware:
        """`ToolErrorMiddleware(report_type_only, ...)` that tells this listener."""
        built: ToolErrorMiddleware = ToolErrorMiddleware(
            report_type_only, listeners=[self.listener], **options
        )
        return built

    def spans(self) -> list[ReadableSpan]:
        """Every finished span, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def counts(self) -> list[tuple[dict[str, object], int]]:
        """The failure counter's data points: (attributes, value), sorted for comparison."""
        data = self.reader.get_metrics_data()
        points: list[tuple[dict[str, object], int]] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != COUNTER:
                        continue
                    assert scope.scope.name == "langchain_tool_errors"
                    assert metric.unit == "{failure}"
                    assert isinstance(metric.data, Sum)
                    assert metric.data.is_monotonic
                    for point in metric.data.data_points:
                        assert isinstance(point, NumberDataPoint)
                        points.append((attributes_of(point.attributes), int(point.value)))
        return sorted(points, key=lambda point: sorted(map(str, point[0].items())))

    def recorded(self) -> str:
        """Everything the SDK holds, spans and metrics, as the exporters would send it."""
        data = self.reader.get_metrics_data()
        spans = [json.loads(span.to_json()) for span in self.spans()]
        metrics = json.loads(data.to_json()) if data is not None else None
        return json.dumps({"spans": spans, "metrics": metrics})


def attributes_of(attributes: Mapping[str, object] | None) -> dict[str, object]:
    return dict(attributes or {})


def scope_of(span: ReadableSpan) -> str:
    """The name of the instrumentation scope (the tracer) that opened the span."""
    assert span.instrumentation_scope is not None
    return span.instrumentation_scope.name


def is_child(span: ReadableSpan, parent: ReadableSpan) -> bool:
    return (
        span.parent is not None
        and parent.context is not None
        and (span.parent.trace_id, span.parent.span_id)
        == (parent.context.trace_id, parent.context.span_id)
    )


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    recorded = Telemetry()
    yield recorded
    recorded.tracer_provider.shutdown()
    recorded.meter_provider.shutdown()


class ToolSpans(AroundToolCalls):
    """Opens an `execute_tool` span around each tool call, as tool instrumentation would.

    `call_id` labels every span with that id instead of the call's own.
    """

    def __init__(self, tracer: Tracer, call_id: str | None = None) -> None:
        super().__init__()
        self.tracer = tracer
        self.call_id = call_id

    def _attributes(self, request: ToolCallRequest) -> dict[str, str]:
        name = request.tool_call["name"]
        return {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": self.call_id or request.tool_call["id"] or "",
        }

    @override
    def around(self, request: ToolCallRequest) -> Around:
        name = request.tool_call["name"]
        with self.tracer.start_as_current_span(
            f"execute_tool {name}", attributes=self._attributes(request)
        ):
            return (yield)


def search_failing(error: Exception) -> list[BaseTool]:
    return [failing_tool("search", error)]


def searching(telemetry: Telemetry, *outer: AgentMiddleware[Any, Any, Any]) -> Agent:
    """The model calls `search` (`c1`), which fails with `LookupError`; the telemetry's
    middleware is inside any `outer` one."""
    return build_agent(
        search_failing(LookupError("Atlantis")),
        [*outer, telemetry.middleware()],
        [call("search", "c1", query="weather")],
    )


# What the listener puts on a span for a `LookupError` that `report_type_only` (route 0)
# answered, and the counter's attributes for it.
ERROR_ATTRIBUTES: dict[str, object] = {
    "error.type": "LookupError",
    "langchain_tool_errors.failure.kind": "exception",
    "langchain_tool_errors.failure.outcome": "answered",
    "langchain_tool_errors.middleware": "ToolErrorMiddleware",
    "langchain_tool_errors.failure.route": 0,
}
SEARCH_CALL: dict[str, object] = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "search",
    "gen_ai.tool.call.id": "c1",
}
SEARCH_COUNT: dict[str, object] = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "search",
    "error.type": "LookupError",
    "langchain_tool_errors.failure.kind": "exception",
    "langchain_tool_errors.failure.outcome": "answered",
}


def test_a_failure_outside_any_span_gets_an_execute_tool_error_span_and_a_count(
    path: Path, telemetry: Telemetry
) -> None:
    agent = searching(telemetry)

    result = run(agent, path)

    [span] = telemetry.spans()
    assert span.name == "execute_tool search"
    assert span.kind is SpanKind.INTERNAL
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None
    assert span.parent is None
    assert scope_of(span) == "langchain_tool_errors"
    assert attributes_of(span.attributes) == {**SEARCH_CALL, **ERROR_ATTRIBUTES}
    assert telemetry.counts() == [(SEARCH_COUNT, 1)]
    # The listener changed nothing the model reads.
    assert tool_messages(result)["c1"].text == "Tool `search` failed with LookupError."


def test_inside_a_request_span_the_failure_span_is_its_child_and_the_request_is_not_failed(
    path: Path, telemetry: Telemetry
) -> None:
    agent = searching(telemetry)

    # On the sync path the tool runs in a worker thread, so the parent proves that the
    # listener sees the context the request was started in.
    with telemetry.tracer.start_as_current_span("request"):
        run(agent, path)

    [failure, request] = telemetry.spans()
    assert failure.name == "execute_tool search"
    assert is_child(failure, request)
    assert attributes_of(failure.attributes) == {**SEARCH_CALL, **ERROR_ATTRIBUTES}
    assert request.name == "request"
    assert attributes_of(request.attributes) == {}
    assert request.status.status_code is StatusCode.UNSET


def test_the_tool_calls_own_span_gets_the_error_and_no_span_is_opened(
    path: Path, telemetry: Telemetry
) -> None:
    # Listed first, so outer: its span is current while ToolErrorMiddleware handles the call.
    agent = searching(telemetry, ToolSpans(telemetry.tracer))

    run(agent, path)

    [span] = telemetry.spans()
    assert scope_of(span) == "tests"  # the tool instrumentation's span
    assert span.name == "execute_tool search"
    assert attributes_of(span.attributes) == {**SEARCH_CALL, **ERROR_ATTRIBUTES}
    assert span.status.status_code is StatusCode.ERROR
    assert telemetry.counts() == [(SEARCH_COUNT, 1)]


def test_a_current_span_of_another_tool_call_is_left_alone(
    path: Path, telemetry: Telemetry
) -> None:
    agent = searching(telemetry, ToolSpans(telemetry.tracer, call_id="another-call"))

    run(agent, path)

    [failure, outer] = telemetry.spans()
    assert scope_of(failure) == "langchain_tool_errors"
    assert is_child(failure, outer)
    assert attributes_of(failure.attributes) == {**SEARCH_CALL, **ERROR_ATTRIBUTES}
    assert "error.type" not in attributes_of(outer.attributes)
    assert outer.status.status_code is StatusCode.UNSET


def test_parallel_failures_in_one_step_get_a_span_and_a_count_each(
    path: Path, telemetry: Telemetry
) -> None:
    tools = [
        failing_tool("search", LookupError("Atlantis")),
        failing_tool("lookup", TimeoutError("db")),
        failing_tool("fetch", KeyError("page")),
    ]
    calls = [call("search", "c1"), call("lookup", "c2"), call("fetch", "c3")]
    agent = build_agent(tools, [telemetry.middleware()], calls)

    run(agent, path)

    spans = {
        str(attributes_of(span.attributes)["gen_ai.tool.call.id"]): span
        for span in telemetry.spans()
    }
    assert sorted(spans) == ["c1", "c2", "c3"]
    assert {
        call_id: (span.name, attributes_of(span.attributes)["error.type"])
        for call_id, span in spans.items()
    } == {
        "c1": ("execute_tool search", "LookupError"),
        "c2": ("execute_tool lookup", "TimeoutError"),
        "c3": ("execute_tool fetch", "KeyError"),
    }
    assert all(span.status.status_code is StatusCode.ERROR for span in spans.values())
    counts = telemetry.counts()
    assert sum(value for _, value in counts) == 3
    assert sorted((str(point["gen_ai.tool.name"]), value) for point, value in counts) == [
        ("fetch", 1),
        ("lookup", 1),
        ("search", 1),
    ]


def test_a_run_a_budget_stops_is_recorded_answered_then_stopped(
    path: Path, telemetry: Telemetry
) -> None:
    agent = build_agent(
        search_failing(LookupError("Atlantis")),
        [telemetry.middleware(budget=ErrorBudget(per_tool=1))],
        [call("search", "t0")],
        answer=AIMessage("", tool_calls=[call("search", "t1")]),  # the model tries again
    )

    with pytest.raises(ToolErrorBudgetExceeded):
        run(agent, path)

    spans = telemetry.spans()
    assert [
        (
            attributes_of(span.attributes)["gen_ai.tool.call.id"],
            attributes_of(span.attributes)["langchain_tool_errors.failure.outcome"],
            span.status.status_code,
        )
        for span in spans
    ] == [("t0", "answered", StatusCode.ERROR), ("t1", "stopped", StatusCode.ERROR)]
    assert telemetry.counts() == [
        (SEARCH_COUNT, 1),
        ({**SEARCH_COUNT, "langchain_tool_errors.failure.outcome": "stopped"}, 1),
    ]


# A failure that is not an exception: the tools, the call, and the failure's type and kind.
NOT_EXCEPTIONS: dict[str, tuple[list[BaseTool], ToolCall, str, str]] = {
    "invalid arguments": (
        [echo_tool()],
        call("echo", "c1", query=3, extra="x"),
        "langchain_tool_errors.InvalidArguments",
        "invalid_arguments",
    ),
    "unknown tool": (
        [echo_tool()],
        call("nowhere", "c1"),
        "langchain_tool_errors.UnknownTool",
        "unknown_tool",
    ),
}


@pytest.mark.parametrize("case", NOT_EXCEPTIONS)
def test_a_failure_that_is_not_an_exception_is_recorded_by_its_class_and_kind(
    case: str, path: Path, telemetry: Telemetry
) -> None:
    tools, tool_call, error_type, kind = NOT_EXCEPTIONS[case]
    agent = build_agent(tools, [telemetry.middleware()], [tool_call])

    run(agent, path)

    [span] = telemetry.spans()
    tool = tool_call["name"]
    assert span.name == f"execute_tool {tool}"
    assert span.status.status_code is StatusCode.ERROR
    # No route took it (report_type_only takes exceptions), so no route attribute.
    assert attributes_of(span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": "c1",
        "error.type": error_type,
        "langchain_tool_errors.failure.kind": kind,
        "langchain_tool_errors.failure.outcome": "answered",
        "langchain_tool_errors.middleware": "ToolErrorMiddleware",
    }
    # The counter names a tool the agent does not have `_OTHER`: the model wrote that name.
    counted = "_OTHER" if kind == "unknown_tool" else tool
    assert telemetry.counts() == [
        (
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": counted,
                "error.type": error_type,
                "langchain_tool_errors.failure.kind": kind,
                "langchain_tool_errors.failure.outcome": "answered",
            },
            1,
        )
    ]


# A failure whose exception message or error text, and whose arguments, hold a secret.
SECRETS: dict[str, tuple[list[BaseTool], ToolCall]] = {
    "exception": (
        search_failing(KeyError("secret-token-123")),
        call("search", "c1", query="secret-arg-456"),
    ),
    "invalid arguments": ([echo_tool()], call("echo", "c1", query=3, extra="secret-arg-456")),
}


@pytest.mark.parametrize("case", SECRETS)
@pytest.mark.parametrize("own_span", [False, True], ids=["new span", "own span"])
def test_nothing_from_the_arguments_or_the_error_text_is_recorded(
    case: str, own_span: bool, path: Path, telemetry: Telemetry
) -> None:
    tools, tool_call = SECRETS[case]
    outer: Sequence[AgentMiddleware[Any, Any, Any]] = (
        [ToolSpans(telemetry.tracer)] if own_span else []
    )
    agent = build_agent(tools, [*outer, telemetry.middleware()], [tool_call])

    result = run(agent, path)

    recorded = telemetry.recorded()
    [span] = telemetry.spans()
    assert span.status.status_code is StatusCode.ERROR  # the failure was recorded...
    assert telemetry.counts()[0][1] == 1
    assert "secret" not in recorded  # ...with nothing secret: attributes, events, status
    if case == "invalid arguments":  # the model reads langchain's text, which has them
        assert "secret-arg-456" in tool_messages(result)["c1"].text


IMPORT_WITHOUT_OPENTELEMETRY = """
import sys

sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.handlers import report_type_only

ToolErrorMiddleware(report_type_only, listeners=[print])
try:
    import langchain_tool_errors.telemetry
except ImportError as exc:
    print(type(exc).__name__, type(exc.__cause__).__name__, exc.__cause__.name)
    print(exc)
else:
    print("imported")
"""


def test_without_opentelemetry_the_package_works_and_telemetry_names_the_extra() -> None:
    ran = run_python("-c", IMPORT_WITHOUT_OPENTELEMETRY)

    assert ran.returncode == 0, ran.stderr
    kinds, message = ran.stdout.splitlines()
    assert kinds == "ImportError ModuleNotFoundError opentelemetry"
    assert "opentelemetry-api" in message
    # A command that works today: the package itself is not on an index yet.
    assert "Install it: pip install opentelemetry-api (" in message


def test_the_spans_and_the_counter_name_this_package_its_version_and_the_middleware(
    telemetry: Telemetry,
) -> None:
    agent = build_agent(
        search_failing(LookupError("x")), [telemetry.middleware()], [call("search", "c1")]
    )

    run(agent, "sync")

    version = metadata.version("langchain-tool-errors")
    [span] = telemetry.spans()
    assert span.instrumentation_scope is not None
    assert (span.instrumentation_scope.name, span.instrumentation_scope.version) == (
        "langchain_tool_errors",
        version,
    )
    data = telemetry.reader.get_metrics_data()
    assert data is not None
    [scope] = [s for r in data.resource_metrics for s in r.scope_metrics]
    assert (scope.scope.name, scope.scope.version) == ("langchain_tool_errors", version)
    [metric] = scope.metrics
    assert "ToolErrorMiddleware" in (metric.description or "")


def a_failure(call_id: str | None) -> ToolFailure:
    return {
        "middleware": "ToolErrorMiddleware",
        "tool": "search",
        "call_id": call_id,
        "kind": "malformed_call",
        "error_type": "langchain_tool_errors.MalformedToolCall",
        "route": None,
        "outcome": "answered",
    }


class RecordingSpanWithoutAttributes(NonRecordingSpan):
    """A span that records but does not show its attributes, as some implementations do."""

    @override
    def is_recording(self) -> bool:
        return True


@pytest.mark.parametrize(
    "current",
    ["a span with no call id", "a span that shows no attributes"],
)
def test_a_current_span_that_cannot_be_the_calls_is_left_alone(
    telemetry: Telemetry, current: str
) -> None:
    if current == "a span with no call id":
        # A call without an id (a malformed call may have none) is no span's call.
        with telemetry.tracer.start_as_current_span("request"):
            telemetry.listener(a_failure(None))
        [opened, request] = telemetry.spans()
        assert request.status.status_code is StatusCode.UNSET
        assert attributes_of(request.attributes) == {}
    else:
        with trace.use_span(RecordingSpanWithoutAttributes(INVALID_SPAN_CONTEXT)):
            telemetry.listener(a_failure("c1"))
        [opened] = telemetry.spans()
    assert opened.name == "execute_tool search"
    assert opened.status.status_code is StatusCode.ERROR
    assert attributes_of(opened.attributes)["error.type"] == (
        "langchain_tool_errors.MalformedToolCall"
    )


def test_the_listener_shows_the_providers_it_was_given(telemetry: Telemetry) -> None:
    assert repr(OpenTelemetryListener()) == "OpenTelemetryListener()"
    assert repr(telemetry.listener) == (
        f"OpenTelemetryListener(tracer_provider={telemetry.tracer_provider!r}, "
        f"meter_provider={telemetry.meter_provider!r})"
    )


def test_a_tool_closed_a_declined_exception_and_a_malformed_call_are_each_recorded(
    path: Path, telemetry: Telemetry
) -> None:
    def declines_value_errors(exc: Exception, request: ToolCallRequest) -> str | None:
        return None if isinstance(exc, ValueError) else "failed"

    malformed = InvalidToolCall(
        name="echo", args="{", id="cut", error="eof", type="invalid_tool_call"
    )
    script = [
        AIMessage("", tool_calls=[call("search", "t0")]),
        AIMessage("", tool_calls=[call("search", "t1")], invalid_tool_calls=[malformed]),
        AIMessage("", tool_calls=[call("strict", "t2")]),
        AIMessage("done"),
    ]
    exceptions_only: tuple[FailureKind, ...] = ("exception",)
    middleware = ToolErrorMiddleware(
        declines_value_errors,
        budget=ErrorBudget(per_tool=1, when_spent="tell", kinds=exceptions_only),
        listeners=[telemetry.listener],
    )
    tools = [*search_failing(LookupError("down")), failing_tool("strict", ValueError("bad"))]
    tools.append(echo_tool())
    agent: Agent = create_agent(
        ScriptedChatModel(script=script), tools=tools, middleware=[middleware]
    )

    with pytest.raises(ValueError, match="bad"):
        run(agent, path)

    outcomes = {
        str(attributes_of(span.attributes)["gen_ai.tool.call.id"]): (
            span.name,
            attributes_of(span.attributes)["langchain_tool_errors.failure.kind"],
            attributes_of(span.attributes)["langchain_tool_errors.failure.outcome"],
        )
        for span in telemetry.spans()
    }
    assert outcomes == {
        "t0": ("execute_tool search", "exception", "answered"),
        "t1": ("execute_tool search", "exception", "told"),
        "cut": ("execute_tool echo", "malformed_call", "answered"),
        "t2": ("execute_tool strict", "exception", "propagated"),
    }
    assert sum(count for _, count in telemetry.counts()) == 4
