"""The TA live board on the hub: `make live` as a hub-managed service (`make hub`'s default).

JupyterHub starts `coursekit live` (coursekit/live/) as the instructor's account in
the instructor's copy of the course (`"user"`, `"cwd"`), so it grades with the
instructor's gradebook and writes the records the board reads; its board
listens on the service's loopback URL, behind the hub's OAuth
(coursekit/live/board_server.py). Who may open it is one scope,
`access:services!service=<name>`, given to the instructor and the `tas` group
only: a learner's login gets 403. The service itself is given no role, so no
scope: HubOAuth asks the hub who a visitor is with the visitor's own token,
which needs nothing of the service's (docs/security.md).
"""

from __future__ import annotations

from pathlib import Path

from coursekit.hub.settings import HubSettings

SERVICE = "live-board"
TAS = "tas"  # the TAs' group on the hub
VIEWER_ROLE = "live-board-viewer"


def service(hub: HubSettings) -> dict:
    """c.JupyterHub.services's entry: a managed service run as the instructor."""
    home = hub.home(hub.instructor)
    return {
        "name": SERVICE,
        "display": True,  # on the hub's Services menu, for those who may open it
        "oauth_no_confirm": True,
        "url": f"http://127.0.0.1:{hub.port + 3}",
        "user": hub.instructor,
        "cwd": str(hub.course_root),
        "command": [str(Path(hub.venv) / "bin" / "coursekit"), "live"],
        "environment": {
            "HOME": str(home),
            "TZ": hub.timezone,
            "PATH": f"{Path(hub.venv) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "COURSE_EXCHANGE_ROOT": str(hub.exchange),
        },
    }


def groups(hub: HubSettings) -> dict:
    """c.JupyterHub.load_groups: the TAs' group (the accounts of `make hub --tas N`)."""
    return {TAS: {"users": list(hub.ta_names)}}


def roles(hub: HubSettings) -> list[dict]:
    """c.JupyterHub.load_roles: opening the board, for the instructor and the TAs only."""
    return [
        {
            "name": VIEWER_ROLE,
            "description": "Open the TA live board",
            "scopes": [f"access:services!service={SERVICE}"],
            "users": [hub.instructor],
            "groups": [TAS],
        }
    ]
