"""The TA live board as a small Tornado app: one page, its script and style, one JSON endpoint.

On `make live` it listens on 127.0.0.1 only and lets in whoever shows the
token printed once at start (`/?token=…`): the token is exchanged for an
HttpOnly, SameSite=Strict cookie and every other request without that cookie
is 403. On `make hub` (started with the hub's JUPYTERHUB_* environment) the
same handlers sit behind JupyterHub's OAuth (`HubOAuthenticated`): the hub lets
in who holds `access:services!service=<name>` (the instructor and the `tas`
group, coursekit.hub.settings) and refuses the rest with 403.

The page runs its own script only (`CSP`, on every response, errors too); the
script polls `board.json` (ETag, 304 when nothing changed) and writes every
name and message with textContent, so a learner's name is data, never markup.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import secrets
import threading
from pathlib import Path
from urllib.parse import urlsplit

import tornado.web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from coursekit.core import templating
from coursekit.core.course import Course
from coursekit.live import attempts, board
from coursekit.staff.report import overview

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "coursekit-board"
POLL_MILLISECONDS = 2000
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class BoardData:
    """The board of the course's records, made again only when a record changed."""

    def __init__(self, root: Path, stuck_after: int | None = None):
        self.root = Path(root)
        course = Course(self.root)
        self.stuck_after = stuck_after or board.LiveBoard(config=course.config).stuck_after
        self.zone = course.kit.timezone  # the page shows times in the course's zone
        self._functions: dict[str, dict[str, str]] = {}
        self._signature, self._body = None, b""
        self._lock = threading.Lock()

    def cell_functions(self, assignment: str) -> dict[str, str]:
        """grade id -> function, from the instructor's source notebook, read once."""
        if assignment not in self._functions:
            try:
                self._functions[assignment] = overview.cell_functions(self.root, assignment)
            except Exception:  # no source notebook: the records' own names serve
                self._functions[assignment] = {}
        return self._functions[assignment]

    def signature(self) -> tuple:
        folder = self.root / attempts.FOLDER
        found = []
        for path in folder.glob("*/*/*.json"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            found.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(sorted(found))

    def body(self) -> bytes:
        with self._lock:
            signature = self.signature()
            if signature != self._signature:
                records = []
                for path, _mtime, _size in signature:
                    try:
                        records.append(attempts.read(Path(path)))
                    except (OSError, ValueError, TypeError):  # gone, or not a record
                        continue
                functions = {a: self.cell_functions(a) for a in {r.assignment for r in records}}
                boards = board.board(records, functions, self.stuck_after)
                self._body = json.dumps(
                    {"assignments": board.as_json(boards), "stuck_after": self.stuck_after},
                    ensure_ascii=False,
                ).encode("utf-8")
                self._signature = signature
            return self._body


class Guarded:
    """Every response: the board's CSP and no caching, sniffing or referrer."""

    def set_default_headers(self):
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("Cache-Control", "no-cache, private")

    def allowed(self) -> bool:
        """The loopback mode's rule: the cookie holds the token."""
        token = self.settings["board_token"]
        cookie = self.get_cookie(COOKIE) or ""
        return bool(token) and hmac.compare_digest(cookie.encode(), token.encode())

    def prepare(self):
        if not self.allowed():
            raise tornado.web.HTTPError(403)

    def write_error(self, status_code, **kwargs):
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{status_code}\n")


class PageHandler(Guarded, tornado.web.RequestHandler):
    def prepare(self):
        token = self.get_query_argument("token", "")
        expected = self.settings["board_token"]
        if token and expected and hmac.compare_digest(token.encode(), expected.encode()):
            self.set_cookie(
                COOKIE,
                expected,
                path=self.settings["board_prefix"],
                httponly=True,
                samesite="Strict",
            )
            # The token leaves the address bar by the page's own navigation, not a redirect:
            # a link opened from another site (a chat) would not send a Strict cookie on
            # a redirect it started.
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.finish(
                templating.render("live_board_enter.html.j2", prefix=self.settings["board_prefix"])
            )
            return
        super().prepare()

    def poll_token(self) -> str:
        """What the script's polls send as X-XSRFToken: nothing on loopback (its cookie is
        SameSite=Strict, GET only); the hub's guard gives the hub's own token."""
        return ""

    def get(self):
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(
            templating.render(
                "live_board.html.j2",
                prefix=self.settings["board_prefix"],
                poll=POLL_MILLISECONDS,
                xsrf=self.poll_token(),
                zone=self.settings["board_data"].zone,
            )
        )


class DataHandler(Guarded, tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.write(self.settings["board_data"].body())  # tornado answers 304 on its ETag


class StaticHandler(Guarded, tornado.web.StaticFileHandler):
    @classmethod
    def get_cache_time(cls, path, modified, mime_type):
        return 0


class NoIcon(Guarded, tornado.web.RequestHandler):
    """The browser's favicon request: nothing, and no 404 in the TA's console."""

    def get(self):
        self.set_status(204)


class NotFound(Guarded, tornado.web.RequestHandler):
    """Any other address: 404, with the policy too."""

    def prepare(self):
        raise tornado.web.HTTPError(404)


def handlers(guard=None) -> list:
    """The routes, each handler with `guard` first among its bases (the hub's OAuth)."""

    def wrapped(handler):
        return type(handler.__name__, (guard, handler), {}) if guard else handler

    return [
        (r"", wrapped(PageHandler)),
        (r"board\.json", wrapped(DataHandler)),
        (r"favicon\.ico", wrapped(NoIcon)),
        (r"static/(board\.js|board\.css)", wrapped(StaticHandler), {"path": str(STATIC)}),
    ]


def application(data: BoardData, token: str, prefix: str = "/", guard=None, **settings):
    routes = [(prefix + pattern, *rest) for pattern, *rest in handlers(guard)]
    return tornado.web.Application(
        routes,
        board_data=data,
        board_token=token,
        board_prefix=prefix,
        xsrf_cookies=False,  # nothing here changes state: GET only
        default_handler_class=NotFound,
        **settings,
    )


class HubGuard:
    """On the hub: JupyterHub's OAuth decides (the hub's access scope for this service);
    the page sends a stranger to the hub's login, a signed-in learner gets 403.

    The hub takes its login cookie on a script's fetch only with its XSRF token
    (jupyterhub._xsrf_utils: any request not a navigation), so the page hands the
    script the token HubOAuth made for this visitor."""

    def poll_token(self) -> str:
        token = self.xsrf_token  # HubOAuth's, bound to the visitor's hub session
        return token.decode() if isinstance(token, bytes) else token

    def prepare(self):
        if self.current_user is None:
            if isinstance(self, PageHandler):
                self.redirect(self.get_login_url())  # raises 403 for a user not allowed
                return
            raise tornado.web.HTTPError(403)


def hub_application(data: BoardData):
    """The board as the JupyterHub service this process was started as (its environment)."""
    from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated

    guard = type("HubBoardGuard", (HubGuard, HubOAuthenticated), {})

    class BoardOAuthCallback(HubOAuthCallbackHandler):  # the hub's own, with the board's CSP
        set_default_headers = Guarded.set_default_headers

    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    app = application(
        data,
        "",
        prefix,
        guard,
        cookie_secret=secrets.token_bytes(32),
        hub_auth=HubOAuth(cache_max_age=60),
    )
    app.add_handlers(".*", [(prefix + "oauth_callback", BoardOAuthCallback)])
    return app


class BoardThread(threading.Thread):
    """The board in a thread of its own beside the grading service: on loopback with a
    token, or as the hub's service when started by JupyterHub."""

    def __init__(self, root: Path, port: int = 0):
        super().__init__(name="coursekit-live-board", daemon=True)
        self.data = BoardData(root)
        self.service_name = os.environ.get("JUPYTERHUB_SERVICE_NAME", "")
        if hub_environment():
            address = urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])
            self.host, port, self.token = address.hostname or "127.0.0.1", address.port, ""
        else:
            self.host, self.token = "127.0.0.1", secrets.token_urlsafe(32)
        self.sockets = bind_sockets(port, self.host)  # bound now: the port is known at once
        self.port = self.sockets[0].getsockname()[1]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()

    @property
    def url(self) -> str:
        """The address with its token ("" on the hub: the hub's own address serves it)."""
        return f"http://{self.host}:{self.port}/?token={self.token}" if self.token else ""

    def app(self):
        return (
            hub_application(self.data) if hub_environment() else application(self.data, self.token)
        )

    def run(self):
        asyncio.run(self._serve())

    async def _serve(self):
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = HTTPServer(self.app())
        server.add_sockets(self.sockets)
        self._started.set()
        await self._stopping.wait()
        server.stop()

    def stop(self):
        self._started.wait(5)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)


def hub_environment() -> bool:
    return bool(os.environ.get("JUPYTERHUB_SERVICE_PREFIX"))


def start(root: Path, port: int = 0) -> BoardThread:
    thread = BoardThread(root, port)
    thread.start()
    return thread
