"""Answer cells as a learner types them: the released cell with the stub replaced
by a function body from the references or from the catalog of mistakes."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from coursekit.authoring.sync import reference_body
from coursekit.core import cells

STUB = re.compile(r"^\s*# 여기에 코드를 쓰세요\n\s*raise NotImplementedError\(\)$", re.MULTILINE)


def answered_cells(release_notebook: Path, bodies: dict) -> dict[str, str]:
    """{function name: full cell text} for every answer cell of the released notebook;
    `bodies` maps a function name to the function whose body goes in."""
    typed = {}
    for cell in nbformat.read(release_notebook, as_version=4).cells:
        if not cells.is_code_answer(cell):
            continue
        name = cells.defined_function(cell.source)
        body = "\n".join(reference_body(bodies[name]))
        text, count = STUB.subn(lambda _, body=body: body, cell.source)
        assert count == 1, f"no stub in the answer cell of {name}"
        typed[name] = text
    return typed
