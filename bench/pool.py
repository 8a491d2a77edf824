"""`make bench`'s reference: a class graded as `make grade` did before Dask, by a fork pool.

    python -m bench.pool ROOT JOBS

Only for the benchmark's comparison of the LocalCluster with the process pool
it replaced. It does what that `make grade --quiet` did, step for step (its
`main` before the Dask commit, 37f5b5a): unreadable notebooks found and scored
0 first, `worker.init_worker` and `worker.grade` (stock autograde for one
learner) in JOBS forked processes that share one warm-kernel parent and write
the gradebook themselves, and in this process, for each result, its graded
notebooks read for the grading guards' incidents, then the incidents report
and the summary with each assignment's mean. `make grade` never runs this.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from coursekit.course import load_config
from coursekit.grading import gradebook, incidents, task, worker
from coursekit.grading.__main__ import find_submissions, score_unreadable, summary
from coursekit.grading.execute import start_warm_parent
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


def main(argv=None) -> int:
    root_arg, jobs_arg = argv if argv is not None else sys.argv[1:]
    root, jobs = Path(root_arg).resolve(), int(jobs_arg)
    policy.check_available()
    course = gradebook.course_settings(root)
    db_url = gradebook.with_busy_timeout(course.db_url)
    tasks = find_submissions(root, set(), set())
    zygote = start_warm_parent(load_config(root))
    gradebook.prepare(db_url, course.course_id, tasks)
    tasks, invalid, report = score_unreadable(root, db_url, course.course_id, tasks)
    started = time.perf_counter()
    failed: list[task.Result] = []
    worker.preload(db_url, course.course_id, {assignment for assignment, _ in tasks})
    if zygote is not None:
        zygote.wait_started()
    context = multiprocessing.get_context("fork")
    extra = [f"--CourseDirectory.db_url={db_url}"]
    jobs = max(1, min(jobs, len(tasks) or 1))
    with ProcessPoolExecutor(jobs, context, worker.init_worker, (str(root), extra)) as pool:
        for future in as_completed([pool.submit(worker.grade, job) for job in tasks]):
            outcome = future.result()
            found = graded_incidents(root, outcome.assignment, outcome.student)
            if found:
                report.setdefault(outcome.assignment, {})[outcome.student] = found
            if not outcome.ok:
                failed.append(outcome)
    elapsed = time.perf_counter() - started
    incidents.write_report(root / "reports" / "grading_incidents.json", report, [*tasks, *invalid])
    print(summary(root, db_url, course.course_id, tasks, invalid, failed, report, elapsed))
    if zygote is not None:
        zygote.close()  # waited for, so its kernels' CPU counts in the bench's tree
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
