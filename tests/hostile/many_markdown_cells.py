"""The reference answers, with 100 000 markdown cells of its own between and after them.

Read and written whole (nbformat, twice per autograde step) such a notebook
took 70 s against a 10 s notebook budget. The learner's markdown earns no
points: all but the first ones are cut, with the reason recorded.
"""

import json

import nbformat

from coursekit.core import cells

ZERO = frozenset()
INCIDENT = "NotebookShapeLimit"
COUNT = 100_000


def corrupt(path):
    # Added to the file nbformat wrote, as plain JSON: nbformat's schema check and writer
    # would take 4 CPU-s over these cells each time the class is built.
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = [
        {"id": f"note-{i}", "cell_type": "markdown", "metadata": {}, "source": f"메모 {i}"}
        for i in range(COUNT)
    ]
    read = nbformat.from_dict(data["cells"])
    first_test = next(i for i, cell in enumerate(read) if cells.is_test(cell))
    data["cells"][first_test:first_test] = notes[: COUNT // 2]
    data["cells"] += notes[COUNT // 2 :]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
