"""What coursekit relies on of nbgrader's internals holds in the installed nbgrader.

coursekit.nbgrader_internals declares, once, every table, column, class,
method, trait and preprocessor order its shortcuts use (`contract`); an
nbgrader upgrade that changes one fails here, naming it. The checker itself is
shown to fail, by name, on a contract the installed nbgrader does not meet. And no
module outside the door uses those internals (on the commit before the door, the scan
finds them in seven modules: autograde/once_per_notebook.py, cluster/bundle.py, driver.py,
gradebook.py, task.py, worker.py and simulate/instructor.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import nbgrader.api
import pytest
from nbgrader.api import Base, Gradebook
from sqlalchemy import Column, ForeignKey, Integer, MetaData, String, Table, create_engine

from coursekit.nbgrader_internals import contract, new_gradebook
from coursekit.nbgrader_internals.new_gradebook import gradebook_url


def test_the_installed_nbgrader_has_all_the_door_relies_on():
    found = contract.problems()
    assert not found, "nbgrader changed what coursekit.nbgrader_internals relies on:\n" + (
        "\n".join(found)
    )


def test_a_gradebook_object_has_the_attributes_the_door_swaps(tmp_path):
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", "course") as gb:
        assert contract.instance_problems(gb) == []
    assert contract.instance_problems(object()) == [
        "nbgrader's Gradebook object has no attribute 'db'",
        "nbgrader's Gradebook object has no attribute 'engine'",
    ]


def with_column(table: str, column: str) -> dict[str, tuple[str, ...]]:
    return {**contract.TABLES, table: (*contract.TABLES[table], column)}


def test_a_missing_column_is_named():
    found = contract.problems(tables=with_column("grade", "auto_points"))
    assert found == ["nbgrader table 'grade' has no column 'auto_points'"]


def test_a_missing_table_is_named():
    found = contract.problems(tables={**contract.TABLES, "grade_points": ("id",)})
    assert found == ["nbgrader has no table 'grade_points'"]


def test_a_column_the_insert_does_not_write_is_named():
    """A column nbgrader adds to a table the door fills by INSERT would get no value."""
    tables = {**contract.TABLES, "grade": contract.TABLES["grade"][:-1]}
    found = contract.problems(tables=tables)
    assert found == [
        "nbgrader table 'grade' has a column 'needs_manual_grade' that "
        "rows.insert_new_submission does not write"
    ]


def test_a_definition_table_before_its_parent_is_named():
    order = ("assignment", "base_cell", "notebook", *contract.DEFINITION_TABLES[3:])
    found = contract.problems(definition_tables=order)
    assert found == [
        "nbgrader table 'base_cell' refers to 'notebook', not a definition table copied before it"
    ]


def test_a_changed_schema_is_named():
    """As an upgrade would change it: a column renamed in nbgrader's own metadata."""
    metadata = MetaData()
    for name, table in Base.metadata.tables.items():
        if name != "comment":
            table.to_metadata(metadata)
    Table(
        "comment",
        metadata,
        Column("id", String(32), primary_key=True),
        Column("notebook_id", String(32), ForeignKey("submitted_notebook.id")),
        Column("cell_id", String(32), ForeignKey("base_cell.id")),
        Column("automatic_comment", String(1024)),
        Column("manual_comment", String(1024)),
        Column("points", Integer),
    )
    found = contract.problems(metadata=metadata)
    assert found == [
        "nbgrader table 'comment' has no column 'auto_comment'",
        "nbgrader table 'comment' has a column 'automatic_comment' that "
        "rows.insert_new_submission does not write",
        "nbgrader table 'comment' has a column 'points' that "
        "rows.insert_new_submission does not write",
    ]


@pytest.mark.parametrize(
    ("owner", "name", "why"),
    [
        (
            "nbgrader.api.Gradebook",
            "find_points",
            "nbgrader's nbgrader.api.Gradebook has no 'find_points'",
        ),
        (
            "nbgrader.preprocessors.SaveAutoGrades",
            "_add_points",
            "nbgrader's nbgrader.preprocessors.SaveAutoGrades has no '_add_points'",
        ),
        (
            "nbgrader.preprocessors.OverwriteCells",
            "add_missing_points",
            "nbgrader's nbgrader.preprocessors.OverwriteCells has no 'add_missing_points'",
        ),
        ("nbgrader.api.Grader", "id", "nbgrader's nbgrader.api has no 'Grader'"),
        (
            "nbgrader.grading.Gradebook",
            "close",
            "nbgrader has no module 'nbgrader.grading' (for nbgrader.grading.Gradebook)",
        ),
    ],
)
def test_a_missing_method_or_class_is_named(owner, name, why):
    attributes = {**contract.ATTRIBUTES, owner: (*contract.ATTRIBUTES.get(owner, ()), name)}
    assert contract.problems(attributes=attributes) == [why]


