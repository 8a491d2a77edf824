"""Copy a folder an untrusted account wrote: regular files only, within a budget.

Every step goes through directory file descriptors (`dir_fd`, `O_NOFOLLOW`),
so a link swapped in while the copy runs is not followed either. What is left
out is returned with a reason in the course's language, never raised: an odd entry costs only
itself.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field

from coursekit.core.messages import _
from coursekit.exchange import reasons
from coursekit.exchange.names import kept_name

CHUNK = 1 << 20
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO swapped in does not block
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
FIRST = {"submission_secret.txt", "timestamp.txt"}  # nbgrader's, next to the notebooks


@dataclass(frozen=True)
class Budget:
    """What one submission may cost the copy (bytes are bytes actually read)."""

    max_file_bytes: int | None = None  # one file
    max_total_bytes: int | None = None  # the whole folder
    max_files: int = 50  # regular files copied, notebooks first
    max_entries: int = 2000  # directory entries looked at, links and skipped ones included
    max_depth: int = 8  # folders below the submission folder

    @classmethod
    def from_coursedir(cls, coursedir, **kwargs) -> Budget:
        """nbgrader's own limits (kilobytes, as nbgrader counts them: 1000 bytes)."""
        return cls(
            max_file_bytes=1000 * coursedir.max_file_size if coursedir.max_file_size else None,
            max_total_bytes=1000 * coursedir.max_dir_size if coursedir.max_dir_size else None,
            **kwargs,
        )


@dataclass
class LeftOut:
    path: str  # relative to the submission folder, printable
    reason: str  # in the course's language, for the learner and the TA


@dataclass
class Renamed:
    path: str  # as handed in, relative to the submission folder, printable
    kept: str  # the name it was copied under (names.kept_name)


@dataclass
class CopyResult:
    files: list[str] = field(default_factory=list)  # as handed in (not renamed)
    left_out: list[LeftOut] = field(default_factory=list)
    renamed: list[Renamed] = field(default_factory=list)
    bytes_read: int = 0
    # When the exchange got it: the latest ctime of the owner's entries. Not the folder's
    # own ctime, which a classmate's write into a world-writable folder would move.
    newest_change: float = 0.0


