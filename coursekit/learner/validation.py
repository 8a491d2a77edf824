"""Validate in the course's language, and true to what autograde will say.

nbgrader's Validator (the Validate button and `nbgrader validate`) runs the
notebook with its own Execute preprocessor and lists the graded cells that
failed, each with its whole source and traceback. The course changes what it
says through nbgrader's own configuration, without forking nbgrader
(`configure(c)`, called from nbgrader_config.py):

- `c.Validator.*_warning`: nbgrader's message templates, in the course's
  language (`c.CourseKit.language`, set before `configure(c)`: coursekit.core.messages);
- `c.Validator.Execute.error_on_timeout`: our message for a cell that
  runs over `Execute.timeout` (the same limit autograde uses per cell);
- `c.Validator.Execute.on_notebook_start` and `on_cell_start`: nbclient hooks,
  set for the Execute inside the Validator only (autograde's Execute does
  not see them). At the start they append two cells to the notebook being
  validated: a probe, which runs last in the learner's kernel and lists the
  notebook globals each function reads (and whether it calls input()), and an
  end marker. When the marker is reached every cell has run, and the hook
  rewrites what the Validator will list:

  * a report cell at the top: per function passed / not implemented yet /
    cannot be checked yet / wrong with the first message, the written
    answers, and warnings (a function that reads a notebook global passes the
    visible test on the seed example but fails the hidden ones);
  * the failing test cells of functions that are not implemented yet (and
    unanswered written answers) are left out of the list: one line each in
    the report;
  * every other failing test cell stays, with its error replaced by one
    line (plus the traceback when the learner's own code raised).

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
import functools
import glob
import importlib
import json
import sys
import uuid
import weakref
from dataclasses import dataclass, field

import nbformat
from nbgrader import utils

from coursekit.core import cells, messages
from coursekit.core.messages import N_, _, ngettext
from coursekit.learner import diagnosis

META_KEY = "coursekit_validate"
PROBE_MARKER = "__coursekit_validate__"
REPORT_ID = "validate_summary"
DEFAULT_TIMEOUT = 30  # nbgrader's Execute.timeout default
WIDTH = 76  # terminal columns of a report line (nbgrader indents by 4, cuts at 87 characters)

GREEN, RED, YELLOW, BOLD, RESET = "\x1b[0;32m", "\x1b[0;31m", "\x1b[0;33m", "\x1b[1m", "\x1b[0m"
# A function's status: the key of its row (ValidationResult.statuses), shown as _(status).
PASSED = N_("passed")
UNIMPLEMENTED = N_("not implemented yet")
WAITING = N_("cannot be checked yet")
WRONG = N_("wrong")
HIDDEN_ONLY = N_("hidden checks only")

# nbgrader's Validator formats these itself ({num_changed}, {num_passed}).
TEMPLATES = {
    "failed_warning": N_(
        "Check result: handed in as it is, this notebook does not get full marks. "
        "Read the check summary at the top first."
    ),
    "changed_warning": N_(
        "The content of {num_changed} locked cells has changed. Grading puts those cells "
        "back as you received them, so a pass now may not hold. Undo the changes."
    ),
    "type_changed_warning": N_(
        "The type (code/markdown) of {num_changed} cells has changed. Grading may give "
        "another result. Change the cell types back."
    ),
    "passed_warning": N_("{num_passed} check cells passed."),
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
    statuses: dict[str, str] = field(default_factory=dict)  # function -> PASSED, WRONG, ...


# Notebooks being validated, by the token of their end marker.
_RUNS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
# One entry per notebook whose run reached the end marker.
VERDICTS: list[ValidationResult] = []


def configure(c, timeout: int | None = None) -> None:
    """Set the Validator's messages and hooks on an nbgrader config object.

    Call it after `c.Execute.timeout` and `c.CourseKit.language` are set: the time-out
    message names that limit, and the messages and the report speak that language.
    """
    language = messages.of_config(c)
    if timeout is None:
        timeout = c.Execute.get("timeout", DEFAULT_TIMEOUT)
    with messages.speaking(language):
        for name, template in TEMPLATES.items():
            setattr(c.Validator, name, _(template))
        message = _(
            "This cell did not finish within the time limit ({timeout} s). Look for a loop "
            "that never ends or a calculation that is too slow. Past the same limit when "
            "graded, this cell scores 0."
        ).format(timeout=timeout)
    c.Validator.Execute.error_on_timeout = {
        "ename": "CellTimeoutError",
        "evalue": message,
        "traceback": [f"{RED}CellTimeoutError{RESET}: {message}"],
    }
    c.Validator.Execute.on_notebook_start = on_notebook_start
    c.Validator.Execute.on_cell_start = functools.partial(on_cell_start, language=language)


# ------------------------------------------------------------------ hooks


def on_notebook_start(notebook, **_hook_args) -> None:
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


def on_cell_start(cell, language: str = messages.DEFAULT, **_hook_args) -> None:
    """At the end marker every cell has run: write the report (in `language`)."""
    info = cell.get("metadata", {}).get(META_KEY, {})
    if info.get("role") != "end":
        return
    notebook = _RUNS.pop(info.get("token"), None)
    if notebook is not None:
        with messages.speaking(language):
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
            row.message += " " + _(
                "({names}, which this function calls, did not pass either. Fix those first.)"
            ).format(names=", ".join(callees))

    written, unwritten = [], False
    for cell in diagnosis.written_answers(nb):
        if diagnosis.is_unanswered(cell):
            text = _("not written yet (a TA grades it after you hand it in)")
            written.append((cells.grade_id(cell), text))
            drop.append(cell)
            unwritten = True
        else:
            text = _("written (a TA grades it after you hand it in)")
            written.append((cells.grade_id(cell), text))

    quiet = all(row.status in (PASSED, HIDDEN_ONLY) and not row.warnings for row in rows)
    if quiet and not unwritten:
        failed = any(_fails(c) for c in nb.cells if utils.is_grade(c))
        return ValidationResult(failed, verdicts, statuses)
    dropped = {id(c) for c in drop}
    nb.cells = [c for c in nb.cells if id(c) not in dropped]
    passed = sum(verdicts.values())
    nb.cells.insert(0, _report_cell(rows, written, passed, len(verdicts)))
    return ValidationResult(True, verdicts, statuses)


def _assess(function, functions, probe: dict, drop: list) -> Row:
    """The function's row; its failing cells are rewritten with their diagnosis or added to
    `drop`."""
    visible = function.visible_tests
    failing = [c for c in visible if diagnosis.failed(c)]
    found = {id(c): diagnosis.diagnose(c, functions) for c in failing}
    kinds = [d.kind for d in found.values()]
    if not visible:
        row = Row(function.name, HIDDEN_ONLY, _("No visible checks. Graded after you hand it in."))
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
            _(
                "{function}: reads the notebook globals {names} inside the function. The "
                "visible checks run on the seed example and pass, but the hidden checks call "
                "it with other shapes and fail. Take what you need from the arguments "
                "(for example n, d_model = M.shape)."
            ).format(function=function.name, names=", ".join(probe["globals"]))
        )
    if probe.get("input") and not failing:
        row.warnings.append(f"{function.name}: {diagnosis.say('input')}")
    if function.answer is not None and diagnosis.errors(function.answer):
        why = diagnosis.diagnose_answer_cell(function.answer)
        row.notes.append(
            _("Running the answer cell of {function} raised an error: {why}").format(
                function=function.name, why=why
            )
        )
    return row


def _report_cell(rows: list[Row], written, passed: int, total: int):
    colour = {PASSED: GREEN, WRONG: RED, UNIMPLEMENTED: YELLOW, WAITING: YELLOW}
    width = max([len(row.name) for row in rows] + [len(n or "") for n, _text in written] + [8])
    bold = f"{BOLD}{{}}{RESET}".format  # babel finds no _() inside an f-string
    lines = [bold(_("Each function (visible checks)"))]
    for row in rows:
        head = f"  {row.name:<{width}}  {colour.get(row.status, '')}{_(row.status)}{RESET}"
        lines.append(head + (" —" if row.message else ""))
        if row.message:
            lines += diagnosis.wrap(row.message, WIDTH, indent=" " * 6)
    if written:
        lines += ["", bold(_("Written answers"))]
        lines += [f"  {name:<{width}}  {text}" for name, text in written]
    for title, texts in (
        (bold(RED + _("Warning")), [w for row in rows for w in row.warnings]),
        (bold(_("Note")), [n for row in rows for n in row.notes]),
    ):
        if texts:
            lines += ["", title]
            for text in texts:
                lines += diagnosis.wrap(text, WIDTH, indent="  ")
    closing = _("The hidden checks (random shapes, edge cases) run when your submission is graded.")
    if any(row.status == WRONG for row in rows):
        shown = _("The wrong functions are shown below, check cell by check cell.")
        closing = f"{shown} {closing}"
    lines += ["", *diagnosis.wrap(closing, WIDTH)]
    cell = nbformat.v4.new_code_cell(
        ngettext(
            "Check summary: {passed} of {total} visible check cell passed",
            "Check summary: {passed} of {total} visible check cells passed",
            total,
        ).format(passed=passed, total=total)
    )
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
    summary = _("Check summary")
    cell.outputs = [nbformat.v4.new_output("error", ename=summary, evalue="", traceback=[text])]
    return cell


def _rewrite(cell, function: str, message: str) -> None:
    """Replace a failing test cell's error and stderr with its diagnosis."""
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
    wrong = _(WRONG)
    text = [f"{RED}[{function}] {wrong}{RESET}"]
    text += diagnosis.wrap(message, WIDTH, indent="  ")
    if tracebacks:
        text += ["", _("Where in the answer code it was raised:"), tracebacks[0]]
    keep.append(
        nbformat.v4.new_output("error", ename=wrong, evalue=message, traceback=["\n".join(text)])
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
