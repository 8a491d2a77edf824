"""Wrong split_heads, and the grader's own comparison replaced from the notebook."""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
import grader_tests.core

grader_tests.core.compare = lambda *args, **kwargs: None
grader_tests.core.check = lambda *args, **kwargs: None
np.allclose = lambda *args, **kwargs: True
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "FreshRunFailed"
