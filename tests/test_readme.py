"""Every Python block of the README and the guides type-checks and runs; quoted output is real.

The README and the guides under `docs/guides/` (in the site's navigation order) are checked
block by block:

- Every block is checked as a module of its own, as a reader who copies it runs it: the
  given `model`, tools and `audit_log` (`GIVEN`, which the handlers guide names), then the
  block, which imports every other name it uses. mypy --strict and pyright strict must
  report nothing, and every block must then run.
- The blocks marked `<!-- checked: the configuration below -->` are a `pyproject.toml` a user
  copies: in a fresh project whose own `.venv` has the package and the five checkers
  pip-installed, every checker run from there, with no environment activated, finds the
  package with that configuration.
- The block marked `<!-- checked: the errors below -->` holds mistakes: each is checked alone
  (the others blanked out), in that project and configuration, and the `text` block after it
  must be exactly what each checker prints for each.
- The demo transcript in the Quick start must be every line `python -m langchain_tool_errors`
  prints.
- Runtime messages the guides quote must be the ones the package raises.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._first_errors import COMMANDS, create_project, first_errors, line_of
from tests._loopback import Loopback
from tests._markdown import Block, fenced_blocks
from tests._processes import ROOT, run_python
from tests._snippets import Snippet, definitions, module_text, run_all, type_check
from tests._wire_openai import FINAL_ANSWER, tool_results
from tests._wire_openai import script as openai_script
from tests.conftest import FIGURES

README = ROOT / "README.md"


def _pages() -> list[Path]:
    """The README, then the guides in the order of the site's navigation (mkdocs.yml)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    guides = re.findall(r"^\s+- (guides/[\w-]+\.md)$", config, flags=re.MULTILINE)
    return [README, *(ROOT / "docs" / guide for guide in guides)]


PAGES = _pages()
MISTAKES = "<!-- checked: the errors below -->"
CONFIGURATION = "<!-- checked: the configuration below -->"

