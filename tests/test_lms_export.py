"""The roster and the LMS exports, read back against what each LMS documents.

The learners come from a roster with Korean names through stock
`nbgrader db student import`; their grades are written into a scratch gradebook
with nbgrader's API (auto and manual grades, a late penalty, a learner who never
submitted); stock `nbgrader export --exporter=...` then writes the files.

Canvas, "Gradebook import CSV": the header starts with Student, ID, SIS User ID,
SIS Login ID, Section; each further column is an assignment, "Name (id)" for an
existing Canvas assignment; a row whose Student cell is "Points Possible" gives
the points; a student is matched by ID, SIS User ID or SIS Login ID; an empty
score cell changes nothing. Moodle, "Import grades from CSV"
(grade/import/csv/classes/load_data.php): one column is mapped to the user
field (id, idnumber, email or username) and a row whose user is not found aborts
the whole import; a grade is a number (unformat_float) or ""/"-" for no grade.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs

import pytest
from nbgrader.api import Gradebook

from coursekit.core.course import Course
from coursekit.core.environment import nbgrader, venv_environment
from coursekit.lms import roster
from tests.support.course_sandbox import CourseSandbox

PREFIX = "tp-"
ROSTER = """\
id,이름,email,lms_id
2026001,김민준,minjun@example.ac.kr,10501
2026002,남궁 서연,seoyeon@example.ac.kr,10502
2026003,이하은,haeun@example.ac.kr,10503
"""
MINJUN, SEOYEON, HAEUN = (f"{PREFIX}202600{n}" for n in (1, 2, 3))
CANVAS_IDS = {"ch3_multihead": 9001}


def _import_roster(course: Course, text: str, tmp_path) -> None:
    path = tmp_path / "students.csv"
    path.write_text(roster.nbgrader_csv(roster.parse(text, PREFIX), PREFIX), encoding="utf-8")
    course.run("db", "student", "import", str(path))


def _grade(gb: Gradebook, assignment: str, student: str, scores: dict, penalty: float = 0.0):
    gb.add_submission(assignment, student, timestamp=datetime(2026, 12, 1, 9, 0))
    for cell, (auto, manual) in scores.items():
        grade = gb.find_grade(cell, "nb", assignment, student)
        grade.auto_score, grade.manual_score = auto, manual
        grade.needs_manual_grade = auto is None and manual is None
    notebook = gb.find_submission_notebook("nb", assignment, student)
    notebook.late_submission_penalty = penalty
    gb.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("lms")
    course = CourseSandbox(tmp_path)
    _import_roster(course, ROSTER, tmp_path)
    with course.gradebook() as gb:
        for name, cells in {
            "ch3_multihead": {"auto": 6.0, "manual": 2.0},
            "ch4_cross_attention": {"auto": 10.0},
        }.items():
            gb.add_assignment(name)
            gb.add_notebook("nb", name)
            for cell, score in cells.items():
                gb.add_grade_cell(cell, "nb", name, max_score=score, cell_type="code")
        # 민준: full marks but a half point of the written answer, ch4 late (−2).
        _grade(gb, "ch3_multihead", MINJUN, {"auto": (6.0, None), "manual": (None, 1.5)})
        _grade(gb, "ch4_cross_attention", MINJUN, {"auto": (10.0, None)}, penalty=2.0)
        # 서연: ch3 written answer not graded yet; ch4 never submitted; a penalty above
        # the score would go below 0.
        _grade(gb, "ch3_multihead", SEOYEON, {"auto": (3.0, None), "manual": (None, None)})
        # 하은 never submitted anything.
    return course


def export(course: Course, exporter: str, *args: str, out=None):
    out = out or course.root / "exports" / f"{exporter}.csv"
    result = nbgrader(
        course.root, "export", f"--exporter=coursekit.lms.export.{exporter}", f"--to={out}",
        *args, check=False,
    )  # fmt: skip
    return result, out


def read_rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_the_roster_names_reach_the_gradebook(course):
    with course.gradebook() as gb:
        students = {s.id: s for s in gb.students}
    assert sorted(students) == [MINJUN, SEOYEON, HAEUN]
    assert (students[MINJUN].last_name, students[MINJUN].first_name) == ("김", "민준")
    assert (students[SEOYEON].last_name, students[SEOYEON].first_name) == ("남궁", "서연")
    assert students[HAEUN].email == "haeun@example.ac.kr"
    assert students[HAEUN].lms_user_id == "10503"


def test_canvas_gradebook_import_csv(course):
    result, out = export(
        course, "CanvasExport", f"--CanvasExport.assignment_ids={CANVAS_IDS}".replace(" ", "")
    )
    assert result.returncode == 0, result.stderr
    assert "has a manual answer not graded yet" in result.stderr  # 서연's ch3
    header, possible, *rows = read_rows(out)
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert header[5:] == ["ch3_multihead (9001)", "ch4_cross_attention"]
    assert re.fullmatch(r".+ \(\d+\)", header[5])  # an existing Canvas assignment, by id
    assert possible[0] == "Points Possible" and possible[1:5] == ["", "", "", ""]
    assert [float(p) for p in possible[5:]] == [8.0, 10.0]
    by_sis = {row[2]: row for row in rows}
    assert set(by_sis) == {"10501", "10502", "10503"}  # every learner, matched by SIS User ID
    assert by_sis["10501"][:5] == ["김, 민준", "", "10501", "minjun@example.ac.kr", ""]
    assert by_sis["10502"][0] == "남궁, 서연"
    # Points: manual grade included, late penalty applied, no submission is an explicit 0.
    assert [float(v) for v in by_sis["10501"][5:]] == [7.5, 8.0]
    assert [float(v) for v in by_sis["10502"][5:]] == [3.0, 0.0]
    assert [float(v) for v in by_sis["10503"][5:]] == [0.0, 0.0]
    assert all(row[5:] and all(v != "" for v in row[5:]) for row in rows)  # "" = no change
    assert all(len(row) == len(header) for row in rows)


def test_moodle_grade_import_csv(course):
    result, out = export(course, "MoodleExport")
    assert result.returncode == 0, result.stderr
    header, *rows = read_rows(out)
    assert header == [
        "First name", "Last name", "ID number", "Email address",
        "ch3_multihead", "ch4_cross_attention",
    ]  # fmt: skip
    by_email = {row[3]: row for row in rows}
    # The identifier column mapped on import (email here) is filled on every row.
    assert set(by_email) == {"minjun@example.ac.kr", "seoyeon@example.ac.kr", "haeun@example.ac.kr"}
    assert by_email["minjun@example.ac.kr"][:3] == ["민준", "김", "10501"]
    for row in rows:  # numbers with a decimal point, never "" or "-" (no grade)
        assert all(re.fullmatch(r"\d+(\.\d+)?", v) for v in row[4:]), row
    assert [float(v) for v in by_email["minjun@example.ac.kr"][4:]] == [7.5, 8.0]
    assert [float(v) for v in by_email["haeun@example.ac.kr"][4:]] == [0.0, 0.0]


def test_make_export_writes_the_lms_file(course):
    result = subprocess.run(
        [sys.executable, "-m", "coursekit.lms.export", "--to", "moodle",
         "--root", str(course.root), "--MoodleExport.identifier=idnumber"],
        cwd=course.root, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert read_rows(course.root / "exports" / "moodle_grades.csv")[0][0] == "First name"


def test_a_learner_the_lms_cannot_match_stops_the_export(course, tmp_path):
    with course.gradebook() as gb:
        gb.add_student("tp-nobody")  # no LMS id, no email: neither LMS could match the row
    try:
        result, _ = export(course, "CanvasExport", out=tmp_path / "c.csv")
        assert result.returncode != 0
        assert "tp-nobody" in result.stderr and "cannot match" in result.stderr
        assert not (tmp_path / "c.csv").exists()
        result, _ = export(course, "MoodleExport", "--MoodleExport.identifier=idnumber")
        assert result.returncode != 0 and "tp-nobody" in result.stderr
    finally:
        with course.gradebook() as gb:
            gb.remove_student("tp-nobody")


def test_the_roster_is_checked_whole():
    bad = (
        "id,이름,email,lms_id\n"
        "2026001,김민준,minjun@example.ac.kr,10501\n"
        "2026001,박지호,jiho@example.ac.kr,10504\n"  # the same id twice
        "Root!,최<b>유나</b>,yuna,10505\n"  # a bad id, markup in the name, no address
        "2026009,,x@example.ac.kr,\n"  # no name
        "2026010,정\u202e우진,woojin@example.ac.kr,\n"  # an invisible direction override
    )
    with pytest.raises(roster.RosterError) as error:
        roster.parse(bad, PREFIX)
    message = str(error.value)
    assert "nothing was created" in message
    for line in ("row 3", "row 4", "row 5", "row 6"):
        assert line in message, message
    assert "\n  row 2:" not in message  # the good row is not blamed
    assert "is also on row 2" in message and "'yuna' is not an address" in message
    assert "U+202E" in message


def test_roster_columns_in_english_or_korean():
    english = roster.parse("id,first_name,last_name,email\nab1,Minjun,Kim,\n")
    assert english == [roster.Learner("ab1", "Minjun", "Kim", "", "")]
    (irish,) = roster.parse("id,first_name,last_name\nx1,Sean,O'Brien\n")
    assert irish.last_name == "O'Brien"  # an apostrophe is a name, not markup
    korean = roster.parse("학번,성,이름,이메일\n7,제갈,공명,k@example.com\n")
    assert korean == [roster.Learner("7", "공명", "제갈", "k@example.com", "")]
    with pytest.raises(roster.RosterError, match="no name column"):
        roster.parse("id,email\n1,a@example.com\n")
    with pytest.raises(roster.RosterError, match="unknown column"):
        roster.parse("id,이름,password\n1,김민준,x\n")


class FakeCanvas(BaseHTTPRequestHandler):
    """The three Canvas API calls a push makes, answered in process; every request kept."""

    seen: ClassVar[list[tuple[str, str, str, dict]]] = []  # method, path, Authorization, form

    def _answer(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.seen.append(("GET", self.path, self.headers.get("Authorization", ""), {}))
        parts = self.path.split("?")[0].strip("/").split("/")  # api v1 courses C [assignments A]
        if len(parts) == 4:
            self._answer({"id": int(parts[3]), "name": "Transformer·PEFT"})
        else:
            self._answer({"id": int(parts[5]), "course_id": int(parts[3]), "name": "ch3"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        form = parse_qs(self.rfile.read(length).decode())
        self.seen.append(("POST", self.path, self.headers.get("Authorization", ""), form))
        self._answer({"id": 31, "workflow_state": "queued", "url": "http://canvas/progress/31"})

    def log_message(self, *args):
        pass


def test_push_to_a_fake_canvas(course):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeCanvas)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FakeCanvas.seen.clear()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        env = {**venv_environment(), "CANVAS_TOKEN": "secret-token"}
        command = [
            sys.executable, "-m", "nbgrader", "export",
            "--exporter=coursekit.lms.export.CanvasExport",
            f"--to={course.root / 'exports' / 'pushed.csv'}",
            f"--CanvasExport.assignment_ids={CANVAS_IDS}".replace(" ", ""),
            f"--CanvasExport.canvas_url={url}", "--CanvasExport.canvas_course_id=77",
        ]  # fmt: skip
        run = dict(cwd=course.root, capture_output=True, text=True, timeout=300)
        result = subprocess.run(command, env=env, **run)
        assert result.returncode == 0, result.stderr
        pushed = list(FakeCanvas.seen)
        # Without the token: a clear error, nothing sent.
        FakeCanvas.seen.clear()
        env.pop("CANVAS_TOKEN")
        refused = subprocess.run(command, env=env, **run)
        assert refused.returncode != 0 and "CANVAS_TOKEN" in refused.stderr
        assert FakeCanvas.seen == []
    finally:
        server.shutdown()
    assert all(auth == "Bearer secret-token" for _, _, auth, _ in pushed)
    (post,) = [request for request in pushed if request[0] == "POST"]
    assert post[1] == "/api/v1/courses/77/assignments/9001/submissions/update_grades"
    grades = {key: value for key, (value,) in post[3].items()}
    assert grades == {  # manual grade in, late penalty out, 0 for no submission
        "grade_data[sis_user_id:10501][posted_grade]": "7.5",
        "grade_data[sis_user_id:10502][posted_grade]": "3",
        "grade_data[sis_user_id:10503][posted_grade]": "0",
    }
