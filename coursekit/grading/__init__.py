"""Parallel, crash-isolated and tamper-resistant grading on top of stock nbgrader.

- `execute.GuardedExecute`: nbgrader's Execute (through the course's
  ExecuteSkippingDisplays) with a memory cap per kernel, a wall-clock cap per
  notebook, an output cap per cell, and survival of dead or stuck kernels.
- `rerun.VerifyInFreshInterpreter`: re-runs the learner's cells and the test
  cells in a fresh interpreter whose checker is trusted, and fails any test
  cell that passed in the learner's kernel but not there.
- `python -m coursekit.grading` (`make grade`): grades every collected
  submission in parallel worker processes into the stock gradebook.

Every reason a cell scored 0 because of these guards is an error output with
an ename from `incidents.ENAMES` and a Korean message, so formgrader, the
feedback and `reports/grading_incidents.json` show it.
"""
