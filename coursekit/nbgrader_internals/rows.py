"""Rows of nbgrader's own tables, read and written without its ORM.

Each function here knows nbgrader 0.9.6's tables and columns; what it relies on is
declared in `contract.TABLES` and checked against the installed nbgrader
(tests/test_nbgrader_contract.py).
"""

from __future__ import annotations

from coursekit.core.environment import use_environment_bin

# The tables that define an assignment, parents before children, as the foreign keys need them.
DEFINITION_TABLES = (
    "assignment",
    "notebook",
    "base_cell",
    "source_cell",
    "grade_cells",
    "solution_cells",
    "task_cells",
)


def assignment_layout(gb, assignment: str) -> tuple[str, dict]:
    """assignment id, and per notebook name: (notebook id, [(grade or task cell id,
    name)], [(solution or task cell id, name)]), as add_submission walks them."""
    found = gb.find_assignment(assignment)
    return (
        found.id,
        {
            notebook.name: (
                notebook.id,
                [(c.id, c.name) for c in [*notebook.grade_cells, *notebook.task_cells]],
                [(c.id, c.name) for c in [*notebook.solution_cells, *notebook.task_cells]],
            )
            for notebook in found.notebooks
        },
    )


def insert_new_submission(session, layout, student: str, timestamp, notebooks) -> bool:
    """A learner's first graded submission of an assignment, in one INSERT per table.

    The rows nbgrader's add_submission makes (the submission, a notebook
    row per notebook of the assignment, a grade per grade and task cell, a
    comment per solution and task cell; nbgrader's own defaults) with the
    values autograde then gives them, as the driver's ORM path writes them
    field for field, without its per-row flushes. False (nothing written)
    when the submission is already there: an extension, a regrade, a TA's
    scores, which the driver's ORM path keeps.

    `layout`: `assignment_layout`'s; `notebooks`: name -> what autograde gave (its
    late_submission_penalty, grades: cell -> (auto_score, needs_manual_grade),
    comments: cell -> auto_comment).
    """
    from nbgrader import utils
    from nbgrader.api import Comment, Grade, SubmittedAssignment, SubmittedNotebook, new_uuid
    from sqlalchemy import select

    existing = session.execute(
        select(SubmittedAssignment.id).where(
            SubmittedAssignment.assignment_id == layout[0],
            SubmittedAssignment.student_id == student,
        )
    ).first()
    if existing is not None:
        return False
    assignment_id, cells = layout
    submission_id = new_uuid()
    notebook_rows, grade_rows, comment_rows = [], [], []
    for name, (notebook_id, graded, commented) in cells.items():
        rows = notebooks.get(name)
        submitted_id = new_uuid()
        notebook_rows.append(
            {
                "id": submitted_id,
                "assignment_id": submission_id,
                "notebook_id": notebook_id,
                "flagged": False,
                "late_submission_penalty": rows.late_submission_penalty if rows else None,
            }
        )
        for cell_id, cell in graded:
            # a cell autograde gave no score keeps nbgrader's default (needs a TA)
            auto_score, needs_manual = (
                rows.grades[cell] if rows and cell in rows.grades else (None, True)
            )
            grade_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_score": auto_score,
                    "manual_score": None,
                    "extra_credit": None,
                    "needs_manual_grade": needs_manual,
                }
            )
        for cell_id, cell in commented:
            comment_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_comment": rows.comments.get(cell) if rows else None,
                    "manual_comment": None,
                }
            )
    session.execute(
        SubmittedAssignment.__table__.insert(),
        [
            {
                "id": submission_id,
                "assignment_id": assignment_id,
                "student_id": student,
                "timestamp": utils.parse_utc(timestamp),
                "extension": None,
            }
        ],
    )
    for table, rows in (
        (SubmittedNotebook.__table__, notebook_rows),
        (Grade.__table__, grade_rows),
        (Comment.__table__, comment_rows),
    ):
        if rows:
            session.execute(table.insert(), rows)
    return True


