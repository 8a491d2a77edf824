"""The misconception catalog: learner-style code for known mistakes and for
correct-but-different answers, one module per assignment.

Each entry is a plain function whose name is `<contract function>__<key>`; its
source, renamed to the contract function, is what a learner would type into
that function's answer cell. For a mistake, `key` is the misconception key the
hidden checks must name, and `fails` lists the grade_ids of the cells that
must lose points. A variant must earn full marks everywhere.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass

NOQA_MARKER = re.compile(r"\s*#\s*noqa\b.*$")


@dataclass(frozen=True)
class Entry:
    assignment: str
    function: str
    key: str
    kind: str  # "mistake" or "variant"
    source: str
    fails: frozenset[str] = frozenset()

    @property
    def student_id(self) -> str:
        """A gradebook-safe learner id for this entry's simulated submission."""
        return f"{self.kind}-{self.function}-{self.key}".replace("_", "-")


class Catalog:
    def __init__(self, assignment: str):
        self.assignment = assignment
        self.entries: list[Entry] = []

    def mistake(self, *, fails: set[str]):
        return lambda fn: self._add(fn, "mistake", frozenset(fails))

    def variant(self, fn):
        return self._add(fn, "variant", frozenset())

    def _add(self, fn, kind: str, fails: frozenset[str]):
        function, key = fn.__name__.split("__", 1)
        self.entries.append(
            Entry(self.assignment, function, key, kind, learner_source(fn, function), fails)
        )
        return fn

    @property
    def mistakes(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "mistake"]

    @property
    def variants(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "variant"]


def learner_source(fn, function: str) -> str:
    """The function's source without decorators, renamed to the contract function."""
    source = textwrap.dedent(inspect.getsource(fn))
    lines = source.splitlines()
    while lines[0].lstrip().startswith("@"):
        lines.pop(0)
    # Drop the lint-suppression markers that only keep ruff quiet about deliberate mistakes.
    body = "\n".join(re.sub(NOQA_MARKER, "", line) for line in lines)
    return re.sub(rf"^def {re.escape(fn.__name__)}\(", f"def {function}(", body, count=1) + "\n"
