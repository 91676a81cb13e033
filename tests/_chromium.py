"""Where the docs' browser tests find Debian's chromium and chromedriver, and what they do without.

On a developer's machine without the two packages the browser tests skip, and the reason
says how to install them. Where `CI` is set (`.ci/run` sets it), a missing browser is an
error instead: CI must prove the site in a real browser, never skip past it.

Nothing here imports selenium, so the decision is tested without a browser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pytest

INSTALL = "apt-get install chromium chromium-driver"
"""The command that installs both programs from Debian's packages."""

BROWSERS = ("chromium", "chromium-browser")
"""The names Debian's (and Ubuntu's) chromium is installed under, in the order tried."""

DRIVERS = ("chromedriver",)
"""The name of the driver the `chromium-driver` package installs."""


@dataclass(frozen=True)
class Chromium:
    """The paths of the browser and of the driver that controls it."""

    browser: str
    driver: str


def _first_found(names: tuple[str, ...], which: Callable[[str], str | None]) -> str | None:
    for name in names:
        found = which(name)
        if found is not None:
            return found
    return None


def find_chromium(environ: Mapping[str, str], which: Callable[[str], str | None]) -> Chromium:
    """The installed chromium and chromedriver, or a skip (outside CI) or error (in CI).

    Args:
        environ: The environment; a non-empty `CI` makes a missing program an error.
        which: Looks a program up on PATH, as `shutil.which` does.

    Raises:
        pytest.skip.Exception: Outside CI, when either program is missing; the reason names
            what is missing and the install command.
        RuntimeError: In CI, when either program is missing, with the same message.
    """
    browser = _first_found(BROWSERS, which)
    driver = _first_found(DRIVERS, which)
    if browser is not None and driver is not None:
        return Chromium(browser=browser, driver=driver)
    missing = [name for name, path in ((BROWSERS[0], browser), (DRIVERS[0], driver)) if not path]
    message = (
        f"{' and '.join(missing)} not found on PATH; the docs' browser tests need Debian's "
        f"chromium and its driver: `{INSTALL}`"
    )
    if environ.get("CI"):
        raise RuntimeError(f"{message} (CI is set, so the browser tests must run)")
    pytest.skip(message)