def scratch_rows(db_url: str, assignment: str, student: str):
    """(timestamp, notebook -> (late penalty, cell -> (auto_score, needs_manual_grade),
    cell -> auto_comment)) of the learner's submission in the scratch gradebook.

    Four SELECTs on nbgrader's tables, not a `Gradebook` (which inspects the
    schema and checks the course each time) and its lazy loads: the values
    its find_submission(...).notebooks, .grades and .comments give.
    """
    import nbgrader.api
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Comment,
        Grade,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    from sqlalchemy import select

    engine = nbgrader.api.create_engine(db_url, echo=False, future=True)
    try:
        with engine.connect() as db:
            submission_id, timestamp = db.execute(
                select(SubmittedAssignment.id, SubmittedAssignment.timestamp)
                .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
                .where(Assignment.name == assignment, SubmittedAssignment.student_id == student)
            ).one()
            names, notebooks = {}, {}
            for notebook_id, name, penalty in db.execute(
                select(
                    SubmittedNotebook.id, Notebook.name, SubmittedNotebook.late_submission_penalty
                )
                .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
                .where(SubmittedNotebook.assignment_id == submission_id)
            ):
                names[notebook_id] = name
                notebooks[name] = (penalty, {}, {})
            for notebook_id, cell, auto_score, needs_manual in db.execute(
                select(Grade.notebook_id, BaseCell.name, Grade.auto_score, Grade.needs_manual_grade)
                .join(BaseCell, BaseCell.id == Grade.cell_id)
                .where(Grade.notebook_id.in_(list(names)))
            ):
                notebooks[names[notebook_id]][1][cell] = (auto_score, needs_manual)
            for notebook_id, cell, auto_comment in db.execute(
                select(Comment.notebook_id, BaseCell.name, Comment.auto_comment)
                .join(BaseCell, BaseCell.id == Comment.cell_id)
                .where(Comment.notebook_id.in_(list(names)))
            ):
                notebooks[names[notebook_id]][2][cell] = auto_comment
    finally:
        engine.dispose()  # the next task writes a new scratch gradebook over the file
    return timestamp, notebooks


def read_definitions(db_url: str, course_id: str, assignments) -> dict[str, list[dict]]:
    """The gradebook's rows that define these assignments, table by table."""
    from nbgrader.api import Base, Gradebook
    from sqlalchemy import select

    tables = Base.metadata.tables
    result: dict[str, list[dict]] = {}
    with Gradebook(db_url, course_id) as gb:
        db = gb.db

        def rows(table, column, values):
            if not values:
                return []
            query = select(tables[table]).where(tables[table].c[column].in_(sorted(values)))
            return [dict(row._mapping) for row in db.execute(query)]

        assignment = tables["assignment"]
        query = select(assignment).where(
            assignment.c.name.in_(sorted(assignments)), assignment.c.course_id == course_id
        )
        result["assignment"] = [dict(row._mapping) for row in db.execute(query)]
        result["notebook"] = rows(
            "notebook", "assignment_id", {r["id"] for r in result["assignment"]}
        )
        notebooks = {r["id"] for r in result["notebook"]}
        result["base_cell"] = rows("base_cell", "notebook_id", notebooks)
        result["source_cell"] = rows("source_cell", "notebook_id", notebooks)
        cells = {r["id"] for r in result["base_cell"]}
        for table in ("grade_cells", "solution_cells", "task_cells"):
            result[table] = rows(table, "id", cells)
    for table in result:
        result[table].sort(key=lambda row: str(row["id"]))
    return result


def alembic_version(db_url: str) -> str | None:
    """The schema version the class gradebook is stamped with (None: not stamped)."""
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(db_url)
    try:
        if "alembic_version" not in inspect(engine).get_table_names():
            return None
        with engine.connect() as connection:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()


def stamp(db_url: str, version: str) -> None:
    """Stamp a new gradebook as nbgrader does (its two statements), before nbgrader opens it:
    nbgrader then sees a database and runs no `alembic heads` process (1.9 CPU-s) to learn
    the version; it still creates every table itself."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);")
            )
            connection.execute(
                text("INSERT INTO alembic_version (version_num) VALUES (:version);"),
                {"version": version},
            )
    finally:
        engine.dispose()


def write_definitions(
    db_url: str, course_id: str, definitions: dict[str, list[dict]], version: str | None = None
) -> None:
    """A gradebook (made by nbgrader, so its schema) holding only these rows; stamped with
    `version` (the class gradebook's), else with the version nbgrader asks alembic for."""
    from nbgrader.api import Base, Gradebook

    use_environment_bin()
    if version:
        stamp(db_url, version)
    with Gradebook(db_url, course_id) as gb:
        for table in DEFINITION_TABLES:
            if definitions.get(table):
                gb.db.execute(Base.metadata.tables[table].insert(), definitions[table])
        gb.db.commit()
