"""The learners' JupyterLab extension (the submit button and the result panel), prebuilt.

Its TypeScript source is `labextension/` at the repository root; `make labextension`
builds it with JupyterLab's own builder from `labextension/yarn.lock` into
`coursekit/labextension/` (committed, so no classroom and no CI run needs npm) and
writes the digest of the sources it was built from beside it. `make venv` copies the
build into the environment's `share/jupyter/labextensions/`; a wheel carries it
there through its data files.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
from pathlib import Path

NAME = "@coursekit/learner-panel"
PACKAGE = Path(__file__).resolve().parents[1]
BUILT = PACKAGE / "labextension"
DIGEST_FILE = BUILT / "sources.sha256"
SOURCE_FILES = ("package.json", "yarn.lock", "tsconfig.json", ".yarnrc.yml")
SOURCE_FOLDERS = ("src", "style")


def source_digest(source: Path) -> str:
    """sha256 over the extension's sources: names and contents, in a fixed order."""
    digest = hashlib.sha256()
    files = [source / name for name in SOURCE_FILES]
    for folder in SOURCE_FOLDERS:
        files += sorted(p for p in (source / folder).rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(source)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def install(prefix: Path) -> Path:
    """Copy the prebuilt extension into `prefix`/share/jupyter/labextensions (replacing it)."""
    target = prefix / "share" / "jupyter" / "labextensions" / NAME
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(BUILT, target, ignore=shutil.ignore_patterns(DIGEST_FILE.name))
    return target


def main(argv=None) -> int:
    """`coursekit labextension digest SOURCE` (after a build) or `install PREFIX`."""
    parser = argparse.ArgumentParser(
        prog="coursekit labextension", description=__doc__.split("\n")[0]
    )
    parser.add_argument("action", choices=["digest", "install"])
    parser.add_argument("where", type=Path, help="the source folder (digest) or the prefix")
    args = parser.parse_args(argv)
    if args.action == "digest":
        DIGEST_FILE.write_text(source_digest(args.where) + "\n")
    else:
        install(args.where)
    return 0
