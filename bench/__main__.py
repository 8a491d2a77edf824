"""`make bench`: one class graded three ways, timed side by side, and where the time goes.

    python -m bench [--learners 20] [--runs 3] [--sizes 15,45,135] [--jobs N]

A class of simulated learners (the reference, the untouched release, and the
catalog's mistakes and variants in turn) submits both notebooks. The same
submissions are then graded, each run in a fresh copy of the course
(build/bench/):

1. stock: `nbgrader autograde <assignment>` for each assignment, one after
   the other, as the README's instructor steps do (with the course's
   configuration, so its kernels are warm too; once more, for reference, with
   `--SandboxedExecute.warm_kernels=False`: one bwrap and one Python per kernel);
2. make grade: `python -m coursekit.cluster -j N` (a LocalCluster of N workers), and
   the fork pool it replaced (`bench.pool`), compared in CPU-seconds of the
   whole process tree (wall clock too, which needs a quiet machine to compare);
3. floor: the graded notebooks (hidden tests restored, outputs cleared)
   executed with bare nbclient in N parallel processes, no nbgrader at all;
   and the physical floor (`bench.floor`: a fork of a warm parent
   per notebook exec-ing its cells with the checks in-process);
4. plain nbgrader: `nbgrader autograde` with nbgrader's own defaults (no
   sandbox, its Execute, the hidden checks imported in the learner's kernel).

Each runs `--runs` times; it prints the median times, stock ÷ make grade
(target ≥ 4 on 2 cores), make grade ÷ floor (target ≤ 1.3), whether the
gradebooks are identical, and issue 21's table: s/notebook and CPU-ms per
notebook of each way, make grade ÷ physical floor in CPU (target ≤ 3), plain
nbgrader ÷ make grade in wall time (target ≥ 10), and 300 × 2 notebooks. Then
make grade once without the sandbox (what the sandbox costs), once with
bench.budget's timers (the measured time budget per notebook: each phase's wall time, the
grader's and the kernel's CPU time), once with `--stats` (the driver's own
cost per result: ms of gradebook writing and bookkeeping per notebook, and so
the notebooks an hour one driver can take), and once per class size of
`--sizes` (seconds per notebook as the class grows; the larger classes repeat
the first class's submissions under new learner ids).

`--class N` also grades a class of N learners × both notebooks (grown from the
first) with make grade and with the fork pool, alternately, `--class-runs`
times each, and prints LocalCluster against the pool there: a class of 40
notebooks cannot settle 5 % on a machine whose speed drifts between runs
(one run's ratio swung from 0.72 to 1.40 in one bench), a whole class can.
`--class-only` runs just that.

`--slurm` also grades the first class on SLURM jobs of a private one-host SLURM
and on a LocalCluster, alternately, `--runs` times each, and prints what SLURM
adds per worker start and per notebook (bench.slurm_cost); `--slurm-only` runs
just that.

`--live` measures the live service instead (bench.live_latency: real local
accounts submit while `make live` runs; `--burst N` learners, `--alone N`
submits of one learner): submit-to-feedback latency alone and in the burst,
the burst's throughput, the median time per stage, and the service's peak RSS;
then the browser's side (bench.live_panel: a hub of its own, one learner in
Chromium pressing 제출하고 채점 받기 `--panel N` times, 10 by default, 0 skips
it): from the press to the result drawn in the 채점 결과 panel, p50 and p95.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from bench import budget, live_latency, live_panel, record, slurm_cost
from bench import cpu as bench_cpu
from catalog import catalogs
from coursekit.cluster import gradebook
from coursekit.cluster.dask_cluster import default_jobs
from coursekit.core import cells
from coursekit.core.environment import venv_environment
from coursekit.simulate import submissions
from coursekit.simulate.harness import CourseHarness as Course

ROOT = Path(__file__).resolve().parent.parent


def copy_course(path: Path) -> Course:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", path / "nbgrader_config.py")
    shutil.copytree(ROOT / "source", path / "source")
    return Course(path)


def simulated_class(course: Course, assignment: str, size: int) -> dict[str, object]:
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


def cpu_timed(action) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of every process it ran, the kernels too where the
    machine lets a cgroup count them (bench.cpu: os.times misses them)."""
    return bench_cpu.measured(action)


