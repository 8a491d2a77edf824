"""The folder stock autograde (or generate_feedback) reads, bounded before nbgrader copies it.

nbgrader's converters copy every file beside the notebooks into their output
folder (`BaseConverter.init_assignment`: `find_all_files`, then `shutil.copy`
each) before any preprocessor runs. Nothing bounds that copy, it keeps every
name (a learner's `notes.html` lands in autograded/ and feedback/ as a page),
and `find_all_files` globs the whole folder once per file and ignore pattern:
7 000 files beside a notebook took stock autograde 64 s, almost all of it there.
A folder collected by the course's exchange is already bounded; one placed in
submitted/ by hand or by `nbgrader zip_collect`, or an autograded/ folder
written before this course bounded it, is not.

nbgrader's own hook before that copy is the converter's `pre_convert_hook`
(nbgrader_config.py: `c.Autograde.pre_convert_hook = bound_submitted`,
`c.GenerateFeedback.pre_convert_hook = bound_autograded`). When the folder
holds anything the exchange would not have collected as it is, the hook
puts in its place the exchange's own bounded copy (`plain_copy.copy_folder`,
the same budget, the same reasons, `inert_names`), and moves the
rest, each name made inert too, to `left_out/<the folder's path>/`: nothing
is deleted, and no server renders any of it. What it did is logged, added to
reports/exchange_incidents.json and, for autograde, noted in the graded
notebook (`notes_for`, read by autograde.shapes' exporter in the same process).

The hook is given only the notebooks' paths, so the course's settings are
read from nbgrader_config.py in the folder nbgrader runs the converter in
(BaseConverter.start changes into the course root first).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import stat
import tempfile

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.log import get_logger

from coursekit.core.course import load_config
from coursekit.core.messages import _
from coursekit.exchange import reasons, record
from coursekit.exchange.collect import course_budget
from coursekit.exchange.names import kept_name, unused_kept_name
from coursekit.exchange.plain_copy import Budget, CopyResult, LeftOut, copy_folder, odd_name
from coursekit.exchange.transfer import read_small

LEFT_OUT = "left_out"  # under the course root: what a bounded folder no longer holds
TIMESTAMP = "timestamp.txt"  # nbgrader's, not counted against max_files (as collect writes it)
NOTE_LINES = 20

# realpath of a bounded submitted folder -> what its notebook's note says (this process).
_NOTES: dict[str, list[str]] = {}


def bound_submitted(assignment=None, student=None, notebooks=(), **_hook_args) -> None:
    """`c.Autograde.pre_convert_hook`: bound the submitted folder of `notebooks`."""
    _bound(notebooks, note=True)


def bound_autograded(assignment=None, student=None, notebooks=(), **_hook_args) -> None:
    """`c.GenerateFeedback.pre_convert_hook`: bound the autograded folder of `notebooks`."""
    _bound(notebooks, note=False)


def notes_for(folder: str) -> list[str]:
    """What the notebook of `folder` should say about its files (once; [] if nothing)."""
    return _NOTES.pop(os.path.realpath(folder), [])


def _bound(notebooks, note: bool) -> None:
    if not notebooks:
        return
    folder = os.path.abspath(os.path.dirname(notebooks[0]))
    _NOTES.pop(os.path.realpath(folder), None)
    log = get_logger()
    try:
        config = course_config(os.getcwd())
        coursedir = CourseDirectory(config=config)
        root = os.path.abspath(coursedir.root)
        done = bound_folder(folder, root, course_budget(config), coursedir.ignore)
    except Exception:  # nbgrader would log a hook's error at INFO and copy everything
        failed = _("Could not bring the files beside the notebook within the limits: {folder}")
        log.error(failed.format(folder=folder), exc_info=True)
        return
    if done is None:
        return
    result, aside = done
    where = os.path.relpath(folder, root)
    entries = [{"submission": where, "path": i.path, "reason": i.reason} for i in result.left_out]
    entries += [
        {"submission": where, "path": i.path, "reason": reasons.renamed(i.kept)}
        for i in result.renamed
    ]
    moved = reasons.set_aside(os.path.relpath(aside, root)) if aside else ""
    if aside:
        entries.append({"submission": where, "path": "", "reason": moved})
    lines = summary(result)
    for line in [*lines, *([moved] if aside else [])]:
        log.warning("%s: %s", where, line)
    parts = where.split(os.sep)
    if len(parts) >= 2:
        path = os.path.join(root, record.DEFAULT_PATH)
        record.add(path, parts[-1], parts[-2], entries)
    if note:
        _NOTES[os.path.realpath(folder)] = lines


@functools.lru_cache(maxsize=8)
def _config(root: str, mtime_ns: int) -> Config:
    return load_config(root)


def course_config(root: str) -> Config:
    """The nbgrader_config.py of `root` as nbgrader loads it (an empty config if none)."""
    try:
        mtime_ns = os.stat(os.path.join(root, "nbgrader_config.py")).st_mtime_ns
    except FileNotFoundError:
        return Config()
    return _config(root, mtime_ns)


def conforms(folder: str, budget: Budget, ignore) -> bool:
    """Whether the exchange's bounded copy of `folder` would be the folder itself: only
    regular files, each under its kept name, within every limit of `budget`."""
    files = entries = total = 0
    stack = [(folder, 0)]
    while stack:
        path, depth = stack.pop()
        with os.scandir(path) as found:
            for entry in found:
                entries += 1
                if entries > budget.max_entries:
                    return False
                if any(fnmatch.fnmatch(entry.name, glob) for glob in ignore):
                    continue  # nbgrader copies none of these either
                if odd_name(entry.name) or entry.is_symlink():
                    return False
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 > budget.max_depth:
                        return False
                    stack.append((entry.path, depth + 1))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    return False
                if depth == 0 and entry.name == TIMESTAMP:
                    continue
                files += 1
                size = entry.stat(follow_symlinks=False).st_size
                total += size
                if (
                    kept_name(entry.name) != entry.name
                    or files > budget.max_files
                    or (budget.max_file_bytes is not None and size > budget.max_file_bytes)
                    or (budget.max_total_bytes is not None and total > budget.max_total_bytes)
                ):
                    return False
    return True


def bound_folder(
    folder: str, root: str, budget: Budget, ignore
) -> tuple[CopyResult, str | None] | None:
    """Put the bounded copy of `folder` in its place; None when it already conforms.

    Returns the copy's result and where the rest went (None: nothing was left).
    """
    if conforms(folder, budget, ignore):
        return None
    parent, name = os.path.split(folder)
    staging = tempfile.mkdtemp(prefix=f".{name}-", dir=parent)
    try:
        bounded = os.path.join(staging, name)
        result = copy_folder(
            folder,
            bounded,
            budget,
            exclude=ignore,
            skip_top={TIMESTAMP},
            dir_mode=stat.S_IMODE(os.stat(folder).st_mode),
            inert_names=True,
        )
        _copy_timestamp(folder, bounded, result)
        original = os.path.join(staging, "as-placed")
        os.rename(folder, original)
        os.rename(bounded, folder)
        kept = {*result.files, TIMESTAMP}
        aside = os.path.join(root, LEFT_OUT, os.path.relpath(folder, root))
        return result, _set_aside(original, kept, aside)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy_timestamp(folder: str, bounded: str, result: CopyResult) -> None:
    if not os.path.lexists(os.path.join(folder, TIMESTAMP)):
        return
    try:
        text = read_small(os.path.join(folder, TIMESTAMP))
    except (ValueError, UnicodeDecodeError) as error:
        result.left_out.append(LeftOut(TIMESTAMP, reasons.unreadable(OSError(str(error)))))
        return
    with open(os.path.join(bounded, TIMESTAMP), "w", encoding="utf-8") as fh:
        fh.write(text)
    shutil.copystat(os.path.join(folder, TIMESTAMP), os.path.join(bounded, TIMESTAMP))


def _set_aside(original: str, kept: set[str], aside: str) -> str | None:
    """Move what `original` holds beyond `kept` to `aside`, names made inert; links and
    special files, which hold no content of their own, are dropped. None if nothing is left."""
    for current, _dirs, names in os.walk(original, topdown=False):
        relative = os.path.relpath(current, original)
        for name in names:
            path = os.path.join(current, name)
            inside = name if relative == "." else os.path.join(relative, name)
            if inside in kept or not stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                continue
            target = unused_kept_name(current, name)
            if target != name:
                os.rename(path, os.path.join(current, target))
        for name in _dirs:
            path = os.path.join(current, name)
            if os.path.islink(path):
                os.unlink(path)
            elif not os.listdir(path):
                os.rmdir(path)
    if not os.listdir(original):
        return None
    if os.path.lexists(aside):
        shutil.rmtree(aside)  # an earlier placement's; this one replaced it in submitted/
    os.makedirs(os.path.dirname(aside), exist_ok=True)
    shutil.move(original, aside)
    return aside


def summary(result: CopyResult) -> list[str]:
    """The note's lines: one per reason (with the first paths it applies to), then renames.

    Not where the rest went: in make grade's scratch copy that place is gone after the
    task (the class's submitted/ folder, which make grade never changes, still has it)."""
    by_reason: dict[str, list[str]] = {}
    for item in result.left_out:
        by_reason.setdefault(item.reason, []).append(item.path)
    lines = []
    for reason, paths in by_reason.items():
        more = " " + _("and {count} more").format(count=len(paths) - 3) if len(paths) > 3 else ""
        lines.append(f"{', '.join(paths[:3])}{more}: {reason}")
    lines += [f"{item.path}: {reasons.renamed(item.kept)}" for item in result.renamed]
    if len(lines) > NOTE_LINES:
        others = _("… {count} more reasons").format(count=len(lines) - NOTE_LINES + 1)
        lines = [*lines[: NOTE_LINES - 1], others]
    return lines
