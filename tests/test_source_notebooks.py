"""Run with the reference solutions, does each source notebook print the page's numbers?"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from catalog import catalogs

ROOT = Path(__file__).resolve().parent.parent


def executed(assignment: str) -> nbformat.NotebookNode:
    (path,) = (ROOT / "source" / assignment).glob("*.ipynb")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


@pytest.fixture(scope="module")
def notebooks():
    cache = {}

    def get(assignment):
        if assignment not in cache:
            cache[assignment] = executed(assignment)
        return cache[assignment]

    return get


ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_prints_the_pages_numbers(notebooks, assignment):
    nb = notebooks(assignment)
    stdout = "".join(
        o.text for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout"
    )
    # What the course page prints, as the notebook must print it (catalog/<assignment>.py).
    expected = catalogs()[assignment].page_outputs
    assert expected, f"catalog/{assignment}.py lists no page_outputs"
    for line in expected:
        assert line in stdout


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_writes_no_error_or_stderr(notebooks, assignment):
    """No error, no warning (e.g. a missing Hangul glyph) anywhere."""
    nb = notebooks(assignment)
    problems = [
        (c.metadata.get("nbgrader", {}).get("grade_id"), o.get("ename") or o.get("text"))
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.output_type == "error" or o.get("name") == "stderr"
    ]
    assert problems == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_draws_heatmaps(notebooks, assignment):
    images = [
        o
        for c in notebooks(assignment).cells
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, "no heatmap was drawn"
