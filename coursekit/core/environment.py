"""The commands a course process starts run with this interpreter's environment.

nbgrader runs `alembic` by name (for a new gradebook) and kernels run `python` by
name, so this interpreter's bin/ must come first on PATH, as in an activated venv,
wherever the process was started from (a shell, `dask worker`, a test).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def environment_bin() -> str:
    """The bin/ folder of the environment this interpreter belongs to."""
    return str(Path(sys.executable).parent)


def with_environment_bin(environ: dict[str, str]) -> dict[str, str]:
    """A copy of `environ` with this environment's bin/ first on PATH (once)."""
    path = environ.get("PATH", "")
    if path.split(os.pathsep)[0] == environment_bin():
        return dict(environ)
    return {**environ, "PATH": os.pathsep.join(filter(None, [environment_bin(), path]))}


def venv_environment() -> dict[str, str]:
    """os.environ for a child process: this environment's bin/ first on PATH."""
    return with_environment_bin(dict(os.environ))


def use_environment_bin() -> None:
    """This process's own PATH with this environment's bin/ first (for what it runs by name)."""
    os.environ["PATH"] = venv_environment()["PATH"]


def nbgrader(
    root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run a stock nbgrader command in a course root, with this interpreter's nbgrader
    (`env`: variables added to this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=root,
        env={**venv_environment(), **(env or {})},
        check=check,
        capture_output=True,
        text=True,
    )
