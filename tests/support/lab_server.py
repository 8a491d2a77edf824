"""`jupyter lab` (or `jupyter server`) from .venv on loopback for the browser tests, and a
free loopback port. Started plain: what the environment enables is what it loads."""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from coursekit.core.environment import venv_environment
from tests.support.ports import free_port


@contextlib.contextmanager
def running_lab(
    root: Path, runtime: Path, log_path: Path, *options: str, app: str = "lab", env=None
) -> Iterator[tuple]:
    """JupyterLab (`app="server"`: a bare Jupyter server) serving `root` until the block
    ends, started from `root`; yields (base URL, token). `env` adds to the environment."""
    port, token = free_port(), secrets.token_hex(16)
    jupyter = Path(sys.executable).parent / "jupyter"
    environment = {**venv_environment(), "JUPYTER_RUNTIME_DIR": str(runtime), **(env or {})}
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [str(jupyter), app, "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
             f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False", *options],
            cwd=root, env=environment,
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                    break
                except OSError:
                    assert server.poll() is None, log_path.read_text()
                    assert time.monotonic() < deadline, f"jupyter {app} did not start"
                    time.sleep(0.25)
            yield base, token
        finally:
            server.terminate()
            server.wait(timeout=30)
