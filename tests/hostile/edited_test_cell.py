"""Wrong split_heads, and its test cells (visible and hidden) edited to pass."""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
EDITED = {"split_heads_seed", "split_heads_random_shapes", "split_heads_edge_cases"}


def tamper(nb, folder):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in EDITED:
            cell.source = "pass"
