"""`make bench` writes what it printed into docs/performance.md, dated, newest first.

Each run's block sits between two markers under "## Runs of make bench", with
the date (UTC), the commit, the command and the machine's CPU count; the
last KEEP runs are kept, older ones leave (git has them). Text outside the
markers is the people's, and is never touched.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

HEADING = "## Runs of make bench"
BEGIN, END = "<!-- make bench run -->", "<!-- /make bench run -->"
KEEP = 5
INTRO = "Written by `make bench` (bench/record.py), newest first; older runs are in git."


class Tee(io.TextIOBase):
    """Write to the terminal and keep a copy."""

    def __init__(self, out):
        self.out, self.kept = out, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


@contextlib.contextmanager
def teed():
    tee = Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee


def block(output: str, command: str, commit: str, when: datetime) -> str:
    lines = [
        BEGIN,
        f"**{when:%Y-%m-%d %H:%M} UTC**, commit `{commit}`, `{command}`, {os.cpu_count()} CPUs:",
        "",
        "```text",
        output.rstrip("\n"),
        "```",
        END,
    ]
    return "\n".join(lines)


def insert(document: str, new_block: str, keep: int = KEEP) -> str:
    """The document with `new_block` first under HEADING (the section is added at the end
    when missing), and at most `keep` runs in all."""
    runs, rest, current = [], [], None
    for line in document.splitlines():
        if line == BEGIN:
            current = [line]
        elif current is not None:
            current.append(line)
            if line == END:
                runs.append("\n".join(current))
                current = None
        else:
            rest.append(line)
    while rest and not rest[-1].strip():
        rest.pop()
    if HEADING not in rest:
        rest += ["", HEADING, "", INTRO]
    at = rest.index(HEADING) + 1
    while at < len(rest) and not rest[at].strip():  # the blank line after the heading
        at += 1
    while at < len(rest) and rest[at].strip():  # its introduction
        at += 1
    kept = "\n\n".join([new_block, *runs][:keep])
    while at < len(rest) and not rest[at].strip():  # blank lines the old runs left
        del rest[at]
    after = ["", *rest[at:]] if rest[at:] else []
    return "\n".join([*rest[:at], "", kept, *after]) + "\n"


def commit_of(root: Path) -> str:
    result = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True
    )
    return result.stdout.strip() or "unknown"


def write(path: Path, output: str, command: str, root: Path) -> None:
    new = block(output, command, commit_of(root), datetime.now(UTC))
    path.write_text(insert(path.read_text(encoding="utf-8"), new), encoding="utf-8")
