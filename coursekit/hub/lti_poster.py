"""The hub's LTI poster: root's side of posting counted live attempts to the LMS.

    python -m coursekit.hub.lti_poster --port P --lti-dir /srv/<course>-hub/lti

With `make hub --lti` (and the live service on), JupyterHub runs this as a managed
service with no `user`, so as the hub's own account, root: the one account that reads
the tool's key. The live service (the instructor's account; coursekit/live/passback.py)
cannot read the key; it sends each counted attempt's Score here, and this posts it with
coursekit.lms.passback.post_live (the ledger `make export --to lti` keeps, its retries,
what could not be posted kept waiting and tried again with the next post).

Who may post (docs/security.md, the LTI threat model): only a caller whose JupyterHub
token holds the custom scope `passback.SCOPE`, which `roles` gives to the live-board
service and no one else: not a learner, not a TA, not the admin role (JupyterHub's
admin scopes name no custom scope). The caller's token is checked with the hub
(HubAuth, `Authorization: token ...`); anything else gets 403 and nothing is posted.
The service has no `url`, so no route through the proxy: it listens on loopback only,
where the live service reaches it (`passback.POSTER_ENV` in its environment).
One post at a time (an executor of one thread), beside the LMS's retries' sleeps, so
the hub's other requests never wait on the LMS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jupyterhub.services.auth import HubAuth
from tornado.web import Application, HTTPError, RequestHandler

from coursekit.hub.settings import HubSettings
from coursekit.lms import lti, passback

SERVICE = "lti-poster"
ROLE = "lti-passback"
PORT_OFFSET = 4  # after the hub (+0), its API (+1), the proxy's API (+2), the board (+3)

log = logging.getLogger("coursekit.lti_poster")


def url(hub: HubSettings) -> str:
    return f"http://127.0.0.1:{hub.port + PORT_OFFSET}"


def service(hub: HubSettings) -> dict:
    """c.JupyterHub.services's entry: run as the hub's account (no "user"), no route."""
    python = str(Path(hub.venv) / "bin" / "python")
    port, folder = str(hub.port + PORT_OFFSET), str(hub.lti_dir)
    return {
        "name": SERVICE,
        "command": [python, "-m", "coursekit.hub.lti_poster", "--port", port, "--lti-dir", folder],
        "cwd": str(hub.lti_dir),
        "environment": {"TZ": hub.timezone},
    }


def custom_scopes() -> dict:
    """c.JupyterHub.custom_scopes: the one permission the poster checks."""
    return {passback.SCOPE: {"description": "Post a learner's counted live score to the LMS"}}


def role(caller: str) -> dict:
    """The role that holds the scope: the live service `caller` only."""
    return {
        "name": ROLE,
        "description": "Post counted live scores to the LMS through the LTI poster",
        "scopes": [passback.SCOPE],
        "services": [caller],
    }


class Poster:
    """The LMS connection and the lti folder; `post` runs in the executor's thread."""

    def __init__(self, folder: Path, delays: list[float]):
        self.folder, self.delays = Path(folder), delays
        self.config = lti.LtiConfig.read(self.folder / lti.CONFIG_FILE)
        self.conn = lti.connector(self.config, (self.folder / lti.KEY_FILE).read_text())

    def post(self, scores: list[lti.Score]) -> dict:
        done, still = passback.post_live(
            self.conn, self.config, self.folder, scores, self.delays, log.warning
        )
        for score in done.posted:
            log.info("LTI: posted %s %s: %s", score.assignment, score.student, score.grading)
        for w in still:
            log.warning("LTI: not posted %s %s: %s", w.score.assignment, w.score.student, w.why)
        return {
            "posted": [passback.key(s) for s in done.posted],
            "unchanged": [passback.key(s) for s in done.unchanged],
            "waiting": [[*passback.key(w.score), w.why] for w in still],
        }


class ScoresHandler(RequestHandler):
    """POST /scores: a JSON list of scores (passback.to_wire) from the live service."""

    def initialize(self, poster: Poster, auth: HubAuth, executor: ThreadPoolExecutor):
        self.poster, self.auth, self.executor = poster, auth, executor

    def check_xsrf_cookie(self):
        pass  # a token in a header, never a cookie: nothing a browser sends by itself

    async def post(self):
        token = self.auth.get_token(self, in_cookie=False)
        model = await self.auth.user_for_token(token, sync=False) if token else None
        if not model or not self.auth.check_scopes({passback.SCOPE}, model):
            who = f"{model.get('kind', 'user')} {model.get('name')}" if model else "no token"
            log.warning("LTI poster: refused (%s): it lacks %s", who, passback.SCOPE)
            raise HTTPError(403)
        try:
            scores = [passback.from_wire(one) for one in json.loads(self.request.body)]
        except (ValueError, TypeError) as error:
            raise HTTPError(400, str(error)) from None
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self.executor, self.poster.post, scores)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(result))


def app(poster: Poster) -> Application:
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lti-post")
    handlers = [
        ("/scores", ScoresHandler, {"poster": poster, "auth": HubAuth(), "executor": executor})
    ]
    return Application(handlers)


async def serve(port: int, poster: Poster) -> None:
    app(poster).listen(port, address="127.0.0.1")
    log.info("LTI poster: on 127.0.0.1:%d", port)
    await asyncio.Event().wait()  # until JupyterHub stops it


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lti_poster", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lti-dir", type=Path, required=True)
    parser.add_argument(
        "--retry-delays", type=lti.retry_delays, default=lti.RETRY_DELAYS,
        help="seconds between tries (default 1,2,4,8)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname)1.1s %(asctime)s lti-poster] %(message)s"
    )
    asyncio.run(serve(args.port, Poster(args.lti_dir, list(args.retry_delays))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
