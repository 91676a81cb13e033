"""What a user sees in the editor, asked of real language servers over stdio.

pyright's, basedpyright's, pyrefly's and ty's servers each open one unsaved scratch module
in this repository's workspace (so they resolve the package as an editor would) and answer
the requests an editor sends while someone types:

- signature help inside each call shape of `ToolErrorMiddleware` and `Route` (sync,
  sync + async, async-only, each with and without `exceptions=`; `from_routes`; with
  `tools=`, `budget=` and `name=`), at every cursor position between its arguments: after
  each argument and after the comma that follows it, both in a call typed only that far
  and in the finished call. The overload the server highlights must have a parameter for
  every argument before the cursor, none of them typed `None`;
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

CALLS: dict[str, tuple[str, list[str]]] = {
    "sync": ("ToolErrorMiddleware", ["report"]),
    "sync, on_error=": ("ToolErrorMiddleware", ["on_error=report"]),
    "sync + async": ("ToolErrorMiddleware", ["report", "aon_error=areport"]),
    "async-only": ("ToolErrorMiddleware", ["aon_error=areport"]),
    "sync, exceptions=": ("ToolErrorMiddleware", ["explain", "exceptions=KeyError"]),
    "sync + async, exceptions=": (
        "ToolErrorMiddleware",
        ["explain", "aon_error=aexplain", "exceptions=KeyError"],
    ),
    "sync, exceptions= before aon_error=": (
        "ToolErrorMiddleware",
        ["explain", "exceptions=KeyError", "aon_error=aexplain"],
    ),
    "async-only, exceptions=": (
        "ToolErrorMiddleware",
        ["aon_error=aexplain", "exceptions=KeyError"],
    ),
    "exceptions= before the handler": (
        "ToolErrorMiddleware",
        ["exceptions=KeyError", "on_error=explain"],
    ),
    "sync, exceptions=, name=": (
        "ToolErrorMiddleware",
        ["explain", "exceptions=KeyError", 'name="lookup_errors"'],
    ),
    "sync, tools=, budget=, name=": (
        "ToolErrorMiddleware",
        ["report", 'tools=["search"]', "budget=ErrorBudget(per_tool=2)", 'name="search_errors"'],
    ),
    "async-only, exceptions=, tools=, budget=, name=": (
        "ToolErrorMiddleware",
        [
            "aon_error=aexplain",
            "exceptions=KeyError",
            'tools=["lookup"]',
            "budget=ErrorBudget(per_run=3)",
            'name="lookup_errors"',
        ],
    ),
    "from_routes": (
        "ToolErrorMiddleware.from_routes",
        ["[Route(KeyError, explain)]", "budget=ErrorBudget(per_run=3)", 'name="routed"'],
    ),
    "route, sync": ("Route", ["KeyError", "explain"]),
    "route, sync + async": ("Route", ["KeyError", "explain", "aon_error=aexplain"]),
    "route, async-only": ("Route", ["KeyError", "aon_error=aexplain"]),
    "route, two types": ("Route", ["(KeyError, IndexError)", "lookup"]),
    "route, two types, sync + async": (
        "Route",
        ["(KeyError, IndexError)", "lookup", "aon_error=alookup"],
    ),
    "route, two types, async-only": ("Route", ["(KeyError, IndexError)", "aon_error=alookup"]),
    "route, tools=, budget=": (
        "Route",
        ["KeyError", "explain", 'tools=["lookup"]', "budget=ErrorBudget(per_tool=2)"],
    ),
    "route, async-only, tools=, budget=": (
        "Route",
        ["KeyError", "aon_error=aexplain", 'tools=["lookup"]', "budget=ErrorBudget(per_tool=2)"],
    ),
}
"""Each call shape as the callee and the arguments a user types, in order."""

HEADER = """\
from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import ErrorBudget, Route, ToolErrorMiddleware


def explain(exc: KeyError, request: ToolCallRequest) -> str:
    return "a record is missing"


async def aexplain(exc: KeyError, request: ToolCallRequest) -> str:
    return "a record is missing"


middleware = ToolErrorMiddleware(aon_error=aexplain, exceptions=KeyError)
ToolErrorMiddleware
from langchain_tool_errors import \n\
from langchain_tool_errors.handlers import \n\


