"""The hidden-check framework: what every assignment's declared checks are built from.

- `declared`: `HiddenCheck` / `HiddenChecks`, a check declared as data, and
  `checks_of(assignment)`, which imports the assignment's module of the course's
  checks package (`c.CourseKit.checks_package`);
- `core`: cases, calling learner code safely, the comparison in a fixed order,
  misconceptions;
- `verdict`: the record a failed check carries, and its message in the course's language;
- `probe`: what a function gave on its probe cases, for the TA report's clusters;
- `reproduce`: `python -m coursekit.checks.reproduce <assignment> <seed>` for TAs.

The framework is not secret; the declarations in grader_tests/ and the
reference in solutions/ are, and never reach the learner's kernel.
"""
