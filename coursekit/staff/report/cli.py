"""조교용 채점 보고서 (TA report) from the gradebook and the autograded notebooks.

    python -m coursekit.staff.report [assignment ...] [--root DIR] [--out DIR]

Per assignment it prints a terminal table and writes reports/<assignment>.csv
and reports/<assignment>.html (self-contained; open it in a browser). It reads
the gradebook and the grader's records in the autograded notebooks, and runs
no learner code: the clusters come from the verdicts' probe records.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nbgrader.api import MissingEntry

from coursekit.core.course import Course, add_root_argument
from coursekit.staff.report import clusters as grouping
from coursekit.staff.report import data, overview, render, summary


def build(root: Path, assignment: str, out: Path) -> str:
    """Write the CSV and HTML of one assignment; return its terminal table."""
    print(f"   {assignment}: gradebook 과 채점된 노트북 읽는 중", file=sys.stderr, flush=True)
    found = data.read_assignment(root, assignment)
    clusters = grouping.clusters(found)
    old = sum(1 for x in found.learners for f in x.failures if f.function and f.probe is None)
    if old:  # records from a grader before the probe was recorded: regrade to cluster them
        print(f"   {assignment}: probe 기록 없는 틀린 칸 {old}개 (다시 채점하면 묶입니다)",
              file=sys.stderr, flush=True)  # fmt: skip
    counts = summary.summarize(found)
    view = overview.overview(root, found)
    out.mkdir(parents=True, exist_ok=True)
    render.write_csv(out / f"{assignment}.csv", found, clusters, view)
    render.write_html(out / f"{assignment}.html", found, counts, clusters, view)
    return render.terminal(found, counts, clusters, view)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m coursekit.staff.report",
        description="조교용 채점 보고서: 학습자별 틀린 칸과 진단, 반 전체의 실수 통계, "
        "같은 틀린 출력으로 묶인 학습자. reports/<과제>.csv 와 reports/<과제>.html 을 씁니다.",
    )
    parser.add_argument("assignments", nargs="*", help="과제 id (기본: source/ 의 모든 과제)")
    add_root_argument(parser)
    parser.add_argument("--out", type=Path, help="보고서 폴더 (기본: <root>/reports)")
    parser.add_argument(
        "--no-probe",
        action="store_true",
        help="더 이상 쓰지 않음 (아무 일도 하지 않음): 보고서는 학습자 코드를 실행하지 않고 "
        "채점 기록으로 묶습니다",
    )
    args = parser.parse_args(argv)
    # nbgrader runs alembic by name when it opens a new gradebook.
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    if args.no_probe:
        print("--no-probe 는 더 이상 쓰지 않습니다: 보고서는 학습자 코드를 실행하지 않습니다.",
              file=sys.stderr)  # fmt: skip
    course = Course(args.root)
    out = args.out or args.root / "reports"
    for assignment in args.assignments or course.assignments():
        try:
            table = build(args.root, assignment, out)
        except MissingEntry:
            print(f"{assignment}: gradebook 에 채점 기록이 없습니다 (먼저 autograde).", flush=True)
            continue
        print(table + "\n", flush=True)
        print(f"   → {out / assignment}.html, {out / assignment}.csv\n", flush=True)
    return 0
