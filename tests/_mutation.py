"""Mutation testing of the core: `python -m tests._mutation` (a developer's command, not CI).

mutmut (configured under `[tool.mutmut]` in pyproject.toml) mutates the modules its
`only_mutate` lists (in `src/_langchain_tool_errors/`: the middleware, its three stages,
routes, budgets, the runtime checks and the safe handlers) and runs the fast behaviour
tests against each mutant. It skips decorated functions, and the middleware's hooks carry
`@override`, so this runner works on a copy of the repository in which the `@override`
lines of `middleware.py`, `routes.py` and `budget.py` are removed first (at run time
`override` only sets `__override__` on the function; nothing reads it). The hooks' logic
is then mutated like every other function.

Prints mutmut's survivors and one summary line: killed / total, and what survived. The copy
is left in a temporary directory, named at the end, for `mutmut show` and `mutmut browse`.

    python -m tests._mutation            # the whole run (about 85 minutes on 2 cores)
    python -m tests._mutation -k NAME    # only mutants whose name contains NAME (repeatable)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OVERRIDDEN = tuple(
    Path("src/_langchain_tool_errors") / name
    for name in ("middleware.py", "routes.py", "budget.py")
)
COPIED = ("src", "tests", "docs", "pyproject.toml", "mypy.ini", "README.md", "mkdocs.yml")
OVERRIDE_LINE = re.compile(r"^\s*@override\s*\n", flags=re.MULTILINE)


def prepare(destination: Path) -> int:
    """Copy the repository to `destination`, without `@override`; how many lines went."""
    ignore = shutil.ignore_patterns("__pycache__", ".langgraph_api", "mutants")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)
    removed = 0
    for path in OVERRIDDEN:
        module = destination / path
        text, count = OVERRIDE_LINE.subn("", module.read_text(encoding="utf-8"))
        module.write_text(text, encoding="utf-8")
        removed += count
    return removed


def mutmut(workdir: Path, *args: str, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `mutmut *args` in `workdir`; its output is returned, or shown when not captured."""
    return subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=workdir,
        check=False,
        encoding="utf-8",
        stdout=subprocess.PIPE if capture else None,
    )


def summary(workdir: Path) -> dict[str, int]:
    """mutmut's counts for the run in `workdir`."""
    mutmut(workdir, "export-cicd-stats")
    stats: dict[str, int] = json.loads(
        (workdir / "mutants" / "mutmut-cicd-stats.json").read_text(encoding="utf-8")
    )
    return stats


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests._mutation", description=__doc__)
    parser.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        help="only mutants whose name contains this (repeat it for several)",
    )
    options = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="tool-errors-mutation-"))
    removed = prepare(workdir)
    print(f"copied to {workdir}; removed {removed} @override lines")
    patterns: list[str] = options.patterns
    selection = [f"*{pattern}*" for pattern in patterns]
    run = mutmut(workdir, "run", "--max-children", "2", *selection, capture=False)
    if run.returncode != 0:
        return run.returncode
    survivors = mutmut(workdir, "results")
    print(survivors.stdout)
    stats = summary(workdir)
    killed = stats["killed"] + stats.get("timeout", 0) + stats.get("segfault", 0)
    run_count = killed + stats["survived"] + stats["no_tests"] + stats.get("suspicious", 0)
    print(
        f"mutation score: {killed} / {run_count} killed ({stats['total']} mutants in all); "
        f"survived {stats['survived']}, "
        f"no tests {stats['no_tests']}, suspicious {stats.get('suspicious', 0)}; "
        f"details: cd {workdir} && {sys.executable} -m mutmut show NAME"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
