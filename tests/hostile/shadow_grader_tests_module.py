"""Wrong split_heads, and a fake grader_tests/ package shipped next to the notebook.

The kernel's copy of the submission folder has the fake package, but hidden
checks never run in the kernel, and the grader imports its own grader_tests:
the hidden cells fail as for any wrong split_heads, with the check's own
message (no incident).
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = WRONG_SPLIT_HEADS
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None

FAKE_CHECKS = """
def __getattr__(name):
    return lambda *args, **kwargs: None
"""


def tamper(nb, folder):
    package = folder / "grader_tests"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "ch3_multihead.py").write_text(FAKE_CHECKS, encoding="utf-8")
