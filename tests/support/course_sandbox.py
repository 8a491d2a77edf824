"""A throwaway copy of the course in which stock nbgrader commands run.

The copy holds the course's own nbgrader_config.py and source/, so every
command behaves as in the repo, but its gradebook, submitted/ and autograded/
folders live in a temporary directory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from coursekit.simulate.harness import CourseHarness

ROOT = Path(__file__).resolve().parents[2]


class CourseSandbox(CourseHarness):
    def __init__(self, path: Path):
        super().__init__(path)
        shutil.copy(ROOT / "nbgrader_config.py", path / "nbgrader_config.py")
        shutil.copytree(ROOT / "source", path / "source")
