"""A notebook whose JSON is nested 200 000 deep: no JSON reader of the grader's parses it.

It is graded as a notebook that is not one (every cell 0, InvalidNotebook),
and the rest of the class is graded as if it were not there.
"""

import json

from tests.hostile import ALL_CELLS

ZERO = ALL_CELLS
INCIDENT = "InvalidNotebook"
DEPTH = 200_000


def corrupt(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"][0]["metadata"]["learner_note"] = "@DEEP@"
    text = json.dumps(nb, ensure_ascii=False)
    path.write_text(text.replace('"@DEEP@"', "[" * DEPTH + "]" * DEPTH), encoding="utf-8")
