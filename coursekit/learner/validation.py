"""Validate in Korean, and true to what autograde will say.

nbgrader's Validator (the Validate button and `nbgrader validate`) runs the
notebook with its own Execute preprocessor and lists the graded cells that
failed, each with its whole source and traceback. The course changes what it
says through nbgrader's own configuration, without forking nbgrader
(`configure(c)`, called from nbgrader_config.py):

- `c.Validator.*_warning`: nbgrader's message templates, in Korean;
- `c.Validator.Execute.error_on_timeout`: a Korean message for a cell that
  runs over `Execute.timeout` (the same limit autograde uses per cell);
- `c.Validator.Execute.on_notebook_start` and `on_cell_start`: nbclient hooks,
  set for the Execute inside the Validator only (autograde's Execute does
  not see them). At the start they append two cells to the notebook being
  validated: a probe, which runs last in the learner's kernel and lists the
  notebook globals each function reads (and whether it calls input()), and an
  end marker. When the marker is reached every cell has run, and the hook
  rewrites what the Validator will list:

  * a report cell at the top: per function 통과 / 아직 구현하지 않음 /
    아직 검사할 수 없음 / 틀림 with the first Korean message, the written
    answers, and warnings (a function that reads a notebook global passes the
    visible test on the seed example but fails the hidden ones);
  * the failing test cells of functions that are not implemented yet (and
    unanswered written answers) are left out of the list: one line each in
    the report;
  * every other failing test cell stays, with its error replaced by one
    Korean line (plus the traceback when the learner's own code raised).

Which cells pass or fail is not changed: a visible test cell fails here
exactly when it has an error or stderr output, nbgrader's rule, which is
also autograde's for the learner's kernel. The Validator never saves the
notebook it validates, so nothing of this reaches the learner's file.

nbgrader itself still prints a few fixed English words ("The following cell
failed:", the dialog title, and "Success! Your notebook passes all the
tests." when nothing failed), and `nbgrader validate` exits 0 whether or not
the notebook passed: ValidateApp has no setting for that.
`python -m coursekit.learner.validation NOTEBOOK ...` runs the same stock
ValidateApp and exits 1 when a notebook did not pass.
"""

from __future__ import annotations

import ast
import glob
import importlib
import json
import sys
import uuid
import weakref
from dataclasses import dataclass, field

import nbformat
from nbgrader import utils

from coursekit.core import cells
from coursekit.learner import diagnosis

META_KEY = "coursekit_validate"
PROBE_MARKER = "__coursekit_validate__"
REPORT_ID = "validate_summary"
DEFAULT_TIMEOUT = 30  # nbgrader's Execute.timeout default
WIDTH = 76  # terminal columns of a report line (nbgrader indents by 4, cuts at 87 characters)

GREEN, RED, YELLOW, BOLD, RESET = "\x1b[0;32m", "\x1b[0;31m", "\x1b[0;33m", "\x1b[1m", "\x1b[0m"
PASSED = "통과"
UNIMPLEMENTED = "아직 구현하지 않음"
WAITING = "아직 검사할 수 없음"
WRONG = "틀림"
HIDDEN_ONLY = "숨은 검사만"

TEMPLATES = {
    "failed_warning": (
        "검사 결과: 이대로 제출하면 만점을 받지 못합니다. 먼저 맨 위의 검사 요약을 보세요."
    ),
    "changed_warning": (
        "잠긴 칸 {num_changed}개의 내용이 바뀌었습니다. 채점할 때는 받은 그대로의 칸으로 "
        "되돌려 채점하므로 지금 통과해도 결과가 달라질 수 있습니다. 바뀐 칸을 되돌리세요."
    ),
    "type_changed_warning": (
        "칸 {num_changed}개의 종류(코드/마크다운)가 바뀌었습니다. 채점할 때 결과가 달라질 수 "
        "있습니다. 칸 종류를 되돌리세요."
    ),
    "passed_warning": "통과한 검사 칸이 {num_passed}개 있습니다.",
}

