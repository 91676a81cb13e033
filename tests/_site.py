"""The documentation site as the tests use it: built strictly, read back, served on loopback."""

from __future__ import annotations

import functools
import html.parser
import http.server
import re
import threading
import time
import zlib
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from typing_extensions import override

from tests._processes import run_python


@dataclass(frozen=True)
class Build:
    """One `mkdocs build --strict`: where the site went, what mkdocs said, how long it took."""

    site: Path
    returncode: int
    output: str
    seconds: float

    def reference_pages(self) -> list[Path]:
        """The pages of the API reference, in order."""
        return sorted((self.site / "reference").glob("*.html"))


def build(site: Path, config: Path | None = None) -> Build:
    """Build the site into `site` in strict mode (any warning fails the build)."""
    args = ["-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    if config is not None:
        args += ["--config-file", str(config)]
    started = time.perf_counter()
    # mkdocs-material prints a notice about its successor on every build; it is not a warning.
    done = run_python(*args, env={"NO_MKDOCS_2_WARNING": "1"})
    return Build(site, done.returncode, done.stdout + done.stderr, time.perf_counter() - started)


def inventory(site: Path) -> list[str]:
    """The names the site documents, from its Sphinx-style `objects.inv`.

    The file is four header lines, then a zlib stream of lines `name domain:role ...`.
    """
    data = (site / "objects.inv").read_bytes()
    start = 0
    for _ in range(4):
        start = data.index(b"\n", start) + 1
    lines = zlib.decompress(data[start:]).decode("utf-8").splitlines()
    return [line.split(" ", 1)[0] for line in lines if line.strip()]


@dataclass(frozen=True)
class Block:
    """One part of an API entry as rendered, with the words a reader sees in it."""

    kind: str
    """`prose` (a paragraph), `example` (a code block), `bases`, `signature` or `table`."""
    text: str
    owner: str
    """The entry it belongs to (`langchain_tool_errors.Route`); empty outside any entry."""
    owner_kind: str
    """`class`, `function`, `attribute` or `module`; empty outside any entry."""
    unlinked: tuple[str, ...]
    """The full paths of the names shown without a link (mkdocstrings gives them a title)."""


# Elements that never have an end tag.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})
_KINDS = ("class", "function", "attribute", "module")


class _ApiReader(html.parser.HTMLParser):
    """Cuts what mkdocstrings rendered into `Block`s, in the order of the page.

    mkdocstrings puts each entry in a `div.doc-object` (`doc-class`, `doc-function`, ...)
    whose heading carries the entry's path as its id; its docstring goes in a
    `div.doc-contents`, a signature in a `div.doc-signature`, the bases in a
    `p.doc-class-bases`, and the parameters in a `table`.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._open: list[tuple[str, set[str]]] = []
        self._entries: list[list[str]] = []  # [path, kind] of each open entry
        self._block: tuple[str, int] | None = None  # its kind, and its depth in _open
        self._text: list[str] = []
        self._unlinked: list[str] = []

    def _inside(self, name: str) -> bool:
        """Whether an open element has this tag name or CSS class."""
        return any(name == tag or name in classes for tag, classes in self._open)

    def _kind_of(self, tag: str, classes: set[str]) -> str | None:
        if tag == "div" and "doc-signature" in classes:
            return "signature"
        if tag == "p" and "doc-class-bases" in classes:
            return "bases"
        if not self._inside("doc-contents"):
            return None
        if tag == "table":
            return "table"
        if tag == "div" and "highlight" in classes:
            return "example"
        if tag == "p" and not self._inside("admonition"):
            return "prose"
        return None

    @override
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        self._open.append((tag, classes))
        if tag == "div" and "doc-object" in classes:
            entry_kind = next((kind for kind in _KINDS if f"doc-{kind}" in classes), "")
            self._entries.append(["", entry_kind])
        elif "doc-heading" in classes and self._entries and not self._entries[-1][0]:
            self._entries[-1][0] = attributes.get("id") or ""
        title = attributes.get("title")
        if self._block is None:
            block_kind = self._kind_of(tag, classes)
            if block_kind is not None:
                self._block = (block_kind, len(self._open))
                self._text.clear()
                self._unlinked.clear()
        elif tag == "span" and title and not self._inside("a"):
            self._unlinked.append(title)

    @override
    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(opened != tag for opened, _ in self._open):
            return
        while self._open:
            opened, classes = self._open.pop()
            if self._block is not None and len(self._open) < self._block[1]:
                path, kind = self._entries[-1] if self._entries else ("", "")
                text = " ".join("".join(self._text).split())
                unlinked = tuple(self._unlinked)
                self.blocks.append(Block(self._block[0], text, path, kind, unlinked))
                self._block = None
            if opened == "div" and "doc-object" in classes:
                self._entries.pop()
            if opened == tag:
                break

    @override
    def handle_data(self, data: str) -> None:
        if self._block is not None:
            self._text.append(data)


def api_blocks(page: Path) -> list[Block]:
    """The parts of the API entries on a built page, in the order a reader meets them."""
    reader = _ApiReader()
    reader.feed(page.read_text(encoding="utf-8"))
    reader.close()
    return reader.blocks


# A script of examples/ as a page cites it: `examples/budget.py`.
_SCRIPT = re.compile(r"\bexamples/(\w+)\.py\b")


@dataclass(frozen=True)
class Citation:
    """A script of `examples/` named on a page outside its code blocks."""

    script: str
    """The script's name without `.py` (`budget`)."""
    href: str | None
    """Where the link around it points, or None when it is not in a link."""


@dataclass
class ExamplesRead:
    """What a built page says of `examples/`: its sections, and its citations of scripts."""

    sections: dict[str, str] = field(default_factory=dict[str, str])
    """Each `h2` section's text, exactly as shown (code blocks included), by the heading's id."""
    citations: list[Citation] = field(default_factory=list[Citation])


class _ExamplesReader(html.parser.HTMLParser):
    """Reads a page into an `ExamplesRead`; a code block (`div.highlight`) is no citation."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.read = ExamplesRead()
        self._open: list[tuple[str, str | None, bool]] = []  # tag, href, is a code block
        self._section: str | None = None

    @override
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        attributes = dict(attrs)
        if tag == "h2":
            self._section = attributes.get("id")
            if self._section is not None:
                self.read.sections[self._section] = ""
        code_block = tag == "div" and "highlight" in (attributes.get("class") or "").split()
        self._open.append((tag, attributes.get("href") if tag == "a" else None, code_block))

    @override
    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(opened != tag for opened, _, _ in self._open):
            return
        while self._open and self._open.pop()[0] != tag:
            pass

    @override
    def handle_data(self, data: str) -> None:
        if self._section is not None:
            self.read.sections[self._section] += data
        if any(code_block for _, _, code_block in self._open):
            return
        href = next((href for tag, href, _ in reversed(self._open) if tag == "a"), None)
        self.read.citations += [Citation(name, href) for name in _SCRIPT.findall(data)]


def examples_read(page: Path) -> ExamplesRead:
    """The `h2` sections of a built page and the scripts of `examples/` it cites."""
    reader = _ExamplesReader()
    reader.feed(page.read_text(encoding="utf-8"))
    reader.close()
    return reader.read


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files; records every path that was missing instead of logging each request."""

    missing: list[str]

    @override
    def log_message(self, format: str, *args: object) -> None:
        return None

    @override
    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            self.missing.append(self.path)
        super().send_error(code, message, explain)


@contextmanager
def served(site: Path) -> Generator[tuple[str, list[str]]]:
    """Serve `site` on a free loopback port: its base URL, and the paths requested but missing."""
    missing: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"missing": missing})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", missing
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
