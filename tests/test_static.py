"""The static guarantees, enforced by five checkers over the project: mypy, pyright,
basedpyright, pyrefly and ty, each at its strictest.

tests/typecheck/ holds the cases: the `case_accepted*.py` files must check clean, and each
marked line of the `case_rejected*.py` files must be an error in every checker (its ignores
would otherwise be unused, which every checker is configured to report). The summary at the
end of the run counts them.
"""

from __future__ import annotations

import ast
import re
import subprocess

import pytest

from tests._processes import ROOT, run_python
from tests.conftest import FIGURES

CASES = ROOT / "tests" / "typecheck"

pytestmark = pytest.mark.static


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return run_python("-m", *command)


def _must_fail_lines(marker: str) -> int:
    return sum(
        1
        for path in CASES.glob("case_rejected*.py")
        for line in path.read_text().splitlines()
        if marker in line and not line.startswith("#")
    )


def _must_pass_statements() -> int:
    trees = [ast.parse(path.read_text()) for path in CASES.glob("case_accepted*.py")]
    statements = [
        node
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign))
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    return len(statements)


CHECKERS = {
    # name: (command, what a clean run prints, the ignore that marks a must-fail line)
    "mypy --strict": (("mypy", "--no-incremental"), "Success: no issues found", "# type: ignore["),
    "pyright strict": (("pyright",), "0 errors, 0 warnings", "# pyright: ignore["),
    # basedpyright reads the same [tool.pyright] configuration and ignore comments; its
    # strict mode adds rules of its own.
    "basedpyright strict": (("basedpyright",), "0 errors, 0 warnings", "# pyright: ignore["),
    # ty and pyrefly: [tool.ty] and [tool.pyrefly] in pyproject.toml, unused ignores an
    # error. Neither flags the bare attribute access of an async-only middleware's
    # `wrap_tool_call` (only the call), so that one line has no ignore of theirs;
    # tests/typecheck/README.md lists it.
    "ty": (("ty", "check"), "All checks passed!", "# ty: ignore["),
    # pyrefly prints its summary ("0 errors", plus any warnings) on stderr.
    "pyrefly (strict preset)": (("pyrefly", "check"), "INFO 0 errors", "# pyrefly: ignore["),
}


@pytest.mark.parametrize("checker", CHECKERS)
def test_checker_reports_nothing_and_every_rejected_case_is_an_error(checker: str) -> None:
    command, clean, marker = CHECKERS[checker]

    result = _run(*command)

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert clean in output
    assert "warning" not in output.replace("0 warnings", ""), output
    FIGURES.append(
        f"{checker}: clean over src/, tests/, benchmarks/, examples/, docs/mkdocstrings/ "
        "and docs/hooks/; "
        f"{_must_pass_statements()} must-pass statements, "
        f"{_must_fail_lines(marker)} must-fail lines"
    )


def test_public_api_is_fully_typed_and_documented() -> None:
    result = _run("pyright", "--verifytypes", "langchain_tool_errors", "--ignoreexternal")

    score = re.search(r"Type completeness score: ([\d.]+)%", result.stdout)
    assert score is not None, result.stdout + result.stderr
    assert float(score.group(1)) == 100.0, result.stdout
    assert result.returncode == 0, result.stdout
    FIGURES.append(f"pyright --verifytypes: {score.group(1)}% type completeness")


def test_src_has_no_bare_ignores_and_every_ignore_says_why() -> None:
    for path in sorted((ROOT / "src").rglob("*.py")):
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, start=1):
            assert not re.search(r"#\s*type:\s*ignore(?!\[)", line), f"{path}:{number}"
            if "ignore[" in line or "cast(" in line:
                context = "\n".join(lines[max(0, number - 4) : number])
                assert "#" in context.replace("# pyright: ignore", "").replace(
                    "# type: ignore", ""
                ), f"{path}:{number} needs a comment saying why"


def test_ruff_lint_and_format_are_clean() -> None:
    code = ("src", "tests", "benchmarks", "examples", "docs/mkdocstrings", "docs/hooks")
    lint = _run("ruff", "check", *code)
    form = _run("ruff", "format", "--check", *code)

    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert form.returncode == 0, form.stdout + form.stderr
