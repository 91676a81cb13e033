"""Where the names of this package's private modules are public: what users read.

The implementation lives in `_langchain_tool_errors`, so Python names its classes by those
modules (`_langchain_tool_errors.record_types.ToolFailure`). A record's `error_type` names
them where users import them instead.
"""

from __future__ import annotations

_PUBLIC_MODULES = {
    "budget": "langchain_tool_errors",
    "failures": "langchain_tool_errors",
    "handler_types": "langchain_tool_errors",
    "middleware": "langchain_tool_errors",
    "modes": "langchain_tool_errors",
    "pausing": "langchain_tool_errors",
    "record_types": "langchain_tool_errors",
    "repair": "langchain_tool_errors",
    "routes": "langchain_tool_errors",
    "handlers": "langchain_tool_errors.handlers",
    "telemetry": "langchain_tool_errors.telemetry",
    "scripted_model": "langchain_tool_errors.testing",
    "transcript": "langchain_tool_errors.testing",
}
"""Each private module whose public names are re-exported, and the module they are read from."""


def public_module(module: str) -> str:
    """The module users import a class of `module` from (`module` itself if not ours)."""
    package, _, name = module.partition(".")
    if package != "_langchain_tool_errors":
        return module
    return _PUBLIC_MODULES.get(name, module)
