"""The documentation site: built strictly, complete against `__all__`, and read in a browser.

- `mkdocs build --strict` must pass (a broken link, a missing reference or any warning
  fails it), and a planted broken link must make it fail, so the strictness is real.
- Every public name (`__all__` of the package, `handlers` and `testing`) has an entry in
  the API reference, and the reference documents no other top-level name.
- No rendered signature, list of bases or parameter table, on any page, shows a private
  name (`_C`, `_ModeT_co`) or an internal name without an entry of its own; and each class
  opens with its docstring's summary and example, before its signatures.
- Debian's headless `chromium`, driven through `chromedriver`, opens the landing page, a
  guide and a reference page served on loopback: each renders its heading and highlighted
  code, loads every asset it asks for (from this host only) and logs no console error; the
  site's search finds `report_type_only`. One screenshot per page is kept in a temporary
  directory, named in the figures. Without chromium those tests skip, naming the install
  command, unless `CI` is set (`.ci/run` sets it): there a missing browser is an error.
- In a 1280-px window, on every page, no code block or table is wider than its box (none
  scrolls sideways), and no line of code wraps inside a word (`middlewar|e`).
- The landing page's "Where to go next" links to every guide, and the reference shows a
  type parameter under one name everywhere (`ExceptionT`, never `ExcT_co`).
- The Examples guide has a section for every script in `examples/`, with the summary of its
  docstring, its whole source and its recorded output; and wherever a page names a script
  (`examples/budget.py`) outside a code block, the name links to that section.
"""

from __future__ import annotations

import ast
import inspect
import os
import pydoc
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import pytest

import langchain_tool_errors
from langchain_tool_errors import handlers, telemetry, testing
from tests._chromium import INSTALL, Chromium, find_chromium
from tests._processes import ROOT
from tests._site import Build, api_blocks, build, examples_read, inventory, served
from tests.conftest import FIGURES

if TYPE_CHECKING:
    # selenium is in the `dev` extra only; the runtime legs of CI (`-m "not static and not
    # docs"`) collect this module without it, so it is imported where the browser starts.
    from tests._browser import Browser

pytestmark = pytest.mark.docs

PUBLIC = {
    "langchain_tool_errors": langchain_tool_errors.__all__,
    "langchain_tool_errors.handlers": handlers.__all__,
    "langchain_tool_errors.telemetry": telemetry.__all__,
    "langchain_tool_errors.testing": testing.__all__,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Build:
    built = build(tmp_path_factory.mktemp("docs") / "site")
    assert built.returncode == 0, built.output
    FIGURES.append(f"docs: the site built strictly in {built.seconds:.1f} s")
    return built


def test_the_site_builds_in_strict_mode(site: Build) -> None:
    pages = sorted(p.relative_to(site.site).as_posix() for p in site.site.rglob("*.html"))

    assert "index.html" in pages
    assert "reference/middleware.html" in pages
    assert "changelog.html" in pages
    guides = [p for p in pages if p.startswith("guides/")]
    FIGURES.append(f"docs: {len(pages) - 1} pages ({len(guides)} guides), and a 404 page")


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    # Everything the site includes: the Examples guide shows the scripts and their output.
    for name in ("docs", "src", "examples", "tests/examples_output"):
        shutil.copytree(ROOT / name, copy / name)
    for name in ("mkdocs.yml", "README.md", "CHANGELOG.md"):
        shutil.copy2(ROOT / name, copy / name)
    guide = copy / "docs" / "guides" / "routes.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n")

    broken = build(tmp_path / "site", config=copy / "mkdocs.yml")

    assert broken.returncode != 0
    assert "no-such-page.md" in broken.output


def test_every_public_name_has_a_reference_entry_and_nothing_else_does(site: Build) -> None:
    documented = set(inventory(site.site))

    entries = 0
    for module, names in PUBLIC.items():
        missing = [name for name in names if f"{module}.{name}" not in documented]
        assert not missing, f"{module}: no reference entry for {missing}"
        entries += len(names)
        top_level = {
            entry.removeprefix(f"{module}.").split(".", 1)[0]
            for entry in documented
            if entry.startswith(f"{module}.") and entry.count(".") == module.count(".") + 1
        }
        extra = top_level - set(names) - {"handlers", "telemetry", "testing"}
        assert not extra, f"{module}: the reference documents names outside __all__: {extra}"
    FIGURES.append(
        f"docs: {entries} reference entries for the {entries} names in __all__ "
        f"(the package {len(PUBLIC['langchain_tool_errors'])}, handlers "
        f"{len(PUBLIC['langchain_tool_errors.handlers'])}, telemetry "
        f"{len(PUBLIC['langchain_tool_errors.telemetry'])}, testing "
        f"{len(PUBLIC['langchain_tool_errors.testing'])})"
    )


