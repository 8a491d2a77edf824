"""Source notebooks written by hand, as an instructor's Create Assignment writes them."""

from __future__ import annotations

import textwrap

import nbformat


def nbgrader_cell(kind: str, source: str, grade_id: str, points: int = 0):
    """A cell with nbgrader's metadata (`kind`: setup, answer, test, manual or markdown)."""
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(textwrap.dedent(source).strip())
    grade = kind in ("test", "manual")
    cell.metadata["nbgrader"] = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": kind in ("setup", "test"),
        "schema_version": 3,
        "solution": kind in ("answer", "manual"),
        **({"points": points} if grade else {}),
    }
    return cell


def python_notebook(cells: list) -> nbformat.NotebookNode:
    """A notebook of `cells` for the python3 kernel."""
    nb = nbformat.v4.new_notebook()
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["kernelspec"] = kernel
    nb.cells = cells
    return nb
