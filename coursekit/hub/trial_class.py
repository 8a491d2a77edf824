"""A trial class on this machine: its accounts, files and JupyterHub, made and removed.

What `make hub` does (coursekit/hub/__main__.py parses its arguments and prints).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from coursekit.hub import access, accounts, files, lti
from coursekit.hub.settings import SETTINGS_FILE, HubSettings
from coursekit.lms import roster

PROXY_PACKAGE = "configurable-http-proxy@4.6.3"
CONFIG_FILE = Path(__file__).with_name("jupyterhub_config.py")


def ensure_proxy(settings: HubSettings) -> None:
    """configurable-http-proxy from npm in build/hub (Debian's nodejs and npm when missing)."""
    if Path(settings.proxy).exists():
        return
    if not shutil.which("npm"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "nodejs", "npm"],
            check=True,
            env=env,
        )
    prefix = Path(settings.proxy).parents[2]
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), PROXY_PACKAGE],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def setup(settings: HubSettings) -> dict[str, str]:
    """Accounts, permissions, exchange and config files; returns the new passwords."""
    root = Path(settings.root)
    if (root / SETTINGS_FILE).exists():  # a previous run: undo its permission changes first
        access.restore(HubSettings.load(root))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    ensure_proxy(settings)
    accounts.ensure_group(settings.group)
    instructor = settings.instructor
    passwords = {instructor: accounts.ensure_account(instructor, (settings.group,))}
    for learner in settings.learner_names:
        passwords[learner] = accounts.ensure_account(learner)
    for ta in settings.ta_names:  # no instructors' group: the board is all they open
        passwords[ta] = accounts.ensure_account(ta)
    opened = access.open_environment(settings)
    hidden = access.hide_course_secrets(settings)
    access.make_exchange(settings)
    files.write_class_config(settings)
    files.write_instructor_files(settings)
    if settings.lti:
        lti.install(settings)
    settings.save()
    if settings.roster:
        import_roster(settings)
    if opened:
        print("opened for every account (search bit only):", ", ".join(opened))
    print(f"instructors' group {settings.group} only:", ", ".join(hidden))
    return passwords


def import_roster(settings: HubSettings) -> None:
    """The roster's learners, with their names, into the instructor's gradebook: stock
    `nbgrader db student import`, run by the instructor's account in the course copy."""
    learners = [roster.Learner(**learner) for learner in settings.roster]
    path = settings.course_root / "roster_students.csv"
    path.write_text(roster.nbgrader_csv(learners, settings.prefix), encoding="utf-8")
    path.chmod(0o600)
    user = pwd.getpwnam(settings.instructor)
    os.chown(path, user.pw_uid, user.pw_gid)
    venv_bin = Path(settings.venv) / "bin"
    result = subprocess.run(
        ["runuser", "-u", settings.instructor, "--", "env", f"HOME={user.pw_dir}",
         f"PATH={venv_bin}:/usr/bin:/bin", "PYTHONUTF8=1",
         f"COURSE_EXCHANGE_ROOT={settings.exchange}",
         str(venv_bin / "nbgrader"), "db", "student", "import", str(path)],
        cwd=settings.course_root, capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"nbgrader db student import failed:\n{result.stderr[-3000:]}")
    print(f"gradebook: {len(learners)} learners from the roster, with their names")


def hub_command(settings: HubSettings) -> tuple[list[str], dict[str, str]]:
    """The JupyterHub command line and environment for this hub."""
    env = {**os.environ, "COURSEKIT_HUB_ROOT": settings.root}
    env["PATH"] = f"{Path(settings.venv) / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    jupyterhub = str(Path(settings.venv) / "bin" / "jupyterhub")
    return [jupyterhub, "-f", str(CONFIG_FILE)], env


def down(settings: HubSettings) -> None:
    for user in [settings.instructor, *settings.learner_names, *settings.ta_names]:
        accounts.remove_account(user)
    accounts.remove_group(settings.group)
    access.restore(settings)
    shutil.rmtree(settings.root, ignore_errors=True)
