"""Wrong split_heads, and np.allclose / np.array_equal patched to always agree."""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
import numpy as np

np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "FreshRunFailed"
