"""Files handed in beside a notebook never keep a name a browser renders, and are bounded.

The naming rule (coursekit/exchange/names.py) on its own; then one course
copy in which learners' files reach submitted/ by every way there is (the
exchange's `nbgrader collect`, `nbgrader zip_collect` of an LMS download, a
copy by hand, one of them with 7 000 files), stock `nbgrader autograde`,
`generate_feedback` and `release_feedback` run on it, and no folder they wrote
holds a rendering name; each rename and cut is recorded with its Korean reason.
"""

from __future__ import annotations

import csv
import html
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from coursekit.core import incidents
from coursekit.core.environment import venv_environment
from coursekit.exchange import record
from coursekit.exchange.bound import LEFT_OUT
from coursekit.exchange.names import kept_name, kept_path
from coursekit.exchange.plain_copy import Budget, copy_folder
from coursekit.simulate import submissions
from coursekit.staff.report import render
from tests.support.course_sandbox import CourseSandbox

pytestmark = [pytest.mark.class_graded]

ASSIGNMENT = "ch3_multihead"
NOTEBOOK = "multihead.ipynb"
PAGE = b"<html><script>document.title = 'learner'</script></html>\n"
# What a learner hands in beside the notebook: name -> whether it is kept as it is.
BESIDE = {
    "notes.html": False,
    "old.htm": False,
    "page.XHTML": False,
    "logo.SVG": False,
    "feed.xml": False,
    "app.js": False,
    "mod.mjs": False,
    "paper.pdf": False,
    "README": False,
    "trick.png.html": False,
    "data.csv": True,
    "helper.py": True,
    "notes.md": True,
    "config.json": True,
    "pic.PNG": True,
    "photo.jpeg": True,
    "anim.gif": True,
    "sub/inner.html": False,
}
CROWD = 7_000
MAX_FILES = 50


# -- the rule -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "a.html",
        "a.htm",
        "a.HTML",
        "a.HtMl",
        "a.xhtml",
        "a.svg",
        "a.SVG",
        "a.xml",
        "a.js",
        "a.mjs",
        "a.pdf",
        "a.png.html",
        "a.svg.gz",
        "a.exe",
        "a.webp",
        "README",
        ".hidden",
        ".png",
        "a.png ",
        "a.",
        "a.txt.",
    ],
)
def test_a_rendering_or_unknown_name_gets_txt_added(name):
    assert kept_name(name) == name + ".txt"
    assert kept_name(kept_name(name)) == kept_name(name)  # the kept name is kept


@pytest.mark.parametrize(
    "name",
    [
        "a.ipynb",
        "a.py",
        "a.txt",
        "a.csv",
        "a.tsv",
        "a.md",
        "a.json",
        "a.png",
        "a.PNG",
        "a.jpg",
        "a.JPEG",
        "a.gif",
        "a.html.txt",
        "a.svg.png",
        "timestamp.txt",
    ],
)
def test_text_data_and_plain_images_keep_their_name(name):
    assert kept_name(name) == name


def test_only_the_file_name_of_a_path_is_changed():
    assert kept_path("sub.html/page.html") == "sub.html/page.html.txt"
    assert kept_path("sub/data.csv") == "sub/data.csv"


def test_the_bounded_copy_renames_and_keeps_the_learners_own_name(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    for name in (NOTEBOOK, "notes.html", "notes.html.txt", "logo.svg", "pic.PNG", "sub/x.XHTML"):
        (src / name).write_bytes(PAGE)
    result = copy_folder(str(src), str(tmp_path / "dest"), Budget(), inert_names=True)
    copied = sorted(str(p.relative_to(tmp_path / "dest")) for p in (tmp_path / "dest").rglob("*"))
    assert copied == sorted(
        [NOTEBOOK, "logo.svg.txt", "notes.html.txt", "pic.PNG", "sub", "sub/x.XHTML.txt"]
    )
    # The learner's own notes.html.txt keeps its name; notes.html is left out, with a reason.
    assert (tmp_path / "dest" / "notes.html.txt").read_bytes() == PAGE
    assert [(i.path, "이미 있어" in i.reason) for i in result.left_out] == [("notes.html", True)]
    assert sorted((i.path, i.kept) for i in result.renamed) == [
        ("logo.svg", "logo.svg.txt"),
        ("sub/x.XHTML", "sub/x.XHTML.txt"),
    ]


# -- every way in, stock commands after ------------------------------------------------


def rendering_names(folder: Path, allowed=()) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and kept_name(p.name) != p.name and p.name not in allowed
    )


