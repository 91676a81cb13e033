"""The package as users get it: built, checked, installed from the wheel, and type-checked.

The sdist and wheel are built with `python -m build` and checked with `twine check`. The
wheel is installed (not editable) into a fresh virtual environment, and a small consumer
module is type-checked against that installation by mypy --strict and pyright strict, with
none of this repository's stubs, typings or configuration: PEP 561 as users meet it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests._processes import ROOT, run_python
from tests.conftest import FIGURES

pytestmark = pytest.mark.static

CONSUMER = '''\
"""A user's module: configuration and handlers typed against the installed package."""

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import assert_type

from langchain_tool_errors import AsyncOnly, SyncCapable, ToolErrorMiddleware
from langchain_tool_errors.handlers import log_handled, report_type_only


def explain(exc: TimeoutError, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} timed out; try once more."


async def aexplain(exc: Exception, request: ToolCallRequest) -> str:
    return f"{request.tool_call['name']} failed with {type(exc).__name__}."


timeouts = ToolErrorMiddleware(explain, exceptions=TimeoutError, tools=["search"])
assert_type(timeouts, ToolErrorMiddleware[str, TimeoutError, SyncCapable])
assert_type(timeouts.exceptions, tuple[type[TimeoutError], ...])
async_only = ToolErrorMiddleware(aon_error=aexplain, name="async_errors")
assert_type(async_only, ToolErrorMiddleware[str, Exception, AsyncOnly])
logged = ToolErrorMiddleware(log_handled(report_type_only))
assert_type(logged, ToolErrorMiddleware[str, Exception, SyncCapable])
'''


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run_python("-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT))
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob("*.whl")
    return wheel


def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    checked = run_python("-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir())))

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_typed_package_and_its_license_and_no_tests(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = wheel.namelist()
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = wheel.read(metadata).decode()

    # The public package and the private one holding the implementation, both typed.
    for package in ("langchain_tool_errors", "_langchain_tool_errors"):
        assert f"{package}/py.typed" in names
        assert f"{package}/__init__.py" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-File: LICENSE" in fields.splitlines()
    assert "License-Expression: MIT" in fields.splitlines()
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n]
    FIGURES.append(f"wheel: {len(names)} files: {', '.join(sorted(names))}")


def test_the_wheel_offers_opentelemetry_as_the_otel_extra_alone(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        [metadata] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        fields = wheel.read(metadata).decode().splitlines()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    opentelemetry = [f for f in fields if f.startswith("Requires-Dist: opentelemetry")]

    # `langchain_tool_errors.telemetry`'s ImportError names this extra.
    assert "Provides-Extra: otel" in fields
    assert declared["optional-dependencies"]["otel"] == ["opentelemetry-api>=1.16.0"]
    assert "Requires-Dist: opentelemetry-api>=1.16.0; extra == 'otel'" in opentelemetry
    # Never a dependency of the package itself: only of an extra.
    assert all("; extra == " in requirement for requirement in opentelemetry)


def test_the_readme_installs_build_before_it_builds_the_wheel_it_installs(dist: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") : readme.index("## Quick start")]
    [command] = [line for line in install.splitlines() if "python -m build" in line]
    steps = [step.strip() for step in command.split("&&")]

    assert steps[0] == "pip install build"
    assert steps[1].startswith("python -m build --wheel ")
    assert steps[2].endswith(f"/dist/{_wheel(dist).name}")


CHECKOUT = "/path/to/langchain-tool-errors"
"""How the docs write a checkout of this repository, in an install command."""

PUBLISHED_LATER = "Once it is published, `pip install langchain-tool-errors` will be the command."
"""The one install command that does not work yet, and says so."""


def install_commands() -> list[tuple[str, list[str]]]:
    """Every `pip install` in the README, the guides and the reference, with its arguments.

    From code blocks and inline code alike: each `&&`-separated step that runs pip.
    """
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: list[tuple[str, list[str]]] = []
    for page in pages:
        text = page.read_text(encoding="utf-8").replace(PUBLISHED_LATER, "")
        shell = False  # inside a fenced block of shell commands
        for number, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith("```"):
                shell = not shell and line.strip() in {"```bash", "```sh", "```shell"}
                continue
            spans = [line] if shell else re.findall(r"`([^`]*pip install[^`]*)`", line)
            for span in spans:
                for step in span.split("&&"):
                    words = shlex.split(step.split("#")[0])
                    if "pip" in words and words[words.index("pip") + 1 :][:1] == ["install"]:
                        where = f"{page.relative_to(ROOT)}:{number}"
                        found.append((where, words[words.index("pip") + 2 :]))
    return found


def test_every_install_command_in_the_docs_installs_as_written() -> None:
    commands = install_commands()
    resolved = 0
    for where, arguments in commands:
        requirements = [a for a in arguments if not a.startswith("-")]
        assert requirements, where
        if any(r.endswith(".whl") for r in requirements):
            continue  # the wheel the README builds: installed by the test after this one
        assert not any(re.match(r"langchain[-_]tool[-_]errors\b", r) for r in requirements), (
            f"{where}: the package is not on an index; install it from {CHECKOUT}"
        )
        local = [r.replace(CHECKOUT, str(ROOT)).replace(".[", f"{ROOT}[") for r in requirements]
        local = [str(ROOT) if r == "." else r for r in local]
        done = run_python("-m", "pip", "install", "--dry-run", "--quiet", *local, timeout=600)
        assert done.returncode == 0, f"{where}: pip install {' '.join(arguments)}\n{done.stderr}"
        assert "does not provide the extra" not in done.stderr, f"{where}: {done.stderr}"
        resolved += 1
    assert resolved >= 6, commands
    FIGURES.append(
        f"install commands in the docs: {len(commands)} found, {resolved} resolved by pip "
        "as written (a checkout's path for the package), the wheel's built and installed"
    )


def test_the_sdist_holds_the_license(dist: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()

    assert any(n.endswith("/LICENSE") for n in names)
    assert any(n.endswith("/src/langchain_tool_errors/py.typed") for n in names)


def _run(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, encoding="utf-8", check=False, timeout=600
    )


def test_a_consumer_type_checks_against_the_installed_wheel(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert run_python("-m", "venv", str(venv)).returncode == 0
    python = str(venv / "bin" / "python")
    installed = _run(python, "-m", "pip", "install", "-q", str(_wheel(dist)), cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    project = tmp_path / "consumer"
    project.mkdir()
    (project / "consumer.py").write_text(CONSUMER, encoding="utf-8")
    (project / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    tools = Path(sys.executable).parent

    mypy = _run(
        str(tools / "mypy"), "--strict", "--no-incremental", "--python-executable", python,
        "consumer.py", cwd=project,
    )  # fmt: skip
    pyright = _run(str(tools / "pyright"), "--pythonpath", python, cwd=project)
    location = _run(
        python, "-c", "import langchain_tool_errors as m; print(m.__file__)", cwd=project
    )

    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    assert "Success: no issues found in 1 source file" in mypy.stdout
    assert pyright.returncode == 0, pyright.stdout + pyright.stderr
    assert "0 errors, 0 warnings" in pyright.stdout
    assert str(venv) in location.stdout, "the wheel is installed, not the checkout"


def _floors(requirements: list[str]) -> dict[str, str]:
    floors: dict[str, str] = {}
    for requirement in requirements:
        match = re.fullmatch(r"([a-z-]+)>=([\d.]+).*", requirement)
        if match:
            floors[match[1]] = match[2]
    return floors


def test_the_lowest_constraints_are_the_declared_floors() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared: list[str] = project["dependencies"]
    floors = _floors(declared)
    assert len(floors) == len(declared), "every dependency has a lower bound"
    tested = _floors(project["optional-dependencies"]["test"])
    pinned = dict(
        line.split("==")
        for line in (ROOT / "constraints-lowest.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )

    # Every dependency at its floor; beside them, only test-extra packages whose own
    # floor must be proven too (deepagents), each at that floor.
    assert {name: pinned.get(name) for name in floors} == floors
    extra = {name: version for name, version in pinned.items() if name not in floors}
    assert extra == {name: tested.get(name) for name in extra}
    assert "deepagents" in extra
