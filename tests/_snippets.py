"""Checking code snippets as users would copy them: both type checkers, then a run.

A snippet becomes a module of its own: the names it may take as given, then the snippet.
mypy --strict and pyright strict (with this repository's configuration) must report nothing
on any of them, and each must then run.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests._processes import run_python

UNUSED_GIVEN = "# pyright: reportUnusedImport=false\n"
"""A snippet uses some of the given imports, not all: only that is relaxed, in snippets."""


@dataclass(frozen=True)
class Snippet:
    """Code to check, and where it came from (for failure messages)."""

    code: str
    origin: str


def definitions(code: str, *, assignments: bool = False) -> dict[str, str]:
    """The code's top-level imports, functions and classes, each by a key unique to it.

    With `assignments`, top-level assignments too, by the name assigned. Whole lines, with
    decorators, so a trailing comment (such as a pyright ignore) comes along.
    """
    lines = code.splitlines()
    found: dict[str, str] = {}
    for node in ast.parse(code).body:
        source = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            found[node.name] = "\n".join(lines[first - 1 : node.end_lineno])
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found[f"import {source}"] = source
        elif assignments and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = source
    return found


def module_text(given: Mapping[str, str], code: str) -> str:
    """`code` after the given definitions it does not define itself."""
    own = definitions(code, assignments=True)
    # Imports always stay: a given definition may need one that the snippet repeats.
    kept = [source for key, source in given.items() if key.startswith("import ") or key not in own]
    return "\n\n".join([UNUSED_GIVEN + "from __future__ import annotations", *kept, code])


@dataclass(frozen=True)
class Checked:
    """What the two checkers said, and which snippet each line of their output is about."""

    mypy: subprocess.CompletedProcess[str]
    pyright: subprocess.CompletedProcess[str]
    where: str

    def assert_clean(self) -> None:
        """Both checkers passed every module; else fail with what each said, and where."""
        assert self.mypy.returncode == 0, self.where + "\n" + self.mypy.stdout
        assert self.pyright.returncode == 0, self.where + "\n" + self.pyright.stdout


def _where(modules: Sequence[tuple[Path, Snippet]], output: str) -> str:
    origins = {path.name: snippet.origin for path, snippet in modules}
    return "\n".join(
        f"{line}    <- {origin}"
        for line in output.splitlines()
        for name, origin in origins.items()
        if name in line
    )


def type_check(modules: Sequence[tuple[Path, Snippet]]) -> Checked:
    """Type-check every module in mypy --strict and pyright strict."""
    files = [str(path) for path, _ in modules]
    mypy = run_python("-m", "mypy", "--config-file", "mypy.ini", "--no-incremental", *files)
    pyright = run_python("-m", "pyright", "-p", "pyproject.toml", *files)
    return Checked(mypy, pyright, _where(modules, mypy.stdout + pyright.stdout))


def run_all(
    modules: Sequence[tuple[Path, Snippet]], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run each module in turn, in one fresh process (`env` added to its environment)."""
    runner = "import runpy, sys\nfor path in sys.argv[1:]:\n    runpy.run_path(path)\n"
    return run_python("-c", runner, *[str(path) for path, _ in modules], env=env)