# nbgrader out of the box: its own Execute (no sandbox, no trusted side), its default
# preprocessors, the hidden test cells run in the learner's kernel, which imports the checks.
PLAIN_CONFIG = """\
import os
c = get_config()
ROOT = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = ROOT
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "gradebook.db")
"""


def plain_nbgrader(template: Course, path: Path) -> Course:
    """A copy of the prepared class whose nbgrader_config.py is nbgrader's defaults."""
    course = pristine(template, path)
    config = PLAIN_CONFIG.format(course_id=course.course_id)
    (course.root / "nbgrader_config.py").write_text(config, encoding="utf-8")
    return course


def physical_floor(paths: list[str], jobs: int, *options: str) -> tuple[float, float]:
    """Wall and CPU seconds of bench.floor on these notebooks (its own count)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.floor", *options, str(jobs), *paths],
        env=venv_environment(),
        check=True,
        capture_output=True,
        text=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return measured["wall"], measured["cpu"]


def pool_grade(course: Course, jobs: int) -> None:
    """The class graded by the fork pool `make grade` was before Dask (bench.pool)."""
    subprocess.run(
        [sys.executable, "-m", "bench.pool", str(course.root), str(jobs)],
        cwd=course.root,
        env=venv_environment(),
        check=True,
        capture_output=True,
    )


def execute(path: str) -> None:
    from nbclient import NotebookClient
    from traitlets.config import Config

    nb = nbformat.read(path, as_version=4)
    # Unix sockets, as the sandboxed kernels use: parallel TCP kernels race for free
    # ports ("Address already in use", the kernel dies before kernel_info).
    sockets = tempfile.mkdtemp(prefix="coursekit-floor-")
    ipc = {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}
    client = NotebookClient(
        nb,
        config=Config({"KernelManager": ipc}),
        timeout=30,
        kernel_name="python3",
        allow_errors=True,
        skip_cells_with_tag=cells.SKIP_TAG,
        resources={"metadata": {"path": os.path.dirname(path)}},
    )
    try:
        client.execute()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)


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


def pristine(template: Course, path: Path) -> Course:
    """A fresh copy of a prepared (generated, submitted, not graded) course."""
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(template.root, path)
    return Course(path)


def grown(template: Course, path: Path, size: int) -> tuple[Course, int]:
    """The template's class grown to `size` learners: its submissions in turn, new ids."""
    course = copy_course(path)
    for assignment in course.assignments():
        course.generate(assignment)
    originals = sorted((template.root / "submitted").iterdir())
    for number in range(size):
        source = originals[number % len(originals)]
        shutil.copytree(source, course.root / "submitted" / f"learner-{number:03d}")
    return course, sum(1 for _ in (course.root / "submitted").glob("*/*/*.ipynb"))


def make_grade(course: Course, jobs: int, *extra: str, env: dict | None = None) -> float:
    return timed(lambda: course.grade("-j", str(jobs), "--quiet", *extra, env=env))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--no-record" in argv:
        return measure([a for a in argv if a != "--no-record"])
    with record.teed() as tee:
        status = measure(argv)
    # what it printed, dated, in docs/performance.md (bench/record.py)
    command = " ".join(["make bench", *([f'ARGS="{" ".join(argv)}"'] if argv else [])])
    record.write(ROOT / "docs" / "performance.md", tee.kept.getvalue(), command, ROOT)
    print(f"written into {ROOT / 'docs' / 'performance.md'} (--no-record: not)")
    return status


