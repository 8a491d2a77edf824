"""Did a change alter what learners, TAs and instructors get? Two commits, the same class.

    python -m bench.same_outputs --before 58581e9            # against HEAD
    python -m bench.same_outputs --before a3a9c7c --after HEAD --keep

Each commit is exported (`git archive`) into build/same-outputs/<commit>/ and set up with
its own `make venv` (kept between runs: a commit's tree never changes). In each, with that
commit's own machinery, through the make targets both commits have:

1. `make demo`: the demo's whole cycle on its simulated class;
2. the catalog class, the same notebooks for both commits (built once, from the `--after`
   tree's release notebooks and catalog): the reference, the untouched release, one learner
   per catalog mistake, the correct variants combined, put where `nbgrader collect` would;
3. `make grade`, stock `nbgrader generate_feedback`, `make report`, `make export` to Canvas
   and to Moodle.

Then it compares, after masking what differs run to run (dates and times, durations, the
tree's own path): the gradebook (every grade and comment), every feedback page, every
autograded notebook's outputs (the diagnoses learners read), the TA report's files, the
exports and grades.csv, and what `make demo`, `make grade` and `make report` printed.
It prints one line per output, a diff of the first lines of each that differ, and exits 1
when anything differs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "build" / "same-outputs"
# What a course run writes (see .gitignore); removed before each run of a kept tree.
RUN_STATE = (
    "gradebook.db",
    "gradebook.db-wal",  # WAL mode (coursekit/core/gradebook_wal.py), while it is open
    "gradebook.db-shm",
    "grades.csv",
    "exchange",
    "submitted",
    "autograded",
    "feedback",
    "reports",
    "exports",
    "demo",
    "left_out",
    "extracted",
    "downloaded",
)
# Run-to-run noise, masked before comparing: ISO and nbgrader's date-times, durations.
NOISE = (
    (
        re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d|Z| ?[A-Z]{2,5})?"),
        "<when>",
    ),
    (re.compile(r"\d{4}-\d\d-\d\d"), "<date>"),
    (re.compile(r"\b\d\d:\d\d(:\d\d)?\b"), "<time>"),
    (re.compile(r"\d+(\.\d+)?\s*(ms|s|초|분)\b"), "<duration>"),
    (re.compile(r"\d+(\.\d+)?\s*notebooks?/(s|min|h)\b"), "<rate>"),
    (re.compile(r"Makefile:\d+"), "Makefile:<line>"),  # make's own error line
)


def run(command: list[str], cwd: Path, log: Path, *, check: bool = True) -> str:
    """A command in a tree; its output is returned and kept in `log`. Fails loudly, unless
    not `check`: then what it printed on both streams and its exit status are the output."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("VIRTUAL_ENV")}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600, check=False
    )
    log.write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    if not check:
        return f"{done.stdout}\n--- stderr ---\n{done.stderr}\n--- exit {done.returncode}"
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {cwd} (exit {done.returncode}); see {log}")
    return done.stdout


def commit_of(rev: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def export_tree(commit: str) -> Path:
    """The commit's files in build/same-outputs/<commit>/, with its own .venv."""
    tree = WORK / commit[:12]
    if not (tree / "Makefile").is_file():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit], cwd=REPO, capture_output=True, check=True
        ).stdout
        archive_path = WORK / f"{commit[:12]}.tar"
        archive_path.write_bytes(archive)
        with tarfile.open(archive_path) as tar:
            tar.extractall(tree, filter="data")
        archive_path.unlink()
    for name in RUN_STATE:
        path = tree / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    print(f"{commit[:12]}: make venv", flush=True)
    run(["make", "venv"], tree, tree / "same-outputs-venv.log")
    return tree


