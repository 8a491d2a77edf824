"""The course's measurement tools, beside tests/ and outside the library (`make bench`).

- `python -m bench` (`make bench`): one class graded by stock nbgrader, make grade, bare
  nbclient and a fork pool, timed side by side; it drives the course through
  coursekit.simulate.harness and the course's catalog (which the library never imports);
- `bench.budget`: where one notebook's grading time goes, phase by phase;
- `bench.pool`: the fork pool make grade was before Dask, for the comparison;
- `bench.floor`: the physical floor, a fork of a warm parent per notebook;
- `bench.cpu`: the CPU of a step's whole process tree, kernels included;
- `bench.startup`: the CPU a sandboxed kernel costs until it is ready, per launch way.
"""