BROWSER = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"

# What is on PATH, and what a run outside CI says is missing.
MISSING = [
    pytest.param({}, "chromium and chromedriver", id="neither"),
    pytest.param({"chromium": BROWSER}, "chromedriver", id="no driver"),
    pytest.param({"chromedriver": DRIVER}, "chromium", id="no browser"),
]
# Environments outside CI: no `CI`, or an empty one.
NOT_CI = [pytest.param({}, id="CI unset"), pytest.param({"CI": ""}, id="CI empty")]
# Environments in CI: `.ci/run` sets CI=1 and hosted runners CI=true.
IN_CI = [pytest.param({"CI": "1"}, id="CI=1"), pytest.param({"CI": "true"}, id="CI=true")]


@pytest.mark.parametrize("environ", NOT_CI)
@pytest.mark.parametrize(("installed", "missing"), MISSING)
def test_without_chromium_outside_ci_the_browser_tests_skip_naming_the_install_command(
    environ: dict[str, str], installed: dict[str, str], missing: str
) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        find_chromium(environ, installed.get)

    assert f"{missing} not found on PATH" in str(skipped.value)
    assert INSTALL in str(skipped.value)


@pytest.mark.parametrize("environ", IN_CI)
@pytest.mark.parametrize(("installed", "missing"), MISSING)
def test_without_chromium_in_ci_the_browser_tests_fail_naming_what_is_missing(
    environ: dict[str, str], installed: dict[str, str], missing: str
) -> None:
    with pytest.raises(RuntimeError, match=f"^{missing} not found on PATH") as failed:
        find_chromium(environ, installed.get)

    assert INSTALL in str(failed.value)
    assert "CI is set" in str(failed.value)


@pytest.mark.parametrize("environ", [*NOT_CI, *IN_CI])
@pytest.mark.parametrize(
    ("installed", "found"),
    [
        pytest.param(
            {"chromium": BROWSER, "chromedriver": DRIVER},
            Chromium(BROWSER, DRIVER),
            id="chromium",
        ),
        pytest.param(
            {"chromium-browser": "/usr/bin/chromium-browser", "chromedriver": DRIVER},
            Chromium("/usr/bin/chromium-browser", DRIVER),
            id="chromium-browser",
        ),
    ],
)
def test_with_chromium_and_its_driver_the_browser_tests_run_in_and_outside_ci(
    environ: dict[str, str], installed: dict[str, str], found: Chromium
) -> None:
    assert find_chromium(environ, installed.get) == found


@pytest.fixture(scope="module")
def browser(site: Build) -> Iterator[tuple[Browser, str, list[str]]]:
    # Without chromium: a skip naming the install command, or an error where CI is set.
    chromium = find_chromium(os.environ, shutil.which)
    from tests._browser import open_browser

    with served(site.site) as (url, missing), open_browser(chromium) as opened:
        yield opened, url, missing


# A name a reader is not meant to see: `_C`, `_E1`, `_ModeT_co`, `_Handlers`, or the `_x` of
# `module._x`; dunders such as `__init__` are documented Python names, not private ones.
PRIVATE_NAME = re.compile(r"(?<!\w)_\w+")
DUNDER = re.compile(r"__\w+__")
# mkdocstrings links every name that has an entry; a name of the implementation package
# shown without a link (`StoredHandler`) is internal and documented nowhere.
IMPLEMENTATION = langchain_tool_errors.ToolErrorMiddleware.__module__.split(".")[0] + "."
API_PARTS = ("signature", "bases", "table")


def test_no_signature_bases_or_parameter_table_shows_a_private_or_internal_name(
    site: Build,
) -> None:
    found: list[str] = []
    checked: Counter[str] = Counter()
    for page in sorted(site.site.rglob("*.html")):
        for block in api_blocks(page):
            if block.kind not in API_PARTS:
                continue
            checked[block.kind] += 1
            private = {
                name for name in PRIVATE_NAME.findall(block.text) if not DUNDER.fullmatch(name)
            }
            internal = {path for path in block.unlinked if path.startswith(IMPLEMENTATION)}
            if private or internal:
                where = f"{page.relative_to(site.site).as_posix()}, {block.owner} ({block.kind})"
                found.append(f"{where}: {sorted(private | internal)}")

    assert checked["signature"] > 20, f"too few signatures found: {checked}"
    assert checked["table"] > 10, f"too few tables found: {checked}"
    assert found == [], "\n".join(found)
    FIGURES.append(
        f"docs: {checked['signature']} signatures, {checked['bases']} lists of bases and "
        f"{checked['table']} parameter tables without a private or internal name"
    )


