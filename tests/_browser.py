"""A real headless browser for the docs tests: Debian's `chromium`, driven by `chromedriver`.

Both come from the distribution's packages (`apt-get install chromium chromium-driver`;
`.ci/run` installs them), never from a browser build that downloads itself: selenium is
given the driver's path, so its driver manager has nothing to fetch. `tests/_chromium.py`
finds the two programs, and decides what the tests do where they are missing.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests._chromium import Chromium

_TIMEOUT = 30.0


@dataclass(frozen=True)
class Page:
    """What a loaded page shows and what it cost the browser."""

    heading: str
    highlighted_tokens: int
    resources: list[str]
    failed_resources: list[str]
    console_errors: list[str]


@dataclass(frozen=True)
class Layout:
    """How a loaded page's code blocks, tables and code fit the window's width."""

    width: int
    """The window's width in CSS pixels."""
    blocks: int
    """The code blocks (`pre`, signatures included) measured."""
    tables: int
    """The tables measured."""
    code: int
    """The `code` elements, in blocks and inline, whose line breaks were read."""
    overflowing: list[str]
    """Each block or table wider than its box (it scrolls sideways), and by how many pixels."""
    broken: list[str]
    """Each line of code a wrap splits between two letters or digits, with a `|` there."""


# Run in the page, on its article. A box overflows when its content is wider than the box
# (`scrollWidth > clientWidth`): a `pre`, the `code` inside it (the part that scrolls), a
# table, and the wrapper the theme's script puts around a table. A `code` wraps where one
# character's box starts below the previous one's with no space or newline of the source
# between them; a wrap between two letters or digits splits a word (`middlewar|e`), one
# after `_`, `.`, `(`, `,` or another sign does not (`error_|type`).
_MEASURE = """
const article = document.querySelector("article");
const wider = (element) => element.scrollWidth - element.clientWidth;
const overflowing = [];
const describe = (element) =>
  (element.closest(".doc-object")?.querySelector("[id]")?.id || element.closest("[id]")?.id || "")
  + " " + element.tagName.toLowerCase() + ": " + element.textContent.trim().slice(0, 60);
const blocks = [...article.querySelectorAll("pre")];
for (const block of blocks) {
  for (const box of [block, ...block.querySelectorAll(":scope > code")]) {
    if (wider(box) > 0) overflowing.push(describe(box) + " (" + wider(box) + " px)");
  }
}
const tables = [...article.querySelectorAll("table")];
for (const table of tables) {
  const wrap = table.closest(".md-typeset__scrollwrap");
  for (const box of wrap ? [table, wrap] : [table]) {
    if (wider(box) > 0) overflowing.push(describe(table) + " (" + wider(box) + " px)");
  }
}
const word = /[\\p{L}\\p{N}]/u;
const range = document.createRange();
const broken = [];
const codes = [...article.querySelectorAll("code")];
for (const code of codes) {
  // Each character with its box; a space or newline has none where a line ends.
  const characters = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      characters.push([node.data[i], box && box.width > 0 ? box : null]);
    }
  }
  const text = characters.map(([character]) => character).join("");
  let last = -1;  // the last character with a box
  for (let i = 0; i < characters.length; i++) {
    const [after, below] = characters[i];
    if (below === null) continue;
    if (last >= 0) {
      const [before, above] = characters[last];
      const wrapped = below.top > above.top + above.height / 2;
      const between = text.slice(last + 1, i);  // spaces, or a newline of the source
      if (wrapped && !between && word.test(before) && word.test(after)) {
        const line = text.lastIndexOf("\\n", i) + 1;
        const rest = text.indexOf("\\n", i);
        broken.push(
          describe(code).split(":")[0] + ": " + text.slice(line, i) + "|"
          + text.slice(i, rest < 0 ? undefined : rest)
        );
      }
    }
    last = i;
  }
}
return [window.innerWidth, blocks.length, tables.length, codes.length, overflowing, broken];
"""


class Browser:
    """One headless chromium session."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        # selenium leaves `get_log`, `execute_script` and `save_screenshot` unannotated, so
        # the driver is used as `Any` here and each result is given its type where read.
        self._driver: Any = driver

    def load(self, url: str) -> Page:
        """Open `url`, wait until it has loaded, and read what the tests check."""
        driver = self._driver
        driver.get_log("browser")  # drop what earlier pages logged
        driver.get(url)
        WebDriverWait(driver, _TIMEOUT).until(
            lambda _: driver.execute_script("return document.readyState") == "complete"
        )
        found = cast("WebElement", driver.find_element(By.CSS_SELECTOR, "article h1"))
        heading = found.text.removesuffix("¶")
        # Each highlighted token of a code block is a span Pygments gave a class.
        tokens = len(
            cast(
                "list[WebElement]",
                driver.find_elements(By.CSS_SELECTOR, ".highlight code span[class]"),
            )
        )
        # The resource timing API records every asset the page asked for, with its status.
        entries = cast(
            "list[list[Any]]",
            driver.execute_script(
                "return performance.getEntriesByType('resource')"
                ".map(e => [e.name, e.responseStatus])"
            ),
        )
        errors = [
            str(entry["message"])
            for entry in cast("list[dict[str, object]]", driver.get_log("browser"))
            if entry["level"] == "SEVERE"
        ]
        return Page(
            heading=heading.strip(),
            highlighted_tokens=tokens,
            resources=[str(name) for name, _ in entries],
            failed_resources=[f"{name} ({status})" for name, status in entries if status != 200],
            console_errors=errors,
        )

    def layout(self) -> Layout:
        """Measure the loaded page's code blocks, tables and code at the window's width."""
        width, blocks, tables, code, overflowing, broken = cast(
            "tuple[int, int, int, int, list[str], list[str]]",
            self._driver.execute_script(_MEASURE),
        )
        return Layout(width, blocks, tables, code, overflowing, broken)

    def search(self, query: str) -> list[str]:
        """Type `query` into the site's search box; the links of the results it lists."""
        driver = self._driver
        box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
        box.click()
        box.send_keys(query)
        WebDriverWait(driver, _TIMEOUT).until(
            lambda _: driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")
        )
        links = cast(
            "list[WebElement]", driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")
        )
        return [str(link.get_attribute("href")) for link in links]

    def screenshot(self, path: Path) -> None:
        """Save what the window shows as a PNG."""
        self._driver.save_screenshot(str(path))


@contextmanager
def open_browser(chromium: Chromium) -> Generator[Browser]:
    """A headless session of the given chromium, closed afterwards."""
    options = webdriver.ChromeOptions()
    options.binary_location = chromium.browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where chromium's sandbox cannot start
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(chromium.driver)
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield Browser(driver)
    finally:
        driver.quit()
