"""The feedback page opens with the point: a short summary per function.

`FeedbackSummary` is the last of `c.GenerateFeedback.preprocessors`. After
GetGrades has put each cell's score into the notebook and the hidden test
regions and tracebacks are gone, it inserts one cell at the top of the page:
per function its points and the first diagnosis (the first failing cell's
message, and the first misconception a failing cell of that function names),
the written answers with the TA's score or "not graded yet", and the late
penalty, in the course's language (coursekit.core.messages). The function
names link to their first failing cell.

The same rows go into the page once more as data: a hidden element
`#coursekit-attempt` whose `data-attempt` attribute holds them as JSON
(ATTEMPT_SCHEMA), so that a learner's panel reads the attempt from the page that
stock release_feedback and fetch_feedback carry, never its markup
(`read_attempt`).

A learner stuck on a function gets its hints given so far under its row, and
as `hints` in its data: the live service decides which (coursekit.live.hints)
and sets them around the one generate_feedback of that attempt (`showing_hints`);
a batch sets none, so `make grade`'s pages carry none.

It also adds CSS so that long messages and hints (Korean ones too) wrap inside
their boxes, and hides nbgrader's list of unnamed "Test cell" links (the summary
replaces it; the late-penalty line of that list stays).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from html.parser import HTMLParser

import nbformat
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from coursekit.checks.core import is_misconception
from coursekit.checks.verdict import Verdict
from coursekit.core import cells, templating
from coursekit.core.messages import _
from coursekit.learner import diagnosis, pictures

SUMMARY_ID = "course-summary"
ATTEMPT_ID = "coursekit-attempt"
ATTEMPT_SCHEMA = 1
CSS = """
div.output_area pre, div.output_subarea pre, div.input_area pre, div.highlight pre {
  white-space: pre-wrap;
  word-break: keep-all;
  overflow-wrap: anywhere;
}
div.output_subarea { max-width: 100%; overflow-x: visible; }
#toc li { display: none; }
#toc li.late-penalty { display: list-item; }
div.course-summary { border: 1px solid #337ab7; border-radius: 4px; padding: 0.6em 1em; }
div.course-summary h3 { margin-top: 0.2em; }
div.course-summary table { width: 100%; border-collapse: collapse; margin: 0.4em 0; }
div.course-summary th, div.course-summary td {
  text-align: left; vertical-align: top; padding: 0.3em 0.6em;
  border-bottom: 1px solid #ddd; word-break: keep-all; overflow-wrap: anywhere;
}
div.course-summary td.points, div.course-summary td.name { white-space: nowrap; }
div.course-summary .passed { color: #2e7d32; }
div.course-summary .failed { color: #c62828; }
div.course-summary .misconception { color: #555; }
div.course-summary .hint { display: block; margin-top: 0.3em; padding-left: 0.6em;
  border-left: 3px solid #337ab7; }
"""


def _points(value) -> str:
    return f"{float(value):g}"


def _score(cell) -> float | None:
    score = cell.metadata.get("nbgrader", {}).get("score")
    return None if score is None else float(score)


def _max(cell) -> float:
    return float(cell.metadata.get("nbgrader", {}).get("points") or 0)


def stored_verdict(cell) -> Verdict | None:
    """The verdict record the grader stored in a failed hidden test cell
    (coursekit.checks.verdict), or None."""
    record = cells.verdict_record(cell)
    if not isinstance(record, dict):
        return None
    try:
        return Verdict.from_record(record)
    except (TypeError, ValueError):
        return None


def misconception_line(verdict: Verdict | None) -> str:
    """'Likely mistake [key]: ...', or "" when the verdict names none (or names a stub left
    as released: the row's message already says so)."""
    if verdict is None or verdict.misconception is None or not is_misconception(verdict.key):
        return ""
    return _("Likely mistake [{key}]: {title}").format(
        key=verdict.key, title=verdict.misconception["title"]
    )


WAITING, LEFT_BLANK = "waiting", "left_blank"


def written_answer_states(resources) -> dict[str, str]:
    """grade_id -> WAITING (a TA has yet to grade it) or LEFT_BLANK (handed in as released:
    nbgrader's autograde gives it 0 and asks no TA), from the gradebook; a cell a TA
    graded is not in it."""
    info = resources.get("nbgrader", {})
    if not {"db_url", "notebook", "assignment", "student"} <= set(info):
        return {}
    with Gradebook(info["db_url"]) as gb:  # as nbgrader's GetGrades opens it
        notebook = gb.find_submission_notebook(
            info["notebook"], info["assignment"], info["student"]
        )
        states = {}
        for grade in notebook.grades:
            if grade.needs_manual_grade:
                states[grade.name] = WAITING
            elif grade.manual_score is None and grade.auto_score is not None:
                states[grade.name] = LEFT_BLANK
        return states


@dataclass
class FunctionRow:
    """One contract function: its points and, when a cell failed, the first diagnosis."""

    name: str
    score: float
    out_of: float
    anchor: str | None = None  # grade_id of the first failing cell
    message: str | None = None  # None: every cell passed
    misconception: str = ""
    verdict: Verdict | None = None  # the first hidden check's record among the failing cells
    hints: tuple[str, ...] = ()  # the hints given so far, when the learner is stuck on it
    # The function on the page's seeded example, as a hidden check's verdict drew it
    picture: pictures.Picture | None = None

    @property
    def points(self) -> str:
        return f"{_points(self.score)} / {_points(self.out_of)}"

    def data(self) -> dict:
        verdict = self.verdict
        named = verdict is not None and is_misconception(verdict.key)
        mistake = verdict.misconception if named else None
        return {
            "name": self.name,
            "score": self.score,
            "max": self.out_of,
            "cell": self.anchor,
            "message": self.message,
            "misconception": {"key": mistake["key"], "title": mistake["title"]}
            if mistake
            else None,
            "seed": verdict.seed if verdict else None,
            "expected": verdict.expected or None if verdict else None,
            "received": verdict.got or None if verdict else None,
            "hints": list(self.hints),
            "picture": self.picture.data() if self.picture else None,
        }


GRADED = "graded"


@dataclass
class AnswerRow:
    """One written answer and where its TA grading stands."""

    grade_id: str
    score: float | None  # None: not graded yet
    out_of: float
    state: str  # WAITING, LEFT_BLANK or GRADED
    text: str
    has_comment: bool

    @property
    def points(self) -> str:
        if self.state == WAITING:
            return _("not graded yet")
        return f"{_points(self.score)} / {_points(self.out_of)}"

    def data(self) -> dict:
        return {
            "grade_id": self.grade_id,
            "score": None if self.state == WAITING else self.score,
            "max": self.out_of,
            "state": self.state,
        }


def function_rows(nb) -> list[FunctionRow]:
    functions = diagnosis.functions(nb)
    rows = []
    for function in functions:
        got = sum(_score(c) or 0 for c in function.tests)
        out_of = sum(_max(c) for c in function.tests)
        row = FunctionRow(function.name, got, out_of)
        failing = [c for c in function.tests if (_score(c) or 0) < _max(c)]
        if failing:
            first = failing[0]
            row.anchor = cells.grade_id(first) or ""
            row.message = diagnosis.first_line(diagnosis.diagnose(first, functions).message, 300)
            verdicts = [v for cell in failing if (v := stored_verdict(cell)) is not None]
            row.verdict = verdicts[0] if verdicts else None
            drawn = (pictures.read(v.picture) for v in verdicts if v.picture is not None)
            row.picture = next((p for p in drawn if p is not None), None)
            # The visible test fails first but says less: the misconception a hidden
            # check named for this function goes under it.
            extra = next((line for v in verdicts if (line := misconception_line(v))), "")
            if extra != row.message:
                row.misconception = extra
        rows.append(row)
    return rows


_HINTS: ContextVar[Mapping[str, Sequence[str]] | None] = ContextVar("coursekit_hints", default=None)


@contextmanager
def showing_hints(hints: Mapping[str, Sequence[str]]) -> Iterator[None]:
    """Pages made inside show `hints` (function -> the hints given so far) under the rows
    of those functions that failed."""
    token = _HINTS.set(hints)
    try:
        yield
    finally:
        _HINTS.reset(token)


def with_hints(rows: list[FunctionRow]) -> list[FunctionRow]:
    """The rows, each failing one with the hints given for its function (none outside
    `showing_hints`)."""
    given = _HINTS.get() or {}
    for row in rows:
        if row.message is not None:
            row.hints = tuple(given.get(row.name, ()))
    return rows


def answer_rows(nb, resources) -> list[AnswerRow]:
    states = written_answer_states(resources)
    rows = []
    for cell in diagnosis.written_answers(nb):
        score, state = _score(cell), states.get(cells.grade_id(cell))
        if score is None or state == WAITING:
            state, text = WAITING, _("Written answer: a TA grades it.")
        elif state == LEFT_BLANK:
            text = _(
                "Written answer: handed in as released, so no points; write it and submit again."
            )
        else:
            state, text = GRADED, _("Written answer: graded by a TA.")
        comment = cell.metadata.get("nbgrader", {}).get("comment")
        rows.append(
            AnswerRow(cells.grade_id(cell) or "", score, _max(cell), state, text, bool(comment))
        )
    return rows


def attempt_data(
    functions: list[FunctionRow], answers: list[AnswerRow], info: dict, late: float
) -> dict:
    """The attempt as the page shows it, as data (ATTEMPT_SCHEMA), for the learner's panel."""
    total = None
    if "score" in info and "max_score" in info:
        total = {"score": float(info["score"]), "max": float(info["max_score"])}
    return {
        "schema": ATTEMPT_SCHEMA,
        "total": total,
        "late_penalty": late,
        "functions": [row.data() for row in functions],
        "answers": [row.data() for row in answers],
    }


def summary_html(nb, resources) -> str:
    info = resources.get("nbgrader", {})
    total = ""
    if "score" in info and "max_score" in info:
        total = f"{_points(info['score'])} / {_points(info['max_score'])}"
    late = float(info.get("late_penalty") or 0)
    functions, answers = with_hints(function_rows(nb)), answer_rows(nb, resources)
    # One line: markdown would read indented HTML as a code block.
    return templating.render_one_line(
        "feedback_summary.html.j2",
        summary_id=SUMMARY_ID,
        total=total,
        functions=functions,
        answers=answers,
        late_penalty=_points(late) if late else "",
        attempt_id=ATTEMPT_ID,
        attempt=json.dumps(attempt_data(functions, answers, info, late), ensure_ascii=False),
    )


READ_CHUNK = 16384  # characters parsed before looking whether the summary was found


class _FirstAttempt(HTMLParser):
    """Finds the first element with id ATTEMPT_ID and keeps its data-attempt."""

    def __init__(self):
        super().__init__()
        self.found: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if self.found is None and attributes.get("id") == ATTEMPT_ID:
            self.found = attributes.get("data-attempt") or ""


def read_attempt(page: str) -> dict | None:
    """The attempt data of a feedback page (the first #coursekit-attempt: the summary's,
    which comes before anything of the learner's), or None when it has none or it is
    not this schema's."""
    finder = _FirstAttempt()
    for start in range(0, len(page), READ_CHUNK):  # stop at the summary: the rest is long
        finder.feed(page[start : start + READ_CHUNK])
        if finder.found is not None:
            break
    if not finder.found:
        return None
    try:
        data = json.loads(finder.found)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("schema") != ATTEMPT_SCHEMA:
        return None
    return data


class FeedbackSummary(NbGraderPreprocessor):
    """Put the summary first on the feedback page, and CSS that wraps long lines."""

    def preprocess(self, nb, resources):
        cell = nbformat.v4.new_markdown_cell(summary_html(nb, resources))
        cell.metadata["coursekit"] = {"role": "feedback-summary"}
        nb.cells.insert(0, cell)
        inlining = resources.setdefault("inlining", {})
        inlining.setdefault("css", []).append(CSS + pictures.CSS)
        return nb, resources
