"""The reference answers, with a cell metadata entry and an attachment nested 900 deep.

Python reads it, but copying or checking it recursively (nbconvert deep-copies
every notebook) overflows the recursion limit and failed the learner. The
entries nested deeper than the grader keeps are dropped, with the reason.
"""

import json

ZERO = frozenset()
INCIDENT = "NotebookShapeLimit"
DEPTH = 900


def nested(depth):
    return "[" * depth + "]" * depth


def corrupt(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"][0]["metadata"]["learner_note"] = "@DEEP@"
    nb["metadata"]["learner_state"] = "@DEEP@"
    text = json.dumps(nb, ensure_ascii=False).replace('"@DEEP@"', nested(DEPTH))
    path.write_text(text, encoding="utf-8")
