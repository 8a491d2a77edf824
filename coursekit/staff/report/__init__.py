"""The TA report: per learner and class-wide, from the gradebook and the autograded notebooks.

It runs no learner code: `data` reads scores and verdict records, `overview`
and `summary` count, `clusters` groups same wrong outputs, `render` writes the
terminal table, CSV and HTML, and `cli` is `coursekit report`.
"""
