"""bench.floor's parent preloads what the notebooks' graded cells import, read from them."""

from __future__ import annotations

import json
from pathlib import Path

from bench.floor import imported
from coursekit.core import cells
from coursekit.core.course import Course

ROOT = Path(__file__).resolve().parent.parent  # the course this checkout is


def test_the_preload_is_each_assignments_checks_and_the_graded_cells_imports(tmp_path):
    course = Course(ROOT)
    paths = [
        str(ROOT / "source" / assignment / course.notebook_name(assignment))
        for assignment in course.assignments()
    ]
    names = imported(paths)
    kit = course.kit
    for assignment in course.assignments():
        assert f"{kit.checks_package}.{assignment}" in names
    assert "numpy" in names and "pandas" in names
    assert not any(name.startswith("matplotlib") for name in names)  # drawings are not graded

    odd = tmp_path / "odd.ipynb"
    nb = {
        "cells": [
            {"cell_type": "code", "source": "import json\ndef f(:\n", "metadata": {}},
            {"cell_type": "code", "source": "%time import os\nimport csv", "metadata": {}},
            {"cell_type": "code", "source": "import zlib", "metadata": {"tags": [cells.SKIP_TAG]}},
            {"cell_type": "markdown", "source": "import gzip", "metadata": {}},
        ]
    }
    odd.write_text(json.dumps(nb), encoding="utf-8")
    assert imported([str(odd)]) == ("csv",)
