"""Real Linux accounts for the class, with passwords generated on every run.

JupyterHub's PAM authenticator checks these passwords, so nothing works with a
default password; each run prints the new ones once and keeps no copy.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import secrets
import signal
import subprocess
import time


def exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def ensure_group(group: str) -> None:
    try:
        grp.getgrnam(group)
    except KeyError:
        subprocess.run(["groupadd", group], check=True)


def ensure_account(user: str, groups: tuple[str, ...] = ()) -> str:
    """Create `user` (home /home/<user>, mode 700) if missing; set and return a new password."""
    if not exists(user):
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", user], check=True)
    if groups:
        subprocess.run(["usermod", "--append", "--groups", ",".join(groups), user], check=True)
    home = pwd.getpwnam(user).pw_dir
    os.chmod(home, 0o700)  # classmates never read each other's work
    password = secrets.token_urlsafe(12)
    subprocess.run(["chpasswd"], input=f"{user}:{password}\n", text=True, check=True)
    return password


def processes_of(user: str) -> list[int]:
    uid = pwd.getpwnam(user).pw_uid
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(FileNotFoundError):
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
    return pids


def remove_account(user: str) -> None:
    """Stop what the account still runs (its servers and kernels), then delete it and its home."""
    if not exists(user):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_of(user):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 5
        while processes_of(user) and time.monotonic() < deadline:
            time.sleep(0.2)
    subprocess.run(["userdel", "--remove", user], check=True, stderr=subprocess.DEVNULL)


def remove_group(group: str) -> None:
    try:
        grp.getgrnam(group)
    except KeyError:
        return
    subprocess.run(["groupdel", group], check=True)
