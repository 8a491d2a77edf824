"""Wrong split_heads, and one test cell claiming an nbgrader schema version from the future.

nbgrader's SchemaTooNewError ends stock `nbgrader autograde` for the whole
class: every learner after this one went ungraded. The cell's metadata comes
from the gradebook instead, and the cell is graded.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None


def tamper(nb, folder):
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "split_heads_seed":
            meta["schema_version"] = 99
