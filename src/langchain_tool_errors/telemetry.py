"""A ready-made listener that reports tool failures to OpenTelemetry.

`OpenTelemetryListener` puts each failure a `ToolErrorMiddleware` settles on its tool
call's `execute_tool` span, by the OpenTelemetry GenAI conventions, and counts it on the
counter `langchain_tool_errors.tool.failures`. It needs the OpenTelemetry API, which the
`otel` extra installs (`pip install "/path/to/langchain-tool-errors[otel]"` from a
checkout), or `pip install opentelemetry-api`. Only this module imports it;
`langchain_tool_errors` itself does not.

Example:
    ```python
    from langchain_tool_errors import ToolErrorMiddleware
    from langchain_tool_errors.handlers import report_type_only
    from langchain_tool_errors.telemetry import OpenTelemetryListener

    # The global tracer and meter providers, as your OpenTelemetry setup configures them.
    middleware = ToolErrorMiddleware(report_type_only, listeners=[OpenTelemetryListener()])
    ```
"""

try:
    # Re-exported with `as` and defined in the private package, so that an editor
    # completing `from langchain_tool_errors.telemetry import ` offers this name alone.
    from _langchain_tool_errors.telemetry import OpenTelemetryListener as OpenTelemetryListener
except ImportError as _missing:
    if not (_missing.name or "").startswith("opentelemetry"):
        raise
    _message = (
        "langchain_tool_errors.telemetry needs the OpenTelemetry API (the opentelemetry-api "
        f"package), which could not be imported: {_missing}. Install it: pip install "
        "opentelemetry-api (or the package's `otel` extra)"
    )
    raise ImportError(_message) from _missing

__all__ = ["OpenTelemetryListener"]