def report(exc: Exception, request: ToolCallRequest) -> str:
    return type(exc).__name__


async def areport(exc: Exception, request: ToolCallRequest) -> str:
    return type(exc).__name__


def lookup(exc: KeyError | IndexError, request: ToolCallRequest) -> str:
    return "no such record"


async def alookup(exc: KeyError | IndexError, request: ToolCallRequest) -> str:
    return "no such record"


"""
MIDDLEWARE_LINE, CLASS_LINE, PACKAGE_LINE, HANDLERS_LINE = 13, 14, 15, 16


@dataclass(frozen=True)
class Probe:
    """One cursor position inside a call: the arguments before it, and where it is."""

    shape: str
    line: int
    character: int
    typed: list[str]


def _probes(first_line: int) -> tuple[list[str], list[Probe]]:
    """The calls to write from `first_line` on, and every cursor position to ask about.

    Each shape is written finished, and typed only so far: up to each argument, and up to
    the comma after it (the cursor where the next argument starts). In each, the cursor
    goes after the opening parenthesis, after every argument and after every comma.
    """
    lines: list[str] = []
    probes: list[Probe] = []
    for shape, (callee, arguments) in CALLS.items():
        so_far = [arguments[:count] for count in range(len(arguments))]
        calls = [(arguments, False)]  # finished
        calls += [(typed, False) for typed in so_far]  # typed up to an argument
        calls += [(typed, True) for typed in so_far if typed]  # and the comma after it
        for given, comma in calls:
            line = first_line + len(lines)
            text = f"{callee}({', '.join(given)}{', ' if comma else ''})"
            lines.append(text)
            position = len(callee) + 1
            probes.append(Probe(shape, line, position, []))
            for index, argument in enumerate(given):
                position += len(argument)
                if not argument.endswith(")"):  # else the cursor would end a nested call
                    probes.append(Probe(shape, line, position, given[: index + 1]))
                if index + 1 < len(given) or comma:
                    position += len(", ")
                    probes.append(Probe(shape, line, position, given[: index + 1]))
    return lines, probes


@dataclass(frozen=True)
class Scratch:
    server: LanguageServer
    name: str
    lines: list[str]
    probes: list[Probe]

    @property
    def path(self) -> Path:
        return ROOT / "tests" / "typecheck" / "ide_scratch.py"  # never written to disk

    def at(self, line: int, character: int) -> dict[str, Any]:
        return self.server.position(self.path, line, character)


@pytest.fixture(scope="module", params=list(SERVERS))
def scratch(request: pytest.FixtureRequest) -> Iterator[Scratch]:
    name: str = request.param
    calls, probes = _probes(HEADER.count("\n"))
    text = HEADER + "".join(f"{call}\n" for call in calls)
    # The servers installed beside this interpreter, with its bin directory leading PATH
    # (pyright's node wrapper and pyrefly look up `python` there).
    bin_dir = Path(sys.executable).parent
    command = [str(bin_dir / SERVERS[name][0]), *SERVERS[name][1:]]
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    with LanguageServer(command, ROOT, env=env) as server:
        scratch = Scratch(server, name, text.splitlines(), probes)
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
    problems: dict[str, list[str]] = {}
    for probe in scratch.probes:
        text = scratch.lines[probe.line]
        where = f"{text[: probe.character]}|{text[probe.character :]}"
        help = scratch.server.request(
            "textDocument/signatureHelp", scratch.at(probe.line, probe.character)
        )
        assert help, f"{scratch.name}, {probe.shape}: no signature help at {where}"
        assert help["signatures"], f"{scratch.name}, {probe.shape}: no signature at {where}"
        # With no active signature in the answer, an editor shows the first (LSP's default).
        active = help["signatures"][help.get("activeSignature") or 0]

        problem = _takes(_parameters(active), probe.typed)

        if problem is not None:
            problems.setdefault(probe.shape, []).append(
                f"at {where} the highlighted overload {active['label']!r} does not take what "
                f"is typed ({problem})"
            )
    assert not problems, f"{scratch.name}:\n" + "\n".join(
        f"{shape}: {problem}" for shape, found in problems.items() for problem in found
    )
    FIGURES.append(
        f"IDE, {scratch.name}: signature help takes what is typed at all "
        f"{len(scratch.probes)} cursor positions ({len(CALLS)} call shapes)"
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
