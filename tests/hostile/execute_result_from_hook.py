"""Wrong split_heads, and a `pre_run_cell` hook that publishes an execute_result ("만점").

nbgrader takes a test cell's first execute_result as its score (a number for
partial credit, anything else for full marks), ahead of the error the grader
appends after its own verdict. A test cell scores only by errors.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
ip = get_ipython()


def _full_marks(info):
    ip.displayhook("만점")
    ip.displayhook(4.0)


ip.events.register("pre_run_cell", _full_marks)
ip.events.register("post_run_cell", lambda result: ip.displayhook("만점"))
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = "만점"
