"""The OpenTelemetry listener: each marked line is an error in every checker."""

from __future__ import annotations

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from langchain_tool_errors.telemetry import OpenTelemetryListener

# The providers are keyword-only, and each is the provider of its own signal.
OpenTelemetryListener(TracerProvider())  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]  # ty: ignore[too-many-positional-arguments]  # pyrefly: ignore[bad-argument-count]
OpenTelemetryListener(tracer_provider=MeterProvider())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
OpenTelemetryListener(meter_provider=TracerProvider())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
# A listener is told of a ToolFailure, not of an exception.
OpenTelemetryListener()(KeyError("search"))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]
