"""`make grade`'s start-up and per-notebook savings change nothing that is checked or written.

- Every interpreter of the environment (coursekit/core/coursekit-start.pth, which
  make venv installs) keeps jsonschema from importing the optional rfc3987_syntax
  (a Lark parser built at import, for two string formats no notebook or Jupyter
  event schema uses): notebooks are still validated, bad ones still fail.
- Workers share one SQLAlchemy engine per gradebook URL (`engines.share_engines` in
  coursekit.nbgrader_internals).
- `preprocessors.OverwriteCellsReadOnce` (coursekit.nbgrader_internals) reads a notebook's
  cells once and does what nbgrader's OverwriteCells does, cell for cell, on a tampered
  submission.
"""

from __future__ import annotations

import copy
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit.nbgrader_internals import preprocessors
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.xdist_group("grading_startup"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]

PROBE = """
import json, sys
import jsonschema, nbformat  # first, as a stock nbgrader or Jupyter command does
from nbformat.validator import get_validator
from nbgrader.nbgraderformat import MetadataValidator, ValidationError

result = {"rfc3987_syntax": sys.modules.get("rfc3987_syntax", "absent") is not None}
nb = nbformat.read(sys.argv[1], as_version=4)
result["valid"] = [nbformat.validate(nb) is None]
broken = json.loads(json.dumps(nb))
broken["cells"][0]["cell_type"] = "spreadsheet"
for name in ("fastjsonschema", "jsonschema"):  # nbformat's two validators
    validator = get_validator(4, nb.nbformat_minor, name=name)
    validator.validate(json.loads(json.dumps(nb)))
    try:
        validator.validate(broken)
        result["valid"].append("broken notebook passed " + name)
    except Exception:
        result["valid"].append(True)
MetadataValidator().validate_nb(nb)
bad = nbformat.from_dict(json.loads(json.dumps(nb)))
graded = next(c for c in bad.cells if c.metadata.get("nbgrader", {}).get("grade"))
del graded.metadata.nbgrader["points"]
try:
    MetadataValidator().validate_nb(bad)
    result["valid"].append("metadata without points passed")
except ValidationError:
    result["valid"].append(True)
# jsonschema's other format checkers are still there; only the two IRI ones are not
checker = jsonschema.FormatChecker()
result["formats"] = sorted({"iri", "iri-reference", "email", "ipv4"} & set(checker.checkers))
print(json.dumps(result))
"""


def test_a_process_of_the_environment_starts_without_rfc3987_syntax_and_still_validates():
    notebook = next((ROOT / "source").glob("*/*.ipynb"))
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(notebook)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["rfc3987_syntax"] is False
    assert result["valid"] == [True] * 4
    assert result["formats"] == ["email", "ipv4"]


def test_no_notebook_or_event_schema_uses_the_formats_left_unchecked():
    import jupyter_events
    import jupyter_server
    import jupyterhub
    import nbformat
    import nbgrader.nbgraderformat
    import yaml

    schemas = [
        *Path(nbformat.__file__).parent.glob("v*/*.json"),
        *Path(nbgrader.nbgraderformat.__file__).parent.glob("*.json"),
    ]
    # what jupyter_events validates in the servers and the hub: their event schemas, and
    # its own schemas of a schema
    events = [
        *Path(jupyter_server.__file__).parent.glob("event_schemas/**/*.yaml"),
        *Path(jupyterhub.__file__).parent.glob("event-schemas/**/*.yaml"),
        *Path(jupyter_events.__file__).parent.glob("schemas/**/*.yml"),
        *Path(jupyter_events.__file__).parent.glob("schemas/**/*.json"),
    ]
    assert schemas and len(events) >= 4, events

    def formats(node):
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                yield node["format"]
            for value in node.values():
                yield from formats(value)
        elif isinstance(node, list):
            for value in node:
                yield from formats(value)

    read = [json.loads(path.read_text()) for path in schemas]
    read += [yaml.safe_load(path.read_text()) for path in events]
    used = {f for schema in read for f in formats(schema)}
    assert not used & {"iri", "iri-reference"}


def test_workers_share_one_engine_per_gradebook(tmp_path):
    import nbgrader.api
    from nbgrader.api import Gradebook

    from coursekit.nbgrader_internals import engines

    original = nbgrader.api.create_engine
    try:
        engines.share_engines()
        engines.share_engines()  # once is enough; twice changes nothing
        url = f"sqlite:///{tmp_path / 'gradebook.db'}"
        with Gradebook(url, "c") as first:
            first.update_or_create_student("a")
            first.db.commit()
        with Gradebook(url, "c") as second:  # usable after the first one's dispose
            assert second.engine is first.engine
            assert [s.id for s in second.students] == ["a"]
        with Gradebook(f"sqlite:///{tmp_path / 'other.db'}", "c") as other:
            assert other.engine is not first.engine
    finally:
        nbgrader.api.create_engine = original


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    sandbox = CourseSandbox(tmp_path_factory.mktemp("course"))
    assignment = sandbox.assignments()[0]
    sandbox.generate(assignment)
    return sandbox, assignment


