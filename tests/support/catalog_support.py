"""Running an assignment's hidden checks in-process, for the test suite."""

from __future__ import annotations

from catalog import all_entries, catalogs
from coursekit.checks.declared import checks_of

__all__ = ["all_entries", "catalogs", "run_hidden_checks"]


def run_hidden_checks(assignment: str, namespace: dict) -> dict[str, str | None]:
    """grade_id -> None if the hidden check passed, else its failure message."""
    checks = checks_of(assignment)
    results = {}
    for check in checks:
        try:
            checks.run(check.grade_id, namespace[check.function])
        except AssertionError as failure:
            results[check.grade_id] = str(failure)
        else:
            results[check.grade_id] = None
    return results
