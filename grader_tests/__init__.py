"""The hidden checks an assignment's author writes, one module per assignment.

A hidden cell is a short call such as
`grader_tests.ch3_multihead.check_split_heads_random_shapes(split_heads)`.
Each module declares its checks as data (`CHECKS = HiddenChecks(...)`) with
the framework in coursekit/checks/: the check compares the learner's function
with solutions/ on seeded cases and raises AssertionError with a Korean
message: what was expected, what came back, the failing case's seed and
shapes, and the misconception that fits.
"""
