"""A simulated class: what the demo, the tests and the benchmarks do to a course.

`demo` runs the whole cycle on it; `submissions` makes learners' notebooks from
what a learner really receives; `learner_actions` fetches and submits through
the course's exchange; `instructor` drives nbgrader's API; `harness` adds the
shortcuts a test or benchmark takes (place a submission, run make grade, read
scores back).
"""
