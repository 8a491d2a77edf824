"""coursekit: an nbgrader course's machinery, installed as a library.

Every folder is one kind of thing (docs/architecture.md says why this cut):

- `core`: what every part shares: cell roles, the course root and its
  `c.CourseKit` settings, incident records, messages, HTML templates;
- `authoring`: what instructors run on their own notebooks (sync, release);
- `autograde`: what runs inside any `nbgrader autograde` (stock or make grade);
- `cluster`: `make grade`, a class graded on Dask;
- `sandbox`: where learner code runs; `sandbox.inside` is the code that runs in it;
- `checks`: the hidden-check framework a course declares its checks with;
- `exchange`: nbgrader exchange classes for accounts the course cannot trust;
- `learner`: what learners see: Validate, diagnoses, feedback;
- `staff`: what instructors and TAs see: inert views, the staff server, the TA report;
- `lms`: the roster in, grades out to an LMS;
- `hub`: a local JupyterHub for a trial class;
- `simulate`: a simulated class for the demo, the tests and the benchmarks.

`coursekit COMMAND` (`__main__`) is the one entry point the make targets call.
"""
