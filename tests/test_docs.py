"""The docs name only what exists: repository paths and relative links in README.md and docs/.

A path is a backticked name that contains "/" or ends like a file of this repository
(`.py`, `.md`, ...), or such a name in an unlabelled code block (the architecture
diagram). It must exist in the checkout, with `<placeholder>` parts standing for any
one name. Not checked: absolute and home paths, URLs, commands with arguments, and
what the course's commands write (the rooted entries of .gitignore: `submitted/`,
`reports/`, `build/` ...). A bare file name (`wire.py`) must be some file's name.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent

# What a bare name (no "/") must end with to be taken for a file of this repository;
# other bare names (`notes.html`, `timestamp.txt`) are examples or files made at run time.
FILE_SUFFIXES = (".py", ".md", ".json", ".j2", ".ipynb", ".toml", ".cfg", ".in")
# Folders of nbgrader's exchange, named relative to wherever the exchange lives.
EXCHANGE_FOLDERS = frozenset({"inbound", "outbound"})
MEDIA_TYPE = re.compile(r"(text|image|application)/[\w.+-]+")  # `text/plain`
FENCE = re.compile(r"^```(.*)$")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Repo:
    """The checkout's files, and the folders that are state rather than content."""

    files: frozenset[str]
    generated: frozenset[str]  # first path parts the course's commands make
    assignments: frozenset[str]

    @property
    def folders(self) -> frozenset[str]:
        return frozenset(str(p) for f in self.files for p in PurePosixPath(f).parents if p.parts)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(PurePosixPath(f).name for f in self.files)


def checkout() -> Repo:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    files = frozenset(f for f in listed if (ROOT / f).exists())  # deleted, not committed yet
    source = ROOT / "source"
    return Repo(
        files=files,
        generated=generated_roots((ROOT / ".gitignore").read_text(encoding="utf-8")),
        assignments=frozenset(p.name for p in source.iterdir() if p.is_dir()),
    )


def generated_roots(gitignore: str) -> frozenset[str]:
    """The plain names .gitignore ignores (`/submitted/`, `.venv/`, `/autograded/*`)."""
    roots = set()
    for line in gitignore.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        name = line.strip("/").removesuffix("/*")
        if name and not any(ch in name for ch in "*?[/"):
            roots.add(name)
    return frozenset(roots)


def candidates(text: str) -> list[str]:
    """The path-like names of a markdown text, in order."""
    found = []
    fence = None  # the info string of the open code block
    for line in text.splitlines():
        opened = FENCE.match(line.strip())
        if opened:
            fence = None if fence is not None else opened.group(1).strip()
            continue
        if fence is None:
            found += [span.strip() for span in INLINE_CODE.findall(line)]
        elif fence == "":  # a diagram or listing, not a command to run elsewhere
            found += [token.strip("(),;:`") for token in line.split()]
    return [name for name in found if looks_like_path(name)]


def looks_like_path(name: str) -> bool:
    if not name or any(ch.isspace() for ch in name) or "://" in name:
        return False
    if name.startswith(("/", "~", "$", "-", "<", "*")) or any(ch in name for ch in "=()'\",:"):
        return False
    if MEDIA_TYPE.fullmatch(name):
        return False
    if "/" in name:
        return True
    return name.endswith(FILE_SUFFIXES) and not name.startswith(".")  # `.py` is a suffix


def exists(name: str, repo: Repo) -> bool:
    path = name.rstrip("/")
    parts = PurePosixPath(path).parts
    if "/" not in name:
        return any(pattern(path).fullmatch(n) for n in repo.names)
    if parts[0] in repo.generated or parts[0] in EXCHANGE_FOLDERS:
        return True
    if parts[0] in repo.assignments:  # a learner's copy of an assignment
        if len(parts) > 1 and parts[1] == "feedback":  # made by fetch_feedback
            return True
        path = f"release/{path}"
    existing = repo.folders if name.endswith("/") else repo.files | repo.folders
    # The docs may name a module from inside coursekit/ (`cluster/driver.py`).
    wanted = pattern(path), pattern(f"coursekit/{path}")
    return any(w.fullmatch(p) for p in existing for w in wanted)


def pattern(path: str) -> re.Pattern:
    """`catalog/<assignment>.py` or `report*.html.j2`: each placeholder or * is one name's part."""
    pieces = re.split(r"(<[^<>/]+>|\*)", path)
    wild = {"*": "[^/]*"}  # a placeholder is at least one character
    return re.compile(
        "".join(
            wild.get(piece, "[^/]+") if i % 2 else re.escape(piece)
            for i, piece in enumerate(pieces)
        )
    )


