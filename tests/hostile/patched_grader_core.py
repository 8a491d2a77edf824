"""Wrong split_heads, and the grader's own checks replaced from the notebook.

The sandbox has no grader_tests (`import grader_tests.core` raises
ModuleNotFoundError), so the cell plants no-op look-alikes of
grader_tests.core and grader_tests.ch3_multihead in the kernel's
sys.modules and patches np.allclose: had hidden checks or their imports run
in the kernel, these would pass every check. The visible split_heads_seed
passes in the kernel and fails in the grader's run; the hidden cells fail in
the grader's run, which imports its own grader_tests.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
import sys
import types

try:
    import grader_tests.core as core
except ImportError:
    print("grader_tests 없음: 가짜를 심습니다")
    core = types.ModuleType("grader_tests.core")
    sys.modules["grader_tests"] = types.ModuleType("grader_tests")
    sys.modules["grader_tests"].__path__ = []
    sys.modules["grader_tests.core"] = sys.modules["grader_tests"].core = core
checks = types.ModuleType("grader_tests.ch3_multihead")
checks.__getattr__ = lambda name: (lambda *args, **kwargs: None)
sys.modules["grader_tests.ch3_multihead"] = sys.modules["grader_tests"].ch3_multihead = checks
core.compare = lambda *args, **kwargs: None
core.check = lambda *args, **kwargs: None
np.allclose = lambda *args, **kwargs: True
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "TrustedCheckFailed"
