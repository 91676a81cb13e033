"""A tiny MCP server over stdio, for the tests that load MCP tools into a real agent.

Run it as `python -m tests._mcp_server` from the repository root. It serves three tools:
`lookup`, whose record 7 comes back as an MCP error result (`isError: true`) and every
other record as a plain success; `divide`, whose division by zero comes back as an error
result (and whose arguments the server itself checks against its schema, answering a
refused one with an error result too); and `echo`, which always succeeds.

It uses the `mcp` SDK's own server (`MCPServer`, the SDK 2 name of its FastMCP layer).
`lookup` builds its `CallToolResult` itself: a tool that raises the SDK's `ToolError`
also gets an error result, but with "Error executing tool lookup: " before its message,
and the tests want the server's text exactly as written here.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

ARCHIVED_RECORD = 7
"""The record `lookup` reports as archived, with an error result."""

server: MCPServer[object] = MCPServer("langchain-tool-errors-tests")


def _text(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


@server.tool()
def lookup(record_id: int) -> CallToolResult:
    """Look a record up by its id."""
    if record_id == ARCHIVED_RECORD:
        return _text(f"record {record_id} is archived", is_error=True)
    return _text(f"record {record_id}: ok")


@server.tool()
def divide(a: int, b: int) -> CallToolResult:
    """Divide `a` by `b`."""
    if b == 0:
        return _text("cannot divide by zero", is_error=True)
    return _text(f"{a / b}")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run("stdio")
