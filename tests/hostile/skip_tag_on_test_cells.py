"""Wrong split_heads, and every test cell tagged `skip-autograde` (as the drawings are).

A test cell that is not run has no error, and nbgrader gives such a cell full
marks. The tags of an instructor's cell come from the instructor's notebook.
"""

from coursekit.core import cells
from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None


def tamper(nb, folder):
    for cell in nb.cells:
        if cells.is_test(cell):
            cell.metadata["tags"] = [cells.SKIP_TAG]
