"""The test MCP server's tools, loaded through langchain's own MCP adapter over stdio.

`mcp_tools()` starts `python -m tests._mcp_server` with this interpreter from the
repository root, loads its tools with `langchain.mcp.MCPAdapter`, and stops the server when
the block ends. The tools are async-only: run them in an agent with `ainvoke`.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastmcp.client.transports import StdioTransport
from langchain_core._api import LangChainBetaWarning
from langchain_core.tools import BaseTool

from tests._processes import ROOT

with warnings.catch_warnings():
    # Importing `langchain.mcp` warns once that the namespace is in beta; these tests use
    # it on purpose. (langchain 1.5.0 warns even under `suppress_langchain_beta_warning`.)
    warnings.simplefilter("ignore", LangChainBetaWarning)
    from langchain.mcp import MCPAdapter

SERVER_MODULE = "tests._mcp_server"
"""The server, as `python -m` runs it."""


def server_transport() -> StdioTransport:
    """The stdio transport that starts the test server in a child process.

    The child inherits only the MCP SDK's safe default environment, so the repository root
    is put on its PYTHONPATH explicitly for `tests._mcp_server` to import.
    """
    inherited = os.environ.get("PYTHONPATH")
    pythonpath = str(ROOT) if not inherited else os.pathsep.join([str(ROOT), inherited])
    return StdioTransport(
        command=sys.executable,
        args=["-m", SERVER_MODULE],
        env={"PYTHONPATH": pythonpath},
        cwd=str(ROOT),
        # Stop the server when the last connection closes, not when this object is freed.
        keep_alive=False,
    )


@asynccontextmanager
async def mcp_tools() -> AsyncGenerator[list[BaseTool], None]:
    """The server's tools (`lookup`, `divide`, `echo`), callable until the block ends.

    The adapter's connection stays open for the whole block, so the tools' calls share one
    server process; leaving the block closes the connection, which ends that process.
    """
    async with MCPAdapter(server_transport()) as adapter:
        yield await adapter.list_tools()
