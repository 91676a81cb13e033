"""Ready-made handlers that keep exception messages away from the model.

An exception's message can hold a stack of internal detail: hostnames, file paths, SQL,
credentials. Whatever reaches the model also reaches its context, its logs and traces, and
possibly its answer. These handlers send the model only what it needs to recover.

All of them are sync handlers, so they serve the async path unchanged. `report_type_only`,
`report_messages_of` and the log wrappers take exceptions; `report_invalid_fields`,
`report_known_tools` and `report_kind_only` take the failures that are not exceptions, in a
`Route` (see `ReportedFailure`).

Example:
    ```python
    from langchain_core.tools import ToolException
    from langchain_tool_errors import ToolErrorMiddleware
    from langchain_tool_errors.handlers import log_handled, report_messages_of

    middleware = ToolErrorMiddleware(log_handled(report_messages_of(ToolException)))
    ```
"""

# Re-exported with `as` and defined in the private package, so that an editor completing
# `from langchain_tool_errors.handlers import ` offers these names and nothing else.
from _langchain_tool_errors.handlers import LOGGER as LOGGER
from _langchain_tool_errors.handlers import alog_handled as alog_handled
from _langchain_tool_errors.handlers import log_handled as log_handled
from _langchain_tool_errors.handlers import report_invalid_fields as report_invalid_fields
from _langchain_tool_errors.handlers import report_kind_only as report_kind_only
from _langchain_tool_errors.handlers import report_known_tools as report_known_tools
from _langchain_tool_errors.handlers import report_messages_of as report_messages_of
from _langchain_tool_errors.handlers import report_type_only as report_type_only

__all__ = [
    "LOGGER",
    "alog_handled",
    "log_handled",
    "report_invalid_fields",
    "report_kind_only",
    "report_known_tools",
    "report_messages_of",
    "report_type_only",
]
