"""`make bench`'s physical floor: the least work grading a notebook can be.

    python -m bench.floor [--preload MODULE,...] JOBS NOTEBOOK...

A parent imports once what the graded cells of the notebooks import at their
top level (for this course numpy, pandas and each assignment's hidden checks:
read from the notebooks, so no assignment is named here), then for each
notebook forks a child that runs the notebook's code cells with `exec` in one
namespace, hidden tests included and in-process, stdout captured, and exits;
the drawing cells are skipped, as grading skips them (`cells.SKIP_TAG`). JOBS
such children run at a time. No sandbox, no kernel protocol, no nbgrader, no
gradebook: what is left is the learner's and the checks' own computing, which
no grader can avoid. Issue 21 measures `make grade` against it in CPU per
notebook. `--preload numpy,pandas` is the floor as issue 21 first measured it:
the checks imported in every child.

Prints one JSON line: notebooks, wall seconds, CPU seconds of the children.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time

from coursekit.core import cells


def imported(paths: list[str]) -> tuple[str, ...]:
    """The modules the graded cells of these notebooks import at their top level, in
    order: `from a import b` names `a` and `a.b` (preload skips a `b` that is no module)."""
    import ast

    names: dict[str, None] = {}
    for path in paths:
        with open(path, encoding="utf-8") as file:
            nb = json.load(file)
        for cell in filter(is_run, nb["cells"]):
            try:
                tree = ast.parse(code_of("".join(cell["source"])))
            except SyntaxError:  # a learner's cell that does not parse imports nothing
                continue
            for node in tree.body:
                if isinstance(node, ast.Import):
                    names.update(dict.fromkeys(alias.name for alias in node.names))
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names[node.module] = None
                    names.update(dict.fromkeys(f"{node.module}.{a.name}" for a in node.names))
    return tuple(names)


def preload(names) -> None:
    import importlib

    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def code_of(source: str) -> str:
    """A cell's Python without IPython's magics and shell lines (the notebooks have none
    that compute anything)."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )


def is_run(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and cells.SKIP_TAG not in cell.get("metadata", {}).get(
        "tags", []
    )


def run_notebook(path: str) -> None:
    """The child's work: read the notebook's JSON, run its cells in one namespace (failures
    formatted as tracebacks, output kept per cell), write the JSON back out."""
    import traceback

    with open(path, encoding="utf-8") as file:
        nb = json.load(file)
    namespace: dict = {"__name__": "__main__"}
    for cell in filter(is_run, nb["cells"]):
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                exec(compile(code_of("".join(cell["source"])), "<cell>", "exec"), namespace)
            except BaseException:
                print(traceback.format_exc(), file=sys.stderr)
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": sink.getvalue()}]
    with open(os.devnull, "w", encoding="utf-8") as file:
        json.dump(nb, file)


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    names = None
    if args[:1] == ["--preload"]:
        names, args = tuple(args[1].split(",")), args[2:]
    jobs_arg, *paths = args
    jobs = int(jobs_arg)
    preload(imported(paths) if names is None else names)
    before, started = os.times(), time.perf_counter()
    running: set[int] = set()
    for path in paths:
        if len(running) >= jobs:
            pid, _ = os.wait()
            running.discard(pid)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run_notebook(path)
            except BaseException:
                code = 1
            os._exit(code)
        running.add(pid)
    while running:
        pid, _ = os.wait()
        running.discard(pid)
    wall, after = time.perf_counter() - started, os.times()
    cpu = after.children_user - before.children_user
    cpu += after.children_system - before.children_system
    print(json.dumps({"notebooks": len(paths), "wall": wall, "cpu": cpu}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
