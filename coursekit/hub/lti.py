"""`make hub --lti CONFIG`: the hub as an LTI 1.3 tool, learners arriving from the LMS.

jupyterhub-ltiauthenticator's LTI 1.3 authenticator does the launch: the OIDC login
initiation, the redirect to the platform's authorization endpoint with a state and a
nonce kept in the hub's encrypted cookies, and the id_token's checks (signature against
the platform's JWKS, issuer, audience, expiry, age, state, nonce, the LTI claims). Around
it, what the library leaves to the tool:

- the deployment: a launch for another deployment id (or, with `context_id`, from
  another course) is refused;
- the nonce is single-use on the hub too: an id_token already used is refused even with
  the cookies of its launch (the library's check compares the nonce with a cookie only);
- who the launch is: the roster row whose lms_id (else email) the launch names, the
  staff account by the LTI role (coursekit.lms.lti.account_for); anyone else is refused
  with a plain page in the course's language and nothing is created (JupyterHub adds a
  user only when the authenticator returns one);
- the tool's public key set at /hub/lti13/jwks, for the platform to check the tool's
  client-credentials JWTs (the private key stays in the hub's `lti/` folder, mode 600).
"""

from __future__ import annotations

import contextlib
import html
import http.server
import json
import threading
import time
from pathlib import Path

from jupyterhub.handlers import BaseHandler
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler, LTI13LoginInitHandler
from tornado.web import HTTPError, RequestHandler
from traitlets import Unicode

from coursekit.core import messages
from coursekit.core.messages import N_, _, language
from coursekit.hub.settings import HubSettings
from coursekit.lms import lti, roster

NOT_ON_ROSTER = N_("You are not on this course's roster, so the course cannot open for you.")
NOT_ON_ROSTER_HINT = N_(
    "Ask the course's instructor to add you to the course in the LMS, then open it again."
)
BAD_LAUNCH = N_("This request did not come from the course's LMS as it should.")
BAD_LAUNCH_HINT = N_("Open the course again from its page in the LMS.")
PAGE_TITLE = N_("The course cannot open")


def refusal_page(unknown: bool) -> str:
    """A plain page: what happened and what to do, in the course's language."""
    message, hint = (
        (NOT_ON_ROSTER, NOT_ON_ROSTER_HINT) if unknown else (BAD_LAUNCH, BAD_LAUNCH_HINT)
    )
    title = html.escape(_(PAGE_TITLE))
    return (
        f'<!DOCTYPE html>\n<html lang="{language()}"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>body{{font-family:sans-serif;max-width:36em;"
        "margin:4em auto;padding:0 1em;line-height:1.6;color:#222}</style></head>"
        f'<body><h1>{title}</h1><p id="refusal">{html.escape(_(message))}</p>'
        f"<p>{html.escape(_(hint))}</p></body></html>\n"
    )


def refuse(handler: RequestHandler, error: HTTPError, unknown: bool = False) -> None:
    """The library's refusal as the plain page, its status kept."""
    handler.log.warning("LTI launch refused (%s): %s", error.status_code, error.log_message)
    handler.clear()
    handler.set_status(error.status_code)
    handler.set_header("Content-Type", "text/html; charset=utf-8")
    handler.finish(refusal_page(unknown))


class LoginInitHandler(LTI13LoginInitHandler):
    """The OIDC login initiation; opened without the LMS (the login page's button, a
    bookmark), the page says to open the course from the LMS."""

    def post(self):
        try:
            super().post()
        except HTTPError as error:
            refuse(self, error)

    get = post


class CallbackHandler(LTI13CallbackHandler):
    """The library's launch, its refusals as a plain page (the status kept)."""

    async def post(self):
        self.refused_unknown = False
        try:
            await super().post()
        except HTTPError as error:
            refuse(self, error, self.refused_unknown)


class JwksHandler(RequestHandler):
    """The tool's public key set (no private part), for the platform."""

    def initialize(self, jwks: dict):
        self.jwks = jwks

    def get(self):
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(self.jwks))


class ConfigHandler(BaseHandler):
    """The tool's registration as Canvas reads it (*Developer Keys → Enter URL*), asking
    for the scopes the tool uses and no other (the library's own lists Canvas's data
    services too)."""

    def get(self):
        hub = self.authenticator.hub
        found = urls(hub)
        target = found["target link URI (learners: JupyterLab)"]
        config = {
            "title": self.authenticator.tool_name,
            "description": self.authenticator.tool_description,
            "oidc_initiation_url": found["OIDC login initiation URL"],
            "target_link_uri": target,
            "public_jwk_url": found["public JWK set URL"],
            "scopes": list(lti.SCOPES),
            "custom_fields": {"email": "$Person.email.primary"},
            "extensions": [
                {
                    "platform": "canvas.instructure.com",
                    "privacy_level": "public",
                    "settings": {
                        "placements": [
                            {
                                "placement": "course_navigation",
                                "message_type": "LtiResourceLinkRequest",
                                "target_link_uri": target,
                            }
                        ]
                    },
                }
            ],
        }
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(config))


