"""A submission's JSON read within bounds (coursekit.autograde.shapes), without grading it.

The hostile scenarios grade such notebooks whole; these check the reader's own
rules on small inputs: an honest notebook is read as nbformat reads it, and
each bound and repair does what it says, with its reason.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import nbformat
import pytest

from coursekit.autograde import shapes

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "release" / "ch3_multihead" / "multihead.ipynb"


def shaped(data: dict, **bounds) -> tuple[nbformat.NotebookNode, list[str]]:
    limits = {"max_depth": 64, "max_cells": 2000, "max_text_cells": 1000, **bounds}
    shaper = shapes.Shaper(**limits)
    return shaper.notebook(json.loads(json.dumps(data))), shaper.reasons


def release_json() -> dict:
    return json.loads(RELEASE.read_text(encoding="utf-8"))


def test_an_honest_notebook_is_read_as_nbformat_reads_it():
    nb, reasons = shaped(release_json())
    assert reasons == []
    assert nb == nbformat.read(RELEASE, as_version=4)


def test_depth_counts_nesting_and_stops_past_the_limit():
    assert shapes.depth(3, 5) == 0
    assert shapes.depth({"a": [1, {"b": []}]}, 5) == 4
    assert shapes.depth(json.loads("[" * 500 + "]" * 500), 10) == 11


@pytest.mark.parametrize(
    "text, said",
    [
        ("{" * 1, "JSON 이 아닙니다"),
        ("[" * 100_000 + "]" * 100_000, "깊게 중첩"),
        ('{"nbformat": 4}', "cells"),
        ('{"cells": []}' + " " * 2000, "MiB 를 넘어"),
    ],
)
def test_what_is_no_notebook_is_refused_with_a_korean_reason(text, said):
    with pytest.raises(shapes.UnreadableError, match=said):
        shapes.load(io.BytesIO(text.encode()), max_bytes=1024 if "넘어" in said else 2**30)


def test_learner_text_cells_past_the_bound_are_cut_and_the_cut_said():
    data = release_json()
    instructor = len(data["cells"])
    data["cells"] += [
        {"cell_type": "markdown", "metadata": {}, "source": f"{i}"} for i in range(50)
    ]
    nb, reasons = shaped(data, max_text_cells=10)
    assert len(nb.cells) == instructor + 10
    assert [c.source for c in nb.cells[-10:]] == [str(i) for i in range(10)]
    assert any("50개 중 처음 10개" in r for r in reasons)


def test_cells_past_the_total_bound_are_cut():
    data = release_json()
    data["cells"] += [{"cell_type": "code", "metadata": {}, "source": "1"} for _ in range(100)]
    nb, reasons = shaped(data, max_cells=60)
    assert len(nb.cells) == 60
    assert any("처음 60개만" in r for r in reasons)


def test_cells_the_schema_rejects_are_repaired_or_dropped():
    data = release_json()
    data["cells"][0]["metadata"]["tags"] = "skip-autograde"  # a string, not a list
    data["cells"][1]["source"] = {"not": "text"}
    data["cells"][2]["cell_type"] = "heading"
    data["cells"][3]["outputs"] = [{"output_type": "forged"}]
    data["cells"][4]["metadata"]["deep"] = json.loads("[" * 100 + "]" * 100)
    nb, reasons = shaped(data)
    nbformat.validate(nb)  # what nbconvert checks after every preprocessor
    assert len(nb.cells) == len(data["cells"]) - 1
    assert "tags" not in nb.cells[0].metadata
    assert nb.cells[0].metadata["nbgrader"] == data["cells"][0]["metadata"]["nbgrader"]
    assert nb.cells[1].source == ""
    assert "deep" not in nb.cells[3].metadata
    assert len(reasons) == 4


def test_what_only_the_grader_writes_is_dropped_from_a_submission():
    data = release_json()
    data["metadata"][shapes.SHAPE_KEY] = {"unreadable": "forged"}
    data["cells"][0]["metadata"][shapes.NOTE_KEY] = True
    nb, _ = shaped(data)
    assert shapes.SHAPE_KEY not in nb.metadata
    assert shapes.NOTE_KEY not in nb.cells[0].metadata