def hand_in(folder: Path, nb) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / NOTEBOOK)
    for name in BESIDE:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_bytes(PAGE)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    sandbox = CourseSandbox(tmp_path_factory.mktemp("inert-files"))
    sandbox.generate(ASSIGNMENT)
    reference = submissions.fill(
        sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    )
    root = sandbox.root
    # The exchange: a submission as nbgrader submit leaves it, collected by the course.
    inbound = root / "exchange" / sandbox.course_id / "inbound"
    sent = inbound / f"collected+{ASSIGNMENT}+2024-01-01 00:00:00.000000 UTC+abc"
    hand_in(sent, reference)
    (sent / "timestamp.txt").write_text("2024-01-01 00:00:00.000000 UTC")
    (sent / "submission_secret.txt").write_text("0" * 64)
    collect = sandbox.run("collect", ASSIGNMENT)
    # An LMS download, as zip_collect reads it.
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "lms.zip", "w") as zf:
        zf.writestr(f"{ASSIGNMENT}_zipper_{NOTEBOOK}", nbformat.writes(reference))
        for name in ("notes.html", "README", "data.csv"):
            zf.writestr(f"{ASSIGNMENT}_zipper_{name}", PAGE)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(
            "\nc.FileNameCollectorPlugin.named_regexp = "
            r"r'.*/[^/]+_(?P<student_id>[a-z]+)_(?P<file_id>[^/]+)$'"
            "\nc.FileNameCollectorPlugin.valid_ext = ['.ipynb', '.html', '.csv', '']\n"
        )
    zip_collect = sandbox.run("zip_collect", ASSIGNMENT)
    # By hand: a folder copied straight into submitted/, and one with 7 000 files.
    hand_in(root / "submitted" / "hand" / ASSIGNMENT, reference)
    crowd = sandbox.submit("crowd", ASSIGNMENT, reference)
    for i in range(CROWD):
        (crowd / f"f{i:05d}.txt").write_text(f"{i}\n")
    (crowd / "zz_last.html").write_bytes(PAGE)
    autograde = sandbox.run("autograde", ASSIGNMENT, "--force")
    feedback = sandbox.run("generate_feedback", ASSIGNMENT, "--force")
    release = sandbox.run("release_feedback", ASSIGNMENT)
    return sandbox, {
        "collect": collect,
        "zip_collect": zip_collect,
        "autograde": autograde,
        "feedback": feedback,
        "release": release,
    }


LEARNERS = ("collected", "zipper", "hand", "crowd")


def test_every_command_succeeds_and_grades_every_learner_alike(course):
    sandbox, runs = course
    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr[-3000:])
    assert "There was an error processing" not in runs["autograde"].stderr
    scores = sandbox.scores(ASSIGNMENT)
    assert set(scores) == set(LEARNERS)
    assert scores["hand"] == scores["collected"] == scores["zipper"] == scores["crowd"]
    points = sandbox.max_scores(ASSIGNMENT)
    assert {c: s for c, s in scores["hand"].items() if s is not None} == {
        c: p for c, p in points.items() if scores["hand"][c] is not None
    }


@pytest.mark.parametrize("step", ["submitted", "autograded", "feedback"])
@pytest.mark.parametrize("learner", LEARNERS)
def test_no_folder_holds_a_rendering_name(course, step, learner):
    sandbox, _ = course
    folder = sandbox.root / step / learner / ASSIGNMENT
    assert (folder / (NOTEBOOK if step != "feedback" else "multihead.html")).is_file()
    # feedback/'s one page is nbgrader's own, of the graded notebook.
    assert rendering_names(folder, allowed={"multihead.html"}) == []


