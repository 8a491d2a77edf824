"""The reference answers, with 100 000 markdown cells of its own between and after them.

Read and written whole (nbformat, twice per autograde step) such a notebook
took 70 s against a 10 s notebook budget. The learner's markdown earns no
points: all but the first ones are cut, with the reason recorded.
"""

import nbformat

from coursekit.core import cells

ZERO = frozenset()
INCIDENT = "NotebookShapeLimit"
COUNT = 100_000


def tamper(nb, folder):
    notes = [nbformat.v4.new_markdown_cell(f"메모 {i}") for i in range(COUNT)]
    first_test = next(i for i, cell in enumerate(nb.cells) if cells.is_test(cell))
    nb.cells[first_test:first_test] = notes[: COUNT // 2]
    nb.cells += notes[COUNT // 2 :]