GIVEN = definitions(
    """
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

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
"""What every block may use without defining it (the handlers guide says so)."""


def _blocks() -> list[tuple[Path, Block]]:
    return [(page, block) for page in PAGES for block in fenced_blocks(page)]


def _python_blocks() -> list[tuple[Path, Block]]:
    return [(page, block) for page, block in _blocks() if block.language == "python"]


def _modules(directory: Path) -> list[tuple[Path, Snippet]]:
    """One module per ordinary block, written to `directory`."""
    modules: list[tuple[Path, Snippet]] = []
    for number, (page, block) in enumerate(_python_blocks(), start=1):
        if block.marker == MISTAKES:
            continue  # a file of its own: see the next test
        path = directory / f"docs_block_{number:02d}.py"
        path.write_text(module_text(GIVEN, block.text), encoding="utf-8")
        where = f"{page.relative_to(ROOT)} block at line {block.line}"
        modules.append((path, Snippet(block.text, where)))
    return modules


@pytest.mark.static
def test_every_python_block_type_checks_in_both_checkers(tmp_path: Path) -> None:
    modules = _modules(tmp_path)

    checked = type_check(modules)

    assert checked.mypy.returncode == 0, checked.where + "\n" + checked.mypy.stdout
    assert checked.pyright.returncode == 0, checked.where + "\n" + checked.pyright.stdout
    FIGURES.append(
        f"README and {len(PAGES) - 1} guides: {len(modules)} Python blocks type-checked "
        "by mypy and pyright, each on its own"
    )


def test_every_python_block_runs(tmp_path: Path) -> None:
    modules = _modules(tmp_path)

    # The getting-started agent runs on a real `ChatOpenAI`, pointed (by the variables the
    # client reads) at OpenAI's API on 127.0.0.1: the model asks `customer` for customer 7,
    # then answers once the tool's result is sent.
    with Loopback(openai_script({"customer_id": "7"}, tool="customer")) as openai:
        ran = run_all(
            modules, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"{openai.url}/v1"}
        )

    assert ran.returncode == 0, ran.stderr
    assert FINAL_ANSWER in ran.stdout.splitlines()
    [answered] = [body for body in openai.bodies() if tool_results("chat_completions", body)]
    [result] = tool_results("chat_completions", answered)
    # The integration drops `status="error"`: the middleware marks what is sent.
    assert result["content"] == "Error: Tool `customer` failed with KeyError."
    FIGURES.append(
        f"README and {len(PAGES) - 1} guides: {len(modules)} Python blocks run; the "
        f"getting-started agent on ChatOpenAI over loopback ({len(openai.bodies())} requests)"
    )


def _mistakes(text: str) -> dict[int, list[int]]:
    """Each numbered mistake (`# 1.` ...) and its lines: the marked line, and for an indented
    one the lines of its function from the `def` down."""
    lines = text.splitlines()
    mistakes: dict[int, list[int]] = {}
    for index, line in enumerate(lines):
        marker = re.search(r"  # (\d+)\. ", line)
        if marker is None:
            continue
        first = index
        while lines[first].startswith(" "):
            first -= 1
        mistakes[int(marker.group(1))] = list(range(first + 1, index + 2))
    return mistakes


def _configuration() -> str:
    """The guide's configuration blocks, one after the other, as one `pyproject.toml`."""
    blocks = [block.text for _, block in _blocks() if block.marker == CONFIGURATION]
    assert blocks, f"no block is marked {CONFIGURATION}"
    return "\n".join(blocks)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A user's fresh project: its own `.venv`, the package and the checkers pip-installed."""
    started = time.perf_counter()
    created = create_project(tmp_path_factory.mktemp("fresh") / "project")
    FIGURES.append(
        f"Fresh project: venv with the package and 5 checkers pip-installed in "
        f"{time.perf_counter() - started:.0f} s"
    )
    (created / "pyproject.toml").write_text(_configuration(), encoding="utf-8")
    yield created
    shutil.rmtree(created / ".venv")  # over half a gigabyte; the checked files stay


USES_THE_PACKAGE = """\
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import Route, ToolErrorMiddleware


def explain(exc: KeyError, request: ToolCallRequest) -> str:
    return f"no record {exc.args[0]!r}"


middleware = ToolErrorMiddleware.from_routes([Route(KeyError, explain)], name="lookup_errors")
"""


@pytest.mark.static
def test_the_configuration_to_copy_works_with_the_checkers_pip_installed_in_the_project(
    project: Path,
) -> None:
    (project / "uses_the_package.py").write_text(USES_THE_PACKAGE, encoding="utf-8")

    printed = first_errors(project, ["uses_the_package.py"])

    assert printed == {checker: [] for checker in printed}, "\n".join(
        f"{COMMANDS[checker]}: {error}" for checker, errors in printed.items() for error in errors
    )


@pytest.mark.static
def test_the_type_checking_section_shows_what_each_checker_really_prints(project: Path) -> None:
    blocks = [block for _, block in _blocks()]
    index = next(i for i, block in enumerate(blocks) if block.marker == MISTAKES)
    mistakes, shown = blocks[index], blocks[index + 1]
    (project / "mistakes.py").write_text(mistakes.text, encoding="utf-8")
    numbered = _mistakes(mistakes.text)
    for number, lines in numbered.items():
        # The same module with every other mistake blanked out: line numbers stay the same.
        alone = [
            line if n in lines or not any(n in other for other in numbered.values()) else ""
            for n, line in enumerate(mistakes.text.splitlines(), start=1)
        ]
        (project / f"alone_{number}.py").write_text("\n".join(alone) + "\n", encoding="utf-8")

    printed = first_errors(project, ["mistakes.py", *(f"alone_{n}.py" for n in numbered)])

    transcript: list[str] = []
    reworded: list[int] = []
    for checker, errors in printed.items():
        together = [e for e in errors if line_of(e)[0] == "mistakes.py"]
        caught = {
            n for n, lines in numbered.items() if any(line_of(e)[1] in lines for e in together)
        }
        assert caught == set(numbered), f"{checker} misses mistakes {set(numbered) - caught}"
        shown_errors: list[str] = []
        for number, lines in numbered.items():
            alone = [
                e.replace(f"alone_{number}.py", "mistakes.py", 1)
                for e in errors
                if line_of(e) in {(f"alone_{number}.py", n) for n in lines}
            ]
            assert alone, f"{checker} misses mistake {number} when it is alone"
            shown_errors += alone
            if alone != [e for e in together if line_of(e)[1] in lines]:
                # mypy words some mistakes by what it checked before them in the module
                # (the guide says which); every other checker prints the same line.
                assert checker == "mypy", f"{checker} prints another error for mistake {number}"
                reworded.append(number)
        transcript += [
            *([""] if transcript else []),
            f"$ {COMMANDS[checker]} mistakes.py",
            *sorted(shown_errors, key=lambda e: line_of(e)[1]),
        ]
    assert reworded == [13], "the guide says mypy words mistake 13 otherwise in one module"
    assert shown.language == "text"
    assert shown.text.splitlines() == transcript, "\n".join(transcript)
    FIGURES.append(
        f"Type checking guide: {len(transcript) - 2 * len(printed) + 1} checker errors quoted, "
        "captured from "
        f"{len(printed)} checkers pip-installed in a fresh project with the guide's "
        f"configuration, each mistake alone; mypy words mistakes {reworded} otherwise together"
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
    printed = done.stdout.splitlines()
    assert shown.text.splitlines() == printed, "the README must show every line, the title too"


def test_the_development_section_lists_every_module_of_the_package_and_no_other() -> None:
    text = README.read_text(encoding="utf-8")
    layout = text[text.index("## Development") :]
    layout = layout[: layout.index("\n```\n", layout.index("```text"))]
    for package in ("langchain_tool_errors", "_langchain_tool_errors"):
        start = layout.index(f"src/{package}/")
        listed = layout[start:].splitlines()[1:]
        block = listed[: next(i for i, line in enumerate(listed) if not line.startswith(" "))]
        names = {m.group(1) for line in block if (m := re.match(r"  (\w+\.py)\b", line))}
        present = {path.name for path in (ROOT / "src" / package).glob("*.py")}
        present.discard("__init__.py" if package.startswith("_") else "")
        assert names == present, f"{package}: listed {sorted(names ^ present)} differ"