@pytest.mark.parametrize("learner", ["collected", "hand"])
def test_each_file_is_there_under_its_kept_name_with_its_content(course, learner):
    sandbox, _ = course
    for step in ("submitted", "autograded", "feedback"):
        folder = sandbox.root / step / learner / ASSIGNMENT
        for name in BESIDE:
            assert (folder / kept_path(name)).read_bytes() == PAGE, (step, name)


def test_zip_collect_renames_as_it_extracts_and_collects(course):
    sandbox, _ = course
    folder = sandbox.root / "submitted" / "zipper" / ASSIGNMENT
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [NOTEBOOK, "notes.html.txt", "README.txt", "data.csv"]
    )
    extracted = sandbox.root / "downloaded" / ASSIGNMENT / "extracted"
    assert rendering_names(extracted) == []


def exchange_record(sandbox, learner: str) -> list[dict]:
    report = record.read(str(sandbox.root / "reports" / "exchange_incidents.json"))
    return report.get(ASSIGNMENT, {}).get(learner, [])


@pytest.mark.parametrize(
    "learner, renamed",
    [
        ("collected", {n for n, kept in BESIDE.items() if not kept}),
        ("hand", {n for n, kept in BESIDE.items() if not kept}),
        ("zipper", {"notes.html", "README"}),
    ],
)
def test_each_rename_is_recorded_with_its_korean_reason(course, learner, renamed):
    sandbox, _ = course
    found = {
        e["path"]: e["reason"] for e in exchange_record(sandbox, learner) if "바꿔" in e["reason"]
    }
    assert set(found) == renamed
    assert all(kept_path(path) in reason for path, reason in found.items())


