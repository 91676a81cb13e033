"""An mkdocs hook: a script of `examples/` cited on a page links to its section of the site.

The guides, the landing page (the README's first part) and the changelog cite the scripts
by their paths (`examples/budget.py`), which are files on a checkout but nothing the site
serves. Here each such path shown as inline code, and not already a link, becomes a link
to the script's section of the Examples guide, whose id is the script's name (`#budget`):
the section shows the script's source and what it prints. A citation of a script that
`examples/` does not hold is a warning, so a strict build fails on it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

EXAMPLES_PAGE = "guides/examples.md"
# A script's path as inline code, with the start of the link around it, if there is one.
_CITATION = re.compile(r"(<a\b[^>]*>)?<code>examples/(\w+)\.py</code>")
# A logger under "mkdocs" counts towards `mkdocs build --strict`'s warnings.
_log = logging.getLogger("mkdocs.hooks.example_links")


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Link each unlinked citation of a script on `page` to the script's section."""
    examples_page = files.get_file_from_path(EXAMPLES_PAGE)
    if examples_page is None:
        _log.warning("%s: no page %s to link examples/ to", page.file.src_uri, EXAMPLES_PAGE)
        return html
    target = "" if examples_page is page.file else get_relative_url(examples_page.url, page.url)
    scripts = Path(config.config_file_path).parent / "examples"

    def link(citation: re.Match[str]) -> str:
        linked, name = citation[1], citation[2]
        if linked is not None:
            return citation[0]
        if not (scripts / f"{name}.py").is_file():
            _log.warning("%s cites examples/%s.py, which does not exist", page.file.src_uri, name)
        return f'<a href="{target}#{name}">{citation[0]}</a>'

    return _CITATION.sub(link, html)