def missing_paths(text: str, repo: Repo) -> list[str]:
    return [name for name in candidates(text) if not exists(name, repo)]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    found, fenced = set(), False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced and (heading := HEADING.match(line)):
            found.add(slug(heading.group(1)))
    return found


def broken_links(text: str, folder: Path) -> list[str]:
    """Relative links of a markdown file in `folder` whose file (or heading) is not there."""
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (folder / file) if file else None
        if path is not None and not path.exists():
            broken.append(target)
        elif anchor:
            page = path.read_text(encoding="utf-8") if path is not None else text
            if path is not None and path.suffix != ".md":
                continue
            if anchor not in anchors(page):
                broken.append(target)
    return broken


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# The checker itself, on a made-up repository.

SAMPLE_REPO = Repo(
    files=frozenset(
        {
            "coursekit/cluster/driver.py",
            "catalog/ch3_multihead.py",
            "release/ch3_multihead/multihead.ipynb",
            "docs/security.md",
            "autograded/README.md",
            "coursekit/core/templates/report.html.j2",
        }
    ),
    generated=frozenset({"submitted", "reports", ".venv"}),
    assignments=frozenset({"ch3_multihead"}),
)

SAMPLE = """\
The driver (`coursekit/cluster/driver.py`, or `cluster/driver.py` for short) writes
`reports/grading_incidents.json` from `submitted/<learner>/<assignment>/`; see
`docs/security.md`, `catalog/<assignment>.py` and the learner's
`ch3_multihead/multihead.ipynb`. Gone: `coursekit/cluster/pool.py`, `catalog/<assignment>/`,
`docs/missing.md`, `coursekit/<module>.py` (a placeholder is one name). Pages:
`core/templates/report*.html.j2`. Not paths: `make grade ARGS=--help`, `c.Exchange.root`,
`/run/coursekit-bridges/`, `http://127.0.0.1:8000/hub/login`, `notes.html`, `~/.jupyter`,
`text/plain`, `.py`.

```
learner ── collect ──►  cluster/driver.py (+ gone_too.py)
```

```bash
cat /opt/course/not_checked.py
```
"""


def test_the_checker_finds_exactly_the_missing_paths():
    assert missing_paths(SAMPLE, SAMPLE_REPO) == [
        "coursekit/cluster/pool.py",
        "catalog/<assignment>/",  # a file, not a folder
        "docs/missing.md",
        "coursekit/<module>.py",
        "gone_too.py",
    ]


def test_the_checker_reads_every_kind_of_path():
    names = candidates(SAMPLE)
    for name in ("cluster/driver.py", "submitted/<learner>/<assignment>/", "notes.html"):
        assert (name in names) == (name != "notes.html")
    assert not any(name.startswith(("/", "~", "http", "make")) for name in names)
    assert "not_checked.py" not in " ".join(names)


def test_generated_roots_come_from_gitignore():
    text = "# state\n.venv/\n/submitted/\n/autograded/*\n!/autograded/README.md\n*.egg-info/\n"
    assert generated_roots(text) == {".venv", "submitted", "autograded"}


def test_the_link_checker_finds_a_broken_link_and_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Past one machine: the details\n")
    text = (
        "# Here\n\n## Grading a class: `make grade`\n\n"
        "[ok](other.md) [ok](other.md#past-one-machine-the-details)"
        " [ok](#grading-a-class-make-grade) [web](https://example.org/x.md)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere) [bad here](#nowhere)\n"
    )
    assert broken_links(text, tmp_path) == ["missing.md", "other.md#nowhere", "#nowhere"]


# The real docs.


def test_docs_name_only_paths_that_exist():
    repo = checkout()
    missing = {
        str(doc.relative_to(ROOT)): found
        for doc in documents()
        if (found := missing_paths(doc.read_text(encoding="utf-8"), repo))
    }
    assert missing == {}


def test_docs_link_only_to_files_that_exist():
    broken = {
        str(doc.relative_to(ROOT)): found
        for doc in documents()
        if (found := broken_links(doc.read_text(encoding="utf-8"), doc.parent))
    }
    assert broken == {}


def test_every_doc_is_reachable_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {os.path.normpath(target.partition("#")[0]) for target in LINK.findall(readme)}
    unlinked = [
        str(doc.relative_to(ROOT))
        for doc in documents()[1:]
        if str(doc.relative_to(ROOT)) not in linked
    ]
    assert unlinked == []


def test_readme_stays_a_guide():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    assert "make test" in "\n".join(lines[:8])  # CI runs "the README's test command"