# Runs last in the learner's kernel: which globals each function reads. Not
# coursekit.sandbox.inside.code_names: that walk lists every name a code object names
# (attributes too); this one follows LOAD_GLOBAL reads through the notebook
# functions a function calls, and is sent in as a cell of the notebook validated.
PROBE_SOURCE = """\
def {marker}(names, given):
    import dis, json, numbers, types
    found = {{}}
    for name in names:
        fn = globals().get(name)
        if not isinstance(fn, types.FunctionType):
            continue
        space, reads, seen, stack = fn.__globals__, set(), set(), [fn]
        while stack:  # the function and the notebook functions it calls
            current = stack.pop()
            codes = [current.__code__]
            while codes:
                code = codes.pop()
                codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
                for ins in dis.get_instructions(code):
                    if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                        continue
                    read = ins.argval
                    value = space.get(read)
                    if (
                        isinstance(value, types.FunctionType)
                        and value.__module__ == fn.__module__
                        and read not in names
                        and read not in seen
                    ):
                        seen.add(read)
                        stack.append(value)
                    reads.add(read)
        data = sorted(
            read for read in reads
            if read in space
            and not callable(space[read])
            and not isinstance(space[read], types.ModuleType)
            and (
                read in given
                or (isinstance(space[read], numbers.Integral) and not isinstance(space[read], bool))
                or type(space[read]).__module__.split(".")[0] == "numpy"
            )
        )
        found[name] = {{
            "globals": data,
            "input": "input" in reads and "input" not in space,
            "calls": sorted(read for read in reads if read in names and read != name),
        }}
    print("{marker}" + json.dumps(found))

{marker}({names!r}, {given!r})
del {marker}
"""


@dataclass
class ValidationResult:
    """What one validation found: whether it passed, and each visible test cell's verdict."""

    failed: bool
    visible: dict[str, bool] = field(default_factory=dict)  # grade_id -> passed
    statuses: dict[str, str] = field(default_factory=dict)  # function -> 통과, 틀림, ...


# Notebooks being validated, by the token of their end marker.
_RUNS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
# One entry per notebook whose run reached the end marker.
VERDICTS: list[ValidationResult] = []


def configure(c, timeout: int | None = None) -> None:
    """Set the Validator's Korean messages and hooks on an nbgrader config object.

    Call it after `c.Execute.timeout` is set: the time-out message names that limit.
    """
    if timeout is None:
        timeout = c.Execute.get("timeout", DEFAULT_TIMEOUT)
    for name, template in TEMPLATES.items():
        setattr(c.Validator, name, template)
    message = (
        f"이 칸이 시간 제한({timeout}초) 안에 끝나지 않았습니다. 끝나지 않는 반복이나 너무 "
        "느린 계산이 없는지 보세요. 채점할 때도 같은 제한을 넘기면 이 칸은 0점입니다."
    )
    c.Validator.Execute.error_on_timeout = {
        "ename": "CellTimeoutError",
        "evalue": message,
        "traceback": [f"{RED}CellTimeoutError{RESET}: {message}"],
    }
    c.Validator.Execute.on_notebook_start = on_notebook_start
    c.Validator.Execute.on_cell_start = on_cell_start


# ------------------------------------------------------------------ hooks


def on_notebook_start(notebook, **_) -> None:
    """Append the probe and the end marker to the notebook the Validator is about to run."""
    token = uuid.uuid4().hex
    names = [f.name for f in diagnosis.functions(notebook)]
    probe = nbformat.v4.new_code_cell(
        PROBE_SOURCE.format(marker=PROBE_MARKER, names=names, given=sorted(given_names(notebook)))
    )
    probe.metadata[META_KEY] = {"role": "probe", "token": token}
    end = nbformat.v4.new_markdown_cell("")
    end.metadata[META_KEY] = {"role": "end", "token": token}
    notebook.cells += [probe, end]
    _RUNS[token] = notebook


def on_cell_start(cell, **_) -> None:
    """At the end marker every cell has run: write the report."""
    info = cell.get("metadata", {}).get(META_KEY, {})
    if info.get("role") != "end":
        return
    notebook = _RUNS.pop(info.get("token"), None)
    if notebook is not None:
        VERDICTS.append(report(notebook))


# ------------------------------------------------------------------ the report


