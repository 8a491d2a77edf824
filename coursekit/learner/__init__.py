"""What a learner sees: Validate, the reasons for failing cells, feedback.

`validation` is the Validate button, true to what autograde will say;
`diagnosis` finds the function each failing cell is about and a short reason;
`feedback` opens the feedback page with a summary per function, and
`tracebacks` reduces hidden tracebacks to their messages; `feedback_link`
and `lab_language` are JupyterLab settings for the learner's server.
"""
