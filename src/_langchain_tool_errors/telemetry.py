"""The OpenTelemetry listener; `langchain_tool_errors.telemetry` is its public face.

Each settled failure becomes an error on the tool call's span (the OpenTelemetry GenAI
conventions' `execute_tool {gen_ai.tool.name}`) and one count on a counter.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata

from opentelemetry import metrics, trace
from opentelemetry.util.types import AttributeValue
from typing_extensions import TypeIs

from _langchain_tool_errors.record_types import ToolFailure

__all__ = ["OpenTelemetryListener"]

_SCOPE = "langchain_tool_errors"
"""The instrumentation scope: the name the tracer and the meter are asked for."""

_COUNTER = "langchain_tool_errors.tool.failures"
_EXECUTE_TOOL = "execute_tool"
_OTHER = "_OTHER"

# The attributes the GenAI and general conventions define, and this library's own.
_OPERATION = "gen_ai.operation.name"
_TOOL_NAME = "gen_ai.tool.name"
_CALL_ID = "gen_ai.tool.call.id"
_ERROR_TYPE = "error.type"
_KIND = "langchain_tool_errors.failure.kind"
_OUTCOME = "langchain_tool_errors.failure.outcome"
_ROUTE = "langchain_tool_errors.failure.route"
_MIDDLEWARE = "langchain_tool_errors.middleware"


def _version() -> str | None:
    """This package's installed version, for the instrumentation scope (`None` if unknown)."""
    try:
        return metadata.version("langchain-tool-errors")
    except metadata.PackageNotFoundError:
        return None


class OpenTelemetryListener:
    """A sync `FailureListener` that reports each failure to OpenTelemetry.

    The failure becomes an error on its tool call's span, named `execute_tool {tool}` after
    the OpenTelemetry GenAI conventions: `error.type` (the failure's `error_type`), the
    failure's kind, outcome, route and middleware as `langchain_tool_errors.*` attributes,
    and status ERROR. It also adds one to the counter `langchain_tool_errors.tool.failures`,
    by `gen_ai.tool.name` (`_OTHER` for a tool the agent does not have), `error.type`, kind
    and outcome.

    Which span: when the current span is the tool call's own (a recording span whose
    `gen_ai.tool.call.id` is the failure's `call_id`, as your tool instrumentation or an
    outer middleware may open), the error goes on it and no span is opened. Otherwise a
    span of its own is opened as a child of the current one and ended at once, so its
    duration is not the tool's. The middleware learns of a failure only once it is settled,
    and opening a span for every tool call would cost every call that succeeds; an
    `error.type` on a current span that is not the tool call's (the span of the whole
    request, say) would mark the wrong operation as failed.

    Nothing from the request or the exception's message is recorded: a `ToolFailure` holds
    only names and types, so the listener has none to record. Capturing a tool's arguments
    or result, which the conventions leave opt-in, belongs to your own tool instrumentation.

    Args:
        tracer_provider: Where the spans go; `None` for the global tracer provider.
        meter_provider: Where the count goes; `None` for the global meter provider.

    Example:
        ```python
        from typing import Any

        # For pyright strict: create_agent's own signature is partially unknown there.
        from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
        from langchain.agents.middleware.types import InputAgentState
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.runnables import Runnable
        from langchain_core.tools import tool
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from langchain_tool_errors import ToolErrorMiddleware
        from langchain_tool_errors.handlers import report_type_only
        from langchain_tool_errors.telemetry import OpenTelemetryListener
        from langchain_tool_errors.testing import ScriptedChatModel

        exported_spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exported_spans))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        listener = OpenTelemetryListener(  # or OpenTelemetryListener(): the global providers
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )

        @tool(description="The weather in a city.")
        def get_weather(city: str) -> str:
            raise LookupError(city)

        weather_call = AIMessage(
            "", tool_calls=[{"name": "get_weather", "args": {"city": "Atlantis"}, "id": "c1"}]
        )
        weather_model = ScriptedChatModel(script=[weather_call, AIMessage("No rain there.")])

        def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
            middleware = ToolErrorMiddleware(report_type_only, listeners=[listener])
            return create_agent(weather_model, tools=[get_weather], middleware=[middleware])

        build_agent().invoke({"messages": [HumanMessage("Is it raining in Atlantis?")]})

        [span] = exported_spans.get_finished_spans()
        assert span.name == "execute_tool get_weather"
        assert span.attributes is not None and span.attributes["error.type"] == "LookupError"
        ```
    """

    __slots__ = ("_counter", "_meter_provider", "_tracer", "_tracer_provider")

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        version = _version()
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._tracer = trace.get_tracer(_SCOPE, version, tracer_provider)
        meter = metrics.get_meter(_SCOPE, version or "", meter_provider)
        self._counter = meter.create_counter(
            _COUNTER,
            unit="{failure}",
            description="Tool call failures that a ToolErrorMiddleware settled.",
        )

    def __call__(self, failure: ToolFailure, /) -> None:
        """Put the failure on its tool call's span (or a new one), and count it."""
        attributes: dict[str, AttributeValue] = {
            _ERROR_TYPE: failure["error_type"],
            _KIND: failure["kind"],
            _OUTCOME: failure["outcome"],
            _MIDDLEWARE: failure["middleware"],
        }
        if failure["route"] is not None:
            attributes[_ROUTE] = failure["route"]
        error = trace.Status(trace.StatusCode.ERROR)
        current = trace.get_current_span()
        if _is_span_of_call(current, failure["call_id"]):
            current.set_attributes(attributes)
            current.set_status(error)
        else:
            attributes[_OPERATION] = _EXECUTE_TOOL
            attributes[_TOOL_NAME] = failure["tool"]
            if failure["call_id"] is not None:
                attributes[_CALL_ID] = failure["call_id"]
            span = self._tracer.start_span(
                f"{_EXECUTE_TOOL} {failure['tool']}",
                kind=trace.SpanKind.INTERNAL,
                attributes=attributes,
            )
            span.set_status(error)
            span.end()
        # The name of a tool the agent does not have is whatever the model wrote: the
        # counter gets the conventions' `_OTHER`, so the series stay few (the span keeps it).
        tool = _OTHER if failure["kind"] == "unknown_tool" else failure["tool"]
        self._counter.add(
            1,
            {
                _OPERATION: _EXECUTE_TOOL,
                _TOOL_NAME: tool,
                _ERROR_TYPE: failure["error_type"],
                _KIND: failure["kind"],
                _OUTCOME: failure["outcome"],
            },
        )

    def __repr__(self) -> str:
        given = [
            f"{name}={provider!r}"
            for name, provider in (
                ("tracer_provider", self._tracer_provider),
                ("meter_provider", self._meter_provider),
            )
            if provider is not None
        ]
        return f"OpenTelemetryListener({', '.join(given)})"


def _is_span_of_call(span: trace.Span, call_id: str | None) -> bool:
    """Whether `span` is recording and is the tool call's own, by its `gen_ai.tool.call.id`.

    The API's `Span` has no way to read attributes back; SDK spans, and most others, expose
    them as a mapping `attributes`, read here without importing any SDK.
    """
    if call_id is None or not span.is_recording():
        return False
    attributes: object = getattr(span, "attributes", None)
    return _is_mapping(attributes) and attributes.get(_CALL_ID) == call_id


def _is_mapping(value: object) -> TypeIs[Mapping[str, object]]:
    return isinstance(value, Mapping)
