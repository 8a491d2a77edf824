"""Regenerate release/ from source/ with stock `nbgrader generate_assignment`.

    python -m coursekit.authoring.release ch3_multihead [ch4_cross_attention ...]

Run from the course root (or pass --root); it also records the assignment in
that course's gradebook, which autograding needs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path


def venv_environment() -> dict[str, str]:
    """os.environ with this interpreter's bin/ first on PATH.

    nbgrader runs `alembic` (and kernels run `python`) by name, so the
    project's environment must come first, as with an activated venv.
    """
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


def nbgrader(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a stock nbgrader command in a course root, with this interpreter's nbgrader."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=root,
        env=venv_environment(),
        check=check,
        capture_output=True,
        text=True,
    )


def generate(root: Path, assignment: str) -> None:
    result = nbgrader(root, "generate_assignment", assignment, "--force", check=False)
    if result.returncode != 0:
        raise RuntimeError(f"generate_assignment {assignment} failed:\n{result.stderr}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+")
    from coursekit.core.course import add_root_argument

    add_root_argument(parser)
    args = parser.parse_args(argv)
    for assignment in args.assignments:
        generate(args.root, assignment)
        print(f"release/{assignment}/ regenerated from source/{assignment}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