def _summary_and_example(docstring: str) -> tuple[str, str | None]:
    """A docstring's first paragraph and its first example, as a page shows their words."""
    summary = " ".join(docstring.split("\n\n", 1)[0].replace("`", "").split())
    example = re.search(r"```python\n(.*?)```", docstring, re.DOTALL)
    return summary, None if example is None else " ".join(example[1].split())


def test_every_class_in_the_reference_shows_its_summary_and_example_before_its_signatures(
    site: Build,
) -> None:
    wrong: list[str] = []
    example_then_signature: list[str] = []
    for page in site.reference_pages():
        blocks = api_blocks(page)
        for owner in dict.fromkeys(b.owner for b in blocks if b.owner_kind == "class"):
            own = [block for block in blocks if block.owner == owner]
            order = [block.kind for block in own]
            summary, example = _summary_and_example(inspect.getdoc(pydoc.locate(owner)) or "")
            signature = order.index("signature") if "signature" in order else len(own)
            shown = [
                i for i, block in enumerate(own) if (block.kind, block.text) == ("example", example)
            ]
            opening = (own[0].kind, own[0].text) if own else ("nothing", "")

            if not summary or opening != ("prose", summary):
                wrong.append(
                    f"{owner} opens with {opening[0]} {opening[1][:50]!r}, not its summary"
                )
            elif example is not None and not (shown and shown[0] < signature):
                wrong.append(f"{owner} shows its example after its first signature: {order}")
            elif example is not None and signature < len(own):
                example_then_signature.append(owner)

    assert wrong == [], "\n".join(wrong)
    # Above all the middleware, whose constructor has one signature per call shape.
    assert "langchain_tool_errors.ToolErrorMiddleware" in example_then_signature
    FIGURES.append(
        f"docs: {len(example_then_signature)} classes in the reference show their summary and "
        "example before their signatures"
    )


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("screenshots")
    FIGURES.append(f"docs: screenshots of the pages the browser opened in {directory}")
    return directory


PAGES = {
    "index.html": "langchain-tool-errors",
    "guides/routes.html": "Ordered routes in one middleware: from_routes",
    "reference/middleware.html": "The middleware",
}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_renders_in_a_real_browser(
    browser: tuple[Browser, str, list[str]], screenshots: Path, page: str
) -> None:
    opened, url, missing = browser

    seen = opened.load(url + page)
    opened.screenshot(screenshots / (page.replace("/", "-").removesuffix(".html") + ".png"))

    assert seen.heading == PAGES[page]
    assert seen.highlighted_tokens > 20, "code blocks are not highlighted"
    assert seen.failed_resources == [], "assets that did not load"
    assert all(resource.startswith(url) for resource in seen.resources), "assets from elsewhere"
    assert seen.console_errors == []
    assert missing == []


def test_the_site_search_finds_a_public_name(
    browser: tuple[Browser, str, list[str]], screenshots: Path
) -> None:
    opened, url, _ = browser
    opened.load(url + "index.html")

    found = opened.search("report_type_only")
    opened.screenshot(screenshots / "search.png")

    assert any("reference/handlers.html" in link and "report_type_only" in link for link in found)


WINDOW_WIDTH = 1280  # tests/_browser.py opens the window at this width


def test_no_code_block_or_table_overflows_a_1280_px_window_and_no_code_wraps_inside_a_word(
    site: Build, browser: tuple[Browser, str, list[str]]
) -> None:
    opened, url, _ = browser
    pages = sorted(
        page.relative_to(site.site).as_posix()
        for page in site.site.rglob("*.html")
        if page.name != "404.html"
    )

    overflowing: list[str] = []
    broken: list[str] = []
    blocks = tables = code = 0
    for page in pages:
        opened.load(url + page)
        layout = opened.layout()
        assert layout.width == WINDOW_WIDTH, f"{page}: the window is {layout.width} px wide"
        overflowing += [f"{page}: {found}" for found in layout.overflowing]
        broken += [f"{page}: {found}" for found in layout.broken]
        blocks += layout.blocks
        tables += layout.tables
        code += layout.code

    assert blocks > 100, f"too few code blocks found: {blocks}"
    assert tables > 10, f"too few tables found: {tables}"
    # Both lists in one assertion, so a failure names everything there is to fix.
    report = [f"{len(overflowing)} wider than their box:", *overflowing]
    report += [f"{len(broken)} wrapped inside a word:", *broken]
    assert (overflowing, broken) == ([], []), "\n".join(report)
    FIGURES.append(
        f"docs: at {WINDOW_WIDTH} px, {len(pages)} pages: {blocks} code blocks and {tables} "
        f"tables fit their width, and none of {code} code elements wraps inside a word"
    )


