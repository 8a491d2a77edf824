"""Wrong split_heads; its test cells' points raised and grade_ids changed, a duplicate added.

A raised `points` would count more, a grade_id of another cell would take that
cell's place, an unknown grade_id would leave the cell ungraded. Points and
ids come from the gradebook: each test cell is graded once, as released.
"""

import copy

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None


def tamper(nb, folder):
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id")
        if name == "split_heads_seed":
            meta["points"] = 100
        elif name == "split_heads_random_shapes":
            meta["grade_id"] = "softmax_seed_values"  # another test cell's id, seen first
            cell.source = "pass"
        elif name == "split_heads_edge_cases":
            meta["grade_id"] = "bonus_points"  # an id the gradebook does not know
            meta["points"] = 1000
        elif name == "why_256_answer":
            meta["points"] = 50
    # A second copy of a passing test cell (the first one counts only once).
    seed = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "param_count_seed"
    )
    nb.cells.insert(len(nb.cells) - 1, copy.deepcopy(seed))
