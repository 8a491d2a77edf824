"""Debian's chromium, as the browser tests start it."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")


# Flags that let Chromium run headless as root with no network of its own.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
