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
    # The cells new_markdown_cell makes, without its schema check of each (10 CPU-s for
    # 100 000): nbformat.write checks the whole notebook once.
    notes = [
        nbformat.from_dict(
            {"id": f"note-{i}", "cell_type": "markdown", "metadata": {}, "source": f"메모 {i}"}
        )
        for i in range(COUNT)
    ]
    first_test = next(i for i, cell in enumerate(nb.cells) if cells.is_test(cell))
    nb.cells[first_test:first_test] = notes[: COUNT // 2]
    nb.cells += notes[COUNT // 2 :]