def tampered(nb, unknown_cell: bool):
    """A release notebook with every kind of change OverwriteCells repairs or reports.

    A grade cell the gradebook does not know loses its grade_id, on which
    nbgrader's own add_missing_cells then fails (stock and make grade's alike): it is
    tried only without add_missing_cells."""
    nb = copy.deepcopy(nb)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    graded = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade")]
    locked = [
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("locked") and not c.metadata["nbgrader"].get("grade")
    ]
    nb.cells[locked[0]].source += "\nprint('changed')"  # a locked cell edited
    nb.cells[locked[1]].metadata.nbgrader["locked"] = False  # unlocked
    nb.cells[graded[0]].metadata.nbgrader["points"] = 99  # points raised
    nb.cells[graded[1]].metadata.nbgrader["checksum"] = "forged"
    if unknown_cell:
        unknown = copy.deepcopy(nb.cells[graded[2]])
        unknown.metadata.nbgrader["grade_id"] = "not-in-the-gradebook"
        nb.cells.append(unknown)
    # nbgrader puts a deleted cell back after the cell before it in the source, which it
    # finds only when that one is a grade or solution cell: delete such a one
    gone = next(
        i
        for i in reversed(graded)
        if {"grade", "solution"}
        & {k for k, v in nb.cells[i - 1].metadata.get("nbgrader", {}).items() if v is True}
    )
    del nb.cells[gone]  # a test cell deleted: added back from the gradebook
    assert len(set(filter(None, ids))) > 5
    return nb


def run_overwrite(cls, course, nb, caplog, add_missing: bool):
    from traitlets.config import Config

    sandbox, assignment = course
    config = Config()
    config.OverwriteCells.add_missing_cells = add_missing
    resources = {
        "nbgrader": {
            "notebook": Path(sandbox.notebook_name(assignment)).stem,
            "assignment": assignment,
            "db_url": sandbox.db_url,
            "student": "someone",
        }
    }
    caplog.clear()
    preprocessor = cls(config=config)
    preprocessor.log = logging.getLogger("overwrite-test")
    with caplog.at_level(logging.WARNING, logger="overwrite-test"):
        result, _ = preprocessor.preprocess(copy.deepcopy(nb), resources)
    return result, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("add_missing", [True, False])
def test_overwrite_cells_read_once_does_what_nbgrader_does(course, caplog, add_missing):
    from nbgrader.preprocessors import OverwriteCells

    sandbox, assignment = course
    nb = tampered(sandbox.release_notebook(assignment), unknown_cell=not add_missing)
    stock, stock_log = run_overwrite(OverwriteCells, course, nb, caplog, add_missing)
    once, once_log = run_overwrite(
        preprocessors.OverwriteCellsReadOnce, course, nb, caplog, add_missing
    )
    assert once == stock
    assert once_log == stock_log
    assert len(stock_log) >= 5  # the changes were seen and reported
    assert any("not-in-the-gradebook" in line for line in stock_log) is not add_missing
    assert (len(stock.cells) == len(nb.cells) + 1) is add_missing  # the deleted cell is back
    assert stock != nb  # and repaired


def test_make_grade_swaps_in_overwrite_cells_read_once():
    from nbgrader.preprocessors import OverwriteCells
    from traitlets.config import Config

    config = Config()
    preprocessors.use_in(config)
    assert OverwriteCells not in config.Autograde.sanitize_preprocessors
    assert preprocessors.OverwriteCellsReadOnce in config.Autograde.sanitize_preprocessors


def test_the_pools_parent_preloads_what_the_instructors_locked_cells_import(course):
    """bench.pool, the benchmark's reference, preloads as make grade's pool did."""
    from bench import pool
    from coursekit.cluster import worker
    from coursekit.core.course import gradebook_place

    sandbox, assignment = course
    source = "import numpy as np\n%matplotlib inline\nfrom grader_tests import checks as c\n"
    source += "from . import nothing\nfrom os.path import *\n"
    assert pool._imported_modules(source) == [
        "numpy",
        "grader_tests",
        "grader_tests.checks",
        "os.path",
    ]
    assert pool._imported_modules("def broken(:\n") == []
    pool.preload(gradebook_place(sandbox.root), [assignment, "no-such-assignment"])
    assert f"grader_tests.{assignment}" in sys.modules
    assert all(name in sys.modules for name in worker.FIRST_NOTEBOOK_MODULES)