def measure(argv) -> int:
    parser = argparse.ArgumentParser(
        prog="make bench",
        description=__doc__.splitlines()[0],
        epilog="--no-record: print only, leave docs/performance.md as it is",
    )
    parser.add_argument("--learners", type=int, default=20, help="class size for the ratios")
    parser.add_argument("--runs", type=int, default=3, help="runs of each way (median)")
    parser.add_argument(
        "--sizes", default="15,45,135", help="class sizes for seconds per notebook ('' for none)"
    )
    parser.add_argument(
        "--jobs", type=int, default=default_jobs(), help="make grade's and the floor's workers"
    )
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument(
        "--class", dest="class_size", type=int, help="learners of a whole class for the pool"
    )
    parser.add_argument("--class-runs", type=int, default=2, help="runs of each way there")
    parser.add_argument("--class-only", action="store_true", help="only the whole class")
    parser.add_argument(
        "--slurm", action="store_true", help="SLURM jobs against LocalCluster too (slurm_cost)"
    )
    parser.add_argument("--slurm-only", action="store_true", help="only SLURM against LocalCluster")
    parser.add_argument(
        "--live", action="store_true", help="only the live service's latency (live_latency)"
    )
    parser.add_argument("--burst", type=int, default=60, help="learners of the live burst")
    parser.add_argument("--alone", type=int, default=5, help="submits of the learner alone")
    parser.add_argument(
        "--panel", type=int, default=10, help="presses of the panel's button in a browser (--live)"
    )
    args = parser.parse_args(argv)
    if args.class_only and not args.class_size:
        parser.error("--class-only needs --class N")
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    os.environ.pop("COURSE_GRADEBOOK_URL", None)  # every run uses its own SQLite gradebook
    work = args.work
    if args.live:
        print(live_latency.measure(work, args.burst, args.alone, args.jobs))
        if args.panel > 0:
            print(live_panel.measure(work, args.panel))
        print(f"load average at the end    {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0

    print(f"preparing {args.learners} learners × both notebooks in {work} …", flush=True)
    template = prepare(work / "class", args.learners)
    if args.class_only:
        print(whole_class(template, work, args.class_size, args.class_runs, args.jobs))
        return 0
    if args.slurm_only:
        print(slurm_cost.compare(template, work, args.runs, args.jobs, pristine))
        return 0
    notebooks = sum(1 for _ in (template.root / "submitted").glob("*/*/*.ipynb"))
    times: dict[str, list[float]] = {"plain": [], "stock": [], "grade": [], "floor": []}
    times["physical"], times["physical_numpy"] = [], []
    ways = ("plain", "stock", "grade", "pool", "physical", "physical_numpy")
    cpus: dict[str, list[float]] = {k: [] for k in ways}
    pool_times: list[float] = []
    # A fixed start (workers, their warm-kernel parents) hides in a small class: the cost
    # per notebook is the slope between this class and one twice its size, measured in
    # every run right after the class itself (this machine's speed drifts between runs).
    doubled_template, doubled_notebooks = grown(template, work / "double", 2 * args.learners)
    doubled_walls: list[float] = []
    doubled_cpus: dict[str, list[float]] = {"grade": [], "pool": []}
    # The start measured as itself: a class just large enough to give every worker a
    # notebook (each starts, warms up and grades once), graded right before the class.
    few = max(1, -(-args.jobs // 2))
    start_template, start_notebooks = grown(template, work / "start", few)
    start_cpus: dict[str, list[float]] = {"grade": [], "pool": []}
    same = True
    for run in range(1, args.runs + 1):
        print(f"run {run}/{args.runs}: stock nbgrader autograde, sequential …", flush=True)
        plain = plain_nbgrader(template, work / "plain")
        wall, cpu = cpu_timed(lambda s=plain: [s.autograde(a) for a in s.assignments()])
        times["plain"].append(wall)
        cpus["plain"].append(cpu)
        stock = pristine(template, work / "stock")
        wall, cpu = cpu_timed(lambda s=stock: [s.autograde(a) for a in s.assignments()])
        times["stock"].append(wall)
        cpus["stock"].append(cpu)
        print(f"run {run}/{args.runs}: both on a class of {few} (their start) …", flush=True)
        start_class = pristine(start_template, work / "start-grade")
        start_cpus["grade"].append(cpu_timed(lambda c=start_class: make_grade(c, args.jobs))[1])
        start_class = pristine(start_template, work / "start-pool")
        start_cpus["pool"].append(cpu_timed(lambda c=start_class: pool_grade(c, args.jobs))[1])
        print(f"run {run}/{args.runs}: make grade -j {args.jobs} (LocalCluster) …", flush=True)
        parallel = pristine(template, work / "parallel")
        wall, cpu = cpu_timed(lambda p=parallel: make_grade(p, args.jobs))
        times["grade"].append(wall)
        cpus["grade"].append(cpu)
        print(f"run {run}/{args.runs}: the fork pool make grade was before Dask …", flush=True)
        forked = pristine(template, work / "pool")
        wall, cpu = cpu_timed(lambda p=forked: pool_grade(p, args.jobs))
        pool_times.append(wall)
        cpus["pool"].append(cpu)
        same = same and gradebook.dump(stock.db_url, stock.course_id) == gradebook.dump(
            parallel.db_url, parallel.course_id
        )
        print(f"run {run}/{args.runs}: both on the class twice the size …", flush=True)
        doubled = pristine(doubled_template, work / "double-grade")
        wall, cpu = cpu_timed(lambda d=doubled: make_grade(d, args.jobs))
        doubled_walls.append(wall)
        doubled_cpus["grade"].append(cpu)
        doubled = pristine(doubled_template, work / "double-pool")
        doubled_cpus["pool"].append(cpu_timed(lambda d=doubled: pool_grade(d, args.jobs))[1])
        print(f"run {run}/{args.runs}: bare nbclient, {args.jobs} processes …", flush=True)
        paths = floor_notebooks(stock, work / "floor")
        with ProcessPoolExecutor(args.jobs) as pool:
            times["floor"].append(timed(lambda p=pool, n=paths: list(p.map(execute, n))))
        wall, cpu = physical_floor(paths, args.jobs)
        times["physical"].append(wall)
        cpus["physical"].append(cpu)
        wall, cpu = physical_floor(paths, args.jobs, "--preload", "numpy,pandas")
        times["physical_numpy"].append(wall)
        cpus["physical_numpy"].append(cpu)
        print(
            "  " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()),
            flush=True,
        )

    print(f"make grade -j {args.jobs} --unsafe-no-sandbox (what the sandbox costs) …", flush=True)
    unsafe_s = make_grade(
        pristine(template, work / "unsandboxed"), args.jobs, "--unsafe-no-sandbox"
    )
    # Warm kernels live in SandboxedExecute, so stock autograde gets them too; this is
    # stock as it was before them (one bwrap and one Python per kernel), for reference.
    print("stock nbgrader autograde, one bwrap per kernel (warm kernels off) …", flush=True)
    cold = pristine(template, work / "stock-cold")
    cold_s = timed(
        lambda: [
            cold.run("autograde", a, "--force", "--SandboxedExecute.warm_kernels=False")
            for a in cold.assignments()
        ]
    )
    print(f"make grade -j {args.jobs} with bench.budget's timers (the time budget) …", flush=True)
    budget_file = work / "budget.jsonl"
    budget_file.unlink(missing_ok=True)
    make_grade(pristine(template, work / "budget"), args.jobs, env=budget.environment(budget_file))
    print(f"make grade -j {args.jobs} --stats (the driver's own cost) …", flush=True)
    stats_file = work / "stats.json"
    make_grade(pristine(template, work / "stats"), args.jobs, "--stats", str(stats_file))
    driver = json.loads(stats_file.read_text(encoding="utf-8"))["driver"]
    per_notebook = {}
    for size in sizes:
        if size == args.learners:  # the class of the ratios: its median
            per_notebook[size] = (statistics.median(times["grade"]) / notebooks, notebooks)
            continue
        print(f"make grade -j {args.jobs}, {size} learners …", flush=True)
        course, count = grown(template, work / f"size-{size}", size)
        per_notebook[size] = (make_grade(course, args.jobs) / count, count)

    stock_s, grade_s, floor_s = (statistics.median(times[k]) for k in ("stock", "grade", "floor"))
    print()
    print(budget.summarize(budget_file))
    print()
    print(f"notebooks graded           {notebooks} per run, {args.runs} runs, median times:")
    print(f"CPU counted by             {bench_cpu.how()}")
    print(f"stock autograde            {stock_s:7.1f} s  ({stock_s / notebooks:.2f} s/notebook)")
    label = f"make grade -j {args.jobs}"
    print(f"{label:<26} {grade_s:7.1f} s  ({grade_s / notebooks:.2f} s/notebook)")
    print(f"  without the sandbox      {unsafe_s:7.1f} s  (one run)")
    pool_s, grade_cpu, pool_cpu = (
        statistics.median(v) for v in (pool_times, cpus["grade"], cpus["pool"])
    )
    print(
        f"LocalCluster vs fork pool  CPU {grade_cpu / notebooks * 1000:.0f} vs "
        f"{pool_cpu / notebooks * 1000:.0f} CPU-ms per notebook ({grade_cpu / pool_cpu:.3f}×, "
        f"target ≤ 1.05); wall {grade_s:.1f} vs {pool_s:.1f} s ({grade_s / pool_s:.3f}×: "
        "compare wall clock only on a quiet machine)"
    )
    slopes, each = medians_and_ratios(run_slopes(cpus, doubled_cpus, doubled_notebooks - notebooks))
    starts = [
        total - slope * notebooks
        for total, slope in zip((grade_cpu, pool_cpu), slopes, strict=True)
    ]
    print(
        f"  per notebook (slope)     {slopes[0] * 1000:.0f} vs {slopes[1] * 1000:.0f} CPU-ms "
        f"({slopes[0] / slopes[1]:.3f}×, target ≤ 1.05; runs: {each}); start "
        f"{starts[0]:.1f} vs {starts[1]:.1f} CPU-s (a warm-kernel parent per worker, Dask itself)"
    )
    past_start, each = medians_and_ratios(run_slopes(start_cpus, cpus, notebooks - start_notebooks))
    measured_starts = [statistics.median(start_cpus[way]) for way in ("grade", "pool")]
    print(
        f"  past the start           {past_start[0] * 1000:.0f} vs {past_start[1] * 1000:.0f} "
        f"CPU-ms per notebook ({past_start[0] / past_start[1]:.3f}×, target ≤ 1.05; runs: "
        f"{each}); the start itself (a class of {few}, {start_notebooks} notebooks) "
        f"{measured_starts[0]:.1f} vs {measured_starts[1]:.1f} CPU-s"
    )
    per_hour = 3600_000 / max(driver["wall_ms_per_result"], 0.001)
    print(
        f"driver's own cost          {driver['cpu_ms_per_result']:.1f} CPU-ms, "
        f"{driver['wall_ms_per_result']:.1f} ms per notebook (gradebook and bookkeeping): "
        f"one driver takes about {per_hour:,.0f} notebooks an hour"
    )
    print(f"floor (bare nbclient -j {args.jobs}) {floor_s:7.1f} s")
    sandbox_cost = (grade_s - unsafe_s) * (os.cpu_count() or 1) / notebooks
    print(f"sandbox's cost             {sandbox_cost:7.2f} s per notebook (CPU-seconds, ±noise)")
    ratios = [s / g for s, g in zip(times["stock"], times["grade"], strict=True)]
    floors = [g / f for g, f in zip(times["grade"], times["floor"], strict=True)]
    each = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"stock / make grade         {stock_s / grade_s:7.2f}×   (target ≥ 4; runs: {each})")
    print(
        f"  stock, one bwrap per kernel {cold_s:5.1f} s  ({cold_s / notebooks:.2f} s/notebook, "
        f"one run): ÷ make grade {cold_s / grade_s:.2f}×"
    )
    each = ", ".join(f"{r:.2f}" for r in floors)
    print(f"make grade / floor         {grade_s / floor_s:7.2f}×   (target ≤ 1.3; runs: {each})")
    for size, (seconds, count) in per_notebook.items():
        print(f"make grade, {size:>4} learners  {seconds:7.2f} s per notebook ({count} notebooks)")
    print(f"gradebooks identical       {'yes' if same else 'NO'}")
    print()
    measured_300 = per_notebook[300][0] * per_notebook[300][1] if 300 in per_notebook else None
    table = grade_once_lines(
        times, cpus, notebooks, statistics.median(doubled_walls), doubled_notebooks, slopes[0]
    )
    print(table)
    if measured_300 is not None:
        print(f"300 × 2 notebooks, measured         {measured_300:7.1f} s  (target ≤ 120)")
    if args.class_size:
        print(whole_class(template, work, args.class_size, args.class_runs, args.jobs))
    if args.slurm:
        print(slurm_cost.compare(template, work, args.runs, args.jobs, pristine))
    print(f"load average at the end    {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if same else 1


def whole_class(template: Course, work: Path, learners: int, runs: int, jobs: int) -> str:
    """LocalCluster against the fork pool on a class of `learners`, graded alternately."""
    big, notebooks = grown(template, work / "whole-class", learners)
    measured: dict[str, list[tuple[float, float]]] = {"grade": [], "pool": []}
    for run in range(1, runs + 1):
        for way, grade in (("grade", make_grade), ("pool", pool_grade)):
            print(f"whole class {run}/{runs}: {way}, {notebooks} notebooks …", flush=True)
            course = pristine(big, work / f"whole-class-{way}")
            measured[way].append(cpu_timed(lambda c=course, g=grade: g(c, jobs)))
    lines = [f"LocalCluster vs fork pool, a class of {learners} learners ({notebooks} notebooks):"]
    ratios = []
    for (g_wall, g_cpu), (p_wall, p_cpu) in zip(measured["grade"], measured["pool"], strict=True):
        ratios.append(g_cpu / p_cpu)
        lines.append(
            f"  {g_cpu / notebooks * 1000:5.0f} vs {p_cpu / notebooks * 1000:5.0f} CPU-ms per "
            f"notebook ({ratios[-1]:.3f}×), {g_wall:6.1f} vs {p_wall:6.1f} s "
            f"({g_wall / p_wall:.3f}×)"
        )
    lines.append(f"  median CPU ratio {statistics.median(ratios):.3f}× (target ≤ 1.05)")
    return "\n".join(lines)


def run_slopes(small_cpus, big_cpus, added: int) -> dict[str, list[float]]:
    """CPU-seconds per added notebook of each run, per way: its bigger class minus its smaller."""
    return {
        way: [(b - s) / max(added, 1) for s, b in zip(smalls, big_cpus[way], strict=True)]
        for way, smalls in small_cpus.items()
        if way in big_cpus
    }


def medians_and_ratios(per_run: dict[str, list[float]]) -> tuple[list[float], str]:
    """[median for grade, median for pool], and each run's grade ÷ pool, for printing."""
    medians = [statistics.median(per_run[way]) for way in ("grade", "pool")]
    ratios = zip(per_run["grade"], per_run["pool"], strict=True)
    return medians, ", ".join(f"{g / p:.2f}" for g, p in ratios)


def grade_once_lines(times, cpus, notebooks, doubled_wall, doubled_notebooks, cpu_slope) -> str:
    """Issue 21's table: each way's s/notebook and CPU-ms/notebook (medians), the two ratios,
    and 300 learners × 2 notebooks."""
    wall = {k: statistics.median(v) / notebooks for k, v in times.items() if v}
    cpu = {k: statistics.median(v) * 1000 / notebooks for k, v in cpus.items() if v}
    names = {
        "plain": "plain nbgrader (no sandbox)",
        "stock": "stock, course config",
        "grade": "make grade",
        "physical": "physical floor",
        "physical_numpy": "  checks imported per notebook",
    }
    lines = ["way (median of the runs)          s/notebook  CPU-ms/notebook"]
    for key, name in names.items():
        lines.append(f"  {name:<32} {wall[key]:8.3f}  {cpu[key]:10.0f}")
    lines.append(
        f"make grade ÷ physical floor (CPU)  {cpu['grade'] / cpu['physical']:7.2f}×  (target ≤ 3); "
        f"per added notebook (slope, {cpu_slope * 1000:.0f} CPU-ms) "
        f"{cpu_slope * 1000 / cpu['physical']:.2f}×"
    )
    lines.append(
        f"plain nbgrader ÷ make grade (wall) {wall['plain'] / wall['grade']:7.2f}×  (target ≥ 10)"
    )
    # the wall-clock slope between the class and the one twice its size, and its fixed start
    slope = (doubled_wall - statistics.median(times["grade"])) / max(
        doubled_notebooks - notebooks, 1
    )
    start = statistics.median(times["grade"]) - slope * notebooks
    lines.append(
        f"300 × 2 notebooks, make grade      {start + 600 * slope:7.1f} s  (projected from the "
        "slope; --sizes 300 measures it; target ≤ 120)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
