"""Hostile and tampering submissions, one scenario-named module each.

Every module replaces one answer of an otherwise correct ch3_multihead
submission (`FUNCTION`, `SOURCE`) and/or changes the notebook or the files
next to it (`tamper(nb, folder)` before the notebook is written,
`corrupt(path)` after). `ZERO` is the exact set of autograded
cells that must score 0; every other autograded cell must keep full marks.
`INCIDENT` is the ename (coursekit.core.incidents) that must be recorded,
or None when the learner's own error output is the record;
`INCIDENT_NEEDS_MEMORY_CGROUP` when only a sandbox memory cgroup can record
it (without one, that expectation is skipped with the reason).

A SOURCE may name the grading run's surroundings with placeholders, filled
in by `render` before the notebook is written, so that an attack aims at
the real targets of the scratch course it is graded in:

- `@COURSE_ROOT@`: absolute path of the scratch course (holds
  nbgrader_config.py, gradebook.db, source/, submitted/, and copies of
  grader_tests/ and solutions/ as a real deployment does);
- `@REPO_ROOT@`: the repository the grader imports grader_tests and
  solutions from (read-only targets: no scenario writes there);
- `@PORT@`: a TCP port on 127.0.0.1 the test listens on (and would hand
  the reference split_heads to whoever connects);
- `@MARKER@`: a token for the processes a scenario starts, so the test can
  find any that outlive grading.

The whole class (every scenario, the honest `reference` learner and
`WRONG_LEARNER`, graded last) is graded in one `make grade` run.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import nbformat

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
# Every autograded cell of the notebook.
ALL_CELLS = (
    SPLIT_HEADS_LOSSES
    | FROM_MERGE_HEADS
    | {
        "softmax_seed_values",
        "softmax_random_shapes",
        "softmax_large_entries",
        "attention_seed_weights",
        "attention_random_shapes",
        "attention_edge_cases",
    }
)

# The honest learner with a catalogued mistake (transpose forgotten), graded
# after every scenario (learners are graded in sorted order of their folder
# names): a scenario that tampered with the grader would let it through.
WRONG_LEARNER = "wrong_after_attackers"
WRONG_LEARNER_SPLIT_HEADS = """
def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(h, n, d_model // h)
"""

PLACEHOLDERS = ("@COURSE_ROOT@", "@REPO_ROOT@", "@PORT@", "@MARKER@")


def render(source: str, context: dict[str, str]) -> str:
    """`source` with every placeholder replaced by its value in `context`."""
    for placeholder in PLACEHOLDERS:
        source = source.replace(placeholder, str(context[placeholder]))
    return source


def scenarios() -> dict[str, ModuleType]:
    return {
        info.name: importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    }


def submit(sandbox, name: str, nb, tamper=None, corrupt=None) -> None:
    """Hand scenario `name` in straight into submitted/: `tamper(nb, folder)` before the
    notebook is written, `corrupt(path)` after."""
    folder = sandbox.root / "submitted" / name / ASSIGNMENT
    folder.mkdir(parents=True)
    if tamper:
        tamper(nb, folder)
    path = folder / sandbox.notebook_name(ASSIGNMENT)
    nbformat.write(nb, path)
    if corrupt:
        corrupt(path)
