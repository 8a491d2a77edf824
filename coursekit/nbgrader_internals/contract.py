"""What the door relies on in nbgrader, declared once as data, and its check.

Written against nbgrader 0.9.6. `problems()` compares each name below with the
installed nbgrader and returns one line per difference, naming the table,
column, class, method or trait; tests/test_nbgrader_contract.py fails with
those lines. When it does, the shortcut that uses the name (the comment above
each entry says which) must be looked at again before the upgrade is taken.
"""

from __future__ import annotations

import importlib

from coursekit.nbgrader_internals.rows import DEFINITION_TABLES

NBGRADER_VERSION = "0.9.6"

# table -> the columns read or written by name (rows.py: scratch_rows, read_definitions,
# insert_new_submission; the driver's ledger lookups go through the ORM classes below)
TABLES: dict[str, tuple[str, ...]] = {
    "assignment": ("id", "name", "course_id"),
    "notebook": ("id", "name", "assignment_id"),
    "base_cell": ("id", "name", "notebook_id"),
    "source_cell": ("id", "notebook_id"),
    "grade_cells": ("id",),
    "solution_cells": ("id",),
    "task_cells": ("id",),
    "submitted_assignment": ("id", "assignment_id", "student_id", "timestamp", "extension"),
    "submitted_notebook": (
        "id",
        "assignment_id",
        "notebook_id",
        "flagged",
        "late_submission_penalty",
    ),
    "grade": (
        "id",
        "notebook_id",
        "cell_id",
        "auto_score",
        "manual_score",
        "extra_credit",
        "needs_manual_grade",
    ),
    "comment": ("id", "notebook_id", "cell_id", "auto_comment", "manual_comment"),
}

# Tables rows.insert_new_submission fills with one INSERT each, every column given: a
# column nbgrader adds would get no value there, where its ORM would give its default.
INSERTED_WHOLE = ("submitted_assignment", "submitted_notebook", "grade", "comment")

# The definition tables' one parent outside them: the course row, which `Gradebook(db_url,
# course_id)` makes itself in the worker's gradebook (rows.write_definitions).
MADE_BY_GRADEBOOK = ("course",)

# "module" or "module.Class" -> the names used of it
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    # rows, engines (share_engines replaces create_engine), driver, preprocessors
    "nbgrader.api": (
        "Base",
        "create_engine",
        "new_uuid",
        "MissingEntry",
        "Gradebook",
        "get_alembic_version",  # new_gradebook.answer_schema_version_in_process
    ),
    "nbgrader.utils": ("parse_utc",),  # rows.insert_new_submission
    # driver, cluster.gradebook, preprocessors, task.grant_extension
    "nbgrader.api.Gradebook": (
        "update_or_create_student",
        "update_or_create_submission",
        "find_assignment",
        "find_notebook",
        "find_submission",
        "find_submission_notebook",
        "find_source_cell",
        "find_graded_cell",
        "find_grade",
        "find_comment",
        "assignment_submissions",
        "assignments",
        "close",
    ),
    "nbgrader.api.Assignment": ("id", "name", "notebooks"),
    "nbgrader.api.Notebook": (
        "id",
        "name",
        "grade_cells",
        "task_cells",
        "solution_cells",
        "source_cells",
    ),
    "nbgrader.api.BaseCell": ("id", "name"),
    "nbgrader.api.GradeCell": ("id", "name"),
    "nbgrader.api.TaskCell": ("id", "name"),
    "nbgrader.api.SolutionCell": ("id", "name"),
    "nbgrader.api.SubmittedAssignment": (
        "id",
        "assignment_id",
        "student_id",
        "timestamp",
        "extension",
        "assignment",
        "student",
        "notebooks",
        "__table__",
    ),
    "nbgrader.api.SubmittedNotebook": (
        "id",
        "name",
        "grades",
        "comments",
        "late_submission_penalty",
        "notebook_id",
        "assignment_id",
        "__table__",
    ),
    "nbgrader.api.Grade": (
        "name",
        "notebook_id",
        "cell_id",
        "auto_score",
        "manual_score",
        "needs_manual_grade",
        "__table__",
    ),
    "nbgrader.api.Comment": ("name", "notebook_id", "cell_id", "auto_comment", "__table__"),
    "nbgrader.coursedir.CourseDirectory": ("get_existing_timestamp",),  # cluster.gradebook
    # preprocessors: nbgrader's per-cell pass and the steps around it, called by name
    "nbgrader.preprocessors.NbGraderPreprocessor": ("preprocess",),
    "nbgrader.preprocessors.CheckCellMetadata": ("preprocess",),
    "nbgrader.preprocessors.OverwriteCells": (
        "preprocess",
        "preprocess_cell",
        "add_missing_cells",
        "add_missing_grade_cells",
        "add_missing_task_cells",
    ),
    "nbgrader.preprocessors.SaveAutoGrades": ("preprocess", "_add_score", "_add_comment"),
    "nbgrader.nbgraderformat": ("MetadataValidator", "ValidationError"),
    "nbgrader.nbgraderformat.MetadataValidator": ("validate_cell", "validate_nb"),
    "nbgrader.converters.autograde.Autograde": (
        "sanitize_preprocessors",
        "autograde_preprocessors",
    ),
}

