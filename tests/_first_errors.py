"""What each type checker prints for a module, run as a user runs it in a project of theirs.

The project is a fresh directory holding a `pyproject.toml` and the modules; each checker
runs there with this interpreter's environment active (its bin directory leading PATH and
`VIRTUAL_ENV` set), so it finds the installed package and reads only that configuration.
Each error is reduced to its first line, in the checker's own format, with the directory
left out of the path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

COMMANDS = {
    "mypy": "mypy --strict",
    "pyright": "pyright",
    "basedpyright": "basedpyright",
    "pyrefly": "pyrefly check",
    "ty": "ty check",
}
"""Each checker, as the README shows the command a user types."""


def _run(project: Path, *command: str) -> str:
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": sys.prefix,
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [str(bin_dir / command[0]), *command[1:]],
        cwd=project,
        env=env,
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=600,
    )
    return done.stdout


def _mypy(project: Path, files: list[str]) -> list[str]:
    out = _run(project, "mypy", "--no-incremental", "--no-error-summary", *files)
    return [line for line in out.splitlines() if ": error:" in line]


def _pyright_like(checker: str) -> Callable[[Path, list[str]], list[str]]:
    def errors(project: Path, files: list[str]) -> list[str]:
        report = json.loads(_run(project, checker, "--outputjson", *files))
        return [
            f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}:"
            f"{d['range']['start']['character'] + 1} - {d['severity']}: "
            f"{d['message'].splitlines()[0]}" + (f" ({d['rule']})" if d.get("rule") else "")
            for d in report["generalDiagnostics"]
            if d["severity"] == "error"
        ]

    return errors


def _pyrefly(project: Path, files: list[str]) -> list[str]:
    out = _run(project, "pyrefly", "check", "--output-format", "min-text", *files)
    return [line for line in out.splitlines() if line.startswith("ERROR ")]


def _ty(project: Path, files: list[str]) -> list[str]:
    out = _run(project, "ty", "check", "--output-format", "concise", *files)
    return [line for line in out.splitlines() if ": error[" in line]


CHECKERS: dict[str, Callable[[Path, list[str]], list[str]]] = {
    "mypy": _mypy,
    "pyright": _pyright_like("pyright"),
    "basedpyright": _pyright_like("basedpyright"),
    "pyrefly": _pyrefly,
    "ty": _ty,
}


def first_errors(project: Path, files: list[str]) -> dict[str, list[str]]:
    """Each checker's errors for `files` (names relative to `project`), first lines only."""
    return {name: errors(project, files) for name, errors in CHECKERS.items()}


def line_of(error: str) -> tuple[str, int]:
    """The file name and line number an error line points at, in any checker's format."""
    location = error.removeprefix("ERROR ").split(" ", 1)[0]
    name, line = location.split(":")[:2]
    return name, int(line)
