"""Regenerate release/ from source/ with stock `nbgrader generate_assignment`.

    python -m coursekit.authoring.release ch3_multihead [ch4_cross_attention ...]

Run from the course root (or pass --root); it also records the assignment in
that course's gradebook, which autograding needs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coursekit.core.course import add_root_argument
from coursekit.core.environment import nbgrader


def generate(root: Path, assignment: str) -> None:
    result = nbgrader(root, "generate_assignment", assignment, "--force", check=False)
    if result.returncode != 0:
        raise RuntimeError(f"generate_assignment {assignment} failed:\n{result.stderr}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+")
    add_root_argument(parser)
    args = parser.parse_args(argv)
    for assignment in args.assignments:
        generate(args.root, assignment)
        print(f"release/{assignment}/ regenerated from source/{assignment}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