def test_a_trait_is_a_name_the_door_may_rely_on():
    """add_missing_cells is a configurable trait of OverwriteCells, not a plain attribute."""
    attributes = {"nbgrader.preprocessors.OverwriteCells": ("add_missing_cells",)}
    assert contract.problems(attributes=attributes) == []


def test_a_changed_preprocessor_order_is_named():
    order = {"autograde_preprocessors": ("SaveAutoGrades", "Execute")}
    found = contract.problems(order=order)
    assert len(found) == 1
    assert found[0].startswith(
        "nbgrader's Autograde.autograde_preprocessors no longer runs "
        "SaveAutoGrades before Execute in that order"
    )
    found = contract.problems(order={"sanitize_preprocessors": ("CheckCellsTwice",)})
    assert found == ["nbgrader's Autograde.sanitize_preprocessors has no CheckCellsTwice"]
    found = contract.problems(order={"grading_preprocessors": ("Execute",)})
    assert found == ["nbgrader's Autograde has no trait 'grading_preprocessors'"]


# What only the door may write: nbgrader's tables as SQLAlchemy objects, its engine
# factory, a Gradebook's session swapped, nbgrader's SQLAlchemy warning silenced.
INTERNALS = ("__table__", "Base.metadata", "nbgrader.api.create_engine", ".db = ", "SAWarning")
COURSEKIT = Path(__file__).resolve().parent.parent / "coursekit"


def internals_used(text: str) -> list[str]:
    return [pattern for pattern in INTERNALS if pattern in text]


def test_only_the_door_touches_nbgrader_internals():
    door = COURSEKIT / "nbgrader_internals"
    outside = {
        str(path.relative_to(COURSEKIT)): internals_used(path.read_text())
        for path in sorted(COURSEKIT.rglob("*.py"))
        if door not in path.parents
    }
    assert {path: found for path, found in outside.items() if found} == {}


def test_the_scan_sees_an_internal_outside_the_door():
    text = "with warnings.catch_warnings():\n    warnings.simplefilter('ignore', SAWarning)\n"
    assert internals_used(text) == ["SAWarning"]
    assert internals_used("session = gb.db = CommitAtEnd(gb.db)") == [".db = "]


def tables_and_version(path: Path) -> tuple[list[tuple], list[tuple]]:
    with sqlite3.connect(path) as connection:
        schema = connection.execute(
            "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        return schema, connection.execute("SELECT * FROM alembic_version").fetchall()


def test_a_new_course_gradebook_is_stamped_in_process_as_nbgrader_stamps_it(tmp_path, monkeypatch):
    """The course's URL (`gradebook_url`): the same tables and version as nbgrader's own
    `alembic heads` gives a plain URL, and no alembic process."""
    plain = tmp_path / "plain.db"
    with Gradebook(f"sqlite:///{plain}", "course"):
        pass
    heads = nbgrader.api.get_alembic_version()

    def no_process() -> str:
        raise AssertionError("nbgrader ran `alembic heads` for a course gradebook")

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", no_process)
    course = tmp_path / "course.db"
    with Gradebook(gradebook_url(course), "course"):
        pass
    assert new_gradebook.schema_version() == heads
    assert tables_and_version(course) == tables_and_version(plain)
    assert tables_and_version(course)[1] == [(heads,)]


def test_a_database_with_a_table_is_left_as_it_is(tmp_path):
    """Only a database without tables is stamped: an older gradebook keeps its version
    (for `nbgrader db upgrade`), and a database of something else gets none."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    engine = create_engine(gradebook_url(path))
    with engine.connect():
        pass
    engine.dispose()
    with sqlite3.connect(path) as connection:
        names = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert names == [("notes",)]
