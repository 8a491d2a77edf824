"""A learner's notebook per function, and a short Korean reason for each failing cell.

Validate (`coursekit.learner.validation`) and the feedback page (`coursekit.learner.feedback`)
both open with one line per contract function. This module finds the
functions (each code answer cell defines one, and the test cells after it
test it) and turns a failing cell's outputs into one Korean sentence:
not implemented yet, calls a helper that is not implemented yet, called
input(), over the time limit, not defined, stderr output, an exception in
the learner's code, or the test's own Korean message.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from dataclasses import dataclass, field

from nbgrader import utils

from coursekit.core import cells, incidents

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
DEF_LINE = re.compile(r"^def (\w+)\(", re.MULTILINE)
UNDEFINED_NAME = re.compile(r"name '(\w+)' is not defined")
# IPython writes each frame of a traceback as "Cell In[3], line 15, in split_heads(M, h)".
FRAME_FUNCTION = re.compile(r", in (\w+)\(")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
UNIMPLEMENTED = "UNIMPLEMENTED"
NEEDS_HELPER = "NEEDS_HELPER"
WRONG = "WRONG"

MESSAGES = {
    "unimplemented": "아직 구현하지 않았습니다 (raise NotImplementedError() 가 그대로 있습니다).",
    "needs_helper": "아직 구현하지 않은 {names} 을(를) 부릅니다. 그 함수를 먼저 구현하세요.",
    "input": (
        "input() 을 불렀습니다. 검사와 채점은 입력 없이 돌아가므로 input() 은 언제나 "
        "오류(StdinNotImplementedError)를 냅니다. 값은 함수의 인자로 받으세요."
    ),
    "timeout": (
        "시간 제한 안에 끝나지 않았습니다. 끝나지 않는 반복이나 너무 느린 계산이 없는지 "
        "보세요. 채점할 때도 같은 제한을 넘기면 이 칸은 0점입니다."
    ),
    "undefined": (
        "{name} 이(가) 정의되어 있지 않습니다. 답안 칸을 지우거나 함수 이름을 바꾸지 "
        "않았는지, 위 칸부터 차례로 실행했는지 보세요."
    ),
    "answer_cell_failed": (
        "{name} 이(가) 정의되지 않았습니다. 답안 칸을 실행하다 오류가 났습니다: {why}"
    ),
    "stderr": (
        "오류 출력(stderr)에 글이 찍혀 실패로 칩니다: {line} "
        "경고(RuntimeWarning 등)가 나지 않게 고치세요."
    ),
    "exception": "답안 코드에서 {ename} 오류가 났습니다: {evalue}",
    "exception_bare": "답안 코드에서 {ename} 오류가 났습니다.",
}


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
            name = defined_function(cell.source) or cells.grade_id(cell) or "?"
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


def defined_function(source: str) -> str | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        match = DEF_LINE.search(source)
        return match.group(1) if match else None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node.name
    return None


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
    """Why a failing cell failed, in one Korean sentence (multi-line only for a test's message)."""
    by_name = {f.name: f for f in notebook_functions}
    stubs = {f.name for f in notebook_functions if unimplemented(f)}
    owner = next((f for f in notebook_functions if any(t is cell for t in f.tests)), None)
    outputs = errors(cell)
    enames = [o.get("ename", "") for o in outputs]

    for incident in incidents.of_cell(cell):  # a grading guard's own Korean reason comes first
        return Diagnosis(WRONG, incident.text)
    if "CellTimeoutError" in enames:
        evalue = next(o.get("evalue", "") for o in outputs if o.get("ename") == "CellTimeoutError")
        message = evalue if _is_korean(evalue) else MESSAGES["timeout"]
        where = [n for n in FRAME_FUNCTION.findall(_tracebacks(outputs)) if n in by_name]
        if where:  # the interrupt's traceback ends where the code was running
            message += f" 멈추지 않던 곳: {where[-1]}."
        return Diagnosis(WRONG, message)
    if "StdinNotImplementedError" in enames:
        return Diagnosis(WRONG, MESSAGES["input"])
    if "NotImplementedError" in enames:
        traceback = _tracebacks(o for o in outputs if o.get("ename") == "NotImplementedError")
        raised_in = [n for n in FRAME_FUNCTION.findall(traceback) if n in stubs]
        if owner is not None and owner.name in stubs:
            return Diagnosis(UNIMPLEMENTED, MESSAGES["unimplemented"])
        if raised_in:
            names = ", ".join(dict.fromkeys(raised_in))
            return Diagnosis(NEEDS_HELPER, MESSAGES["needs_helper"].format(names=names))
    for output in outputs:
        ename, evalue = output.get("ename", ""), output.get("evalue", "")
        if ename == "NameError" and (match := UNDEFINED_NAME.search(evalue)):
            name = match.group(1)
            defining = by_name.get(name)
            if defining is not None and defining.answer is not None and errors(defining.answer):
                why = diagnose_answer_cell(defining.answer)
                return Diagnosis(WRONG, MESSAGES["answer_cell_failed"].format(name=name, why=why))
            return Diagnosis(WRONG, MESSAGES["undefined"].format(name=name))
        if ename == "AssertionError":
            return Diagnosis(WRONG, evalue.strip() or "검사의 assert 가 실패했습니다.")
        if ename:
            return Diagnosis(WRONG, _exception(ename, evalue))
    text = stderr_text(cell)
    if text:
        return Diagnosis(WRONG, MESSAGES["stderr"].format(line=first_line(text, 200)))
    return Diagnosis(WRONG, "검사가 실패했습니다.")


def diagnose_answer_cell(cell) -> str:
    """One Korean line for the first error an answer cell raised when it ran."""
    for output in errors(cell):
        ename, evalue = output.get("ename", ""), output.get("evalue", "")
        if ename == "StdinNotImplementedError":
            return MESSAGES["input"]
        if ename == "CellTimeoutError":
            return evalue if _is_korean(evalue) else MESSAGES["timeout"]
        return _exception(ename, evalue)
    return ""


def _tracebacks(outputs) -> str:
    return ANSI.sub("", "\n".join("\n".join(o.get("traceback", [])) for o in outputs))


def _exception(ename: str, evalue: str) -> str:
    evalue = first_line(evalue, 240)
    if evalue:
        return MESSAGES["exception"].format(ename=ename, evalue=evalue)
    return MESSAGES["exception_bare"].format(ename=ename)


def _is_korean(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text or "")


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
