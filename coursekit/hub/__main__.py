"""`python -m coursekit.hub` (`make hub`): set up a trial class and run its JupyterHub.

    python -m coursekit.hub up [--learners N | --roster FILE] [--tas N] [--no-live]
                          [--port P] [--ip IP] [--root DIR] [--course DIR]
    python -m coursekit.hub setup ...   # everything but starting the hub
    python -m coursekit.hub down [--root DIR]

`up` needs root: it creates the accounts, opens the course environment to
them, hides the references, and runs JupyterHub (which starts each account's
server as that account). It prints the URL and each account's password once.
`down` removes the accounts and puts every changed permission back.

Unless `--no-live`, the hub also runs `coursekit live` (graded on submit) as a
managed service with its TA board, for the instructor and the `--tas` accounts
(coursekit/hub/board_service.py).

With `--roster` (coursekit/lms/roster.py: id, name or first/last name, email, LMS
id) the learners are the roster's, named `<prefix><id>`, and the instructor's
gradebook gets them with their names through `nbgrader db student import`; the
whole roster is checked before any account is made.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from coursekit.core.course import add_root_argument
from coursekit.hub import access, accounts, board_service, files
from coursekit.hub.settings import SETTINGS_FILE, HubSettings, default_root
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


def print_accounts(settings: HubSettings, passwords: dict[str, str]) -> None:
    print(f"\nJupyterHub: {settings.url}/hub/login")
    print("accounts (passwords are new on every run and shown only now):")
    for user, password in passwords.items():
        role = "instructor (formgrader)" if user == settings.instructor else "learner"
        role = "TA (the live board)" if user in settings.ta_names else role
        print(f"  {user:24} {password:20} {role}")
    print(f"instructor's course: {settings.course_root}; exchange: {settings.exchange}")
    if settings.live:
        print(f"TA live board: {settings.url}/services/{board_service.SERVICE}/")
    print()


def down(settings: HubSettings) -> None:
    for user in [settings.instructor, *settings.learner_names, *settings.ta_names]:
        accounts.remove_account(user)
    accounts.remove_group(settings.group)
    access.restore(settings)
    shutil.rmtree(settings.root, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="make hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="up", choices=["up", "setup", "down"])
    parser.add_argument("--root", help="hub state (default /srv/<course id>-hub)")
    add_root_argument(parser, "--course")
    parser.add_argument("--learners", type=int, default=2, help="numbered learners (no roster)")
    parser.add_argument("--roster", type=Path, help="roster CSV: id, name, email, lms_id")
    parser.add_argument("--tas", type=int, default=0, help="TA accounts (they open the board)")
    parser.add_argument(
        "--no-live",
        dest="live",
        action="store_false",
        help="no grading on submit: make live and its TA board are not run as a hub service",
    )
    parser.add_argument(
        "--learner-language",
        default="ko_KR",
        help="learners' JupyterLab (default ko_KR; '' English)",
    )
    parser.add_argument("--ip", default="127.0.0.1", help="address to serve (default loopback)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--prefix", default="tp-", help="account name prefix")
    args = parser.parse_args(argv)
    args.root = args.root or default_root(args.course)
    if os.geteuid() != 0:
        parser.error("needs root: it creates Linux accounts and starts servers as them")
    if args.command == "down":
        settings_file = Path(args.root) / SETTINGS_FILE
        if settings_file.exists():
            down(HubSettings.load(args.root))
        return 0
    learners = []
    if args.roster:  # checked whole before anything is made
        try:
            learners = [asdict(one) for one in roster.read(args.roster, args.prefix)]
        except roster.RosterError as error:
            parser.exit(2, f"{error}\n")
    settings = HubSettings(
        root=str(Path(args.root).resolve()),
        ip=args.ip,
        port=args.port,
        prefix=args.prefix,
        learners=len(learners) or args.learners,
        tas=args.tas,
        live=args.live,
        repo=str(args.course),
        roster=learners,
        learner_locale=args.learner_language,
    )
    passwords = setup(settings)
    print_accounts(settings, passwords)
    if args.command == "setup":
        return 0
    command, env = hub_command(settings)
    hub = subprocess.Popen(command, env=env, cwd=settings.root)
    try:
        return hub.wait()
    except KeyboardInterrupt:
        # Ctrl+C: JupyterHub stops the proxy and every account's server itself; wait for
        # it rather than kill it (subprocess.run would), or they outlive it.
        hub.terminate()
        return hub.wait(timeout=120)


if __name__ == "__main__":
    sys.exit(main())
