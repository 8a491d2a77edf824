"""The misconception catalog: learner-style code for known mistakes and for
correct-but-different answers, one module per assignment
(`catalog/<assignment>.py`, which defines `catalog = Catalog("<assignment>")`).

It is course material, not test code: the test suite proves each entry loses
exactly its cells with its diagnosis, and the demo and the benchmark build
their simulated classes from it. Nothing here reaches release/ or a learner.

Each entry is a plain function whose name is `<contract function>__<key>`; its
source, renamed to the contract function, is what a learner would type into
that function's answer cell. For a mistake, `key` is the misconception key the
hidden checks must name, and `fails` lists the grade_ids of the cells that
must lose points. A variant must earn full marks everywhere.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
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


@dataclass(frozen=True)
class UnknownMistake:
    """A mistake the catalog deliberately does not name, written two ways.

    The demo gives it to two learners; the TA report's probe must still group
    them into one cluster ("카탈로그에 없는 실수").
    """

    function: str
    sources: tuple[str, ...]


class Catalog:
    """One assignment's catalog, and the facts its tests check the notebook against.

    `page_outputs`: lines the source notebook must print with the reference
    solutions (the course page's own numbers). `unknown_mistake`: see
    UnknownMistake. `reads_live_globals`: entries (`<function>__<key>`) that read
    a notebook global which still exists when the visible tests run, so that
    Validate's global-read probe must flag them.
    """

    def __init__(
        self,
        assignment: str,
        *,
        page_outputs: tuple[str, ...] = (),
        unknown_mistake: UnknownMistake | None = None,
        reads_live_globals: frozenset[str] = frozenset(),
    ):
        self.assignment = assignment
        self.entries: list[Entry] = []
        self.page_outputs = tuple(page_outputs)
        self.unknown_mistake = unknown_mistake
        self.reads_live_globals = frozenset(reads_live_globals)

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


def catalogs() -> dict[str, Catalog]:
    """Every assignment's catalog, by assignment id."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[module.catalog.assignment] = module.catalog
    return found


def all_entries(kind: str) -> list[Entry]:
    return [e for c in catalogs().values() for e in c.entries if e.kind == kind]
