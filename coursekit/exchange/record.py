"""reports/exchange_incidents.json: assignment -> learner -> what was left out or renamed.

Written by the exchange's collect and zip_collect (each replaces the entries of
the learners it collects) and by stock autograde and generate_feedback when
they find a folder that no collect bounded (`exchange.bound`, which adds).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from coursekit.exchange.plain_copy import shown

DEFAULT_PATH = "reports/exchange_incidents.json"  # under the course root


def update(path: str, assignment: str, incidents: dict[str, list[dict]]) -> None:
    """Replace this assignment's entries of the learners collected now; keep everyone else's.

    Each entry is {"submission": inbound folder name, "path": file inside it
    ("" for the whole submission), "reason": in the course's language}.
    """
    report = read(path)
    if not isinstance(report, dict):
        report = {}
    learners = report.setdefault(assignment, {})
    for student in incidents:
        learners.pop(student, None)
    learners.update({s: entries for s, entries in incidents.items() if entries})
    report = {a: dict(sorted(v.items())) for a, v in sorted(report.items()) if v}
    if not report and not os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")


def add(path: str, assignment: str, student: str, entries: list[dict]) -> None:
    """Add entries to a learner's, keeping theirs (an entry already there is not doubled)."""
    if not entries:
        return
    old = learners_of(path, assignment).get(student)
    old = old if isinstance(old, list) else []
    update(path, assignment, {student: old + [e for e in entries if e not in old]})


def read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def learners_of(path: str, assignment: str) -> dict:
    """The record's learner -> entries of `assignment`, {} when the file has none (or no
    such shape)."""
    report = read(path)
    learners = report.get(assignment) if isinstance(report, dict) else None
    return learners if isinstance(learners, dict) else {}


@dataclass(frozen=True)
class Note:
    """One entry of the record, as text safe to print: the record is the staff's, but its
    submission and file names are the learners' own."""

    submission: str
    path: str  # "" when the entry is about the whole submission
    reason: str

    @classmethod
    def of(cls, entry) -> Note | None:
        if not isinstance(entry, dict):
            return None
        texts = [entry.get(k) for k in ("submission", "path", "reason")]
        if not all(isinstance(t, str) for t in texts):
            return None
        return cls(*(shown(t) for t in texts))


def notes(path: str, assignment: str) -> dict[str, list[Note]]:
    """Learner -> what the exchange left out of or renamed in their `assignment`."""
    found = {}
    for student, entries in learners_of(path, assignment).items():
        kept = [n for n in map(Note.of, entries if isinstance(entries, list) else []) if n]
        if isinstance(student, str) and kept:
            found[student] = kept
    return found
