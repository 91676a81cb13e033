"""The documentation site: built strictly, complete against `__all__`, and read in a browser.

- `mkdocs build --strict` must pass (a broken link, a missing reference or any warning
  fails it), and a planted broken link must make it fail, so the strictness is real.
- Every public name (`__all__` of the package, `handlers` and `testing`) has an entry in
  the API reference, and the reference documents no other top-level name.
- Debian's headless `chromium`, driven through `chromedriver`, opens the landing page, a
  guide and a reference page served on loopback: each renders its heading and highlighted
  code, loads every asset it asks for (from this host only) and logs no console error; the
  site's search finds `report_type_only`. One screenshot per page is kept in a temporary
  directory, named in the figures.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import langchain_tool_errors
from langchain_tool_errors import handlers, testing
from tests._processes import ROOT
from tests._site import Build, build, inventory, served
from tests.conftest import FIGURES

if TYPE_CHECKING:
    # selenium is in the `dev` extra only; the runtime legs of CI (`-m "not static and not
    # docs"`) collect this module without it, so it is imported where the browser starts.
    from tests._browser import Browser

pytestmark = pytest.mark.docs

PUBLIC = {
    "langchain_tool_errors": langchain_tool_errors.__all__,
    "langchain_tool_errors.handlers": handlers.__all__,
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
    for name in ("docs", "src"):
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
        extra = top_level - set(names) - {"handlers", "testing"}
        assert not extra, f"{module}: the reference documents names outside __all__: {extra}"
    FIGURES.append(
        f"docs: {entries} reference entries for the {entries} names in __all__ "
        f"(the package {len(PUBLIC['langchain_tool_errors'])}, handlers "
        f"{len(PUBLIC['langchain_tool_errors.handlers'])}, testing "
        f"{len(PUBLIC['langchain_tool_errors.testing'])})"
    )


@pytest.fixture(scope="module")
def browser(site: Build) -> Iterator[tuple[Browser, str, list[str]]]:
    from tests._browser import open_browser

    with served(site.site) as (url, missing), open_browser() as opened:
        yield opened, url, missing


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("screenshots")
    FIGURES.append(f"docs: screenshots of the pages the browser opened in {directory}")
    return directory


PAGES = {
    "index.html": "langchain-tool-errors",
    "guides/routes.html": "Ordered routes in one middleware: routes=",
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
