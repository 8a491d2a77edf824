"""Copy the reference bodies from solutions/ into the source notebooks.

    python -m coursekit.authoring.sync           # rewrite what differs
    python -m coursekit.authoring.sync --check   # exit 1 if anything differs

An answer cell holds `def name(...)`, the learner-facing docstring, then a
`### BEGIN SOLUTION` / `### END SOLUTION` region. The region is filled with
the body of `solutions.<assignment>.name` after its docstring, so the
reference lives once, in solutions/, and the notebook never drifts from it.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
from pathlib import Path

import nbformat

from coursekit.core import cells
from coursekit.core.course import CourseKit, add_root_argument, find_root

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def reference_body(function) -> list[str]:
    """The function's lines after its docstring, indented as inside the def."""
    lines = textwrap.dedent(inspect.getsource(function)).splitlines()
    (definition,) = ast.parse("\n".join(lines)).body
    first = definition.body[0]
    has_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    start = first.end_lineno if has_docstring else definition.body[0].lineno - 1
    return lines[start : definition.end_lineno]


def synced_source(source: str, module) -> str:
    """The cell source with its solution region replaced by the reference body."""
    function = cells.defined_function(source)
    if function is None or BEGIN not in source:
        return source
    lines = source.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    body = reference_body(getattr(module, function))
    return "\n".join(lines[: begin + 1] + body + lines[end:])


def answer_cells(nb):
    yield from (cell for cell in nb.cells if cells.is_code_answer(cell))


def sync_notebook(path: Path, write: bool, kit: CourseKit | None = None) -> list[str]:
    """Sync one notebook; return the grade_ids of cells that were (or would be) changed."""
    module = (kit or CourseKit.of(path.parents[2])).solutions(path.parent.name)
    nb = nbformat.read(path, as_version=4)
    changed = []
    for cell in answer_cells(nb):
        new = synced_source(cell.source, module)
        if new != cell.source:
            changed.append(cell.metadata["nbgrader"]["grade_id"])
            cell.source = new
    if changed and write:
        nbformat.write(nb, path)
    return changed


def source_notebooks(root: Path | None = None) -> list[Path]:
    return sorted((find_root(root) / "source").glob("*/*.ipynb"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift, change nothing")
    add_root_argument(parser)
    args = parser.parse_args(argv)
    kit = CourseKit.of(args.root)
    drift = False
    for path in source_notebooks(args.root):
        changed = sync_notebook(path, write=not args.check, kit=kit)
        for grade_id in changed:
            verb = f"differs from {kit.solutions_package}/" if args.check else "updated"
            print(f"{path.relative_to(args.root)}: {grade_id} {verb}")
        drift |= bool(changed)
    if args.check and drift:
        print("run `make sync` to copy the reference bodies into the notebooks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
