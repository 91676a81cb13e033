"""What a user sees in the editor, asked of real language servers over stdio.

pyright's, basedpyright's, pyrefly's and ty's servers each open one unsaved scratch module
in this repository's workspace (so they resolve the package as an editor would) and answer
the requests an editor sends while someone types:

- signature help inside each constructor call shape (sync, sync + async, async-only, each
  with and without `exceptions=`), after every argument typed so far: the overload the
  server highlights must take each of those arguments, none of them typed `None`;
- hover on a constructed middleware: its three type parameters; on a constructor call: the
  one overload it matches;
- hover on the class, and completion of its name: the first line of its docstring;
- completion after `from langchain_tool_errors import ` and after
  `from langchain_tool_errors.handlers import `: every public name, no private one.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import langchain_tool_errors
from langchain_tool_errors import handlers
from tests._lsp import LanguageServer
from tests._processes import ROOT
from tests.conftest import FIGURES

pytestmark = pytest.mark.static

SERVERS = {
    "pyright": ["pyright-langserver", "--stdio"],
    "basedpyright": ["basedpyright-langserver", "--stdio"],
    "pyrefly": ["pyrefly", "lsp"],
    "ty": ["ty", "server"],
}

DOC_FIRST_LINE = "Turn exceptions raised by tools into error `ToolMessage`s the model can read."

CALLS = {
    "sync": ["explain"],
    "sync + async": ["explain", "aon_error=aexplain"],
    "async-only": ["aon_error=aexplain"],
    "sync, exceptions=": ["explain", "exceptions=KeyError"],
    "sync + async, exceptions=": ["explain", "aon_error=aexplain", "exceptions=KeyError"],
    "async-only, exceptions=": ["aon_error=aexplain", "exceptions=KeyError"],
}
"""Each call shape as the arguments a user types, in order."""

HEADER = """\
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ToolErrorMiddleware


def explain(exc: KeyError, request: ToolCallRequest) -> str:
    return "a record is missing"


async def aexplain(exc: KeyError, request: ToolCallRequest) -> str:
    return "a record is missing"


middleware = ToolErrorMiddleware(aon_error=aexplain, exceptions=KeyError)
ToolErrorMiddleware
from langchain_tool_errors import \n\
from langchain_tool_errors.handlers import \n\
"""
MIDDLEWARE_LINE, CLASS_LINE, PACKAGE_LINE, HANDLERS_LINE = 13, 14, 15, 16


@dataclass(frozen=True)
class Scratch:
    server: LanguageServer
    name: str
    lines: list[str]

    @property
    def path(self) -> Path:
        return ROOT / "tests" / "typecheck" / "ide_scratch.py"  # never written to disk

    def at(self, line: int, character: int) -> dict[str, Any]:
        return self.server.position(self.path, line, character)


@pytest.fixture(scope="module", params=list(SERVERS))
def scratch(request: pytest.FixtureRequest) -> Iterator[Scratch]:
    name: str = request.param
    calls = [f"ToolErrorMiddleware({', '.join(arguments)})" for arguments in CALLS.values()]
    text = HEADER + "".join(f"{call}\n" for call in calls)
    # The servers installed beside this interpreter, with its bin directory leading PATH
    # (pyright's node wrapper and pyrefly look up `python` there).
    bin_dir = Path(sys.executable).parent
    command = [str(bin_dir / SERVERS[name][0]), *SERVERS[name][1:]]
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    with LanguageServer(command, ROOT, env=env) as server:
        scratch = Scratch(server, name, text.splitlines())
        server.open(scratch.path, text)
        yield scratch


def _parameters(signature: dict[str, Any]) -> list[str]:
    """The parameters of one signature as written in its label, `self` left out."""
    label: str = signature["label"]
    texts = [
        label[p["label"][0] : p["label"][1]] if isinstance(p["label"], list) else p["label"]
        for p in signature.get("parameters", [])
    ]
    return [text for text in texts if not text.startswith("self")]


def _takes(parameters: list[str], arguments: list[str]) -> str | None:
    """Why a signature cannot take `arguments` (None if it can)."""
    parameters = [p for p in parameters if p != "/"]
    positional = parameters[: parameters.index("*")] if "*" in parameters else parameters
    by_name = {p.split(":")[0].strip(): p for p in parameters if ":" in p}
    given = [a for a in arguments if "=" not in a]
    if len(given) > len(positional):
        return f"{len(given)} positional arguments, {len(positional)} positional parameters"
    taken = positional[: len(given)] + [
        by_name.get(a.split("=")[0], "") for a in arguments if "=" in a
    ]
    for argument, parameter in zip(given + [a for a in arguments if "=" in a], taken, strict=True):
        if not parameter:
            return f"no parameter for {argument}"
        if re.search(r":\s*None\b", parameter):
            return f"{argument} meets {parameter!r}"
    return None


def _labels(completion: dict[str, Any] | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The items of a completion answer: a `CompletionList` or a bare list."""
    if isinstance(completion, dict):
        items: list[dict[str, Any]] = completion["items"]
        return items
    return list(completion or [])


