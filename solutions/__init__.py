"""Reference implementations, one module per assignment.

The single source of truth for the answers: the solution regions of the source
notebooks are copied from these function bodies (`make sync`), and the hidden
checks in grader_tests/ compare learners' functions with them. Nothing here
reaches release/ or learner feedback.
"""