class CourseLtiAuthenticator(LTI13Authenticator):
    """LTI13Authenticator for a hub class (`hub_root`: its hub.json and lti/ folder)."""

    hub_root = Unicode(config=True, help="the hub's state folder (hub.json, lti/)")
    login_handler = LoginInitHandler
    callback_handler = CallbackHandler
    config_handler = ConfigHandler

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hub = HubSettings.load(self.hub_root)
        messages.use_course(self.hub.repo)  # the refusal page in the course's language
        folder = Path(self.hub_root) / "lti"
        self.lti_config = lti.LtiConfig.read(folder / lti.CONFIG_FILE)
        self.jwks = lti.tool_jwks((folder / lti.KEY_FILE).read_text())
        self.learners = [roster.Learner(**one) for one in self.hub.roster]
        self.used_nonces: dict[str, float] = {}

    def get_handlers(self, app):
        return [*super().get_handlers(app), ("/lti13/jwks", JwksHandler, {"jwks": self.jwks})]

    def _nonce_used(self, id_token: dict) -> bool:
        """Record the id_token's nonce; True when it was used before (kept until expiry)."""
        now = time.time()
        self.used_nonces = {n: t for n, t in self.used_nonces.items() if t > now}
        nonce = str(id_token.get("nonce", ""))
        if not nonce or nonce in self.used_nonces:
            return True
        self.used_nonces[nonce] = float(id_token.get("exp", now + 3600)) + 60
        return False

    async def authenticate(self, handler, data=None):
        id_token = data or {}
        config = self.lti_config
        if id_token.get(lti.DEPLOYMENT_CLAIM) != config.deployment_id:
            self.log.warning("LTI: deployment %r refused", id_token.get(lti.DEPLOYMENT_CLAIM))
            return None
        context = (id_token.get(lti.CONTEXT_CLAIM) or {}).get("id")
        if config.context_id and context != config.context_id:
            self.log.warning("LTI: course %r refused", context)
            return None
        if self._nonce_used(id_token):
            self.log.warning("LTI: nonce used before: launch replayed")
            return None
        account = lti.account_for(
            id_token, config, self.learners, self.hub.prefix, self.hub.instructor,
            self.hub.ta_names,
        )  # fmt: skip
        if account is None:
            self.log.warning(
                "LTI: %s (%s) is on no roster row", id_token.get("sub"), lti.role_of(id_token)
            )
            handler.refused_unknown = True
            return None
        # No id_token in the hub's database: the account is all the hub needs.
        return {"name": account}


# -- make hub --lti: the files, and the roster from the LMS --------------------------------


def urls(settings: HubSettings) -> dict[str, str]:
    """What the LMS's registration of the tool asks for (docs/staff.md)."""
    hub = f"{settings.url}/hub"
    return {
        "OIDC login initiation URL": f"{hub}/lti13/oauth_login",
        "redirect (launch) URL": f"{hub}/lti13/oauth_callback",
        "target link URI (learners: JupyterLab)": f"{hub}/user-redirect/lab",
        "target link URI (instructor: formgrader)": f"{hub}/user-redirect/formgrader",
        "public JWK set URL": f"{hub}/lti13/jwks",
    }


def install(settings: HubSettings) -> Path:
    """The hub's lti/ folder (mode 700): the config, the tool's key (made once, mode 600)
    and its public key set; returns the key's path."""
    folder = settings.lti_dir
    key = lti.ensure_tool_key(folder)
    config = folder / lti.CONFIG_FILE
    config.write_text(json.dumps(settings.lti, indent=2))
    config.chmod(0o600)
    public = folder / "jwks.json"
    public.write_text(json.dumps(lti.tool_jwks(key.read_text()), indent=2))
    public.chmod(0o644)
    return key


@contextlib.contextmanager
def serving_jwks(settings: HubSettings):
    """The tool's key set at the hub's own JWKS URL while the hub is not up yet (the LMS
    checks the tool's token request against it when the roster is read at setup)."""
    body = (settings.lti_dir / "jwks.json").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            found = self.path == "/hub/lti13/jwks"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if found else b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((settings.ip, settings.port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def roster_from_lms(settings: HubSettings) -> list[roster.Learner]:
    """The course's learners read from the LMS (NRPS), checked as a roster CSV is."""
    key = install(settings)
    config = lti.LtiConfig.from_dict(settings.lti)
    with serving_jwks(settings):
        conn = lti.connector(config, key.read_text())
        found = lti.members(conn, config)
    return lti.roster_from_members(found, settings.prefix)
