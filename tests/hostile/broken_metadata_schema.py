"""Wrong split_heads, and test cells' nbgrader metadata broken in every way the schema forbids.

A schema version nbgrader does not know stops stock `nbgrader autograde` for
the whole class; a string where a dict or a number belongs fails the
notebook. Each such cell is the instructor's cell again, restored and graded:
the cells of the right answers keep their points.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "NotebookShapeLimit"  # the `tags` string repaired


def tamper(nb, folder):
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id")
        if name == "split_heads_seed":
            meta["schema_version"] = 99  # newer than nbgrader knows
        elif name == "split_heads_random_shapes":
            cell.metadata["nbgrader"] = "만점"  # not an object at all
        elif name == "split_heads_edge_cases":
            meta.update(points="전부", grade="yes", locked=None)
            del meta["solution"]
        elif name == "seed_setup":
            meta["schema_version"] = 1  # older than nbgrader reads
        elif name == "mha_random_shapes":  # a cell of a right answer: restored, full marks
            cell.metadata["nbgrader"] = 42
        elif name == "param_count_seed":  # likewise, its id gone
            del meta["grade_id"]
        elif name == "softmax_answer":
            meta["grade_id"] = ["softmax_answer"]  # not a string
            cell.metadata["tags"] = "skip-autograde"
