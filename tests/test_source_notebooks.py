"""Run with the reference solutions, does each source notebook print the page's numbers?"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

# What the course pages print, as the notebooks must print it.
PAGE_OUTPUTS = {
    "ch3_multihead": [
        "X: (4, 8)  Q, K, V: (4, 8) (4, 8) (4, 8)",
        "head 수: 2  head 하나의 폭: 4",
        "나눈 Q: (2, 4, 4)",
        "head 0 이 받은 '나는' 의 Q: [-1.19 -2.72 -0.72  2.36]",
        "Q 의 '나는' 앞 4칸     : [-1.19 -2.72 -0.72  2.36]",
        "나는   0.13  0.04  0.57  0.26",
        "나는   0.05  0.89  0.03  0.03",
        "가장 많이 참고: {'나는': '버스로', '학교에': '학교에', '버스로': '학교에', '갔다': '학교에'}",
        "head 출력: (2, 4, 4) → Concat: (4, 8) → W_O 뒤: (4, 8)",
        "Multi-Head 가중치 수: 256",
    ],
    "ch4_cross_attention": ["(3, 4) (3, 4) (3, 4)", "[1. 1. 1.]"],
}


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
    for line in PAGE_OUTPUTS[assignment]:
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
