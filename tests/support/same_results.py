"""The two cell runners give the same results: what a grading shows, field by field.

`SandboxedExecute.cell_runner` runs a notebook's cells in the sandbox either
with the lean runner (coursekit.sandbox.inside.cell_runner) or with a ZeroMQ
ipykernel. A class graded with the course's default is graded again with the
other one; the gradebooks and what each autograded cell shows must be equal.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from coursekit.autograde.execute import SandboxedExecute
from coursekit.cluster import gradebook
from coursekit.simulate.harness import CourseHarness

# The two ways cells run in the sandbox (SandboxedExecute.cell_runner): the course's
# default grades the class above, the other one the same class again.
RUNNERS = SandboxedExecute.class_traits()["cell_runner"]
OTHER_RUNNER = next(value for value in RUNNERS.values if value != RUNNERS.default_value)
OTHER_RUNNER_CONFIG = f"\nc.SandboxedExecute.cell_runner = {OTHER_RUNNER!r}\n"


def what_cells_show(path: Path) -> list[dict]:
    """Per code cell, what formgrader, feedback and the TA read of it: each output's type,
    stream texts (joined per stream between other outputs), error name and value, display MIME
    types and plain text, the execution counts, and the grader's records in the cell's
    metadata."""
    nb = nbformat.read(path, as_version=4)
    shown = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.outputs:
            if out.output_type == "stream":
                # A kernel's streams are cut into outputs where its flush timers fell, and
                # ipykernel's stdout and stderr timers race: between two other outputs, each
                # stream's text joined is what a reader can rely on.
                if not (outputs and outputs[-1][0] == "streams"):
                    outputs.append(("streams", {}))
                texts = outputs[-1][1]
                texts[out.name] = texts.get(out.name, "") + out.text
            elif out.output_type == "error":
                outputs.append(("error", out.ename, out.evalue))
            else:
                data = out.get("data", {})
                count = out.get("execution_count")
                outputs.append((out.output_type, sorted(data), data.get("text/plain"), count))
        records = {k: v for k, v in cell.metadata.items() if k.startswith("coursekit")}
        shown.append(
            {"id": cell.get("id"), "count": cell.execution_count, "out": outputs, **records}
        )
    return shown


def assert_same_results(default: CourseHarness, other: CourseHarness) -> int:
    """The two courses' gradebooks and autograded notebooks are the same; how many notebooks."""
    assert gradebook.dump(default.db_url, default.course_id) == gradebook.dump(
        other.db_url, other.course_id
    )
    notebooks = sorted((other.root / "autograded").glob("*/*/*.ipynb"))
    for theirs in notebooks:
        ours = default.root / theirs.relative_to(other.root)
        assert what_cells_show(ours) == what_cells_show(theirs), (
            f"{theirs.relative_to(other.root)}: {RUNNERS.default_value} vs {OTHER_RUNNER}"
        )
    return len(notebooks)
