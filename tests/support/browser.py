"""Debian's Chromium headless shell, as the browser tests start it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

# Chromium's engine without the full browser's windowing layer (Debian's
# chromium-headless-shell), the build Playwright itself runs for headless tests: a
# JupyterLab page costs about a third less CPU than /usr/bin/chromium --headless
# (docs/performance.md), and the browser tests load many.
CHROMIUM = Path("/usr/bin/chromium-headless-shell")
MISSING = f"no {CHROMIUM}: `make chromium` installs it"


# Flags that let Chromium run headless as root with no network of its own.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextlib.contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900, **options) -> Iterator:
    """Debian's Chromium headless shell, with a profile folder of its own: the browser context
    (Playwright's), closed when the block ends. `options` go to the context."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), MISSING
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=FLAGS, headless=True,
            viewport={"width": width, "height": height}, **options,
        )  # fmt: skip
        try:
            yield browser
        finally:
            browser.close()


def show_line(locator) -> None:
    """Scroll the page to a line of text (vertically, to its middle) with the line's start in
    view: Playwright's scroll_into_view_if_needed scrolls a long traceback line sideways too,
    and a screenshot then shows the white past the page's content."""
    locator.evaluate(
        """element => {
            element.scrollIntoView({block: "center"});
            for (let box = element; box; box = box.parentElement) box.scrollLeft = 0;
            window.scrollTo(0, window.scrollY);
        }"""
    )
