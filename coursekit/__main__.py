"""`coursekit COMMAND [ARGS]`: the one entry point the course's make targets call.

    coursekit grade [ASSIGNMENT ...] [-j N]   # make grade
    coursekit COMMAND --help                  # each command's own options

Every command works on the course root found one way (coursekit.core.course.find_root):
its --root, else the nearest folder upward that holds nbgrader_config.py. Each
command is also its module's `python -m` (the table below names it).
"""

from __future__ import annotations

import importlib
import sys

# command -> (module whose main(argv) runs it, what it does)
COMMANDS = {
    "demo": ("coursekit.simulate.demo", "the whole cycle on a simulated class, then the TA report"),
    "grade": ("coursekit.cluster.cli", "grade every collected submission on Dask"),
    "live": ("coursekit.live.cli", "grade each submission as it arrives (make live)"),
    "report": ("coursekit.staff.report.cli", "the TA report (runs no learner code)"),
    "export": ("coursekit.lms.export", "grades in an LMS's CSV import format"),
    "sync": ("coursekit.authoring.sync", "copy the reference bodies into the source notebooks"),
    "release": (
        "coursekit.authoring.release",
        "regenerate release/ with nbgrader generate_assignment",
    ),
    "hub": ("coursekit.hub.__main__", "a local JupyterHub for a trial class (as root)"),
    "cluster": ("coursekit.cluster.dask_cluster", "a TLS grading cluster's certificates (certs)"),
    "lab-language": (
        "coursekit.learner.lab_language",
        "JupyterLab settings for a default language",
    ),
    "reproduce": ("coursekit.checks.reproduce", "rebuild a hidden check's failing case"),
    "validate": ("coursekit.learner.validation", "validate notebooks as the learners' button does"),
    "labextension": (
        "coursekit.learner.labextension",
        "install the learners' prebuilt JupyterLab extension (make venv)",
    ),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return "usage: coursekit COMMAND [ARGS ...]\n\ncommands:\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0 if argv else 2
    name, *rest = argv
    if name not in COMMANDS:
        print(f"coursekit: unknown command {name!r}\n\n{usage()}", end="", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    # Each command's own parser names itself in --help and its errors.
    sys.argv = [f"coursekit {name}", *rest]
    return module.main(rest) or 0


if __name__ == "__main__":
    raise SystemExit(main())
