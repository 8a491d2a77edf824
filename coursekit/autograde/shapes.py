"""A submitted notebook read within stated bounds, whatever its size and shape.

nbgrader reads a submission whole with nbformat (JSON, then a schema check of
every cell) and autograde reads and writes it twice more; nbconvert checks the
schema again after every preprocessor and fails the learner at the first
violation. A 5 MiB notebook of 100 000 markdown cells took 70 s that way; a
JSON nested past Python's recursion limit, a `tags` string instead of a list
or a cell without `source` failed the learner, and a notebook far larger than
any answer needs was read into memory whole.

`BoundedNotebookExporter` (nbgrader_config.py: `c.Autograde.exporter_class`,
the supported way to choose the exporter of a converter) reads the submitted
notebook in autograde's first (sanitize) step within these bounds, each a
setting of its own:

- at most `max_notebook_mb` bytes are read; a larger file is not a notebook
  this course grades;
- no value nested deeper than `max_depth` (a notebook of this course is 6
  deep); a cell's metadata entry, attachment or output nested deeper is dropped;
- at most `max_text_cells` markdown and raw cells of the learner's own (cells
  that claim no grade_id), then at most `max_cells` cells in all; the rest are
  dropped (a learner's markdown never earns points; the instructor's cells
  that a cut removes are put back by `roles.RestoreCells`);
- a cell nbformat's schema rejects is repaired (its outputs, which autograde
  clears anyway, a wrong `tags`, `id` or other metadata entry dropped) or,
  when it cannot be, dropped.

Every cut is written as a reason (in the course's language) into the notebook (NotebookShapeLimit,
recorded by SandboxedExecute in a note cell at the notebook's end, shown by
formgrader and the TA report and listed by `make grade`), and the rest is
graded as usual. A file that cannot be read as a notebook at all (too big, not
JSON, nested too deep to parse) is graded as nbgrader grades a missing
notebook: the instructor's cells from the gradebook with every answer left
as released, each test cell 0 with the reason (InvalidNotebook).

The autograde step reads only the notebook the sanitize step wrote, which is
already bounded. An honest notebook is read exactly as nbformat reads it.
"""

from __future__ import annotations

import json
import uuid

import nbformat
from nbconvert.exporters import NotebookExporter
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from traitlets import Integer

from coursekit.autograde.roles import InstructorCells, claimed_id
from coursekit.core import cells, incidents
from coursekit.core.messages import N_, _, ngettext
from coursekit.exchange import bound

# Where the sanitize step leaves what it cut (notebook metadata; the learner's is dropped).
SHAPE_KEY = "coursekit_shape"
# The note cell the sanitize step puts where cells were cut (cell metadata; likewise).
NOTE_KEY = "coursekit_shape_note"
TEXT_TYPES = ("markdown", "raw")


class UnreadableError(Exception):
    """The file cannot be read as a notebook within the bounds; the message is the reason."""


