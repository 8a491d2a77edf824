"""Run learner-style code the way the notebook would, without a kernel.

`notebook_namespace(assignment, entry)` builds what a learner's kernel holds
when the hidden cells run: numpy as `np`, the seeded setup cell of the source
notebook (its globals n, h, X, ... are what a learner may wrongly read), every
contract function defined from the reference source, and then the entry's
code replacing one of them. Functions are defined *in* this namespace, so the
reference multi_head_attention calls the entry's split_heads, as in a kernel.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
from pathlib import Path

import nbformat
import numpy as np

from coursekit.core.course import contract_functions

ROOT = Path(__file__).resolve().parents[2]
SETUP_GRADE_ID = "seed_setup"


def source_notebook(assignment: str) -> Path:
    (path,) = (ROOT / "source" / assignment).glob("*.ipynb")
    return path


@functools.cache  # read once a session: hundreds of namespaces are built from it
def setup_code(assignment: str) -> str:
    """The source of the notebook's locked setup cells (grade_id starting with seed_setup)."""
    nb = nbformat.read(source_notebook(assignment), as_version=4)
    cells = [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "code"
        and cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith(SETUP_GRADE_ID)
    ]
    assert cells, f"{assignment}: no code cell with grade_id {SETUP_GRADE_ID}*"
    return "\n\n".join(cells)


def notebook_namespace(assignment: str, entry=None) -> dict:
    namespace: dict = {"np": np, "__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(setup_code(assignment), namespace)
    module = importlib.import_module(f"solutions.{assignment}")
    for name in contract_functions(assignment):
        exec(inspect.getsource(getattr(module, name)), namespace)
    if entry is not None:
        exec(entry.source, namespace)
    return namespace
