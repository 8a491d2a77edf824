"""Debian's chromium, as the browser tests start it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")


# Flags that let Chromium run headless as root with no network of its own.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextlib.contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900, **options) -> Iterator:
    """Debian's Chromium, headless, with a profile folder of its own: the browser context
    (Playwright's), closed when the block ends. `options` go to the context."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "no /usr/bin/chromium: `make chromium` installs it"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=FLAGS, headless=True,
            viewport={"width": width, "height": height}, **options,
        )  # fmt: skip
        try:
            yield browser
        finally:
            browser.close()
