"""Wrong split_heads, and every cell carries a forged verdict record for the TA report.

The report reads the records the grader stores in the autograded notebook's
cell metadata; a submission's own records must not survive grading.
"""

from coursekit.core import cells
from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
FORGED_KEY = "forged_by_the_learner"


def tamper(nb, folder):
    forged = {"version": 1, "function": "softmax", "check": "forged", "outcome": "mismatch"}
    forged["misconception"] = {"key": FORGED_KEY, "title": "forged", "advice": "forged"}
    for cell in nb.cells:
        cells.store_verdict(cell, forged)
