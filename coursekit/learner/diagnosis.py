"""A learner's notebook per function, and a short reason for each failing cell.

Validate (`coursekit.learner.validation`) and the feedback page (`coursekit.learner.feedback`)
both open with one line per contract function. This module finds the
functions (each code answer cell defines one, and the test cells after it
test it) and turns a failing cell's outputs into one sentence in the
course's language (coursekit.core.messages): not implemented yet, calls a
helper that is not implemented yet, called input(), over the time limit, not
defined, stderr output, an exception in the learner's code, or the test's own
message, as the course wrote it.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from dataclasses import dataclass, field

from nbgrader import utils

from coursekit.core import cells, incidents
from coursekit.core.messages import N_, _

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
UNDEFINED_NAME = re.compile(r"name '(\w+)' is not defined")
# IPython writes each frame of a traceback as "Cell In[3], line 15, in split_heads(M, h)".
FRAME_FUNCTION = re.compile(r", in (\w+)\(")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
UNIMPLEMENTED = "UNIMPLEMENTED"
NEEDS_HELPER = "NEEDS_HELPER"
WRONG = "WRONG"

# Each diagnosis's msgid; `say` translates it when it is said.
MESSAGES = {
    "unimplemented": N_("Not implemented yet (raise NotImplementedError() is still there)."),
    "needs_helper": N_("Calls {names}, not implemented yet. Implement that function first."),
    "input": N_(
        "Calls input(). Checks and grading run without input, so input() always raises "
        "an error (StdinNotImplementedError). Take the values as the function's arguments."
    ),
    "timeout": N_(
        "Did not finish within the time limit. Look for a loop that never ends or a "
        "calculation that is too slow. Past the same limit when graded, this cell scores 0."
    ),
    "undefined": N_(
        "{name} is not defined. Check that you did not delete the answer cell or rename "
        "the function, and that you ran the cells in order from the top."
    ),
    "answer_cell_failed": N_(
        "{name} was not defined: running its answer cell raised an error: {why}"
    ),
    "stderr": N_(
        "Text on the error output (stderr) counts as a failure: {line} "
        "Fix it so that no warning (RuntimeWarning and the like) is printed."
    ),
    "exception": N_("The answer code raised {ename}: {evalue}"),
    "exception_bare": N_("The answer code raised {ename}."),
}


def say(key: str, **fields) -> str:
    """The diagnosis `key` of MESSAGES in the course's language, its fields filled in."""
    return _(MESSAGES[key]).format(**fields)


@dataclass
class Function:
    """One contract function: the answer cell that defines it and the test cells after it."""

    name: str
    answer: object | None = None
    tests: list = field(default_factory=list)

    @property
    def visible_tests(self) -> list:
        return [cell for cell in self.tests if not is_hidden_only(cell)]

    @property
    def hidden_tests(self) -> list:
        return [cell for cell in self.tests if is_hidden_only(cell)]


@dataclass
class Diagnosis:
    kind: str  # UNIMPLEMENTED, NEEDS_HELPER or WRONG
    message: str


def functions(nb) -> list[Function]:
    """The notebook's contract functions in order, each with its test cells."""
    found: list[Function] = []
    for cell in nb.cells:
        if cells.is_code_answer(cell):
            name = cells.defined_function(cell.source) or cells.grade_id(cell) or "?"
            found.append(Function(name, answer=cell))
        elif cells.is_test(cell):
            if not found:
                found.append(Function(cells.grade_id(cell) or "?"))
            found[-1].tests.append(cell)
    return found


def written_answers(nb) -> list:
    """The answers a TA grades (graded markdown answer cells)."""
    return [c for c in nb.cells if c.cell_type == "markdown" and cells.is_answer(c)]


def is_unanswered(cell) -> bool:
    """nbgrader's rule: an answer cell whose checksum is the released one is not answered."""
    checksum = cell.metadata.get("nbgrader", {}).get("checksum")
    return checksum is not None and checksum == utils.compute_checksum(cell)


def is_hidden_only(cell) -> bool:
    """A test cell whose checks are all hidden: a docstring and `assert callable(...)`.

    In the release (what Validate runs) it only checks that the function
    exists; its checks run when the submission is graded.
    """
    source = cell.source
    if HIDDEN_BEGIN in source:
        return True
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    for node in body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.Call)
            and isinstance(node.test.func, ast.Name)
            and node.test.func.id == "callable"
        ):
            continue
        return False
    return True


