"""Cell roles from the instructor's notebook, never from the submission (autograde's sanitize step).

A submitted notebook's JSON is the learner's to write: the `nbgrader` metadata
(grade, solution, locked, points, grade_id, schema version) and the tags of
every cell. nbgrader's OverwriteCells puts back the source of locked cells,
their points and their locked flag, but keeps a flipped `solution` flag (the
test cell goes to manual grading), a `skip-autograde` tag (the test cell is not
run and keeps full credit), and fails the notebook — or, for a schema version
it does not know, stops `nbgrader autograde` for the whole class — on metadata
it cannot read.

`RestoreCells` takes the place of OverwriteCells in the sanitize list
(nbgrader_config.py), first of all after ClearOutput:

- each cell is known by its grade_id alone, when the gradebook knows that id
  (the last such cell wins, as nbgrader's DeduplicateIds decides); its whole
  `nbgrader` metadata is rebuilt from the gradebook's rows of the instructor's
  release (grade, solution, locked, points, task) and its tags are the ones
  the instructor's source notebook gives that cell;
- any other cell is a cell of the learner's own: whatever `nbgrader` metadata
  it carries is dropped (a learner's tags on it only concern the learner's
  own code);
- then nbgrader's own per-cell pass (`OverwriteCells.preprocess_cell`: cell
  type, locked source, points, checksum), with the gradebook read once;
- a grade, task or locked code cell that is missing — deleted, or made
  unrecognisable — is put back from the gradebook after the instructor's
  cell before it (nbgrader's `add_missing_cells`, which fails when that
  cell is not an answer or a test), so it is graded, not sent to manual
  grading.

An honest submission's metadata already equals the gradebook's, so it is
graded exactly as nbgrader's OverwriteCells grades it.
"""

from __future__ import annotations

import os

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from coursekit.nbgrader_internals.preprocessors import CellsReadOnce, OverwriteCellsReadOnce


def claimed_id(cell) -> str | None:
    """The grade_id a cell's metadata claims, or None when it claims none readable."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(meta, dict):
        return None
    name = meta.get("grade_id")
    return name if isinstance(name, str) else None


class InstructorCells:
    """One notebook's cells as the instructor released them: the gradebook's rows,
    and the tags and order of the instructor's source notebook."""

    def __init__(self, gradebook, notebook_id: str, assignment_id: str, source_path: str | None):
        notebook = gradebook.find_notebook(notebook_id, assignment_id)
        self.source = {cell.name: cell for cell in notebook.source_cells}
        self.grade = {cell.name: cell for cell in notebook.grade_cells}
        self.task = {cell.name: cell for cell in notebook.task_cells}
        self.solution = {cell.name for cell in notebook.solution_cells}
        self.tags: dict[str, list[str]] = {}
        order = [cell.name for cell in notebook.source_cells]
        instructor = _read_source_notebook(source_path)
        if instructor is not None:
            named = [(claimed_id(c), c) for c in instructor.cells]
            self.tags = {n: list(c.metadata.get("tags", [])) for n, c in named if n in self.source}
            known = [n for n, _ in named if n in self.source]
            order = known + [n for n in order if n not in set(known)]
        self.order = order

    def metadata(self, name: str, learner: dict | None) -> NotebookNode:
        """The `nbgrader` metadata of cell `name` as the instructor's release has it."""
        source = self.source[name]
        meta = {
            "grade": name in self.grade,
            "grade_id": name,
            "locked": bool(source.locked),
            "schema_version": 3,
            "solution": name in self.solution,
        }
        if name in self.grade or name in self.task:
            meta["points"] = _points((self.grade.get(name) or self.task[name]).max_score)
        if name in self.task:
            meta["task"] = True
        if isinstance(learner, dict) and "checksum" in learner:
            meta["checksum"] = learner["checksum"]  # OverwriteCells sets the gradebook's
        return NotebookNode(meta)


