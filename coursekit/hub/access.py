"""Who may read what on the hub's server.

- Every account runs the course environment: the interpreter, `.venv` and the
  course code (`coursekit/`, which Validate imports). Folders on the way there
  that others cannot enter (pyenv under /root, say) get the search bit only
  (o+x): others may pass through but not list them.
- The references, hidden tests, catalog, source notebooks, git history and any
  course state in the repo are for the instructors' group only (o-rwx, g+rX):
  a learner's kernel runs on this server with the learner's uid.
- The exchange is world-writable with the sticky bit, as nbgrader documents
  (`chmod ugo+rwx`): learners write their submissions into the course's
  inbound folder. The root's sticky bit covers only its own entries: inbound's
  own (3733) is set by the course's release_assignment (exchange/transfer.py).

Every mode and group changed here is recorded, and `restore` puts it back.
"""

from __future__ import annotations

import grp
import os
import stat
import sys
from pathlib import Path

from coursekit.hub.settings import HubSettings

# The repo entries learners' servers need; everything else in the repo is hidden.
WORLD_READABLE = {".venv", "coursekit"}


def _record(settings: HubSettings, path: Path) -> None:
    st = path.stat()
    settings.hidden.append({"path": str(path), "mode": stat.S_IMODE(st.st_mode), "gid": st.st_gid})


def _ancestors(path: Path) -> list[Path]:
    path = path.resolve()
    return [*reversed(path.parents), path]


def open_environment(settings: HubSettings) -> list[str]:
    """Let every account enter the folders up to the interpreter, the venv and the repo."""
    opened = []
    targets = [Path(sys.base_prefix), Path(settings.venv), Path(settings.repo)]
    for target in targets:
        for folder in _ancestors(target):
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                _record(settings, folder)
                folder.chmod(mode | stat.S_IXOTH)
                opened.append(str(folder))
    return opened


def hide_course_secrets(settings: HubSettings) -> list[str]:
    """Everything in the repo but the environment and course code: instructors' group only."""
    gid = grp.getgrnam(settings.group).gr_gid
    hidden = []
    for entry in sorted(Path(settings.repo).iterdir()):
        if entry.name in WORLD_READABLE or entry.is_symlink():
            continue
        if entry.is_file() and entry.suffix in {".md", ".toml", ".in", ".txt"}:
            continue  # README, Makefile-like text: nothing a learner should not read
        if entry.is_file() and entry.name in {"Makefile", "nbgrader_config.py"}:
            continue
        _record(settings, entry)
        mode = stat.S_IMODE(entry.stat().st_mode)
        group_bits = stat.S_IRGRP | (stat.S_IXGRP if entry.is_dir() else 0)
        os.chown(entry, -1, gid)
        entry.chmod((mode & ~stat.S_IRWXO) | group_bits)
        hidden.append(entry.name)
    return hidden


def make_exchange(settings: HubSettings) -> Path:
    settings.exchange.mkdir(parents=True, exist_ok=True)
    settings.exchange.chmod(0o1777)
    return settings.exchange


def restore(settings: HubSettings) -> None:
    """Put back every mode and group this module changed (newest change first)."""
    for change in reversed(settings.hidden):
        path = Path(change["path"])
        if path.exists():
            os.chown(path, -1, change["gid"])
            path.chmod(change["mode"])
    settings.hidden.clear()
