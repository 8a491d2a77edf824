"""Which names of a learner's files may be kept: the one rule every copy of them follows.

A file handed in beside the notebook is served by any Jupyter server or file
browser that opens the course folder, by its name: `notes.html`, `logo.svg`,
`page.xhtml`, `feed.xml`, `app.js` or `paper.pdf` open as a page (or run as a
script) on the staff's origin, and so may a name a server has no type for.
Only names whose type renders as text, data or a plain image are kept; every
other name gets `.txt` added, which servers send as text/plain (jupyter_server
adds `X-Content-Type-Options: nosniff`, and browsers never sniff text/plain
into a page). The content is never changed.

Used by the exchange's collect (`plain_copy.copy_folder(inert_names=True)`),
zip_collect's plugins, the folders stock autograde and generate_feedback read
(`exchange.bound`), and `make grade`'s copy back into autograded/.
"""

from __future__ import annotations

import os

# Lower-case suffixes kept as they are: text and data (JupyterLab opens them in
# an editor or its sanitizing viewers; servers send text/*, application/json or
# application/x-ipynb+json) and images a browser shows as images only.
KEPT_SUFFIXES = frozenset(
    {
        ".ipynb",
        ".py",
        ".txt",
        ".csv",
        ".tsv",
        ".md",
        ".json",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
    }
)
INERT_SUFFIX = ".txt"


def kept_name(name: str) -> str:
    """The name a learner's file `name` (one path component) is kept under.

    `name` itself when its suffix (compared in lower case) is in KEPT_SUFFIXES,
    else `name + ".txt"`: `notes.html` -> `notes.html.txt`, `x.HTML` ->
    `x.HTML.txt`, `a.png.svg` -> `a.png.svg.txt`, `README` -> `README.txt`.
    The result is always kept as it is (kept_name of it is itself).
    """
    suffix = os.path.splitext(name)[1]
    if suffix.lower() in KEPT_SUFFIXES:
        return name
    return name + INERT_SUFFIX


def kept_path(relative: str) -> str:
    """`relative` (a file's path inside a submission) with its file name made kept."""
    head, name = os.path.split(relative)
    return os.path.join(head, kept_name(name)) if head else kept_name(name)


def unused_kept_name(directory: str, name: str) -> str:
    """kept_name(name), or `name.1.txt`, `name.2.txt`... when another file in `directory`
    already has it (for folders where nothing may be dropped)."""
    kept, n = kept_name(name), 0
    while kept != name and os.path.lexists(os.path.join(directory, kept)):
        n += 1
        kept = kept_name(f"{name}.{n}")
    return kept
