"""A small LMS on loopback for the LTI tests: a real LTI 1.3 platform built on
lti1p3platform (its registration, OIDC launch, id_token signing, client-credentials
tokens), served by FastAPI and uvicorn in a thread of the test process.

It has its own RSA key pair, one course (`CONTEXT`), its members (Names and Role
Provisioning Services), line items and scores (Assignment and Grade Services), and a
course page (`/course`) with a launch link per member: `/launch?user=...&link=lab`. A
second registration of the same client with another deployment id (`OTHER_DEPLOYMENT`)
lets a test launch "for another deployment". `down` makes the next service requests
answer 503, as an LMS being restarted does; `/gradebook` shows what the tool posted.
"""

from __future__ import annotations

import html
import json
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration

CLIENT_ID = "coursekit-tool"
DEPLOYMENT = "deployment-1"
OTHER_DEPLOYMENT = "deployment-2"
CONTEXT = "course-2026-transformer"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
TA = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/"
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


def new_key() -> tuple[str, str]:
    """An RSA key pair as PEM (private, public)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


class PlatformConf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs):
        return self._registration


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return RedirectResponse(url, status_code=302)


class Launch(LTIAdvantageMessageLaunchAbstract):
    def get_preflight_response(self):
        return self._request

    def render_launch_form(self, launch_data, **kwargs):
        """The auto-submitting form a platform answers the authorization request with."""
        action = html.escape(launch_data["launch_url"], quote=True)
        inputs = "".join(
            f'<input type="hidden" name="{name}" value="{html.escape(value, quote=True)}">'
            for name, value in ((n, launch_data[n]) for n in ("id_token", "state"))
        )
        return HTMLResponse(
            f'<!DOCTYPE html><html><body><form id="launch" method="post" action="{action}">'
            f"{inputs}</form><script>document.getElementById('launch').submit()</script>"
            "</body></html>"
        )


@dataclass
class Member:
    user_id: str
    name: str
    email: str
    roles: list[str]
    sourcedid: str = ""  # the institution's id (the roster's id)

    def nrps(self) -> dict:
        family, given = (
            self.name.split(" ", 1) if " " in self.name else (self.name[:1], self.name[1:])
        )
        out = {"user_id": self.user_id, "name": self.name, "given_name": given,
               "family_name": family, "email": self.email, "roles": self.roles,
               "status": "Active"}  # fmt: skip
        if self.sourcedid:
            out["lis_person_sourcedid"] = self.sourcedid
        return out


@dataclass
class FakeLms:
    port: int
    tool_url: str  # the hub: http://127.0.0.1:PORT
    members: list[Member] = field(default_factory=list)
    down: int = 0  # the next service requests answered 503
    lineitems: dict[str, dict] = field(default_factory=dict)
    scores: dict[str, dict[str, dict]] = field(default_factory=dict)  # lineitem -> user -> score
    score_posts: list[dict] = field(default_factory=list)
    token_scopes: list[list[str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.private_key, self.public_key = new_key()
        self.url = f"http://127.0.0.1:{self.port}"
        self.registrations = {d: self._registration(d) for d in (DEPLOYMENT, OTHER_DEPLOYMENT)}
        self.app = self._app()

    def _registration(self, deployment: str) -> Registration:
        return (
            Registration()
            .set_iss(self.url)
            .set_client_id(CLIENT_ID)
            .set_deployment_id(deployment)
            .set_oidc_login_url(f"{self.tool_url}/hub/lti13/oauth_login")
            .set_launch_url(f"{self.tool_url}/hub/user-redirect/lab")
            .set_tool_key_set_url(f"{self.tool_url}/hub/lti13/jwks")
            .set_platform_public_key(self.public_key)
            .set_platform_private_key(self.private_key)
        )

    def tool_config(self, **extra) -> dict:
        """What an instructor enters for `make hub --lti CONFIG`."""
        return {
            "issuer": self.url,
            "client_id": CLIENT_ID,
            "deployment_id": DEPLOYMENT,
            "auth_login_url": f"{self.url}/authorize",
            "auth_token_url": f"{self.url}/token",
            "key_set_url": f"{self.url}/jwks",
            "context_id": CONTEXT,
            "lineitems_url": f"{self.url}/lineitems",
            "memberships_url": f"{self.url}/memberships",
            **extra,
        }

    def member(self, user_id: str) -> Member:
        return next(m for m in self.members if m.user_id == user_id)

    # -- the app ---------------------------------------------------------------------------

    def _service(self, request: Request, scopes: list[str]) -> Response | None:
        """None when the request may go on; else the error response (down, no token)."""
        if self.down > 0:
            self.down -= 1
            return Response("maintenance", status_code=503)
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        conf = PlatformConf(registration=self.registrations[DEPLOYMENT])
        try:
            conf.get_registration()
            if token and conf.validate_token(token, allowed_scopes=scopes):
                return None
        except Exception as error:  # any bad token is a 401
            self.refused.append(f"{request.url.path}: {error}")
        return Response("unauthorized", status_code=401)

    def _app(self) -> FastAPI:
        app = FastAPI()
        lms = self

        @app.get("/jwks")
        def jwks():
            conf = PlatformConf(registration=lms.registrations[DEPLOYMENT])
            conf.get_registration()
            return conf.get_jwks()

        @app.get("/course", response_class=HTMLResponse)
        def course():
            rows = "".join(
                f"<li>{html.escape(m.name)} "
                f'<a class="launch" data-user="{m.user_id}" '
                f'href="/launch?user={m.user_id}&link=lab">과제 열기</a> '
                f'<a class="launch-fg" data-user="{m.user_id}" '
                f'href="/launch?user={m.user_id}&link=formgrader">채점 (formgrader)</a></li>'
                for m in lms.members
            )
            return (
                '<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8"><title>LMS</title>'
                "</head><body><h1>트랜스포머 강의 (LMS)</h1><ul>" + rows + "</ul></body></html>"
            )

        @app.get("/launch")
        def launch(user: str, link: str = "lab", deployment: str = DEPLOYMENT):
            """Login initiation: the LMS sends the browser to the tool's OIDC login."""
            conf = PlatformConf(registration=lms.registrations[deployment])
            login = Login(None, conf)
            login.set_lti_message_hint(hint=json.dumps([link, deployment]))
            login.set_launch_url(f"{lms.tool_url}/hub/user-redirect/{link}")
            return login.initiate_login(user)

        @app.get("/authorize")
        def authorize(request: Request):
            """The tool's authentication request: the signed id_token, posted back."""
            params = dict(request.query_params)
            link, deployment = json.loads(params.get("lti_message_hint", '["lab", ""]'))
            if params.get("redirect_uri") != f"{lms.tool_url}/hub/lti13/oauth_callback":
                return Response("redirect_uri is not the tool's", status_code=400)
            member = lms.member(params.get("login_hint", ""))
            conf = PlatformConf(registration=lms.registrations[deployment])
            launch = Launch(params, conf)
            launch.set_user_data(member.user_id, member.roles, member.name, member.email)
            launch.set_resource_link_claim(f"link-{link}", title=link)
            launch.set_launch_context_claim(CONTEXT, context_title="트랜스포머", context_label="TF")
            launch.set_launch_url(f"{lms.tool_url}/hub/user-redirect/{link}")
            launch.set_ags(f"{lms.url}/lineitems")
            launch.set_nrps(f"{lms.url}/memberships")
            return launch.lti_launch()

        @app.post("/token")
        async def token(request: Request):
            if lms.down > 0:
                lms.down -= 1
                return Response("maintenance", status_code=503)
            form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
            conf = PlatformConf(registration=lms.registrations[DEPLOYMENT])
            conf.get_registration()
            try:
                answer = conf.get_access_token(form)
            except Exception as error:  # a forged assertion is a 400
                lms.refused.append(f"token: {type(error).__name__}: {error}")
                return JSONResponse({"error": "invalid_client"}, status_code=400)
            lms.token_scopes.append(sorted(form.get("scope", "").split()))
            return answer

        @app.get("/memberships")
        def memberships(request: Request):
            refused = lms._service(request, [NRPS_SCOPE])
            if refused:
                return refused
            return JSONResponse(
                {
                    "id": f"{lms.url}/memberships",
                    "context": {"id": CONTEXT},
                    "members": [m.nrps() for m in lms.members],
                },
                media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
            )

        @app.get("/lineitems")
        def lineitems(request: Request):
            refused = lms._service(request, [SCOPE + "lineitem", SCOPE + "lineitem.readonly"])
            return refused or JSONResponse(list(lms.lineitems.values()))

        @app.post("/lineitems")
        async def new_lineitem(request: Request):
            refused = lms._service(request, [SCOPE + "lineitem"])
            if refused:
                return refused
            item = json.loads(await request.body())
            item["id"] = f"{lms.url}/lineitems/{len(lms.lineitems) + 1}"
            lms.lineitems[item["id"]] = item
            return JSONResponse(item, status_code=201)

        @app.post("/lineitems/{number}/scores")
        async def score(number: int, request: Request):
            refused = lms._service(request, [SCOPE + "score"])
            if refused:
                return refused
            item = f"{lms.url}/lineitems/{number}"
            if item not in lms.lineitems:
                return Response("no such line item", status_code=404)
            posted = json.loads(await request.body())
            lms.score_posts.append({"lineitem": item, **posted})
            lms.scores.setdefault(item, {})[posted["userId"]] = posted
            return Response(status_code=204)

        @app.get("/gradebook", response_class=HTMLResponse)
        def gradebook():
            rows = []
            for item_id, item in lms.lineitems.items():
                for user, posted in lms.scores.get(item_id, {}).items():
                    name = html.escape(lms.member(user).name)
                    rows.append(
                        f'<tr data-user="{user}" data-item="{html.escape(item["label"])}">'
                        f"<td>{name}</td><td>{html.escape(item['label'])}</td>"
                        f'<td class="score">{posted.get("scoreGiven", "")}</td>'
                        f"<td>{posted.get('scoreMaximum', '')}</td>"
                        f"<td>{posted['activityProgress']} / {posted['gradingProgress']}</td></tr>"
                    )
            return (
                '<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8"><title>성적부</title>'
                "<style>td,th{border:1px solid #999;padding:4px 8px}</style></head><body>"
                "<h1>성적부 (LMS)</h1><table><tr><th>이름</th><th>과제</th><th>점수</th>"
                "<th>만점</th><th>진행</th></tr>" + "".join(rows) + "</table></body></html>"
            )

        return app

    # -- running -------------------------------------------------------------------------

    def __enter__(self) -> FakeLms:
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the fake LMS did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
