"""Parallel, crash-isolated and tamper-resistant grading on top of stock nbgrader.

- `execute.SandboxedExecute`: nbgrader's Execute with the learner's kernel in a bubblewrap sandbox
  (coursekit.sandbox), test cells judged outside it by `trusted`, and survival
  of dead, stuck, flooding and memory-hungry kernels.
- `python -m coursekit.grading` (`make grade`): grades every collected
  submission in parallel worker processes into the stock gradebook.

Every reason a cell scored 0 because of these guards is an `incidents.Incident`
(its kind one of `incidents.KINDS`) that the grader writes into the cell's
metadata, shown as an error output with the kind's name and a Korean text,
so formgrader and the feedback show it; `reports/grading_incidents.json`, `make grade`'s summary
and the TA report read the records, never an error output's name.
"""
