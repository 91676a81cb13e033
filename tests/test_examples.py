"""Every script in examples/ runs offline and prints exactly what its recorded output shows.

The recorded outputs live in tests/examples_output/<example>.txt. The scripted model makes
each run deterministic, so any change in what an example prints fails here; if the change
is intended, rerun the example and record its new output.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests._first_errors import run_as_user, venv_with
from tests._processes import ROOT, run_python
from tests.conftest import FIGURES

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
RECORDED = ROOT / "tests" / "examples_output"

REQUIRED_EXAMPLES = [  # the scripts the docs promise
    "quickstart",
    "async_handler",
    "exception_routing",
    "per_tool_policies",
    "content_blocks",
    "safe_messages",
    "with_retry",
    "routes",
    "budget",
    "failures",
    "observability",
    "recovery",
]


def test_every_example_has_a_recorded_output_and_every_output_an_example() -> None:
    names = {path.stem for path in EXAMPLES}
    assert names == {path.stem for path in RECORDED.glob("*.txt")}
    assert set(REQUIRED_EXAMPLES) <= names
    FIGURES.append(f"examples: {len(names)} scripts run, each output compared line by line")


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_example_runs_and_prints_its_recorded_output(example: Path) -> None:
    done = run_python(str(example.relative_to(ROOT)))

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    expected = (RECORDED / f"{example.stem}.txt").read_text(encoding="utf-8")
    assert done.stdout.splitlines() == expected.splitlines()


def test_the_failures_guide_quotes_its_example_as_it_prints() -> None:
    guide = (ROOT / "docs" / "guides" / "failures.md").read_text(encoding="utf-8")
    quoted = guide.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    printed = (RECORDED / "failures.txt").read_text(encoding="utf-8").splitlines()

    assert quoted
    assert all(line in printed for line in quoted), [line for line in quoted if line not in printed]


def test_the_recovery_guide_quotes_its_example_as_it_prints() -> None:
    guide = (ROOT / "docs" / "guides" / "recovery.md").read_text(encoding="utf-8")
    quoted = guide.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    printed = (RECORDED / "recovery.txt").read_text(encoding="utf-8").splitlines()

    assert len(quoted) > 5
    assert all(line in printed for line in quoted), [line for line in quoted if line not in printed]


def test_the_budgets_guide_quotes_its_example_as_it_prints() -> None:
    guide = (ROOT / "docs" / "guides" / "budgets.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in guide.split("```text\n")[1:]]
    printed = (RECORDED / "budget.txt").read_text(encoding="utf-8").splitlines()
    quoted = [line for block in blocks for line in block.splitlines() if line != "..."]

    assert len(blocks) == 2
    assert all(line in printed for line in quoted), [line for line in quoted if line not in printed]


def test_the_observability_guide_quotes_the_examples_real_spans() -> None:
    guide = (ROOT / "docs" / "guides" / "observability.md").read_text(encoding="utf-8")
    quoted = guide.split("```text\n", 1)[1].split("```", 1)[0]
    recorded = (RECORDED / "observability.txt").read_text(encoding="utf-8")

    assert quoted.strip().splitlines()[0].startswith("OpenTelemetry spans")
    assert quoted in recorded


NEEDS_THE_SDK = "observability"
"""The one script the Quick start's first command does not bring all it needs for."""


def _in_venv(python: Path, example: Path) -> subprocess.CompletedProcess[str]:
    """The example run by `python`, from the repository root, as the Examples guide says."""
    return run_as_user([str(python), str(example.relative_to(ROOT))], ROOT)


@pytest.fixture(scope="module")
def quick_start_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with what the Quick start's first command installs: the package alone."""
    return venv_with(tmp_path_factory.mktemp("quick-start"), str(ROOT))


@pytest.mark.static
def test_every_example_runs_in_the_venv_the_examples_guide_names(quick_start_python: Path) -> None:
    for example in EXAMPLES:
        if example.stem == NEEDS_THE_SDK:
            continue
        done = _in_venv(quick_start_python, example)
        assert done.returncode == 0, f"{example.name}: {done.stderr}"
        expected = (RECORDED / f"{example.stem}.txt").read_text(encoding="utf-8")
        assert done.stdout.splitlines() == expected.splitlines(), example.name

    # The one exception, as the guide and the script say: it needs the OpenTelemetry SDK,
    # and runs once the guide's install command has brought it.
    observability = ROOT / "examples" / f"{NEEDS_THE_SDK}.py"
    missing = _in_venv(quick_start_python, observability)
    assert missing.returncode != 0
    assert "No module named 'opentelemetry" in missing.stderr
    venv_with(quick_start_python.parents[2], f"{ROOT}[otel]", "opentelemetry-sdk")
    done = _in_venv(quick_start_python, observability)
    assert done.returncode == 0, done.stderr
    expected = (RECORDED / f"{NEEDS_THE_SDK}.txt").read_text(encoding="utf-8")
    assert done.stdout.splitlines() == expected.splitlines()
    FIGURES.append(
        f"examples: {len(EXAMPLES)} scripts run in a venv of the package alone "
        "(observability.py once the guide's OpenTelemetry install has run)"
    )
