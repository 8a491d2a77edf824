"""`make bench`'s reference: a class graded as `make grade` did before Dask, by a fork pool.

    python -m bench.pool ROOT JOBS

Only for the benchmark's comparison of the LocalCluster with the process pool
it replaced. It does what that `make grade --quiet` did, step for step (its
`main` before the Dask commit, 37f5b5a): unreadable notebooks found and scored
0 first, `worker.grade` (stock autograde for one learner, again when it fails:
ATTEMPTS) in JOBS forked processes that share one warm-kernel parent and write
the gradebook themselves, and in this process, for each result, its graded
notebooks read for the grading guards' incidents, then the incidents report
and the summary with each assignment's mean. `make grade` never runs this.
"""

from __future__ import annotations

import ast
import importlib
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from coursekit.autograde.execute import start_warm_parent
from coursekit.cluster import gradebook, worker
from coursekit.cluster.session import find_submissions, write_incidents
from coursekit.cluster.submission import Result
from coursekit.cluster.summary import summary
from coursekit.core import incidents
from coursekit.core.course import load_config
from coursekit.sandbox import policy


def graded_incidents(root: Path, assignment: str, student: str) -> list[dict[str, str]]:
    """The pool's main process read each graded notebook back for its incidents (Dask's
    workers now find them in the notebook they just graded: task.read_outcome)."""
    found = []
    for path in sorted((root / "autograded" / student / assignment).glob("*.ipynb")):
        try:
            found += incidents.in_notebook(nbformat.read(path, as_version=4))
        except (OSError, json.JSONDecodeError):
            continue
    return found


# Several processes write one gradebook here. SQLite waits for a lock up to its busy
# timeout, and a submission whose write still fails (a lock conflict nbgrader reports
# as an error) is graded again: autograde with --force is idempotent.
ATTEMPTS = 3
_EXTRA_ARGS: list[str] = []


def init_process(root: str, extra_args: list[str]) -> None:
    global _EXTRA_ARGS
    _EXTRA_ARGS = list(extra_args)
    worker.prepare(root)


def grade(job: tuple[str, str]) -> Result:
    assignment, student = job
    started = time.perf_counter()
    for attempt in range(1, ATTEMPTS + 1):
        result = worker.grade(assignment, student, _EXTRA_ARGS)
        if result.ok:
            result.seconds, result.attempts = time.perf_counter() - started, attempt
            return result
        time.sleep(0.5 * attempt)
    result.seconds, result.attempts = time.perf_counter() - started, ATTEMPTS
    return result


def preload(place, assignments) -> list[str]:
    """Import in the parent, before the workers fork, what each of them would import.

    Each worker otherwise imports, while grading its first notebook, the
    modules that the instructor's locked cells import on the grader's side
    (the setup cells and the test cells `trusted` runs: numpy, pandas, the
    hidden checks; pandas alone is ~1.3 s of CPU) and FIRST_NOTEBOOK_MODULES.
    Forked workers inherit what the parent imported, so that CPU is spent
    once instead of once per worker. The module names come from the sources
    the gradebook holds for those cells — the instructor's, never a learner's —
    and a module that fails to import is left for the worker to fail on, as
    before. Returns the modules imported.
    """
    from nbgrader.api import Gradebook, MissingEntry

    names = dict.fromkeys(worker.FIRST_NOTEBOOK_MODULES)
    with Gradebook(place.db_url, place.course_id) as gb:
        for assignment in sorted(set(assignments)):
            try:
                notebooks = gb.find_assignment(assignment).notebooks
            except MissingEntry:
                continue
            for notebook in notebooks:
                for cell in notebook.source_cells:
                    if cell.cell_type == "code" and cell.locked:
                        names.update(dict.fromkeys(_imported_modules(cell.source)))
    loaded = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # the worker meets the same failure where it always did
            continue
        loaded.append(name)
    return loaded


def _imported_modules(source: str) -> list[str]:
    """Absolute module names a cell's import statements name (magics left out)."""
    code = "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            # `from package import module`: the submodule too, when there is one
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return found


def main(argv=None) -> int:
    root_arg, jobs_arg = argv if argv is not None else sys.argv[1:]
    root, jobs = Path(root_arg).resolve(), int(jobs_arg)
    policy.check_available()
    place = gradebook.grading_place(root)
    db_url = place.db_url
    tasks = find_submissions(root, set(), set())
    zygote = start_warm_parent(load_config(root))
    gradebook.prepare(place, tasks)
    tasks, invalid, report = gradebook.score_unreadable(place, tasks)
    started = time.perf_counter()
    failed: list[Result] = []
    preload(place, {assignment for assignment, _ in tasks})
    if zygote is not None:
        zygote.wait_started()
    context = multiprocessing.get_context("fork")
    extra = [f"--CourseDirectory.db_url={db_url}"]
    jobs = max(1, min(jobs, len(tasks) or 1))
    with ProcessPoolExecutor(jobs, context, init_process, (str(root), extra)) as pool:
        for future in as_completed([pool.submit(grade, job) for job in tasks]):
            outcome = future.result()
            found = graded_incidents(root, outcome.assignment, outcome.student)
            if found:
                report.setdefault(outcome.assignment, {})[outcome.student] = found
            if not outcome.ok:
                failed.append(outcome)
    elapsed = time.perf_counter() - started
    write_incidents(root, report, [*tasks, *invalid])
    print(summary(place, tasks, invalid, failed, report, elapsed))
    if zygote is not None:
        zygote.close()  # waited for, so its kernels' CPU counts in the bench's tree
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
