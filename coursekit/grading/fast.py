"""Two of nbgrader's autograde preprocessors without their repeated work, for `make grade`.

Each writes and checks exactly what nbgrader's own does; `use_in(config)`
puts them in place of nbgrader's in the worker's configuration (stock
`nbgrader autograde` keeps nbgrader's classes). Measured with
`make grade --budget`:

- CheckCellMetadata validates every cell's nbgrader metadata against its JSON
  schema with `jsonschema.validate`, which checks the schema itself first, each
  time: ~40 cells × 2 passes per notebook. The check depends only on the cell
  type and the metadata, so a cell whose (type, metadata) already passed in
  this process is not checked again.
- SaveAutoGrades commits once per graded cell (a disk sync each on SQLite,
  and every loaded row expired); here the same changes go in one commit per
  notebook.
"""

from __future__ import annotations

import json
import traceback

from nbgrader.api import Gradebook
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import CheckCellMetadata, NbGraderPreprocessor, SaveAutoGrades

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


class _CommitAtEnd:
    """A gradebook session whose commits are flushes, until `commit_now`."""

    def __init__(self, session):
        self._session = session

    def __getattr__(self, name):
        return getattr(self._session, name)

    def commit(self) -> None:
        self._session.flush()

    def commit_now(self) -> None:
        self._session.commit()


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades with one commit per notebook instead of one per cell."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        self.gradebook = Gradebook(self.db_url)
        with self.gradebook:
            session = self.gradebook.db = _CommitAtEnd(self.gradebook.db)
            # nbgrader's per-cell pass (_add_score, _add_comment), then one commit.
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)
            session.commit_now()
        return nb, resources


REPLACEMENTS = {CheckCellMetadata: CheckCellMetadataOnce, SaveAutoGrades: SaveAutoGradesAtOnce}


def use_in(config) -> None:
    """Swap the replacements into a loaded nbgrader config's two autograde lists."""
    from nbgrader.converters.autograde import Autograde

    for trait in ("sanitize_preprocessors", "autograde_preprocessors"):
        section = config.Autograde
        current = section[trait] if trait in section else Autograde.class_traits()[trait].default()
        section[trait] = [REPLACEMENTS.get(pp, pp) for pp in current]