def table_rows_cut_short(text: str) -> list[str]:
    """The lines outside code blocks that start a table row and do not end it.

    A line break inside a row ends the table there: the rest of the row, and every row
    after it, render as a paragraph.
    """
    cut: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("|") and not line.rstrip().endswith("|"):
            cut.append(line[:60])
    return cut


def test_no_table_row_of_a_page_or_the_readme_is_cut_by_a_line_break() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert table_rows_cut_short("| a | b |\n| --- | --- |\n| one | two\nthree |\n") == [
        "| one | two"
    ]
    assert {str(p.relative_to(ROOT)): table_rows_cut_short(p.read_text()) for p in pages} == {
        str(p.relative_to(ROOT)): [] for p in pages
    }


def test_where_to_go_next_on_the_landing_page_links_to_every_guide(site: Build) -> None:
    landing = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    where_next = landing.split("## Where to go next", 1)[1].split("\n## ", 1)[0]
    guides = sorted(path.name for path in (ROOT / "docs" / "guides").glob("*.md"))

    linked = set(re.findall(r"\]\(guides/([\w-]+\.md)\)", where_next))

    assert [guide for guide in guides if guide not in linked] == []
    assert all((site.site / "guides" / guide).with_suffix(".html").exists() for guide in guides)
    FIGURES.append(f"docs: 'Where to go next' links to all {len(guides)} guides")


EXAMPLES_PAGE = "guides/examples.html"
SCRIPTS = sorted((ROOT / "examples").glob("*.py"))


def _docstring_summary(source: str) -> str:
    """A module's docstring's first paragraph, as a page shows its words."""
    docstring = ast.get_docstring(ast.parse(source)) or ""
    return " ".join(docstring.split("\n\n", 1)[0].replace("`", "").split())


def test_the_examples_guide_shows_every_script_with_its_summary_source_and_output(
    site: Build,
) -> None:
    sections = examples_read(site.site / EXAMPLES_PAGE).sections

    wrong: list[str] = []
    for script in SCRIPTS:
        source = script.read_text(encoding="utf-8")
        output = ROOT / "tests" / "examples_output" / f"{script.stem}.txt"
        shown = sections.get(script.stem)
        if shown is None:
            wrong.append(f"{script.name}: no section #{script.stem}")
            continue
        expected = {
            "docstring's summary": _docstring_summary(source) in " ".join(shown.split()),
            "source": source.rstrip("\n") in shown,
            "recorded output": output.read_text(encoding="utf-8").rstrip("\n") in shown,
        }
        wrong += [f"{script.name}: no {part}" for part, found in expected.items() if not found]

    assert len(SCRIPTS) > 10, f"too few scripts found: {len(SCRIPTS)}"
    assert wrong == [], "\n".join(wrong)
    FIGURES.append(
        f"docs: the Examples guide shows all {len(SCRIPTS)} scripts, each with its summary, "
        "source and recorded output"
    )


def test_a_script_a_page_cites_links_to_its_section_of_the_examples_guide(site: Build) -> None:
    sections = examples_read(site.site / EXAMPLES_PAGE).sections

    wrong: list[str] = []
    citing: set[str] = set()
    cited = 0
    for page in sorted(site.site.rglob("*.html")):
        where = page.relative_to(site.site).as_posix()
        for citation in examples_read(page).citations:
            cited += 1
            citing.add(where)
            section = f"{EXAMPLES_PAGE}#{citation.script}"
            target = None if citation.href is None else urljoin(where, citation.href)
            if target != section or citation.script not in sections:
                wrong.append(f"{where}: examples/{citation.script}.py links to {target}")

    assert {"index.html", "changelog.html", "guides/budgets.html"} <= citing, citing
    assert wrong == [], "\n".join(wrong)
    FIGURES.append(
        f"docs: {cited} citations of a script in examples/, on {len(citing)} pages, each "
        "linked to its section of the Examples guide"
    )


# A type variable as written in the implementation (`_ExcT_co`), not as the reference
# shows it: without the variance suffix, and under the name its constructor gives it.
AS_IMPLEMENTED = re.compile(r"\b\w+T_(?:co|contra)\b|\bExcT\b")


def test_the_reference_shows_each_type_parameter_under_its_constructor_s_name(
    site: Build,
) -> None:
    found: list[str] = []
    bases: list[str] = []
    blocks = (block for page in site.reference_pages() for block in api_blocks(page))
    for block in blocks:
        if block.kind not in API_PARTS:
            continue
        if block.kind == "bases":
            bases.append(block.text)
        found += [
            f"{block.owner} ({block.kind}): {name}" for name in AS_IMPLEMENTED.findall(block.text)
        ]

    assert found == [], "\n".join(found)
    assert (
        "Bases: AgentMiddleware[AgentState[Any], Any, Any], Generic[ContentT, ExceptionT, ModeT]"
        in bases
    )
