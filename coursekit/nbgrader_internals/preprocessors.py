"""Three of nbgrader's autograde preprocessors without their repeated work, for `make grade`.

Each writes and checks exactly what nbgrader's own does; `use_in(config)`
puts them in place of nbgrader's in the worker's configuration (stock
`nbgrader autograde` keeps nbgrader's classes). Measured with
bench/budget.py:

- CheckCellMetadata validates every cell's nbgrader metadata against its JSON
  schema with `jsonschema.validate`, which checks the schema itself first, each
  time: ~40 cells × 2 passes per notebook. The check depends only on the cell
  type and the metadata, so a cell whose (type, metadata) already passed in
  this process is not checked again.
- OverwriteCells looks each nbgrader cell up in the gradebook with a query
  of its own (its source cell, then its grade or task cell): ~60 queries
  per notebook. Here the notebook's source, grade and task cells are read
  once and each lookup answers from them, with the same MissingEntry for a
  cell the gradebook does not know; nbgrader's own per-cell code does the rest.
- SaveAutoGrades commits once per graded cell (a disk sync each on SQLite,
  and every loaded row expired) and finds each cell's grade or comment with
  a query of its own; here the submitted notebook's grades and comments are
  read once and the same changes go in one commit per notebook.
"""

from __future__ import annotations

import json
import traceback

from nbgrader.api import (
    Comment,
    Grade,
    Gradebook,
    GradeCell,
    MissingEntry,
    SolutionCell,
    TaskCell,
)
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import (
    CheckCellMetadata,
    NbGraderPreprocessor,
    OverwriteCells,
    SaveAutoGrades,
)

from coursekit.nbgrader_internals.engines import CommitAtEnd

# (cell type, metadata JSON) pairs that validated in this process
_PASSED: set[tuple[str, str]] = set()


class _RememberingValidator(MetadataValidator):
    def validate_cell(self, cell) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            return super().validate_cell(cell)
        key = (cell.cell_type, json.dumps(meta, sort_keys=True, default=str))
        if key in _PASSED:
            return None
        super().validate_cell(cell)
        # A changed cell type only logs a warning: keep logging it every time.
        if meta.get("cell_type", cell.cell_type) == cell.cell_type:
            _PASSED.add(key)
        return None


class CheckCellMetadataOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata, remembering the (cell type, metadata) pairs that passed."""

    def preprocess(self, nb, resources):
        try:
            _RememberingValidator().validate_nb(nb)
        except ValidationError:  # as nbgrader's: log, then fail the notebook
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from None
        return nb, resources


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades with one commit per notebook instead of one per cell."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        gradebook = Gradebook(self.db_url)
        with gradebook:
            session = gradebook.db = CommitAtEnd(gradebook.db)
            self.gradebook = _GradesReadOnce(
                gradebook, self.notebook_id, self.assignment_id, self.student_id
            )
            # nbgrader's per-cell pass (_add_score, _add_comment), then one commit.
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)
            session.commit_now()
        return nb, resources


def _read_once(rows: dict, name: str):
    """A row read once, or MissingEntry where the gradebook has none (as its find_* raise)."""
    if name not in rows:
        raise MissingEntry()
    return rows[name]


class _GradesReadOnce:
    """A gradebook whose `find_grade` and `find_comment` answer, for one submitted
    notebook, from its grades and comments read once (four queries); everything
    else goes to the gradebook. The rows are the session's own objects, so
    nbgrader's changes to them are written as before."""

    def __init__(self, gradebook, notebook_id: str, assignment_id: str, student_id: str):
        self._gradebook = gradebook
        self._submission = (notebook_id, assignment_id, student_id)
        self._grades: dict[str, object] = {}
        self._comments: dict[str, object] = {}
        try:
            submitted = gradebook.find_submission_notebook(notebook_id, assignment_id, student_id)
        except MissingEntry:
            return
        db = gradebook.db
        # as Gradebook.find_grade: a grade cell of that name, else a task cell
        for cell in (TaskCell, GradeCell):
            rows = db.query(Grade, cell.name).join(cell, cell.id == Grade.cell_id)
            for grade, name in rows.filter(Grade.notebook_id == submitted.id):
                self._grades[name] = grade
        # as Gradebook.find_comment: a solution cell of that name, else a task cell
        for cell in (TaskCell, SolutionCell):
            rows = db.query(Comment, cell.name).join(cell, cell.id == Comment.cell_id)
            for comment, name in rows.filter(Comment.notebook_id == submitted.id):
                self._comments[name] = comment

    def __getattr__(self, name):
        return getattr(self._gradebook, name)

    def find_grade(self, grade_id: str, notebook: str, assignment: str, student: str):
        if (notebook, assignment, student) != self._submission:
            return self._gradebook.find_grade(grade_id, notebook, assignment, student)
        return _read_once(self._grades, grade_id)

    def find_comment(self, solution_id: str, notebook: str, assignment: str, student: str):
        if (notebook, assignment, student) != self._submission:
            return self._gradebook.find_comment(solution_id, notebook, assignment, student)
        return _read_once(self._comments, solution_id)