def shown(path: str) -> str:
    """A path as text that is safe to print: undecodable bytes and control characters escaped."""
    raw = os.fsencode(path)
    text = raw.decode("utf-8", errors="backslashreplace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def odd_name(name: str) -> bool:
    """Not UTF-8, or holding control characters: such names break tools further on."""
    try:
        os.fsencode(name).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not name.isprintable()


class _Copy:
    def __init__(
        self, budget, exclude, include, owner_uid, only_missing, file_mode, dir_mode, inert_names
    ):
        self.budget = budget
        self.inert_names = inert_names
        self.exclude = exclude or []
        self.include = include or []
        self.owner_uid = owner_uid
        self.only_missing = only_missing
        self.file_mode = file_mode
        self.dir_mode = dir_mode
        self.result = CopyResult()
        self.entries = 0
        self.stopped = False

    def leave(self, path: str, reason: str) -> None:
        self.result.left_out.append(LeftOut(shown(path), reason))

    def seen(self, st: os.stat_result) -> None:
        self.result.newest_change = max(self.result.newest_change, st.st_ctime)

    def names(self, fd: int) -> list[str]:
        # Notebooks and nbgrader's own files first: a crowded folder still hands them in.
        names = os.listdir(fd)
        return sorted(names, key=lambda n: (not (n.endswith(".ipynb") or n in FIRST), n))

    def walk(self, src_fd: int, dest_fd: int | None, relative: str, depth: int, skip=()) -> None:
        for name in self.names(src_fd):
            if self.stopped:
                return
            path = os.path.join(relative, name) if relative else name
            self.entries += 1
            if self.entries > self.budget.max_entries:
                self.leave(relative or ".", reasons.too_many_entries(self.budget.max_entries))
                self.stopped = True
                return
            if (not relative and name in skip) or any(
                fnmatch.fnmatch(name, glob) for glob in self.exclude
            ):
                continue  # nbgrader's CourseDirectory.ignore: silently, as stock does
            try:
                self.entry(src_fd, dest_fd, name, path, depth)
            except OSError as error:
                self.leave(path, reasons.unreadable(error))

    def entry(self, src_fd, dest_fd, name, path, depth) -> None:
        st = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
        if self.owner_uid is not None and st.st_uid != self.owner_uid:
            return self.leave(path, reasons.other_owner(st.st_uid, self.owner_uid))
        self.seen(st)  # only the owner's entries date the submission (not a classmate's)
        if odd_name(name):
            return self.leave(path, _(reasons.ODD_NAME))
        if stat.S_ISLNK(st.st_mode):
            return self.leave(path, _(reasons.LINK))
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return self.leave(path, _(reasons.SPECIAL))
        if stat.S_ISDIR(st.st_mode):
            return self.folder(src_fd, dest_fd, name, path, depth, st)
        if self.include and not any(fnmatch.fnmatch(name, glob) for glob in self.include):
            return None
        return self.file(src_fd, dest_fd, name, path, st)

    def folder(self, src_fd, dest_fd, name, path, depth, st) -> None:
        if depth + 1 > self.budget.max_depth:
            return self.leave(path, reasons.too_deep(self.budget.max_depth))
        fd = os.open(name, DIR_FLAGS, dir_fd=src_fd)
        try:
            if not _same(os.fstat(fd), st):
                return self.leave(path, _(reasons.CHANGED))
            sub = None
            if dest_fd is not None:
                try:
                    os.mkdir(name, self.dir_mode, dir_fd=dest_fd)
                except FileExistsError:
                    if not self.only_missing:
                        raise
                sub = os.open(name, DIR_FLAGS, dir_fd=dest_fd)  # a link there is not entered
                os.chmod(sub, self.dir_mode)
            try:
                self.walk(fd, sub, path, depth + 1)
            finally:
                if sub is not None:
                    os.close(sub)
        finally:
            os.close(fd)
        return None

    def file(self, src_fd, dest_fd, name, path, st) -> None:
        budget, result = self.budget, self.result
        if dest_fd is None:
            return None  # a scan: the time is all it wanted
        kept = kept_name(name) if self.inert_names else name
        if self.only_missing and _exists(kept, dest_fd):
            return None
        # A file the learner named so themselves keeps the name (it may come later).
        if kept != name and (_exists(kept, dest_fd) or _exists(kept, src_fd)):
            return self.leave(path, reasons.name_taken(kept))
        if len(result.files) >= budget.max_files:
            return self.leave(path, reasons.too_many_files(budget.max_files))
        file_limit = budget.max_file_bytes
        if file_limit is not None and st.st_size > file_limit:
            return self.leave(path, reasons.too_big(st.st_size, file_limit))
        left = None
        if budget.max_total_bytes is not None:
            left = budget.max_total_bytes - result.bytes_read
            if st.st_size > left:
                return self.leave(path, reasons.over_total(budget.max_total_bytes))
        fd = os.open(name, FILE_FLAGS, dir_fd=src_fd)
        try:
            opened = os.fstat(fd)
            if not _same(opened, st) or not stat.S_ISREG(opened.st_mode):
                return self.leave(path, _(reasons.CHANGED))
            limits = [x for x in (file_limit, left) if x is not None]
            data, complete = _read(fd, min(limits) if limits else None)
            self.seen(os.fstat(fd))  # a write while it was read counts as received now
        finally:
            os.close(fd)
        result.bytes_read += len(data)
        if not complete:  # it grew while it was read
            if file_limit is not None and len(data) > file_limit:
                return self.leave(path, reasons.too_big(len(data), file_limit))
            return self.leave(path, reasons.over_total(budget.max_total_bytes))
        try:
            out = os.open(kept, NEW_FILE_FLAGS, 0o600, dir_fd=dest_fd)
        except FileExistsError:  # appeared while this one was read
            return self.leave(path, _(reasons.CHANGED))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            os.chmod(out, (stat.S_IMODE(st.st_mode) & 0o755) | self.file_mode)
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))  # as shutil.copy2 does
        finally:
            os.close(out)
        result.files.append(path)
        if kept != name:
            result.renamed.append(
                Renamed(shown(path), shown(os.path.join(os.path.dirname(path), kept)))
            )
        return None


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _read(fd: int, limit: int | None) -> tuple[bytes, bool]:
    """At most limit + 1 bytes; (data, whether the file ended within the limit)."""
    chunks, total = [], 0
    while True:
        want = CHUNK if limit is None else min(CHUNK, limit + 1 - total)
        if want <= 0:
            return b"".join(chunks), False
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        total += len(chunk)


def copy_folder(
    src: str,
    dest: str | None,
    budget: Budget,
    *,
    exclude=None,
    include=None,
    owner_uid: int | None = None,
    only_missing: bool = False,
    skip_top=(),
    file_mode: int = 0,
    dir_mode: int = 0o755,
    inert_names: bool = False,
) -> CopyResult:
    """Copy the regular files of `src` into the new folder `dest` (None: only scan).

    Links, FIFOs, devices and sockets are left out, and so is any entry not
    owned by `owner_uid` when given. `only_missing` copies into an existing
    `dest` only what it lacks (fetch's replace_missing_files). Names in
    `skip_top` are left out of the top folder silently. With `inert_names`, each
    file is written under `names.kept_name` of its name (`result.renamed` says
    which were). The folder `src` itself must be a real folder: a link there
    raises OSError.
    """
    job = _Copy(budget, exclude, include, owner_uid, only_missing, file_mode, dir_mode, inert_names)
    src_fd = os.open(src, DIR_FLAGS)
    dest_fd = None
    try:
        top = os.fstat(src_fd)
        if owner_uid is not None and top.st_uid != owner_uid:  # swapped since it was looked at
            raise PermissionError(f"{shown(src)}: " + _("the folder's owner changed"))
        if dest is not None:
            os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)  # as copytree
            try:
                os.mkdir(dest, dir_mode)
            except FileExistsError:
                if not only_missing:
                    raise
            dest_fd = os.open(dest, DIR_FLAGS)
            os.chmod(dest_fd, dir_mode)
        job.walk(src_fd, dest_fd, "", 0, skip=skip_top)
        if not job.result.newest_change:
            job.seen(top)  # an empty folder: dated by the folder itself
    finally:
        os.close(src_fd)
        if dest_fd is not None:
            os.close(dest_fd)
    return job.result