def unimplemented(function: Function) -> bool:
    """The answer still has the released stub (`raise NotImplementedError()`)."""
    return function.answer is not None and "raise NotImplementedError()" in function.answer.source


def failed(cell) -> bool:
    return not cells.passed(cell)


def errors(cell) -> list:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def stderr_text(cell) -> str:
    return "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    )


def first_line(text: str, limit: int = 300) -> str:
    text = ANSI.sub("", text or "").strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def diagnose(cell, notebook_functions: list[Function]) -> Diagnosis:
    """Why a failing cell failed, in one sentence (multi-line only for a test's message)."""
    by_name = {f.name: f for f in notebook_functions}
    stubs = {f.name for f in notebook_functions if unimplemented(f)}
    owner = next((f for f in notebook_functions if any(t is cell for t in f.tests)), None)
    outputs = errors(cell)
    enames = [o.get("ename", "") for o in outputs]

    for incident in incidents.of_cell(cell):  # a grading guard's own reason comes first
        return Diagnosis(WRONG, incident.text)
    if "CellTimeoutError" in enames:
        evalue = next(o.get("evalue", "") for o in outputs if o.get("ename") == "CellTimeoutError")
        message = _timeout_message(evalue)
        where = [n for n in FRAME_FUNCTION.findall(_tracebacks(outputs)) if n in by_name]
        if where:  # the interrupt's traceback ends where the code was running
            message += " " + _("Still running in: {name}.").format(name=where[-1])
        return Diagnosis(WRONG, message)
    if "StdinNotImplementedError" in enames:
        return Diagnosis(WRONG, say("input"))
    if "NotImplementedError" in enames:
        traceback = _tracebacks(o for o in outputs if o.get("ename") == "NotImplementedError")
        raised_in = [n for n in FRAME_FUNCTION.findall(traceback) if n in stubs]
        if owner is not None and owner.name in stubs:
            return Diagnosis(UNIMPLEMENTED, say("unimplemented"))
        if raised_in:
            names = ", ".join(dict.fromkeys(raised_in))
            return Diagnosis(NEEDS_HELPER, say("needs_helper", names=names))
    for output in outputs:
        ename, evalue = output.get("ename", ""), output.get("evalue", "")
        if ename == "NameError" and (match := UNDEFINED_NAME.search(evalue)):
            name = match.group(1)
            defining = by_name.get(name)
            if defining is not None and defining.answer is not None and errors(defining.answer):
                why = diagnose_answer_cell(defining.answer)
                return Diagnosis(WRONG, say("answer_cell_failed", name=name, why=why))
            return Diagnosis(WRONG, say("undefined", name=name))
        if ename == "AssertionError":
            return Diagnosis(WRONG, evalue.strip() or _("The check's assert failed."))
        if ename:
            return Diagnosis(WRONG, _exception(ename, evalue))
    text = stderr_text(cell)
    if text:
        return Diagnosis(WRONG, say("stderr", line=first_line(text, 200)))
    return Diagnosis(WRONG, _("The check failed."))


def diagnose_answer_cell(cell) -> str:
    """One line for the first error an answer cell raised when it ran."""
    for output in errors(cell):
        ename, evalue = output.get("ename", ""), output.get("evalue", "")
        if ename == "StdinNotImplementedError":
            return say("input")
        if ename == "CellTimeoutError":
            return _timeout_message(evalue)
        return _exception(ename, evalue)
    return ""


def _tracebacks(outputs) -> str:
    return ANSI.sub("", "\n".join("\n".join(o.get("traceback", [])) for o in outputs))


def _exception(ename: str, evalue: str) -> str:
    evalue = first_line(evalue, 240)
    if evalue:
        return say("exception", ename=ename, evalue=evalue)
    return say("exception_bare", ename=ename)


def _timeout_message(evalue: str) -> str:
    """The time-out's own message when its Execute has one (Validate's names the limit),
    else ours: nbgrader's Execute writes an empty evalue."""
    return evalue if (evalue or "").strip() else say("timeout")


def display_width(text: str) -> int:
    """Terminal columns: Hangul and other wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """Split text into lines of at most `width` terminal columns, breaking at spaces."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and display_width(indent + candidate) > width:
                lines.append(indent + line)
                line = word
            else:
                line = candidate
        lines.append(indent + line)
    return lines
