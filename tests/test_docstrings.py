"""Every public symbol documents itself with an example, and every example type-checks and runs.

IDE hover shows these docstrings, so their examples are checked like the README's: each
```python block becomes a module as written (`GIVEN` is empty: each example imports and
defines what it uses), then mypy --strict and pyright strict must report nothing and the module
must run.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import itertools
import re
import textwrap
from pathlib import Path

import pytest

from tests._processes import ROOT
from tests._snippets import Snippet, module_text, run_all, type_check
from tests.conftest import FIGURES

PUBLIC_MODULES = (
    "langchain_tool_errors",
    "langchain_tool_errors.handlers",
    "langchain_tool_errors.telemetry",
    "langchain_tool_errors.testing",
)
SOURCES = (ROOT / "src" / "langchain_tool_errors", ROOT / "src" / "_langchain_tool_errors")
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)

GIVEN: dict[str, str] = {}
"""Nothing: every example imports and defines what it uses, so it runs as a reader copies it."""


def _public_names() -> list[tuple[str, str]]:
    """(module, name) for every name in a public module's `__all__`."""
    return [
        (module, name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    ]


@functools.cache
def _attribute_docstrings() -> dict[str, str]:
    """Docstrings written under module-level assignments (type aliases, constants)."""
    found: dict[str, str] = {}
    for path in (path for source in SOURCES for path in source.glob("*.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, following in itertools.pairwise(body):
            if not (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = inspect.cleandoc(following.value.value)
    return found


def _docstring(module: str, name: str) -> str:
    value: object = getattr(importlib.import_module(module), name)
    if inspect.isclass(value) or inspect.isroutine(value):
        return inspect.getdoc(value) or ""
    return _attribute_docstrings().get(name, "")


def _documented() -> dict[str, str]:
    """Every docstring users see: public names, public modules, the middleware's methods."""
    docs = {f"{module}.{name}": _docstring(module, name) for module, name in _public_names()}
    for module in PUBLIC_MODULES:
        docs[module] = inspect.getdoc(importlib.import_module(module)) or ""
    middleware = importlib.import_module("langchain_tool_errors").ToolErrorMiddleware
    docs["ToolErrorMiddleware.__init__"] = inspect.getdoc(middleware.__init__) or ""
    for owner, member in _public_members():
        docs[f"{owner.__name__}.{member}"] = inspect.getdoc(getattr(owner, member)) or ""
    return docs


def _public_members() -> list[tuple[type, str]]:
    """The public methods, classmethods and properties our public classes define themselves."""
    classes = [
        value
        for module, name in _public_names()
        if inspect.isclass(value := getattr(importlib.import_module(module), name))
    ]
    return [
        (cls, member)
        for cls in classes
        for member, value in vars(cls).items()
        if not member.startswith("_")
        and (inspect.isfunction(value) or isinstance(value, (classmethod, property)))
    ]


@pytest.mark.parametrize(
    ("owner", "member"), _public_members(), ids=lambda value: getattr(value, "__name__", value)
)
def test_every_public_method_has_a_docstring_with_a_python_example(
    owner: type, member: str
) -> None:
    doc = inspect.getdoc(getattr(owner, member)) or ""

    assert "Example:" in doc, f"{owner.__name__}.{member} has no Example section"
    assert _BLOCK.search(doc), f"{owner.__name__}.{member}'s example has no ```python block"


@pytest.mark.parametrize(("module", "name"), _public_names())
def test_every_public_name_has_a_docstring_with_a_python_example(module: str, name: str) -> None:
    doc = _docstring(module, name)

    assert "Example:" in doc, f"{module}.{name} has no Example section"
    assert _BLOCK.search(doc), f"{module}.{name}'s example has no ```python block"


def test_the_constructor_docstring_explains_every_parameter() -> None:
    middleware = importlib.import_module("langchain_tool_errors").ToolErrorMiddleware
    doc = inspect.getdoc(middleware.__init__) or ""
    parameters = [p for p in inspect.signature(middleware.__init__).parameters if p != "self"]

    for parameter in parameters:
        assert re.search(rf"^\s+{parameter}: \S", doc, re.M), f"Args: lacks {parameter}"


def _example_modules(directory: Path) -> list[tuple[Path, Snippet]]:
    modules: list[tuple[Path, Snippet]] = []
    for owner, doc in _documented().items():
        for number, match in enumerate(_BLOCK.finditer(doc), start=1):
            code = textwrap.dedent(match.group(1))
            path = directory / f"doc_{len(modules):02d}.py"
            path.write_text(module_text(GIVEN, code), encoding="utf-8")
            modules.append((path, Snippet(code, f"{owner}, example {number}")))
    return modules


@pytest.mark.static
def test_every_docstring_example_type_checks_in_both_checkers(tmp_path: Path) -> None:
    modules = _example_modules(tmp_path)

    type_check(modules).assert_clean()

    FIGURES.append(
        f"docstrings: {len(_public_names())} public names each with an example; "
        f"{len(modules)} examples type-checked by mypy and pyright"
    )


def test_every_docstring_example_runs(tmp_path: Path) -> None:
    modules = _example_modules(tmp_path)

    ran = run_all(modules)

    assert ran.returncode == 0, ran.stderr
    FIGURES.append(f"docstrings: {len(modules)} examples run")
