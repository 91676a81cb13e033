"""What each type checker prints for a module, run as a user runs it in a project of theirs.

The project is a fresh directory with a virtual environment of its own, `.venv`, into which
pip installs this package and the five checkers, as a user installs them. Each checker runs
from the project directory as `.venv/bin/<checker>`, with no environment activated: no
`VIRTUAL_ENV`, and no virtual environment's bin directory on PATH. So a checker finds the
installed package only if the project's configuration leads it there. Each error is reduced
to its first line, in the checker's own format, with the directory left out of the path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

from tests._processes import ROOT

VENV_BIN = Path(".venv") / "bin"

COMMANDS = {
    "mypy": f"{VENV_BIN / 'mypy'}",
    "pyright": f"{VENV_BIN / 'pyright'}",
    "basedpyright": f"{VENV_BIN / 'basedpyright'}",
    "pyrefly": f"{VENV_BIN / 'pyrefly'} check",
    "ty": f"{VENV_BIN / 'ty'} check",
}
"""Each checker as a user runs it from the project directory (the guide quotes these)."""


def _checker_requirements() -> list[str]:
    """The five checkers at the exact versions the `dev` extra pins (the guide quotes them)."""
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["dev"]
    return [
        requirement
        for requirement in dev
        if re.split(r"[\[=<>~ ]", requirement, maxsplit=1)[0] in COMMANDS
    ]


def create_project(directory: Path) -> Path:
    """A new project in `directory`: `python -m venv .venv`, then pip installs the package
    and the checkers into it.

    The package's dependencies are held to the versions of this environment, so that the
    messages, which name langchain's types, are the ones the guide quotes.
    """
    venv_with(directory, str(ROOT), *_checker_requirements())
    return directory


def venv_with(directory: Path, *requirements: str) -> Path:
    """`directory/.venv` (made if it is not there yet) with `requirements` pip-installed
    into it, their dependencies held to this environment's versions; its python is returned.
    """
    directory.mkdir(parents=True, exist_ok=True)
    constraints = directory / "constraints.txt"
    if not constraints.exists():
        frozen = subprocess.run(
            [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
            capture_output=True,
            encoding="utf-8",
            check=True,
        )
        constraints.write_text(frozen.stdout, encoding="utf-8")
    python = directory / VENV_BIN / "python"
    if not python.exists():
        subprocess.run(
            [sys.executable, "-m", "venv", ".venv"], cwd=directory, check=True, timeout=300
        )
    pip = (str(python), "-m", "pip", "install", "--quiet", "--constraint", str(constraints))
    installed = subprocess.run(
        [*pip, *requirements],
        cwd=directory,
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=900,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python


def user_environment() -> dict[str, str]:
    """This process's environment as a shell with no virtual environment activated has it."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "PYTHONPATH"}
    }
    environment["PATH"] = os.pathsep.join(
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not (Path(entry).parent / "pyvenv.cfg").exists()
    )
    environment["NO_COLOR"] = "1"
    return environment


def run_as_user(command: list[str], directory: Path) -> subprocess.CompletedProcess[str]:
    """`command` run from `directory` as a user's shell runs it (`user_environment`)."""
    return subprocess.run(
        command,
        cwd=directory,
        env=user_environment(),
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=600,
    )


def _run(project: Path, checker: str, *arguments: str) -> str:
    return run_as_user([*COMMANDS[checker].split(), *arguments], project).stdout


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
    out = _run(project, "pyrefly", "--output-format", "min-text", *files)
    return [line for line in out.splitlines() if line.startswith("ERROR ")]


def _ty(project: Path, files: list[str]) -> list[str]:
    out = _run(project, "ty", "--output-format", "concise", *files)
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
