"""A throwaway PostgreSQL server on 127.0.0.1 for tests (Debian's `postgresql` package).

Installs the package with apt-get when it is missing (CI runs as root on a
fresh Debian machine), then runs initdb into a temporary folder and pg_ctl
as the `postgres` user, on a free loopback port. Stopped and removed after.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.support.ports import free_port


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def install() -> Path:
    """The server's bin/ folder, installing Debian's postgresql first if needed."""
    if pg_bin() is None:
        if os.geteuid() != 0:
            raise RuntimeError("PostgreSQL is not installed and installing it needs root")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"],
            check=True,
            env=env,
        )
    found = pg_bin()
    if found is None:
        raise RuntimeError("apt-get installed postgresql but no pg_ctl was found")
    return found


def as_postgres(*command: str) -> list[str]:
    """Run as the postgres user when we are root (initdb refuses to run as root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return list(command)


@contextlib.contextmanager
def server() -> Iterator[str]:
    """Yield the URL of a fresh, empty database on 127.0.0.1 (driver: psycopg2)."""
    bin_dir = install()
    # Not under pytest's tmp folder: the postgres user cannot enter root's folders.
    data = Path(tempfile.mkdtemp(prefix="course-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
    port = free_port()
    subprocess.run(
        as_postgres(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"),
        check=True,
        capture_output=True,
    )
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {data} -c fsync=off"
    log = data / "server.log"
    pg_ctl = str(bin_dir / "pg_ctl")
    subprocess.run(
        as_postgres(pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            as_postgres(pg_ctl, "-D", str(data), "-m", "immediate", "stop"),
            capture_output=True,
        )
        shutil.rmtree(data, ignore_errors=True)