CATALOG_CLASS = """
import sys, json
from pathlib import Path
import nbformat
from catalog import catalogs
from coursekit.simulate import submissions

tree, out = Path(sys.argv[1]), Path(sys.argv[2])
for assignment, catalog in sorted(catalogs().items()):
    source_dir = tree / "source" / assignment
    if not source_dir.is_dir():
        continue
    name = next(p.name for p in sorted(source_dir.glob("*.ipynb")))
    source = nbformat.read(source_dir / name, as_version=4)
    release = nbformat.read(tree / "release" / assignment / name, as_version=4)
    learners = {
        "catalog-reference": submissions.fill(release, source),
        "catalog-blank": submissions.fill(release, source, blank=True),
    }
    for entry in catalog.mistakes:
        learners["catalog-" + entry.student_id] = submissions.fill(
            release, source, replace={entry.function: entry.source}
        )
    by_function = {}
    for entry in catalog.variants:
        by_function.setdefault(entry.function, []).append(entry)
    combined = {}
    for entries in by_function.values():
        for k, entry in enumerate(entries, start=1):
            combined.setdefault(f"catalog-variants-{k}", {})[entry.function] = entry.source
    for learner, replace in combined.items():
        learners[learner] = submissions.fill(release, source, replace=replace)
    for learner, nb in learners.items():
        folder = out / learner / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / name)
"""


def build_catalog_class(tree: Path, out: Path) -> None:
    """The catalog class's notebooks, made by the tree's own code (its catalog, its release)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    run(
        [str(tree / ".venv/bin/python"), "-c", CATALOG_CLASS, str(tree), str(out)],
        tree,
        WORK / "catalog-class.log",
    )


def course_run(tree: Path, catalog_class: Path) -> dict[str, str]:
    """The demo, then the catalog class graded; output name -> its text."""
    label = tree.name
    outputs = {}
    print(f"{label}: make demo", flush=True)
    outputs["make demo"] = run(["make", "-s", "demo"], tree, tree / "same-outputs-demo.log")
    shutil.copytree(catalog_class, tree / "submitted", dirs_exist_ok=True)
    print(f"{label}: make grade, feedback, report, export", flush=True)
    outputs["make grade"] = run(["make", "-s", "grade"], tree, tree / "same-outputs-grade.log")
    nbgrader = str(tree / ".venv/bin/nbgrader")
    for assignment in sorted(p.name for p in (tree / "source").iterdir() if p.is_dir()):
        run(
            [nbgrader, "generate_feedback", assignment, "--force"],
            tree,
            tree / f"same-outputs-feedback-{assignment}.log",
        )
    outputs["make report"] = run(["make", "-s", "report"], tree, tree / "same-outputs-report.log")
    for lms in ("canvas", "moodle"):  # the demo's learners have no LMS id: an error to compare
        outputs[f"make export --to {lms}"] = run(
            ["make", "-s", "export", f"ARGS=--to {lms}"],
            tree,
            tree / f"same-outputs-{lms}.log",
            check=False,
        )
    outputs["gradebook"] = gradebook_dump(tree / "gradebook.db")
    for folder in ("feedback", "reports", "exports"):
        for path in sorted((tree / folder).rglob("*")):
            # nbgrader's submission_secret.txt is random by design (the feedback's key)
            if path.is_file() and path.name != "submission_secret.txt":
                outputs[str(path.relative_to(tree))] = path.read_text(errors="replace")
    for path in sorted((tree / "autograded").rglob("*.ipynb")):
        outputs[str(path.relative_to(tree))] = notebook_outputs(path)
    outputs["grades.csv"] = (tree / "grades.csv").read_text()
    return {name: masked(text, tree) for name, text in outputs.items()}


def gradebook_dump(db: Path) -> str:
    """Every grade, comment and late penalty: learner, assignment, notebook, cell, values."""
    submission = """
        FROM {table} AS g
        JOIN submitted_notebook AS sn ON g.notebook_id = sn.id
        JOIN notebook AS n ON sn.notebook_id = n.id
        JOIN submitted_assignment AS sa ON sn.assignment_id = sa.id
        JOIN assignment AS a ON sa.assignment_id = a.id
        JOIN student AS s ON sa.student_id = s.id
    """
    cell = submission + " JOIN base_cell AS b ON g.cell_id = b.id ORDER BY 1, 2, 3, 4"
    with sqlite3.connect(db) as connection:
        rows = {
            "grades": connection.execute(
                "SELECT s.id, a.name, n.name, b.name, g.auto_score, g.manual_score, "
                "g.extra_credit, g.needs_manual_grade" + cell.format(table="grade")
            ).fetchall(),
            "comments": connection.execute(
                "SELECT s.id, a.name, n.name, b.name, g.auto_comment, g.manual_comment"
                + cell.format(table="comment")
            ).fetchall(),
            "penalties": connection.execute(
                "SELECT s.id, a.name, n.name, sn.late_submission_penalty "
                "FROM submitted_notebook AS sn JOIN notebook AS n ON sn.notebook_id = n.id "
                "JOIN submitted_assignment AS sa ON sn.assignment_id = sa.id "
                "JOIN assignment AS a ON sa.assignment_id = a.id "
                "JOIN student AS s ON sa.student_id = s.id ORDER BY 1, 2, 3"
            ).fetchall(),
        }
    # one row a line: a diff names the learner and cell that changed
    return "\n".join(
        f"{kind} {json.dumps(row, ensure_ascii=False)}"
        for kind, found in rows.items()
        for row in found
    )


def notebook_outputs(path: Path) -> str:
    """What a learner reads in an autograded notebook: each cell's outputs, by cell id."""
    nb = nbformat.read(path, as_version=4)
    kept = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            outputs = [
                {k: v for k, v in out.items() if k != "execution_count"} for out in cell.outputs
            ]
            kept.append({"cell": grade_id, "outputs": outputs})
    return json.dumps(kept, ensure_ascii=False, indent=1, sort_keys=True)


