"""What a Dask worker needs of the course, as plain data that reaches it once per run.

A `GradingBundle` holds the instructor's side of the course, the files
(nbgrader_config.py, source/, and its reference and checks packages: solutions/ and
grader_tests/ unless `c.CourseKit.*_package` names others) and the gradebook's
definitions of the graded assignments (assignment, notebook and cell rows,
with the gradebook's own ids), and nothing of any learner. Its `digest` is a
hash of that content: a worker unpacks a bundle once, and a result graded
with one bundle is known to come from that course.

On a worker, `unpack` writes it into a private scratch course whose SQLite
gradebook holds those definitions and no learner; stock `nbgrader autograde`
then grades one submission there (coursekit.cluster.task).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from coursekit.core.course import GradebookPlace
from coursekit.nbgrader_internals.rows import alembic_version, read_definitions, write_definitions

FILES = ("nbgrader_config.py",)
SKIPPED = {"__pycache__", ".ipynb_checkpoints"}
DEFINITIONS_DB = "definitions.db"


@dataclass(frozen=True)
class GradingBundle:
    course_id: str
    files: dict[str, bytes]  # relative path -> content
    definitions: dict[str, list[dict]]  # table -> rows
    digest: str
    # those rows in an SQLite gradebook made once by the driver: a new gradebook costs
    # nbgrader an `alembic` process, which each worker would otherwise start
    definitions_db: bytes = b""

    def unpack(self, folder: Path) -> Path:
        """Write the course into `folder` (once) and its definitions into an SQLite gradebook."""
        folder = Path(folder)
        done = folder / ".unpacked"
        if done.exists() and done.read_text() == self.digest:
            return folder
        for relative, content in self.files.items():
            path = folder / safe_relative(relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        database = folder / DEFINITIONS_DB
        database.unlink(missing_ok=True)
        if self.definitions_db:
            database.write_bytes(self.definitions_db)
        else:
            write_definitions(f"sqlite:///{database}", self.course_id, self.definitions)
        done.write_text(self.digest)
        return folder


def safe_relative(relative: str) -> Path:
    """A relative path that stays in its folder (names come from the course, a submission)."""
    path = Path(relative)
    if path.is_absolute() or not path.parts or any(p in ("..", "") for p in path.parts):
        raise ValueError(f"not a relative path inside its folder: {relative!r}")
    return path


def course_folders(root: Path) -> tuple[str, ...]:
    """The folders a worker needs: source/ and the course's secret packages."""
    from coursekit.core.course import CourseKit

    return ("source", *CourseKit.of(root).secret_packages)


def course_folder(root: Path, top: str) -> Path | None:
    """The course's `top` folder: in the root, or for its packages the package this
    Python imports (a course copy without them grades with those)."""
    if (root / top).is_dir():
        return root / top
    spec = importlib.util.find_spec(top) if top != "source" else None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def course_files(root: Path) -> dict[str, bytes]:
    files = {name: (root / name).read_bytes() for name in FILES}
    for top in course_folders(root):
        base = course_folder(root, top)
        for folder, dirs, names in os.walk(base) if base else ():
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
            for name in sorted(names):
                path = Path(folder) / name
                if path.is_file() and not path.is_symlink():
                    files[str(Path(top) / path.relative_to(base))] = path.read_bytes()
    return files


def digest_of(course_id: str, files: dict[str, bytes], definitions: dict) -> str:
    digest = hashlib.sha256(course_id.encode())
    for relative in sorted(files):
        digest.update(f"\0{relative}\0".encode())
        digest.update(hashlib.sha256(files[relative]).digest())
    digest.update(json.dumps(definitions, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def make(place: GradebookPlace, assignments) -> GradingBundle:
    course_id = place.course_id
    files = course_files(Path(place.root))
    definitions = read_definitions(place.db_url, course_id, assignments)
    with tempfile.TemporaryDirectory(prefix="coursekit-definitions-") as scratch:
        database = Path(scratch) / DEFINITIONS_DB
        write_definitions(
            f"sqlite:///{database}", course_id, definitions, alembic_version(place.db_url)
        )
        definitions_db = database.read_bytes()
    digest = digest_of(course_id, files, definitions)
    return GradingBundle(course_id, files, definitions, digest, definitions_db)
