"""Is release/ what source/ makes now, and does it hand out no answers?"""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import nbformat
import pytest

import catalog
import grader_tests
import solutions
from coursekit.authoring import sync
from coursekit.core.course import contract_functions
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())
FORBIDDEN_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "grader_tests", "solutions")


def release_notebooks() -> list[Path]:
    return sorted((ROOT / "release").glob("*/*.ipynb"))


def code_lines(module_dir: Path) -> set[str]:
    """Distinctive lines of a package's code (long enough not to occur by chance)."""
    lines = set()
    for path in module_dir.glob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if len(stripped) >= 24 and not stripped.startswith(("#", '"""', "def ", "import ")):
                lines.add(stripped)
    return lines


def test_every_assignment_is_released():
    assert {p.parent.name for p in release_notebooks()} == set(ASSIGNMENTS)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_is_what_source_generates_now(tmp_path, assignment):
    """Regenerate in a scratch copy of the course and compare with the committed release."""
    generated = CourseSandbox(tmp_path).generate(assignment)
    committed = ROOT / "release" / assignment
    names = sorted(p.name for p in generated.iterdir())
    assert names == sorted(p.name for p in committed.iterdir())
    for name in names:
        assert json.loads((generated / name).read_text()) == json.loads(
            (committed / name).read_text()
        ), f"release/{assignment}/{name} is stale: run `make release` and commit it"


def test_source_solution_regions_match_solutions_package():
    for path in sync.source_notebooks():
        assert sync.sync_notebook(path, write=False) == [], (
            f"{path} differs from solutions/: run `make sync`"
        )


@pytest.mark.parametrize("path", release_notebooks(), ids=lambda p: p.parent.name)
def test_release_holds_no_solution_or_hidden_test(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(cell.source for cell in nb.cells)
    for marker in FORBIDDEN_MARKERS:
        assert marker not in text, f"{path.name} contains {marker!r}"
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers
    for cell in answers:
        if cell.cell_type == "code":
            assert "raise NotImplementedError()" in cell.source


def lesson_lines(assignment: str) -> set[str]:
    """Lines the lesson shows on purpose: the source's setup and demonstration code cells.

    The course page walks through each step on the seed (e.g. `Q, K, V = X @ W_Q, ...`),
    and the exercise is to wrap those steps into functions, so such lines may
    match a reference body.
    """
    (path,) = (ROOT / "source" / assignment).glob("*.ipynb")
    lines = set()
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and not meta.get("solution") and not meta.get("grade"):
            lines |= {line.strip() for line in cell.source.splitlines()}
    return lines


@pytest.mark.parametrize("path", release_notebooks(), ids=lambda p: p.parent.name)
def test_release_contains_no_line_of_solutions_grader_tests_or_catalog(path):
    """No reference, hidden-check or catalog line of ANY assignment (ch4 must not hand
    out ch3's answers; a catalogued mistake or correct variant is an answer too)."""
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    text_lines = {line.strip() for line in text.splitlines()} - lesson_lines(path.parent.name)
    for package in (solutions, grader_tests, catalog):
        leaked = code_lines(Path(inspect.getfile(package)).parent) & text_lines
        assert not leaked, f"{path.name} contains lines of {package.__name__}: {sorted(leaked)[:5]}"


def contract_names() -> set[str]:
    return {name for a in ASSIGNMENTS for name in contract_functions(a)}


@pytest.mark.parametrize("path", release_notebooks(), ids=lambda p: p.parent.name)
def test_release_defines_contract_functions_only_as_stubs(path):
    """No cell of a release defines softmax, split_heads, ... with a working body."""
    names = contract_names()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.FunctionDef) and node.name in names:
                body = [n for n in node.body if not isinstance(n, ast.Expr)]
                assert len(body) == 1 and isinstance(body[0], ast.Raise), (
                    f"{path.name} defines {node.name} with a body"
                )


@pytest.mark.parametrize("path", release_notebooks(), ids=lambda p: p.parent.name)
def test_release_hidden_test_cells_keep_only_their_docstring(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            assert re.match(r'^"""[^\n]+"""', cell.source), f"{meta['grade_id']} has no docstring"