# Autograde's trait -> preprocessors (class names) in the order the door relies on:
# preprocessors.use_in swaps them by class; SandboxedExecute replaces Execute, and
# SaveAutoGrades reads what the execute step left.
PREPROCESSOR_ORDER: dict[str, tuple[str, ...]] = {
    "sanitize_preprocessors": ("OverwriteCells", "CheckCellMetadata"),
    "autograde_preprocessors": ("Execute", "SaveAutoGrades", "AssignLatePenalties"),
}

# Attributes of a `Gradebook` object (set by its __init__): the door swaps `db`
# (engines.commit_at_end) and shares `engine` (engines.share_engines).
GRADEBOOK_INSTANCE = ("db", "engine")


def problems(
    tables: dict[str, tuple[str, ...]] = TABLES,
    inserted_whole: tuple[str, ...] = INSERTED_WHOLE,
    definition_tables: tuple[str, ...] = DEFINITION_TABLES,
    attributes: dict[str, tuple[str, ...]] = ATTRIBUTES,
    order: dict[str, tuple[str, ...]] = PREPROCESSOR_ORDER,
    metadata=None,
) -> list[str]:
    """One line per name the door relies on that the installed nbgrader (or `metadata`,
    its tables) does not have as declared; [] when all hold."""
    if metadata is None:
        from nbgrader.api import Base

        metadata = Base.metadata
    found: list[str] = []
    known = metadata.tables
    for table, columns in tables.items():
        if table not in known:
            found.append(f"nbgrader has no table {table!r}")
            continue
        have = set(known[table].c.keys())
        found += [
            f"nbgrader table {table!r} has no column {column!r}"
            for column in columns
            if column not in have
        ]
    for table in inserted_whole:
        if table in known:
            new = sorted(set(known[table].c.keys()) - set(tables.get(table, ())))
            found += [
                f"nbgrader table {table!r} has a column {column!r} that "
                "rows.insert_new_submission does not write"
                for column in new
            ]
    for index, table in enumerate(definition_tables):
        if table not in known:
            found.append(f"nbgrader has no table {table!r} (a definition table)")
            continue
        for key in known[table].foreign_keys:
            parent = key.column.table.name
            if parent not in (*MADE_BY_GRADEBOOK, *definition_tables[:index]):
                found.append(
                    f"nbgrader table {table!r} refers to {parent!r}, "
                    "not a definition table copied before it"
                )
    for owner, names in attributes.items():
        thing, missing = _resolve(owner)
        if missing:
            found.append(missing)
            continue
        found += [f"nbgrader's {owner} has no {name!r}" for name in names if not _has(thing, name)]
    found += _order_problems(order)
    return found


def _resolve(owner: str):
    """The module or class named `owner`, or (None, why not)."""
    module, _, name = owner.rpartition(".")
    try:
        return importlib.import_module(owner), None
    except ImportError:
        pass
    try:
        thing = importlib.import_module(module)
    except ImportError:
        return None, f"nbgrader has no module {module!r} (for {owner})"
    if not hasattr(thing, name):
        return None, f"nbgrader's {module} has no {name!r}"
    return getattr(thing, name), None


def _has(thing, name: str) -> bool:
    if hasattr(thing, name):
        return True
    traits = getattr(thing, "class_traits", None)  # a traitlets class: its configurable traits
    return callable(traits) and name in traits()


def _order_problems(order: dict[str, tuple[str, ...]]) -> list[str]:
    from nbgrader.converters.autograde import Autograde

    found = []
    traits = Autograde.class_traits()
    for trait, wanted in order.items():
        if trait not in traits:
            found.append(f"nbgrader's Autograde has no trait {trait!r}")
            continue
        names = [cls.__name__ for cls in traits[trait].default()]
        missing = [name for name in wanted if name not in names]
        found += [f"nbgrader's Autograde.{trait} has no {name}" for name in missing]
        present = [name for name in wanted if name in names]
        if [n for n in names if n in present] != present:
            found.append(
                f"nbgrader's Autograde.{trait} no longer runs {' before '.join(present)} "
                f"in that order: {names}"
            )
    return found


def instance_problems(gradebook) -> list[str]:
    """What an open `Gradebook` lacks of GRADEBOOK_INSTANCE."""
    return [
        f"nbgrader's Gradebook object has no attribute {name!r}"
        for name in GRADEBOOK_INSTANCE
        if not hasattr(gradebook, name)
    ]
