"""Finding catalogs and running hidden checks in-process, for the test suite."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from tests import catalog as catalog_package
from tests.catalog import Catalog, Entry


def catalogs() -> dict[str, Catalog]:
    """Every assignment's catalog, by assignment id."""
    found = {}
    for info in pkgutil.iter_modules(catalog_package.__path__):
        module = importlib.import_module(f"tests.catalog.{info.name}")
        found[module.catalog.assignment] = module.catalog
    return found


def all_entries(kind: str) -> list[Entry]:
    return [e for c in catalogs().values() for e in c.entries if e.kind == kind]


def hidden_checks(assignment: str) -> dict[str, tuple[str, object]]:
    """grade_id -> (contract function it checks, check function).

    A hidden cell with grade_id G calls `check_G(<function>)`; the check's one
    parameter is named after the function it checks.
    """
    module = importlib.import_module(f"grader_tests.{assignment}")
    checks = {}
    for name, fn in vars(module).items():
        own = inspect.isfunction(fn) and fn.__module__ == module.__name__
        if name.startswith("check_") and own:
            (parameter,) = inspect.signature(fn).parameters
            checks[name.removeprefix("check_")] = (parameter, fn)
    return checks


def run_hidden_checks(assignment: str, namespace: dict) -> dict[str, str | None]:
    """grade_id -> None if the hidden check passed, else its failure message."""
    results = {}
    for grade_id, (function, check) in hidden_checks(assignment).items():
        try:
            check(namespace[function])
        except AssertionError as failure:
            results[grade_id] = str(failure)
        else:
            results[grade_id] = None
    return results