# make grade's lines that depend on which worker took what: a progress line's counter, the
# per-worker and driver-cost lines' numbers. Progress lines are compared as a sorted set.
PROGRESS = re.compile(r"^\[\s*\d+/(\d+)\] ")
BY_WORKER = re.compile(r"(tcp|tls|inproc)://|CPU")
NUMBER = re.compile(r"\d[\d,]*(\.\d+)?")


def masked(text: str, tree: Path) -> str:
    text = text.replace(str(tree), "<tree>")
    for pattern, mask in NOISE:
        text = pattern.sub(mask, text)
    lines, progress = [], []
    for line in text.splitlines():
        if PROGRESS.match(line):
            progress.append(PROGRESS.sub(r"[?/\1] ", line))
            continue
        if progress:  # a run of progress lines ends: in a fixed order
            lines += sorted(progress)
            progress = []
        lines.append(NUMBER.sub("<n>", line) if BY_WORKER.search(line) else line)
    return "\n".join(lines + sorted(progress))


def compare(before: dict[str, str], after: dict[str, str], context: int = 20) -> list[str]:
    """Names of the outputs that differ (or exist on one side only); prints the verdict."""
    differ = []
    for name in sorted(before.keys() | after.keys()):
        if name not in before or name not in after:
            print(f"  only {'after' if name in after else 'before'}: {name}")
            differ.append(name)
        elif before[name] != after[name]:
            print(f"  DIFFERS: {name}")
            diff = difflib.unified_diff(
                before[name].splitlines(), after[name].splitlines(), "before", "after", lineterm=""
            )
            for line in list(diff)[:context]:
                print(f"    {line}")
            differ.append(name)
        else:
            print(f"  same: {name}")
    return differ


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.same_outputs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--before", required=True, help="the commit to compare against")
    parser.add_argument("--after", default="HEAD", help="the commit to check (default HEAD)")
    args = parser.parse_args(argv)
    before, after = commit_of(args.before), commit_of(args.after)
    after_tree = export_tree(after)
    before_tree = export_tree(before)
    catalog_class = WORK / f"catalog-class-{after[:12]}"
    build_catalog_class(after_tree, catalog_class)
    outputs_after = course_run(after_tree, catalog_class)
    outputs_before = course_run(before_tree, catalog_class)
    print(f"\n{before[:12]} (before) against {after[:12]} (after):")
    differ = compare(outputs_before, outputs_after)
    every = outputs_before | outputs_after
    print(f"\n{len(every) - len(differ)} of {len(every)} outputs the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