@dataclass
class Row:
    """One function's line in the report."""

    name: str
    status: str
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def report(nb) -> ValidationResult:
    """Rewrite the notebook's failing cells as described above.

    Runs on the Validator's own copy, after every cell ran and before the
    Validator reads the outputs.
    """
    probe = _probe_results(nb)
    nb.cells = [c for c in nb.cells if META_KEY not in c.get("metadata", {})]
    if _changed_cells(nb):
        return ValidationResult(failed=True)  # nbgrader reports the changed cells, and nothing else
    functions = diagnosis.functions(nb)
    visible = [c for f in functions for c in f.visible_tests]
    verdicts = {cells.grade_id(c): not diagnosis.failed(c) for c in visible}
    drop: list = []
    rows = [
        _assess(function, functions, probe.get(function.name, {}), drop) for function in functions
    ]
    statuses = {row.name: row.status for row in rows}
    for row in rows:
        callees = [
            callee
            for callee in probe.get(row.name, {}).get("calls", [])
            if statuses.get(callee) not in (None, PASSED)
        ]
        if row.status == WRONG and callees:
            row.message += (
                f" (이 함수가 부르는 {', '.join(callees)} 도 통과하지 못했습니다. "
                "그쪽부터 고치세요.)"
            )

    written = []
    for cell in diagnosis.written_answers(nb):
        if diagnosis.is_unanswered(cell):
            written.append((cells.grade_id(cell), "아직 쓰지 않음 (제출한 뒤 TA 가 채점합니다)"))
            drop.append(cell)
        else:
            written.append((cells.grade_id(cell), "썼음 (제출한 뒤 TA 가 채점합니다)"))

    quiet = all(row.status in (PASSED, HIDDEN_ONLY) and not row.warnings for row in rows)
    if quiet and not any(text.startswith("아직") for _, text in written):
        failed = any(_fails(c) for c in nb.cells if utils.is_grade(c))
        return ValidationResult(failed, verdicts, statuses)
    dropped = {id(c) for c in drop}
    nb.cells = [c for c in nb.cells if id(c) not in dropped]
    passed = sum(verdicts.values())
    nb.cells.insert(0, _report_cell(rows, written, passed, len(verdicts)))
    return ValidationResult(True, verdicts, statuses)


def _assess(function, functions, probe: dict, drop: list) -> Row:
    """The function's row; its failing cells are rewritten in Korean or added to `drop`."""
    visible = function.visible_tests
    failing = [c for c in visible if diagnosis.failed(c)]
    found = {id(c): diagnosis.diagnose(c, functions) for c in failing}
    kinds = [d.kind for d in found.values()]
    if not visible:
        row = Row(function.name, HIDDEN_ONLY, "보이는 검사가 없습니다. 제출한 뒤 채점합니다.")
    elif not failing:
        row = Row(function.name, PASSED)
    else:
        kind = next(
            (k for k in (diagnosis.WRONG, diagnosis.NEEDS_HELPER) if k in kinds),
            diagnosis.UNIMPLEMENTED,
        )
        status = {diagnosis.WRONG: WRONG, diagnosis.NEEDS_HELPER: WAITING}.get(kind, UNIMPLEMENTED)
        message = next(d.message for d in found.values() if d.kind == kind)
        if kind == diagnosis.UNIMPLEMENTED:
            message = ""
        row = Row(function.name, status, diagnosis.first_line(message, 400))

    for cell in failing:
        if found[id(cell)].kind == diagnosis.WRONG:
            _rewrite(cell, function.name, found[id(cell)].message)
        else:  # one line in the report says it all
            drop.append(cell)
    if failing:  # the hidden-only cells say nothing more than the visible one did
        drop += [c for c in function.hidden_tests if diagnosis.failed(c)]

    if probe.get("globals"):
        row.warnings.append(
            f"{function.name}: 함수 안에서 노트북 전역 변수 {', '.join(probe['globals'])} "
            "을(를) 읽습니다. 보이는 검사는 씨앗 예제라 통과해도, 숨은 검사는 다른 모양으로 "
            "부르므로 틀립니다. 필요한 값은 인자에서 꺼내세요 (예: n, d_model = M.shape)."
        )
    if probe.get("input") and not failing:
        row.warnings.append(f"{function.name}: {diagnosis.MESSAGES['input']}")
    if function.answer is not None and diagnosis.errors(function.answer):
        why = diagnosis.diagnose_answer_cell(function.answer)
        row.notes.append(f"{function.name} 의 답안 칸을 실행하다 오류가 났습니다: {why}")
    return row


