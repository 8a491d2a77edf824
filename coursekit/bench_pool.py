"""`make bench`'s reference: a class graded as `make grade` did before Dask, by a fork pool.

    python -m coursekit.bench_pool ROOT JOBS

Only for the benchmark's comparison of the LocalCluster with the process pool
it replaced: `worker.init_worker` and `worker.grade` (stock autograde for one
learner) in JOBS forked processes that share one warm-kernel parent and
write the gradebook themselves. `make grade` never runs this.
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from coursekit.course import load_config
from coursekit.grading import gradebook, worker
from coursekit.grading.__main__ import find_submissions
from coursekit.grading.execute import start_warm_parent


def main(argv=None) -> int:
    root_arg, jobs_arg = argv if argv is not None else sys.argv[1:]
    root, jobs = Path(root_arg).resolve(), int(jobs_arg)
    course = gradebook.course_settings(root)
    db_url = gradebook.with_busy_timeout(course.db_url)
    tasks = find_submissions(root, set(), set())
    zygote = start_warm_parent(load_config(root))
    gradebook.prepare(db_url, course.course_id, tasks)
    worker.preload(db_url, course.course_id, {assignment for assignment, _ in tasks})
    if zygote is not None:
        zygote.wait_started()
    context = multiprocessing.get_context("fork")
    extra = [f"--CourseDirectory.db_url={db_url}"]
    with ProcessPoolExecutor(jobs, context, worker.init_worker, (str(root), extra)) as pool:
        outcomes = list(pool.map(worker.grade, tasks))
    if zygote is not None:
        zygote.close()  # waited for, so its kernels' CPU counts in the bench's tree
    return 0 if all(outcome.ok for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
