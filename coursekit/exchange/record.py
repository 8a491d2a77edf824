"""reports/exchange_incidents.json: assignment -> learner -> what was left out or renamed.

Written by the exchange's collect and zip_collect (each replaces the entries of
the learners it collects) and by stock autograde and generate_feedback when
they find a folder that no collect bounded (`exchange.bound`, which adds).
"""

from __future__ import annotations

import json
import os

DEFAULT_PATH = "reports/exchange_incidents.json"  # under the course root


def update(path: str, assignment: str, incidents: dict[str, list[dict]]) -> None:
    """Replace this assignment's entries of the learners collected now; keep everyone else's.

    Each entry is {"submission": inbound folder name, "path": file inside it
    ("" for the whole submission), "reason": Korean}.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            report = json.load(fh)
    except (OSError, ValueError):
        report = {}
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
    report = read(path)
    learners = report.get(assignment) if isinstance(report, dict) else None
    old = learners.get(student) if isinstance(learners, dict) else None
    old = old if isinstance(old, list) else []
    update(path, assignment, {student: old + [e for e in entries if e not in old]})


def read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}