def _report_cell(rows: list[Row], written, passed: int, total: int):
    colour = {PASSED: GREEN, WRONG: RED, UNIMPLEMENTED: YELLOW, WAITING: YELLOW}
    width = max([len(row.name) for row in rows] + [len(n or "") for n, _ in written] + [8])
    lines = [f"{BOLD}함수마다 (보이는 검사){RESET}"]
    for row in rows:
        head = f"  {row.name:<{width}}  {colour.get(row.status, '')}{row.status}{RESET}"
        lines.append(head + (" —" if row.message else ""))
        if row.message:
            lines += diagnosis.wrap(row.message, WIDTH, indent=" " * 6)
    if written:
        lines += ["", f"{BOLD}서술형 답{RESET}"]
        lines += [f"  {name:<{width}}  {text}" for name, text in written]
    for title, texts in (
        (f"{BOLD}{RED}주의{RESET}", [w for row in rows for w in row.warnings]),
        (f"{BOLD}참고{RESET}", [n for row in rows for n in row.notes]),
    ):
        if texts:
            lines += ["", title]
            for text in texts:
                lines += diagnosis.wrap(text, WIDTH, indent="  ")
    closing = "숨은 검사(무작위 모양, 경계 사례)는 제출한 뒤 채점할 때 돌아갑니다."
    if any(row.status == WRONG for row in rows):
        closing = "틀린 함수는 아래에 검사 칸마다 자세히 나옵니다. " + closing
    lines += ["", *diagnosis.wrap(closing, WIDTH)]
    cell = nbformat.v4.new_code_cell(f"검사 요약: 보이는 검사 칸 {total}개 중 {passed}개 통과")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": False,
        "points": 1,
        "grade_id": REPORT_ID,
        "schema_version": 3,
    }
    cell.metadata[META_KEY] = {"role": "report"}
    text = "\n".join(lines)
    cell.outputs = [nbformat.v4.new_output("error", ename="검사 요약", evalue="", traceback=[text])]
    return cell


def _rewrite(cell, function: str, message: str) -> None:
    """Replace a failing test cell's error and stderr with its Korean diagnosis."""
    keep, tracebacks = [], []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            if output.get("ename") not in (
                "AssertionError",
                "CellTimeoutError",
                "KeyboardInterrupt",
                "StdinNotImplementedError",
            ):
                tracebacks.append("\n".join(output.get("traceback", [])))
        elif not (output.get("output_type") == "stream" and output.get("name") == "stderr"):
            keep.append(output)
    text = [f"{RED}[{function}] {WRONG}{RESET}"]
    text += diagnosis.wrap(message, WIDTH, indent="  ")
    if tracebacks:
        text += ["", "답안 코드의 어느 줄에서 났는지:", tracebacks[0]]
    keep.append(
        nbformat.v4.new_output("error", ename=WRONG, evalue=message, traceback=["\n".join(text)])
    )
    cell.outputs = keep


def _fails(cell) -> bool:
    """nbgrader's rule for a graded cell (what the Validator lists)."""
    score, max_score = utils.determine_grade(cell)
    return score is not None and score < max_score


def _probe_results(nb) -> dict:
    for cell in nb.cells:
        if cell.get("metadata", {}).get(META_KEY, {}).get("role") != "probe":
            continue
        for output in cell.get("outputs", []):
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            for line in text.splitlines():
                if line.startswith(PROBE_MARKER):
                    try:
                        return json.loads(line[len(PROBE_MARKER) :])
                    except ValueError:
                        return {}
    return {}


def _changed_cells(nb) -> list:
    """nbgrader's own rule: a locked or graded cell whose checksum no longer matches."""
    changed = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        locked = utils.is_locked(cell) and "checksum" in meta
        if locked and meta["checksum"] != utils.compute_checksum(cell):
            changed.append(cell)
    return changed


def given_names(nb) -> set[str]:
    """Names the notebook's own cells (not the learner's answers or tests) assign at top level."""
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code" or cells.is_answer(cell) or cells.is_test(cell):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


# ------------------------------------------------------------------ command line


def main(argv=None) -> int:
    """`nbgrader validate NOTEBOOK ...` with an exit status: 1 when a notebook did not pass."""
    from nbgrader.apps.validateapp import ValidateApp

    # The hooks that nbgrader_config.py installs append to this module's VERDICTS, not
    # to those of `__main__` when it runs as `python -m coursekit.learner.validation`.
    recorded = importlib.import_module("coursekit.learner.validation").VERDICTS
    argv = list(sys.argv[1:] if argv is None else argv)
    app = ValidateApp()
    app.initialize(argv)
    notebooks = [path for pattern in app.extra_args for path in glob.glob(pattern)]
    before = len(recorded)
    app.start()
    verdicts = recorded[before:]
    if len(verdicts) < len(notebooks):
        # A notebook whose cell types changed is not run at all; one that could not be
        # run made ValidateApp exit already. Either way it did not pass.
        return 1
    return 1 if any(v.failed for v in verdicts) or not notebooks else 0


if __name__ == "__main__":
    sys.exit(main())
