"""Wrong split_heads, and its test cells marked as answers (`solution: true`), locked no more.

nbgrader would send such a cell to manual grading (no auto score) and make
`make grade` fail; the flags come from the gradebook's copy of the release.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
FLIPPED = {"split_heads_seed", "split_heads_random_shapes", "split_heads_edge_cases"}


def tamper(nb, folder):
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") in FLIPPED:
            meta["solution"] = True
            meta["locked"] = False
            cell.source = "pass"
