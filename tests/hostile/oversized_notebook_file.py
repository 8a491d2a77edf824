"""The reference answers, and a 40 MiB output in one cell: a file larger than the grader reads.

Reading it whole, and the class's other big files, would cost memory and time
without bound; past `BoundedNotebookExporter.max_notebook_mb` (32 MiB) the
file is graded as no notebook (every cell 0) with the reason.
"""

import nbformat

from tests.hostile import ALL_CELLS

ZERO = ALL_CELLS
INCIDENT = "InvalidNotebook"


def tamper(nb, folder):
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="가" * (14 * 2**20))]
