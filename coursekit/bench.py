"""`make bench`: one class graded four ways, timed side by side.

    python -m coursekit.bench [--learners 30] [--jobs N]

A class of simulated learners (the reference, the untouched release, and the
catalog's mistakes and variants in turn) submits both notebooks. The same
submissions are then graded in scratch copies of the course (build/bench/):

1. stock: `nbgrader autograde <assignment>` for each assignment, one after
   the other, as the README's instructor steps do;
2. make grade: `python -m coursekit.grading -j N`;
3. make grade --unsafe-no-sandbox: the same, without bubblewrap, to show what
   the sandbox costs;
4. floor: the graded notebooks (hidden tests restored, outputs cleared)
   executed with bare nbclient in N parallel processes, no nbgrader at all.

It prints the wall-clock times, stock ÷ make grade (target ≥ 1.8 on 2
cores) and make grade ÷ floor (target ≤ 1.5), and whether the two gradebooks
are identical.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from coursekit import cells, submissions
from coursekit.course import Course
from coursekit.grading import gradebook
from coursekit.release import venv_environment

ROOT = Path(__file__).resolve().parent.parent


def copy_course(path: Path) -> Course:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", path / "nbgrader_config.py")
    shutil.copytree(ROOT / "source", path / "source")
    return Course(path)


def simulated_class(course: Course, assignment: str, size: int) -> dict[str, object]:
    from tests.catalog_support import catalogs  # the catalog lives with the tests

    release, source = course.release_notebook(assignment), course.source_notebook(assignment)
    entries = catalogs()[assignment].entries if assignment in catalogs() else []
    learners = {
        "learner-00": submissions.fill(release, source),
        "learner-01": submissions.fill(release, source, blank=True),
    }
    for number in range(2, size):
        entry = entries[(number - 2) % len(entries)] if entries else None
        replace = {entry.function: entry.source} if entry else {}
        learners[f"learner-{number:02d}"] = submissions.fill(release, source, replace=replace)
    return learners


def prepare(path: Path, size: int) -> Course:
    course = copy_course(path)
    for assignment in course.assignments():
        course.generate(assignment)
        for learner, nb in simulated_class(course, assignment, size).items():
            course.submit(learner, assignment, nb)
    return course


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def execute(path: str) -> None:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=30,
        kernel_name="python3",
        allow_errors=True,
        skip_cells_with_tag=cells.SKIP_TAG,
        resources={"metadata": {"path": os.path.dirname(path)}},
    )
    client.execute()


def floor_notebooks(graded: Course, work: Path) -> list[str]:
    """The graded notebooks with their outputs cleared, as plain notebooks to execute."""
    shutil.rmtree(work, ignore_errors=True)
    paths = []
    for path in sorted((graded.root / "autograded").glob("*/*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        target = work / path.relative_to(graded.root / "autograded")
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        paths.append(str(target))
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    args = parser.parse_args(argv)
    os.environ.pop("COURSE_GRADEBOOK_URL", None)  # both runs use their own SQLite gradebook

    print(f"preparing {args.learners} learners × both notebooks in {args.work} …", flush=True)
    stock = prepare(args.work / "stock", args.learners)
    parallel = copy_course(args.work / "parallel")
    shutil.copytree(stock.root / "submitted", parallel.root / "submitted")
    for assignment in parallel.assignments():
        parallel.generate(assignment)
    notebooks = sum(1 for _ in (stock.root / "submitted").glob("*/*/*.ipynb"))

    print(f"stock nbgrader autograde, sequential ({notebooks} notebooks) …", flush=True)
    stock_s = timed(lambda: [stock.autograde(a) for a in stock.assignments()])
    print(f"make grade -j {args.jobs} …", flush=True)
    command = [sys.executable, "-m", "coursekit.grading", "--root", str(parallel.root)]
    command += ["-j", str(args.jobs), "--quiet"]
    grade_s = timed(
        lambda: subprocess.run(command, env=venv_environment(), check=True, capture_output=True)
    )
    unsafe = copy_course(args.work / "unsandboxed")
    shutil.copytree(stock.root / "submitted", unsafe.root / "submitted")
    for assignment in unsafe.assignments():
        unsafe.generate(assignment)
    print(f"make grade -j {args.jobs} --unsafe-no-sandbox (to measure the sandbox) …", flush=True)
    command = [sys.executable, "-m", "coursekit.grading", "--root", str(unsafe.root)]
    command += ["-j", str(args.jobs), "--quiet", "--unsafe-no-sandbox"]
    unsafe_s = timed(
        lambda: subprocess.run(command, env=venv_environment(), check=True, capture_output=True)
    )
    print(f"bare nbclient, {args.jobs} processes …", flush=True)
    paths = floor_notebooks(stock, args.work / "floor")
    with ProcessPoolExecutor(args.jobs) as pool:
        floor_s = timed(lambda: list(pool.map(execute, paths)))

    same = gradebook.dump(stock.db_url, stock.course_id) == gradebook.dump(
        parallel.db_url, parallel.course_id
    )
    print()
    print(f"notebooks graded           {notebooks}")
    print(f"stock autograde            {stock_s:7.1f} s  ({stock_s / notebooks:.2f} s/notebook)")
    print(f"make grade -j {args.jobs:<2}           {grade_s:7.1f} s")
    print(f"  without the sandbox      {unsafe_s:7.1f} s")
    print(f"floor (bare nbclient -j {args.jobs}) {floor_s:7.1f} s")
    sandbox_cost = (grade_s - unsafe_s) * args.jobs / notebooks
    print(f"sandbox's cost             {sandbox_cost:7.2f} s per notebook (CPU-seconds, ±noise)")
    print(f"stock / make grade         {stock_s / grade_s:7.2f}×   (target ≥ 1.8)")
    print(f"make grade / floor         {grade_s / floor_s:7.2f}×   (target ≤ 1.5)")
    print(f"gradebooks identical       {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
