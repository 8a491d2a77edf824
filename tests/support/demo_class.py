"""One run of `make demo`'s whole cycle in a scratch copy of the course, per test session.

The cycle test, the report tests and the browser test all read this graded
course. They share the pytest-xdist group `demo_cycle`; the run is also guarded
by a file lock in the session's shared tmp folder, so that however the tests
are spread over workers, the cycle runs once and the others wait and reuse it.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from coursekit.core.environment import venv_environment

ROOT = Path(__file__).resolve().parents[2]
GROUP = "demo_cycle"


@dataclass
class DemoRun:
    root: Path
    output: str  # stdout of the first `python -m coursekit.simulate.demo`
    seconds: float
    first_grades: list[dict[str, str]]  # grades.csv after the first run
    rerun_grades: list[dict[str, str]]  # grades.csv after running ch3_multihead again


def read_grades(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as rows:
        return list(csv.DictReader(rows))


def run_demo(root: Path, *assignments: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "coursekit.simulate.demo", "--root", str(root), *assignments],
        cwd=ROOT,
        env=venv_environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def make_demo_run(root: Path) -> DemoRun:
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "source", root / "source")
    started = time.perf_counter()
    first = run_demo(root)
    seconds = time.perf_counter() - started
    first_grades = read_grades(root / "grades.csv")
    run_demo(root, "ch3_multihead", "--no-report")  # a second run: the same grades
    return DemoRun(root, first.stdout, seconds, first_grades, read_grades(root / "grades.csv"))


def shared_demo_run(tmp_path_factory) -> DemoRun:
    """The session's one DemoRun, made by whichever pytest-xdist worker asks first."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this session
    root, record = base / "demo_course", base / "demo_course.json"
    with (base / "demo_course.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            shutil.rmtree(root, ignore_errors=True)  # an earlier worker's failed attempt
            root.mkdir()
            run = make_demo_run(root)
            record.write_text(json.dumps({**asdict(run), "root": str(root)}), encoding="utf-8")
    fields = json.loads(record.read_text(encoding="utf-8"))
    return DemoRun(**{**fields, "root": Path(fields["root"])})