def learner_block(table: str, learner: str) -> str:
    """The terminal table's lines of one learner: its row and the indented lines under it."""
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {learner} "))
    end = next(
        (i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")), len(lines)
    )
    return "\n".join(lines[start:end])


def test_the_ta_report_says_per_learner_what_the_exchange_renamed_or_left_out(course, tmp_path):
    """The terminal table, the page and the CSV name each renamed file under its learner."""
    sandbox, _ = course
    run = subprocess.run(
        [sys.executable, "-m", "coursekit.staff.report", ASSIGNMENT, "--root", str(sandbox.root),
         "--out", str(tmp_path)],
        env=venv_environment(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    table = run.stdout
    renamed = sorted(n for n, kept in BESIDE.items() if not kept)
    rows = list(csv.DictReader((tmp_path / f"{ASSIGNMENT}.csv").open(encoding="utf-8")))
    page = (tmp_path / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    for learner in ("collected", "hand", "zipper"):
        recorded = exchange_record(sandbox, learner)
        assert recorded, learner
        listed = {r["cell"]: r["diagnosis"] for r in rows if r["student"] == learner
                  and r["status"] == "교환에서 빠지거나 이름이 바뀜"}  # fmt: skip
        assert listed == {e["path"]: e["reason"] for e in recorded}, learner
        block = learner_block(table, learner)
        shown = recorded[: render.EXCHANGE_SHOWN]
        assert all(f"{e['path']} — {e['reason']}" in block for e in shown), block
        assert all(f"⚠ 교환: {html.escape(e['path'])} — " in page for e in shown), learner
        if len(recorded) > render.EXCHANGE_SHOWN:
            more = f"⚠ 교환: … {len(recorded) - render.EXCHANGE_SHOWN}개 더"
            assert more in block and more in page, block
    assert {r["cell"] for r in rows if r["student"] == "collected" and r["cell"] in BESIDE} >= set(
        renamed
    )
    assert "<script" not in page  # the page shows names and reasons as text


def note_incidents(sandbox, learner: str) -> list[str]:
    nb = sandbox.autograded_notebook(learner, ASSIGNMENT)
    return [i.text for i in incidents.in_notebook(nb) if i.name == incidents.SUBMISSION_FILES]


def test_stock_autograde_notes_in_the_notebook_what_it_did_to_a_hand_copy(course):
    sandbox, _ = course
    notes = " ".join(note_incidents(sandbox, "hand"))
    assert "notes.html.txt" in notes and "README.txt" in notes
    assert note_incidents(sandbox, "collected") == []  # the exchange had done it already


def test_7000_files_by_hand_are_graded_with_at_most_the_cap_copied(course):
    sandbox, _ = course
    root = sandbox.root
    for step in ("submitted", "autograded"):
        files = [p for p in (root / step / "crowd" / ASSIGNMENT).rglob("*") if p.is_file()]
        assert len(files) == MAX_FILES, step  # the notebook first, then 49 more
    # Nothing is lost: the rest waits in left_out/, its one page renamed too.
    aside = root / LEFT_OUT / "submitted" / "crowd" / ASSIGNMENT
    names = {p.name for p in aside.iterdir()}
    kept = {p.name for p in (root / "submitted" / "crowd" / ASSIGNMENT).iterdir()}
    assert len(names) == CROWD + 1 - (MAX_FILES - 1)
    assert names | kept == {f"f{i:05d}.txt" for i in range(CROWD)} | {NOTEBOOK, "zz_last.html.txt"}
    assert rendering_names(aside) == []
    assert "파일이 너무 많습니다" in " ".join(note_incidents(sandbox, "crowd"))
    reasons = [e["reason"] for e in exchange_record(sandbox, "crowd")]
    assert any("파일이 너무 많습니다" in r for r in reasons)
    assert any(str(aside.relative_to(root)) in r for r in reasons)


def test_release_feedback_releases_only_the_notebooks_pages(course):
    sandbox, _ = course
    released = list((sandbox.root / "exchange" / sandbox.course_id / "feedback").glob("*"))
    # The collected learner's page (the others have no submission_secret.txt), and no
    # learner's file of theirs beside it.
    page = sandbox.root / "feedback" / "collected" / ASSIGNMENT / "multihead.html"
    assert [p.read_bytes() for p in released] == [page.read_bytes()]


def test_a_second_autograde_leaves_the_bounded_folders_as_they_are(course):
    sandbox, _ = course
    before = {p: p.stat().st_ino for p in (sandbox.root / "submitted").rglob("*") if p.is_file()}
    run = sandbox.run("autograde", ASSIGNMENT, "--force", "--student", "hand")
    assert run.returncode == 0, run.stderr[-3000:]
    after = {p: p.stat().st_ino for p in (sandbox.root / "submitted").rglob("*") if p.is_file()}
    assert after == before


def test_make_grade_copies_back_no_rendering_name(course, tmp_path):
    sandbox, _ = course
    (tmp_path / "grade").mkdir()
    other = CourseSandbox(tmp_path / "grade")
    other.generate(ASSIGNMENT)
    reference = nbformat.read(sandbox.root / "submitted" / "hand" / ASSIGNMENT / NOTEBOOK, 4)
    hand_in(other.root / "submitted" / "hand" / ASSIGNMENT, reference)
    other.grade("-j", "1")
    folder = other.root / "autograded" / "hand" / ASSIGNMENT
    assert (folder / NOTEBOOK).is_file()
    assert rendering_names(folder) == []
    assert (folder / "notes.html.txt").read_bytes() == PAGE
    report = json.loads((other.root / "reports" / "grading_incidents.json").read_text())
    found = report[ASSIGNMENT]["hand"]
    assert any(i["ename"] == incidents.SUBMISSION_FILES for i in found), found
    # make grade never changes the class's submitted/ folder.
    assert (other.root / "submitted" / "hand" / ASSIGNMENT / "notes.html").exists()
    assert os.listdir(other.root / "submitted" / "hand")  # the folder itself is there
