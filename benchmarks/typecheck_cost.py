"""What this package costs a user's type checker, against langchain's own class.

Run: `.venv/bin/python benchmarks/typecheck_cost.py` (add `--quick` for one round).

Two consumer modules do the same thing, one with `langchain_tool_errors.ToolErrorMiddleware`
and one with langchain's `ToolErrorMiddleware`: a sync and an async handler, a tool filter,
the middleware in `create_agent`. mypy (`--strict`, a fresh cache directory each time, so
every run is cold) and pyright (strict) check each module on its own, in a scratch directory
with none of this repository's configuration. Each figure is the best wall time of several
rounds, with the two modules interleaved; the ratio is ours / langchain's. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

COMMON = '''\
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest


@tool
def search(query: str) -> str:
    """Search for `query`."""
    raise TimeoutError(query)


def explain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} failed with {type(exc).__name__}."


async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
    return explain(exc, request)


model = FakeListChatModel(responses=["done"])
'''

MODULES = {
    "ours": COMMON
    + """
from langchain_tool_errors import ToolErrorMiddleware

middleware = ToolErrorMiddleware(explain, aon_error=aexplain, tools=["search"])
agent = create_agent(model, tools=[search], middleware=[middleware])
""",
    "langchain's": COMMON
    + """
from langchain.agents.middleware import ToolErrorMiddleware

middleware = ToolErrorMiddleware(explain, aon_error=aexplain, tools=["search"])
agent = create_agent(model, tools=[search], middleware=[middleware])
""",
}

TOOLS = Path(sys.executable).parent


def _mypy(module: Path) -> list[str]:
    cache = Path(tempfile.mkdtemp(prefix="mypy-cache-", dir=module.parent))
    return [
        str(TOOLS / "mypy"), "--strict", "--cache-dir", str(cache),
        "--python-executable", sys.executable, module.name,
    ]  # fmt: skip


def _pyright(module: Path) -> list[str]:
    return [str(TOOLS / "pyright"), "--pythonpath", sys.executable, module.name]


CHECKERS = {"mypy --strict, cold cache": _mypy, "pyright strict": _pyright}


def _seconds(command: list[str], cwd: Path) -> tuple[float, bool]:
    """The wall time of one check, and whether it reported no error."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start, done.returncode == 0


def main(argv: Sequence[str]) -> int:
    """Time each checker on each consumer module and print the table."""
    parser = argparse.ArgumentParser(description="Type-checking cost against langchain's class.")
    parser.add_argument("--quick", action="store_true", help="one round, for a smoke run")
    rounds = 1 if parser.parse_args(argv).quick else 3
    scratch = Path(tempfile.mkdtemp(prefix="typecheck-cost-"))
    try:
        paths: dict[str, Path] = {}
        for name, source in MODULES.items():
            directory = scratch / name.replace("'", "")
            directory.mkdir()
            (directory / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
            paths[name] = directory / "consumer.py"
            paths[name].write_text(source, encoding="utf-8")
        print(f"Python {sys.version.split()[0]}; best of {rounds} round(s), wall time")
        print(f"{'checker':32}{'ours':>10}{'langchain':>12}{'ratio':>8}")
        for checker, command in CHECKERS.items():
            best = dict.fromkeys(MODULES, float("inf"))
            clean = dict.fromkeys(MODULES, True)
            for _ in range(rounds):
                for name, path in paths.items():
                    seconds, ok = _seconds(command(path), path.parent)
                    best[name], clean[name] = min(best[name], seconds), clean[name] and ok
            ours, theirs = best["ours"], best["langchain's"]
            errors = [name for name, ok in clean.items() if not ok]
            note = f"  (errors reported for: {', '.join(errors)})" if errors else ""
            print(f"{checker:32}{ours:>9.2f}s{theirs:>11.2f}s{ours / theirs:>8.2f}{note}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