class CellsReadOnce:
    """A gradebook whose `find_source_cell` and `find_graded_cell` answer, for one
    notebook, from its cells read once; everything else goes to the gradebook."""

    def __init__(self, gradebook, notebook_id: str, assignment_id: str):
        self._gradebook = gradebook
        self._notebook = (notebook_id, assignment_id)
        try:
            notebook = gradebook.find_notebook(notebook_id, assignment_id)
        except MissingEntry:
            self._source, self._graded = {}, {}
            return
        self._source = {cell.name: cell for cell in notebook.source_cells}
        # as Gradebook.find_graded_cell: a grade cell of that name, else a task cell
        self._graded = {cell.name: cell for cell in notebook.task_cells}
        self._graded.update({cell.name: cell for cell in notebook.grade_cells})

    def __getattr__(self, name):
        return getattr(self._gradebook, name)

    def find_source_cell(self, name: str, notebook: str, assignment: str):
        if (notebook, assignment) != self._notebook:
            return self._gradebook.find_source_cell(name, notebook, assignment)
        return _read_once(self._source, name)

    def find_graded_cell(self, name: str, notebook: str, assignment: str):
        if (notebook, assignment) != self._notebook:
            return self._gradebook.find_graded_cell(name, notebook, assignment)
        return _read_once(self._graded, name)


class OverwriteCellsReadOnce(OverwriteCells):
    """nbgrader's OverwriteCells with the notebook's cells read from the gradebook once."""

    def open_gradebook(self, resources) -> Gradebook:
        """The notebook's ids from the resources, as nbgrader's preprocess takes them."""
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.db_url = info["db_url"]
        return Gradebook(self.db_url)  # as nbgrader's: the default course id

    def preprocess(self, nb, resources):
        with self.open_gradebook(resources) as gradebook:
            self.gradebook = CellsReadOnce(gradebook, self.notebook_id, self.assignment_id)
            # nbgrader's per-cell pass, then its missing cells, as in its preprocess
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)
            if self.add_missing_cells:
                nb, resources = self.add_missing_grade_cells(nb, resources)
                nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources


REPLACEMENTS = {
    CheckCellMetadata: CheckCellMetadataOnce,
    OverwriteCells: OverwriteCellsReadOnce,
    SaveAutoGrades: SaveAutoGradesAtOnce,
}


def use_in(config) -> None:
    """Swap the replacements into a loaded nbgrader config's two autograde lists."""
    from nbgrader.converters.autograde import Autograde

    for trait in ("sanitize_preprocessors", "autograde_preprocessors"):
        section = config.Autograde
        current = section[trait] if trait in section else Autograde.class_traits()[trait].default()
        section[trait] = [REPLACEMENTS.get(pp, pp) for pp in current]