def _points(max_score: float) -> int | float:
    """Points as the release notebook writes them (1, not 1.0)."""
    return int(max_score) if float(max_score).is_integer() else float(max_score)


def _read_source_notebook(path: str | None):
    if not path or not os.path.isfile(path):
        return None
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # an instructor's broken file: tags fall back to none
        return None


class RestoreCells(OverwriteCellsReadOnce):
    """nbgrader's OverwriteCells with every cell's role taken from the instructor's notebook."""

    def preprocess(self, nb, resources):
        with self.open_gradebook(resources) as gradebook:
            try:
                self.instructor = InstructorCells(
                    gradebook, self.notebook_id, self.assignment_id, self._source_path()
                )
            except MissingEntry:  # not a notebook of the gradebook's: autograde skips it
                return nb, resources
            self._restore_roles(nb)
            self.gradebook = CellsReadOnce(gradebook, self.notebook_id, self.assignment_id)
            # nbgrader's per-cell pass (cell type, locked source, points, checksum)
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)
            nb.cells = self._with_missing_cells(nb.cells)
        return nb, resources

    def _source_path(self) -> str | None:
        coursedir = CourseDirectory(config=self.config)
        folder = coursedir.format_path(coursedir.source_directory, ".", self.assignment_id)
        return os.path.join(folder, f"{self.notebook_id}.ipynb")

    def _restore_roles(self, nb) -> None:
        known = self.instructor.source
        last = {claimed_id(c): i for i, c in enumerate(nb.cells) if claimed_id(c) in known}
        for index, cell in enumerate(nb.cells):
            name = claimed_id(cell)
            if name in known and last[name] == index:
                cell.metadata["nbgrader"] = self.instructor.metadata(
                    name, cell.metadata.get("nbgrader")
                )
                tags = self.instructor.tags.get(name)
                if tags:
                    cell.metadata["tags"] = list(tags)
                else:
                    cell.metadata.pop("tags", None)
            elif "nbgrader" in cell.get("metadata", {}):
                if name is not None:
                    self.log.warning(
                        "Cell '%s' is not the instructor's: graded as the learner's", name
                    )
                del cell.metadata["nbgrader"]

    def _with_missing_cells(self, submitted: list) -> list:
        """The cells with each missing grade, task and locked code cell put back after
        the instructor's cell before it (at the start when none is before it)."""
        present = {claimed_id(c): i for i, c in enumerate(submitted) if claimed_id(c)}
        after: dict[int, list] = {}
        anchor = -1
        for name in self.instructor.order:
            if name in present:
                anchor = max(anchor, present[name])
                continue
            cell = self._missing_cell(name)
            if cell is not None:
                self.log.warning("Missing cell %s encountered, adding to notebook", name)
                after.setdefault(anchor, []).append(cell)
        cells = list(after.get(-1, []))
        for index, cell in enumerate(submitted):
            cells.append(cell)
            cells += after.get(index, [])
        return cells

    def _missing_cell(self, name: str) -> NotebookNode | None:
        instructor = self.instructor
        source = instructor.source[name]
        if name in instructor.grade:
            max_score = instructor.grade[name].max_score
            cell = self.missing_cell_transform(
                source, max_score, is_solution=name in instructor.solution
            )
        elif name in instructor.task:
            cell = self.missing_cell_transform(
                source, instructor.task[name].max_score, is_task=True
            )
        elif source.locked and source.cell_type == "code":  # a setup cell the tests need
            cell = self.missing_cell_transform(source, 0)
            cell.source = source.source  # a setup cell runs as the instructor wrote it
        else:
            return None
        cell = nbformat.from_dict(cell)  # nested dicts as NotebookNodes, as a read cell has
        cell.metadata["nbgrader"] = instructor.metadata(name, None)
        cell.metadata["nbgrader"]["checksum"] = source.checksum
        if instructor.tags.get(name):
            cell.metadata["tags"] = list(instructor.tags[name])
        return cell