def depth(value, limit: int) -> int:
    """How deep `value` is nested (0 for a scalar), counting at most to `limit` + 1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level > limit:
                return level
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, level) for child in children]
    return deepest


def load(stream, max_bytes: int) -> dict:
    """A notebook file's JSON, read up to `max_bytes`; UnreadableError beyond or if not JSON."""
    try:
        data = stream.read(max_bytes + 1)
    except UnicodeDecodeError:
        raise UnreadableError(_("The notebook file is not UTF-8 text.")) from None
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > max_bytes:
        raise UnreadableError(
            _(
                "The notebook file is over {mib} MiB and was not read. If a cell has a great "
                "deal of output, clear the outputs and hand it in again."
            ).format(mib=max_bytes // 2**20)
        )
    try:
        value = json.loads(data)
    except RecursionError:
        raise UnreadableError(_("The notebook's JSON is nested too deep to read.")) from None
    except ValueError as error:
        raise UnreadableError(
            _("The notebook file is not valid JSON ({error}).").format(error=str(error)[:200])
        ) from None
    if not isinstance(value, dict) or not isinstance(value.get("cells"), list):
        raise UnreadableError(_("The notebook file has no list of cells (cells)."))
    return value


class Shaper:
    """Bounds and repairs one submitted notebook's JSON, noting what it cut."""

    def __init__(self, max_depth: int, max_cells: int, max_text_cells: int):
        self.max_depth, self.max_cells, self.max_text_cells = max_depth, max_cells, max_text_cells
        self.reasons: list[str] = []

    def notebook(self, data: dict) -> NotebookNode:
        metadata = data.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        metadata.pop(SHAPE_KEY, None)  # only the grader writes it
        self._drop_deep(metadata, N_("The notebook metadata {keys} was nested too deep: dropped."))
        if data.get("nbformat") != 4:
            data = _as_version_4(data)
            metadata = data["metadata"]
        minor = data.get("nbformat_minor")
        nb = nbformat.v4.new_notebook(metadata=metadata)
        nb.nbformat_minor = minor if isinstance(minor, int) and 0 <= minor <= 5 else 5
        kept = self._bounded_cells(data["cells"])
        built = [c for c in (self._cell(raw, nb.nbformat_minor) for raw in kept) if c]
        # The schema checked once for all the cells, not once per cell; a cell at a time, with
        # repairs, only when that fails: cells that pass together pass one by one.
        if not _valid_cells(built, nb.nbformat_minor):
            built = [c for c in (self._valid(c, nb.nbformat_minor) for c in built) if c]
        nb.cells = built
        return nb

    def _drop_deep(self, metadata: dict, reason: str) -> None:
        """Drop the keys of `metadata` nested deeper than max_depth, with a reason (a msgid
        naming them as {keys})."""
        deep = sorted(k for k, v in metadata.items() if depth(v, self.max_depth) > self.max_depth)
        for key in deep:
            del metadata[key]
        if deep:
            self.reasons.append(_(reason).format(keys=", ".join(deep)[:200]))

    def _bounded_cells(self, raw_cells: list) -> list:
        text = [
            i
            for i, c in enumerate(raw_cells)
            if isinstance(c, dict) and c.get("cell_type") in TEXT_TYPES and not _claims_id(c)
        ]
        dropped = set(text[self.max_text_cells :])
        kept = [c for i, c in enumerate(raw_cells) if i not in dropped]
        if dropped:
            self.reasons.append(
                ngettext(
                    "Of the {total} markdown and raw cells the learner made, the first {kept} "
                    "were kept and {dropped} was dropped (cells that score nothing).",
                    "Of the {total} markdown and raw cells the learner made, the first {kept} "
                    "were kept and {dropped} were dropped (cells that score nothing).",
                    len(dropped),
                ).format(total=len(text), kept=self.max_text_cells, dropped=len(dropped))
            )
        if len(kept) > self.max_cells:
            self.reasons.append(
                _(
                    "The notebook has {cells} cells, so only the first {graded} were graded. "
                    "Of the cells after them, the instructor's check cells were restored and "
                    "graded, and the others dropped."
                ).format(cells=len(kept), graded=self.max_cells)
            )
            kept = kept[: self.max_cells]
        return kept

    def _cell(self, raw, minor: int) -> NotebookNode | None:
        kind = raw.get("cell_type") if isinstance(raw, dict) else None
        if kind not in ("code", *TEXT_TYPES):
            self.reasons.append(_("A cell of no known cell type was dropped."))
            return None
        source = raw.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            self.reasons.append(_("A cell whose content (source) is not text was read as empty."))
            source = ""
        metadata = raw.get("metadata")
        metadata = dict(metadata) if isinstance(metadata, dict) else {}
        for key in (NOTE_KEY, SHAPE_KEY):
            metadata.pop(key, None)  # only the grader writes them
        self._drop_deep(metadata, N_("The cell metadata {keys} was nested too deep: dropped."))
        # nbformat's new_*_cell would check the schema before the repair below
        cell = nbformat.from_dict({"cell_type": kind, "metadata": metadata, "source": source})
        if minor >= 5:
            cell.id = raw["id"] if isinstance(raw.get("id"), str) else uuid.uuid4().hex[:8]
        if kind == "code":
            # autograde clears every output and count first (ClearOutput): none is read
            cell.outputs, cell.execution_count = [], None
        elif (
            isinstance(raw.get("attachments"), dict)
            and depth(raw["attachments"], self.max_depth) <= self.max_depth
        ):
            cell.attachments = raw["attachments"]
        return cell

    def _valid(self, cell, minor: int) -> NotebookNode | None:
        """The cell if nbformat's schema accepts it, repaired if it can be, else None."""
        if _is_valid_cell(cell, minor):
            return cell
        repaired = False
        if "id" in cell:
            cell.id = uuid.uuid4().hex[:8]
            repaired = _is_valid_cell(cell, minor)
        cell.pop("attachments", None)
        if not repaired and not _is_valid_cell(cell, minor):
            keep = {"nbgrader", "tags"}
            cell.metadata = NotebookNode({k: v for k, v in cell.metadata.items() if k in keep})
            if not isinstance(cell.metadata.get("tags"), list) or not all(
                isinstance(t, str) for t in cell.metadata["tags"]
            ):
                cell.metadata.pop("tags", None)
        if _is_valid_cell(cell, minor):
            self.reasons.append(_("The metadata of a malformed cell was repaired to read it."))
            return cell
        self.reasons.append(_("A cell whose format could not be repaired was dropped."))
        return None


def _as_version_4(data: dict) -> dict:
    """Another format version converted by nbformat, as nbgrader would read it."""
    try:
        converted = nbformat.reads(json.dumps(data), as_version=4)
        return json.loads(nbformat.writes(converted))
    except Exception as error:
        raise UnreadableError(
            _("The notebook format version ({version}) cannot be read ({error}).").format(
                version=data.get("nbformat"), error=error
            )
        ) from None


def _claims_id(raw: dict) -> bool:
    meta = raw.get("metadata")
    return isinstance(meta, dict) and claimed_id(raw) is not None


def _is_valid_cell(cell, minor: int) -> bool:
    return _valid_cells([cell], minor)


def _valid_cells(cells: list, minor: int) -> bool:
    """Does the schema accept each of `cells`, as nbconvert checks each step (relaxed)?

    The schema's check alone (iter_validate), which changes nothing: nbformat.validate would
    also give cells with the same id new ones, as nbconvert's check then does itself."""
    probe = nbformat.from_dict({"nbformat": 4, "nbformat_minor": minor, "metadata": {}})
    probe.cells = cells
    errors = nbformat.validator.iter_validate(probe, relax_add_props=True)
    return next(iter(errors), None) is None


def stand_in(resources, reason: str) -> NotebookNode:
    """The instructor's cells of the gradebook with every answer as released: what is
    graded for a file that is not a notebook (each test cell then scores 0)."""
    info = resources["nbgrader"]
    nb = nbformat.v4.new_notebook()
    nb.metadata[SHAPE_KEY] = {"unreadable": reason}
    try:
        with Gradebook(info["db_url"]) as gb:
            instructor = InstructorCells(gb, info["notebook"], info["assignment"], None)
            for name in instructor.order:
                row = instructor.source[name]
                make = nbformat.v4.new_code_cell
                if row.cell_type != "code":
                    make = nbformat.v4.new_markdown_cell
                cell = make(source=row.source or "")
                cell.metadata["nbgrader"] = instructor.metadata(name, None)
                cell.metadata.nbgrader["checksum"] = row.checksum
                nb.cells.append(cell)
    except MissingEntry:
        pass
    return nb


class BoundedNotebookExporter(NotebookExporter):
    """nbconvert's NotebookExporter reading a submission within bounds (see the module)."""

    max_notebook_mb = Integer(32, help="largest notebook file read (MiB)").tag(config=True)
    max_depth = Integer(64, help="deepest nesting of a notebook's JSON kept").tag(config=True)
    max_cells = Integer(2000, help="cells of one notebook graded at most").tag(config=True)
    max_text_cells = Integer(
        1000, help="markdown and raw cells of the learner's own kept at most"
    ).tag(config=True)

    def from_file(self, file_stream, resources=None, **kw):
        if not getattr(self.parent, "_sanitizing", True):  # autograde's second step: ours
            return super().from_file(file_stream, resources=resources, **kw)
        try:
            data = load(file_stream, self.max_notebook_mb * 2**20)
            shaper = Shaper(self.max_depth, self.max_cells, self.max_text_cells)
            nb = shaper.notebook(data)
        except UnreadableError as error:
            self.log.warning("Unreadable notebook graded as released: %s", error)
            nb = stand_in(resources, str(error))
            return self.from_notebook_node(nb, resources=resources, **kw)
        # What the pre-convert hook did to the files beside it (this process, same folder).
        files = bound.notes_for((resources or {}).get("metadata", {}).get("path") or ".")
        if shaper.reasons or files:
            shape = {}
            if shaper.reasons:
                self.log.warning("Notebook cut to its bounds: %s", " ".join(shaper.reasons))
                shape["cut"] = list(dict.fromkeys(shaper.reasons))
            if files:
                shape["files"] = files
            nb.metadata[SHAPE_KEY] = shape
            memo = _("Grader's note: parts of this notebook were cut to the grading bounds.")
            if not shaper.reasons:
                memo = _(
                    "Grader's note: some of the files beside the notebook were left out or renamed."
                )
            source = f"# {memo}"
            note = nbformat.v4.new_code_cell(
                source=source, metadata={"tags": [cells.SKIP_TAG], NOTE_KEY: True}
            )
            if nb.nbformat_minor < 5:
                note.pop("id", None)
            nb.cells.append(note)
        return self.from_notebook_node(nb, resources=resources, **kw)


def record_cuts(nb) -> bool:
    """In autograde's second step: record what the sanitize step cut, as the grader's
    incidents. True when the file was no notebook (every test cell then scores 0)."""
    shape = nb.metadata.pop(SHAPE_KEY, None)
    if not isinstance(shape, dict):
        return False
    if shape.get("unreadable"):
        for cell in nb.cells:
            if cells.is_test(cell):
                cell.outputs = []
                incidents.add(cell, incidents.INVALID_NOTEBOOK, str(shape["unreadable"]))
        return True
    notes = [c for c in nb.cells if c.metadata.get(NOTE_KEY)] or nb.cells[-1:]
    for reason in shape.get("cut", [])[:20]:
        incidents.add(notes[0], incidents.NOTEBOOK_SHAPE, str(reason))
    for reason in shape.get("files", [])[:20]:
        incidents.add(notes[0], incidents.SUBMISSION_FILES, str(reason))
    return False


def unreadable(path) -> str | None:
    """Why the file at `path` is no notebook the sanitize step can read with the default
    bounds (None when it can): for `make grade`, which grades such a file before its workers."""
    bounds = BoundedNotebookExporter.class_trait_names(config=True)
    limits = {name: BoundedNotebookExporter.class_traits()[name].default() for name in bounds}
    try:
        with open(path, "rb") as stream:
            data = load(stream, limits["max_notebook_mb"] * 2**20)
        Shaper(limits["max_depth"], limits["max_cells"], limits["max_text_cells"]).notebook(data)
    except UnreadableError as error:
        return str(error)
    except Exception as error:  # unreadable bytes, a file that vanished
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None
