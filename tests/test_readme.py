"""Every Python block in the README type-checks in both checkers and runs; quoted output is real.

- An ordinary block is checked as a module: the given names (`GIVEN`, which the README's
  Usage section lists), then the functions, classes and imports of the blocks above it (the
  README reads as one story), then the block. mypy --strict and pyright strict must report
  nothing, and every block must then run.
- The block marked `<!-- checked: the errors below -->` holds mistakes: it is checked on its
  own, and the `text` block after it must be exactly what each checker prints for it.
- The demo transcript in the Quick start must be what `python -m langchain_tool_errors` prints.
- Runtime messages the README quotes must be the ones the package raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._markdown import Block, fenced_blocks
from tests._processes import ROOT, run_python
from tests._snippets import Snippet, definitions, module_text, run_all, type_check
from tests.conftest import FIGURES

README = ROOT / "README.md"
MISTAKES = "<!-- checked: the errors below -->"

GIVEN = definitions(
    """
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware
from langchain_tool_errors.testing import ScriptedChatModel

model = ScriptedChatModel(script=[AIMessage("done")])


@tool
def search(query: str) -> str:
    \"\"\"Search the web.\"\"\"
    return f"results for {query}"


@tool
def lookup(record_id: str) -> str:
    \"\"\"A record by id.\"\"\"
    return f"record {record_id}"


lookup_tool = lookup


class AuditLog:
    async def record(self, exc: Exception) -> None:
        \"\"\"Write an audit record.\"\"\"


audit_log = AuditLog()
""",
    assignments=True,
)
"""What every README block may use without defining it (the README's Usage section says so)."""


def _python_blocks() -> list[Block]:
    return [block for block in fenced_blocks(README) if block.language == "python"]


def _modules(directory: Path) -> list[tuple[Path, Snippet]]:
    """One module per ordinary block, written to `directory`."""
    modules: list[tuple[Path, Snippet]] = []
    earlier: dict[str, str] = {}
    for number, block in enumerate(_python_blocks(), start=1):
        if block.marker == MISTAKES:
            continue  # a file of its own: see the next test
        path = directory / f"readme_block_{number:02d}.py"
        path.write_text(module_text({**GIVEN, **earlier}, block.text), encoding="utf-8")
        modules.append((path, Snippet(block.text, f"README.md block at line {block.line}")))
        earlier.update(definitions(block.text))
    return modules


@pytest.mark.static
def test_every_python_block_type_checks_in_both_checkers(tmp_path: Path) -> None:
    modules = _modules(tmp_path)

    checked = type_check(modules)

    assert checked.mypy.returncode == 0, checked.where + "\n" + checked.mypy.stdout
    assert checked.pyright.returncode == 0, checked.where + "\n" + checked.pyright.stdout
    FIGURES.append(f"README: {len(modules)} Python blocks type-checked by mypy and pyright")


def test_every_python_block_runs(tmp_path: Path) -> None:
    modules = _modules(tmp_path)

    ran = run_all(modules)

    assert ran.returncode == 0, ran.stderr
    FIGURES.append(f"README: {len(modules)} Python blocks run")


def _mypy_errors(path: Path) -> list[str]:
    done = run_python(
        "-m", "mypy", "--config-file", str(ROOT / "mypy.ini"), "--no-incremental",
        "--no-error-summary", "--hide-error-context", str(path),
    )  # fmt: skip
    prefix = f"{path}:"
    return [
        line.replace(prefix, f"{path.name}:", 1)
        for line in done.stdout.splitlines()
        if ": error:" in line
    ]


def _pyright_errors(path: Path) -> list[str]:
    done = run_python("-m", "pyright", "-p", "pyproject.toml", "--outputjson", str(path))
    report = json.loads(done.stdout)
    return [
        f"{path.name}:{d['range']['start']['line'] + 1}:{d['range']['start']['character'] + 1}"
        f" - {d['severity']}: {d['message'].splitlines()[0]} ({d['rule']})"
        for d in report["generalDiagnostics"]
    ]


@pytest.mark.static
def test_the_type_checking_section_shows_what_each_checker_really_prints(tmp_path: Path) -> None:
    blocks = fenced_blocks(README)
    index = next(i for i, block in enumerate(blocks) if block.marker == MISTAKES)
    mistakes, shown = blocks[index], blocks[index + 1]
    path = tmp_path / "mistakes.py"
    path.write_text(mistakes.text, encoding="utf-8")

    printed = [
        "$ mypy --strict mistakes.py",
        *_mypy_errors(path),
        "",
        "$ pyright mistakes.py",
        *_pyright_errors(path),
    ]

    assert shown.language == "text"
    assert shown.text.splitlines() == printed, "\n".join(printed)
    FIGURES.append(
        f"README: {len(printed) - 3} checker errors quoted, captured from mypy and pyright"
    )


def test_the_quick_start_transcript_is_what_the_demo_prints() -> None:
    start = README.read_text(encoding="utf-8").index("## Quick start")
    quick_start = README.read_text(encoding="utf-8")[:start].count("\n") + 1
    shown = next(
        block
        for block in fenced_blocks(README)
        if block.language == "text" and block.line > quick_start
    )

    done = run_python("-m", "langchain_tool_errors")

    assert done.returncode == 0, done.stderr
    transcript = done.stdout.splitlines()[2:]  # after the title and a blank line
    assert shown.text.splitlines() == transcript
