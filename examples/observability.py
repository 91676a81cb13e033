"""Seeing a run's handled failures: the record, a listener, and OpenTelemetry.

In one step the model calls three tools and each fails: `weather` raises, `lookup` raises a
`KeyError` that a route of its own answers, and `convert` is sent a word for a number, so
`ToolNode` answers it before it runs. The model calls `weather` again, and a budget of one
failure per tool closes it. The conversation alone does not say any of this; the record,
a listener and the OpenTelemetry SDK (in memory here; an OTLP exporter in production) do.

Run: `.venv/bin/python examples/observability.py`. It needs the OpenTelemetry SDK, which the
Quick start's first command does not install. Its second command (the `dev` extra) does, or:
`.venv/bin/python -m pip install -e ".[otel]" opentelemetry-sdk`
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

# pyright strict reports create_agent as partially unknown: its `checkpointer` parameter
# leaves the type parameter of langgraph's BaseCheckpointSaver unset (README, Type checking).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, Sum
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langchain_tool_errors import ErrorBudget, Route, ToolErrorMiddleware, ToolFailure
from langchain_tool_errors.handlers import report_type_only
from langchain_tool_errors.telemetry import OpenTelemetryListener
from langchain_tool_errors.testing import ScriptedChatModel


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    raise ConnectionError("weather service unreachable")


@tool
def lookup(record_id: str) -> str:
    """A customer record by id."""
    raise KeyError(record_id)


@tool
def convert(amount: float) -> str:
    """An amount in euros, converted to dollars."""
    return f"${amount * 1.1:.2f}"


def no_such_record(exc: KeyError, request: ToolCallRequest) -> str:
    """The route for a missing record: say so, without the id."""
    return "There is no such record; ask the user for the id."


def call(name: str, call_id: str, **args: object) -> dict[str, Any]:
    """A tool call as the model sends it."""
    return {"name": name, "args": args, "id": call_id}


failures_by_tool: Counter[str] = Counter()
counting = threading.Lock()


def count(failure: ToolFailure) -> None:
    """A listener: told of each failure as it happens (a metric, an alert).

    Parallel tool calls tell it from their own threads, hence the lock.
    """
    with counting:
        failures_by_tool[failure["tool"]] += 1


spans = InMemorySpanExporter()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
metrics = InMemoryMetricReader()
meter_provider = MeterProvider(metric_readers=[metrics])
telemetry = OpenTelemetryListener(tracer_provider=tracer_provider, meter_provider=meter_provider)

middleware = ToolErrorMiddleware.from_routes(
    [Route(KeyError, no_such_record), Route(Exception, report_type_only)],
    budget=ErrorBudget(per_tool=1, when_spent="tell"),
    record_failures=True,
    listeners=[count, telemetry],
)


def build_agent() -> Runnable[InputAgentState, dict[str, Any]]:
    """Three failing calls in one step, then `weather` once more, then an answer."""
    first = [call("weather", "w1", city="Oslo"), call("lookup", "l1", record_id="C-9")]
    first.append(call("convert", "c1", amount="ten"))
    model = ScriptedChatModel(
        script=[
            AIMessage("", tool_calls=first),
            AIMessage("", tool_calls=[call("weather", "w2", city="Oslo")]),
            AIMessage("I could not get the weather or the record."),
        ]
    )
    return create_agent(model, tools=[weather, lookup, convert], middleware=[middleware])


result = build_agent().invoke({"messages": [HumanMessage("Weather in Oslo, and record C-9?")]})

print("The record (result['tool_failures']):")
print(f"  {'call':<5}{'tool':<9}{'kind':<19}{'error_type':<40}{'route':<7}outcome")
records: list[ToolFailure] = result["tool_failures"]
for failure in sorted(records, key=lambda f: str(f["call_id"])):
    route = "-" if failure["route"] is None else str(failure["route"])
    print(
        f"  {failure['call_id']!s:<5}{failure['tool']:<9}{failure['kind']:<19}"
        f"{failure['error_type']:<40}{route:<7}{failure['outcome']}"
    )

print()
print("The listener's counts:", dict(sorted(failures_by_tool.items())))

print()
print("OpenTelemetry spans (one per failure, as no tool span was current):")
finished = [(dict(span.attributes or {}), span) for span in spans.get_finished_spans()]
for attributes, span in sorted(finished, key=lambda pair: str(pair[0]["gen_ai.tool.call.id"])):
    print(
        f"  {span.name:<21}[{attributes['gen_ai.tool.call.id']}]"
        f"  status={span.status.status_code.name}  error.type={attributes['error.type']}"
        f"  outcome={attributes['langchain_tool_errors.failure.outcome']}"
    )

print()
print("The counter langchain_tool_errors.tool.failures:")
data = metrics.get_metrics_data()
assert data is not None
for resource in data.resource_metrics:
    for scope in resource.scope_metrics:
        for metric in scope.metrics:
            assert isinstance(metric.data, Sum)  # a counter's points are sums
            points = sorted(metric.data.data_points, key=lambda p: str(p.attributes))
            for point in points:
                labels = dict(point.attributes or {})
                print(
                    f"  {labels['gen_ai.tool.name']!s:<9}"
                    f"{labels['langchain_tool_errors.failure.kind']!s:<19}"
                    f"{labels['langchain_tool_errors.failure.outcome']!s:<10}{point.value}"
                )
