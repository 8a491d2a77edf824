"""Hostile and tampering submissions, one scenario-named module each.

Every module replaces one answer of an otherwise correct ch3_multihead
submission (`FUNCTION`, `SOURCE`) and/or changes the notebook or the files
next to it (`tamper(nb, folder)` before the notebook is written,
`corrupt(path)` after). `ZERO` is the exact set of autograded
cells that must score 0; every other autograded cell must keep full marks.
`INCIDENT` is the ename (coursekit.grading.incidents) that must be recorded,
or None when the learner's own error output is the record.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

ASSIGNMENT = "ch3_multihead"

# Wrong on purpose, so that a trick that fooled the grader would show as points.
WRONG_SPLIT_HEADS = """
def split_heads(M, h):
    return np.zeros((h, M.shape[0], M.shape[1] // h))
"""
# The cells that this wrong split_heads honestly loses.
SPLIT_HEADS_LOSSES = frozenset(
    {"split_heads_seed", "split_heads_random_shapes", "split_heads_edge_cases", "mha_seed_example"}
)
# Every autograded cell from merge_heads on (notebook order).
FROM_MERGE_HEADS = frozenset(
    {
        "merge_heads_seed",
        "merge_heads_random_shapes",
        "mha_seed_example",
        "mha_random_shapes",
        "mha_edge_cases",
        "param_count_seed",
        "param_count_other_sizes",
    }
)


def scenarios() -> dict[str, ModuleType]:
    return {
        info.name: importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    }