def test_signature_help_highlights_an_overload_that_takes_what_is_typed(scratch: Scratch) -> None:
    first_call_line = len(scratch.lines) - len(CALLS)
    checked = 0
    for offset, (shape, arguments) in enumerate(CALLS.items()):
        line = first_call_line + offset
        text = scratch.lines[line]
        for typed in range(1, len(arguments) + 1):
            end = text.index(arguments[typed - 1], len("ToolErrorMiddleware(")) + len(
                arguments[typed - 1]
            )
            help = scratch.server.request("textDocument/signatureHelp", scratch.at(line, end))
            assert help, f"{scratch.name}: no signature help in {text}"
            assert help["signatures"], f"{scratch.name}: no signature in {text}"
            active = help["signatures"][help.get("activeSignature") or 0]

            problem = _takes(_parameters(active), arguments[:typed])

            assert problem is None, (
                f"{scratch.name}, {shape}, after {arguments[:typed]}: the highlighted overload "
                f"{active['label']!r} does not take them ({problem})"
            )
            checked += 1
    FIGURES.append(
        f"IDE, {scratch.name}: signature help takes what is typed at {checked} points "
        f"({len(CALLS)} call shapes)"
    )


def test_hover_on_a_middleware_shows_its_three_type_parameters(scratch: Scratch) -> None:
    hover = scratch.server.request("textDocument/hover", scratch.at(MIDDLEWARE_LINE, 3))

    shown = hover["contents"]["value"]
    assert re.search(r"ToolErrorMiddleware\[str, KeyError, ([\w.]+\.)?AsyncOnly\]", shown), shown


def test_hover_on_a_constructor_call_shows_only_the_overload_it_matches(scratch: Scratch) -> None:
    call = scratch.lines[MIDDLEWARE_LINE].index("ToolErrorMiddleware") + 3

    hover = scratch.server.request("textDocument/hover", scratch.at(MIDDLEWARE_LINE, call))

    signature = hover["contents"]["value"].split("---")[0]
    assert "aon_error" in signature, signature
    assert "exceptions" in signature, signature
    assert "on_error:" not in signature.replace("aon_error:", ""), signature  # async-only
    assert "@overload" not in signature, signature


def test_hover_on_the_class_shows_its_docstring(scratch: Scratch) -> None:
    hover = scratch.server.request("textDocument/hover", scratch.at(CLASS_LINE, 5))

    shown: str = hover["contents"]["value"]
    assert DOC_FIRST_LINE in shown, shown
    FIGURES.append(f"IDE, {scratch.name}: hover on the class, {len(shown.splitlines())} lines")


def test_completing_the_class_shows_its_docstring(scratch: Scratch) -> None:
    position = scratch.at(CLASS_LINE, len("ToolErrorMidd"))
    items = _labels(scratch.server.request("textDocument/completion", position))
    [item] = [i for i in items if i["label"] == "ToolErrorMiddleware"]
    if "documentation" not in item:
        item = scratch.server.request("completionItem/resolve", item)

    documentation = item["documentation"]
    shown: str = documentation if isinstance(documentation, str) else documentation["value"]
    assert DOC_FIRST_LINE in shown, shown
    if scratch.name in ("pyright", "basedpyright"):
        # Their completion documentation heads every class with `class Name()`, whatever its
        # constructor takes (README, Type checking, "In the editor"); nothing in the package
        # changes it.
        assert shown.startswith("```python\nclass ToolErrorMiddleware()\n```"), shown


@pytest.mark.parametrize(
    ("line", "module"),
    [(PACKAGE_LINE, langchain_tool_errors), (HANDLERS_LINE, handlers)],
    ids=["package", "handlers"],
)
def test_completing_an_import_offers_every_public_name_and_no_private_one(
    scratch: Scratch, line: int, module: Any
) -> None:
    position = scratch.at(line, len(scratch.lines[line]))

    offered = {
        i["label"] for i in _labels(scratch.server.request("textDocument/completion", position))
    }

    private = sorted(n for n in offered if n.startswith("_") and not n.startswith("__"))
    assert not private, f"{scratch.name} offers {private}"
    assert set(module.__all__) <= offered, f"{scratch.name} offers {sorted(offered)}"
    FIGURES.append(
        f"IDE, {scratch.name}: `from {module.__name__} import ` offers "
        f"{len(set(module.__all__))} public names, no private one"
    )
