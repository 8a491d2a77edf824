"""Wrong split_heads, with IPython's traceback display and custom exception hook silenced."""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
ip = get_ipython()
ip.showtraceback = lambda *args, **kwargs: None
ip.set_custom_exc((Exception,), lambda *args, **kwargs: None)
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
