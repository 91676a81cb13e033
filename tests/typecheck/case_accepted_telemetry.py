"""The OpenTelemetry listener: calls and annotations every checker must accept."""

from __future__ import annotations

from typing import assert_type

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from langchain_tool_errors import FailureListener, SyncCapable, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.telemetry import OpenTelemetryListener

# A sync listener, with the global providers or with given ones (the SDK's, or any API's).
listener: FailureListener = OpenTelemetryListener()
given: FailureListener = OpenTelemetryListener(
    tracer_provider=TracerProvider(), meter_provider=MeterProvider()
)
OpenTelemetryListener(tracer_provider=trace.get_tracer_provider())
OpenTelemetryListener(meter_provider=metrics.get_meter_provider())
traced = ToolErrorMiddleware(report_type_only, listeners=[OpenTelemetryListener()])
assert_type(traced, ToolErrorMiddleware[str, Exception, SyncCapable])


def report(failure: ToolFailure) -> None:
    assert_type(OpenTelemetryListener()(failure), None)
