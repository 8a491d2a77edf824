"""`python -m coursekit.hub` (`make hub`): set up a trial class and run its JupyterHub.

    python -m coursekit.hub up [--learners N | --roster FILE] [--tas N] [--no-live]
                          [--lti CONFIG [--roster-from-lms]]
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

With `--lti CONFIG` (coursekit/hub/lti.py) learners and staff log in by LTI 1.3
launches from the LMS instead of passwords; `--roster-from-lms` reads the learners
from the LMS (Names and Role Provisioning) through the same roster checks. With the
live service too, root's LTI poster runs beside it (coursekit/hub/lti_poster.py): a
course that sets `c.LiveGrading.lti_passback = True` gets each counted attempt's score
in the LMS as soon as it is graded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from coursekit.core.course import add_root_argument
from coursekit.hub import board_service
from coursekit.hub import lti as hub_lti
from coursekit.hub.settings import SETTINGS_FILE, HubSettings, default_root
from coursekit.hub.trial_class import down, hub_command, setup
from coursekit.lms import lti, roster


def print_accounts(settings: HubSettings, passwords: dict[str, str]) -> None:
    print(f"\nJupyterHub: {settings.url}/hub/login")
    print("accounts (passwords are new on every run and shown only now):")
    for user, password in passwords.items():
        role = "instructor (formgrader)" if user == settings.instructor else "learner"
        role = "TA (the live board)" if user in settings.ta_names else role
        print(f"  {user:24} {password:20} {role}")
    print(f"instructor's course: {settings.course_root}; exchange: {settings.exchange}")
    if settings.lti:
        print("LTI 1.3 (learners and staff arrive from the LMS; the passwords are not needed):")
        for what, url in hub_lti.urls(settings).items():
            print(f"  {what:42} {url}")
    if settings.live:
        print(f"TA live board: {settings.url}/services/{board_service.SERVICE}/")
    if settings.live and settings.lti:
        print(
            "LTI poster: each counted live attempt's score to the LMS when the course sets "
            "c.LiveGrading.lti_passback = True"
        )
    print()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="make hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="up", choices=["up", "setup", "down"])
    parser.add_argument("--root", help="hub state (default /srv/<course id>-hub)")
    add_root_argument(parser, "--course")
    parser.add_argument("--learners", type=int, default=2, help="numbered learners (no roster)")
    parser.add_argument("--roster", type=Path, help="roster CSV: id, name, email, lms_id")
    parser.add_argument(
        "--lti", type=Path, metavar="CONFIG", help="LTI 1.3: the LMS's registration (JSON)"
    )
    parser.add_argument(
        "--roster-from-lms",
        action="store_true",
        help="the learners from the LMS (Names and Role Provisioning; needs --lti)",
    )
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
    lti_config = {}
    if args.lti:
        try:
            lti_config = lti.LtiConfig.read(args.lti).to_dict()
        except lti.LtiError as error:
            parser.exit(2, f"{error}\n")
    if args.roster_from_lms and not args.lti:
        parser.error("--roster-from-lms needs --lti CONFIG")
    if args.roster_from_lms and args.roster:
        parser.error("--roster-from-lms or --roster, not both")
    if args.lti and not (args.roster or args.roster_from_lms):
        parser.error(
            "--lti needs --roster FILE or --roster-from-lms: a launch logs into its roster row"
        )
    learners = []
    if args.roster_from_lms:  # the same checks as a CSV's, before anything is made
        probe = HubSettings(root=str(Path(args.root).resolve()), ip=args.ip, port=args.port,
                            prefix=args.prefix, repo=str(args.course), lti=lti_config)  # fmt: skip
        try:
            learners = [asdict(one) for one in hub_lti.roster_from_lms(probe)]
        except (roster.RosterError, lti.LtiError) as error:
            parser.exit(2, f"{error}\n")
        print(f"roster: {len(learners)} learners from the LMS")
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
        lti=lti_config,
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
