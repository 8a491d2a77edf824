"""What runs inside any `nbgrader autograde`, stock or `make grade`'s.

nbgrader loads these through nbgrader_config.py: `execute.SandboxedExecute`
(the learner's kernel in the sandbox, over the lean cell runner of
`lean_cells`), `trusted` (test cells judged outside the sandbox), `roles`
(cell roles from the instructor's notebook, never the submission) and `shapes`
(a submission read within bounds). Three of autograde's preprocessors without
their repeated work, for make grade, are nbgrader's internals: they live in
coursekit.nbgrader_internals.preprocessors.
"""
