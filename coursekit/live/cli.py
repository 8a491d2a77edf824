"""`make live` (`coursekit live`): grade each submission as it arrives, in the foreground.

    coursekit live                       # a LocalCluster of -j workers on this machine
    coursekit live --scheduler tls://HOST:8786
    coursekit live --board-port 8790     # the TA board's port (a free one by default)
    coursekit live --no-board            # no TA board

The TA live board (coursekit/live/board_server.py) listens on 127.0.0.1 and its
address, with a token, is printed once at start; started by JupyterHub (its
JUPYTERHUB_SERVICE_* environment) it is the hub's service instead, behind the
hub's login, on the address the hub gave it.

SIGINT (Ctrl-C) or SIGTERM: the attempt being finished is finished, the others
are left for the next start, the cluster is closed, and the exit status is 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from traitlets import TraitError

from coursekit.cluster import dask_cluster
from coursekit.cluster.session import GradingSession
from coursekit.core.course import Course, add_root_argument
from coursekit.core.messages import _
from coursekit.live import policy as live_policy
from coursekit.live.service import RESCAN_SECONDS, LiveService
from coursekit.nbgrader_internals import quiet
from coursekit.sandbox import policy


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="make live", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-j", "--jobs", type=int, default=dask_cluster.default_jobs(), help="workers"
    )
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler")
    parser.add_argument(
        "--rescan",
        type=float,
        default=RESCAN_SECONDS,
        metavar="SECONDS",
        help="seconds between two full scans of the inbound folder",
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run learner code WITHOUT the bubblewrap sandbox (only for code you trust)",
    )
    parser.add_argument(
        "--board-port", type=int, default=0, metavar="PORT", help="the TA board's port"
    )
    parser.add_argument("--no-board", action="store_true", help="do not start the TA board")
    add_root_argument(parser)
    return parser.parse_args(argv)


def start_board(args):
    """The TA board beside the service, or None; its address said once."""
    if args.no_board:
        return None
    from coursekit.live import board_server

    thread = board_server.start(args.root, args.board_port)
    if thread.url:
        print(_("TA live board (open it in the TAs' browser): {url}").format(url=thread.url))
    else:
        print(_("TA live board: the hub's service {name}").format(name=thread.service_name))
    return thread


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.unsafe_no_sandbox:
        try:
            policy.check_available()
        except policy.SandboxUnavailableError as error:
            print(_("Live grading not started: {error}").format(error=error), file=sys.stderr)
            return 2
    try:
        live_policy.check_settings(Course(args.root).config)
    except TraitError as error:
        print(_("Live grading not started: {error}").format(error=error), file=sys.stderr)
        return 2
    quiet.ignore_add_submission_warning()
    extra = ["--SandboxedExecute.unsafe_no_sandbox=True"] if args.unsafe_no_sandbox else []
    board = start_board(args)
    try:
        with GradingSession(
            args.root, nbgrader_args=extra, unsafe_no_sandbox=args.unsafe_no_sandbox
        ) as session:
            session.connect(dask_cluster.client_for(args.root, args.scheduler, args.jobs, False))
            service = LiveService(
                session,
                rescan=args.rescan,
                local_cluster=not (args.scheduler or os.environ.get("COURSE_DASK_SCHEDULER")),
                echo=lambda line: print(line, flush=True),
            )
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_signal: service.stop())
            service.run()
    except dask_cluster.ClusterError as error:
        print(_("Live grading stopped: {error}").format(error=error), file=sys.stderr)
        return 3
    finally:
        if board is not None:
            board.stop()
    print(_("Live grading stopped."), flush=True)
    return 0
