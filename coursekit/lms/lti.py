"""The course as an LTI 1.3 tool (LTI Advantage), on the tool's side of the services.

    {"issuer": "https://lms.example.ac.kr", "client_id": "...", "deployment_id": "...",
     "auth_login_url": ".../authorize", "auth_token_url": ".../token",
     "key_set_url": ".../jwks", "context_id": "...",
     "lineitems_url": ".../lineitems", "memberships_url": ".../memberships",
     "staff": {"<LMS id or email>": "<account>"}}

`LtiConfig` is that file (`make hub --lti CONFIG`): the platform's issuer, the client and
deployment ids it gave the tool, its OIDC authorization, token and key set URLs, the
course (`context_id`: launches from another course are refused) and the URLs of its
Assignment and Grade Services (`lineitems_url`) and Names and Role Provisioning Services
(`memberships_url`). The hub copies it into its `lti/` folder beside the tool's own key
pair (`ensure_tool_key`: made once, the private key mode 600, readable by the hub's
account only), whose public half `tool_jwks` is what the platform verifies the tool with.

The protocol is pylti1p3next's: the client-credentials JWT and the access token
(`ServiceConnector`), line items and scores (`AssignmentsGradesService`), members
(`NamesRolesProvisioningService`). Each token asks only for the scopes its call uses.

- `roster_from_members`: the LMS's learners through the roster's own checks
  (coursekit.lms.roster), every bad member named, nothing made.
- `post_grades`: one line item per assignment (found by its tag, made once), each
  learner's score with activityProgress/gradingProgress as the gradebook says; what was
  posted is kept in `posted.json` beside the config, so a second run posts nothing new;
  an LMS that is down is retried with backoff, and what could not be posted is returned.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path

import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.registration import Registration
from pylti1p3.roles import StudentRole, TeacherRole, TeachingAssistantRole
from pylti1p3.service_connector import ServiceConnector

from coursekit.lms import roster

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_MEMBERSHIP = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
# What the tool asks the LMS for, and nothing more: line items (find and make), scores
# (post), members (read). Registering the tool names these scopes (docs/staff.md).
SCOPES = (SCOPE_LINEITEM, SCOPE_SCORE, SCOPE_MEMBERSHIP)
ROLE_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"

KEY_FILE = "tool-key.pem"
CONFIG_FILE = "config.json"
POSTED_FILE = "posted.json"


class LtiError(RuntimeError):
    """A configuration or an LMS the tool cannot work with (the message says what)."""


@dataclass(frozen=True)
class LtiConfig:
    issuer: str
    client_id: str
    deployment_id: str
    auth_login_url: str  # the platform's OIDC authorization endpoint
    auth_token_url: str  # its OAuth2 token endpoint (client credentials)
    key_set_url: str  # its JWKS: the id_token's signature is checked against it
    context_id: str = ""  # the LMS course; empty: any course of the deployment
    lineitems_url: str = ""  # AGS: the course's line items
    memberships_url: str = ""  # NRPS: the course's members
    auth_audience: str = ""  # the token endpoint's audience when not its URL
    # LMS id or email -> staff account (a TA's; an instructor without an entry is the
    # hub's instructor account).
    staff: dict[str, str] = field(default_factory=dict)

    REQUIRED = ("issuer", "client_id", "deployment_id", "auth_login_url", "auth_token_url",
                "key_set_url")  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> LtiConfig:
        known = {f.name for f in fields(cls)}
        problems = [f"unknown key {key!r}" for key in sorted(set(data) - known)]
        problems += [f"{key} is missing or empty" for key in cls.REQUIRED if not data.get(key)]
        for key, value in data.items():
            if key in known and key != "staff" and not isinstance(value, str):
                problems.append(f"{key} is not a string")
            if (
                key.endswith("_url")
                and value
                and not str(value).startswith(("https://", "http://"))
            ):
                problems.append(f"{key} {value!r} is not an http(s) URL")
        if not isinstance(data.get("staff", {}), dict):
            problems.append("staff is not an object of LMS id or email -> account")
        if problems:
            raise LtiError("LTI config: " + "; ".join(problems))
        return cls(**data)

    @classmethod
    def read(cls, path: Path) -> LtiConfig:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise LtiError(f"LTI config {path}: {error}") from error
        if not isinstance(data, dict):
            raise LtiError(f"LTI config {path}: not a JSON object")
        return cls.from_dict(data)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def ensure_tool_key(folder: Path) -> Path:
    """The tool's RSA private key in `folder`, made on the first call only; mode 600, so
    only the account that runs the hub reads it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    path = folder / KEY_FILE
    if not path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
    path.chmod(0o600)
    return path


def public_pem(private_pem: str) -> str:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def tool_jwks(private_pem: str) -> dict:
    """The tool's public key set (what the platform verifies the tool's JWTs with)."""
    return {"keys": [dict(Registration.get_jwk(public_pem(private_pem)))]}


# -- who a launch is ----------------------------------------------------------------------


def role_of(id_token: dict) -> str:
    """ "instructor", "ta", "learner" or "" by the launch's LTI roles (pylti1p3's reading:
    context roles first, as Canvas sends institution roles too)."""
    if TeachingAssistantRole(id_token).check():
        return "ta"
    if TeacherRole(id_token).check():
        return "instructor"
    if StudentRole(id_token).check():
        return "learner"
    return ""


def launch_ids(id_token: dict) -> tuple[list[str], str]:
    """The LMS ids a launch names (its `sub`, and a custom `lms_user_id` when the tool's
    registration asks for one) and its email."""
    custom = id_token.get(CUSTOM_CLAIM) or {}
    ids = [str(v) for v in (id_token.get("sub"), custom.get("lms_user_id")) if v]
    email = str(id_token.get("email") or custom.get("email") or "").strip().lower()
    return ids, email


def account_for(
    id_token: dict, config: LtiConfig, learners: Iterable[roster.Learner], prefix: str,
    instructor: str, tas: Iterable[str],
) -> str | None:  # fmt: skip
    """The hub account a checked launch logs into, or None (refused): a learner by the
    roster row whose lms_id (else email) it names, staff by their role."""
    ids, email = launch_ids(id_token)
    role = role_of(id_token)
    if role in ("instructor", "ta"):
        staff = {(k.lower() if "@" in k else k): v for k, v in config.staff.items()}
        mapped = next((staff[k] for k in [*ids, email] if k and k in staff), None)
        if mapped in {instructor, *tas}:
            return mapped
        return instructor if role == "instructor" and not config.staff else None
    if role != "learner":
        return None
    learners = list(learners)
    for learner in learners:
        if learner.lms_user_id and learner.lms_user_id in ids:
            return learner.account(prefix)
    for learner in learners:
        if email and learner.email and learner.email.lower() == email:
            return learner.account(prefix)
    return None


# -- the services ---------------------------------------------------------------------------


class Connector(ServiceConnector):
    """pylti1p3's connector with its access tokens kept for their lifetime in memory."""

    def __init__(self, registration: Registration, session: requests.Session | None = None):
        super().__init__(registration, session)
        self._tokens: dict[str, tuple[str, float]] = {}
        self.requested_scopes: list[tuple[str, ...]] = []

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        token, until = self._tokens.get(scope_key, ("", 0.0))
        return token if token and time.monotonic() < until else None

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float):
        self._tokens[scope_key] = (access_token, time.monotonic() + max(0.0, expires_in - 30))

    def get_access_token(self, scopes):
        token = super().get_access_token(scopes)
        self.requested_scopes.append(tuple(sorted(scopes)))
        return token


def connector(config: LtiConfig, private_key: str, timeout: float = 10.0) -> Connector:
    registration = (
        Registration()
        .set_issuer(config.issuer)
        .set_client_id(config.client_id)
        .set_auth_token_url(config.auth_token_url)
        .set_auth_login_url(config.auth_login_url)
        .set_key_set_url(config.key_set_url)
        .set_tool_private_key(private_key)
        .set_tool_public_key(public_pem(private_key))
    )
    if config.auth_audience:
        registration.set_auth_audience(config.auth_audience)
    session = requests.Session()
    session.request = _with_timeout(session.request, timeout)  # type: ignore[method-assign]
    return Connector(registration, session)


def _with_timeout(request, timeout: float):
    def call(method, url, **kwargs):
        kwargs.setdefault("timeout", timeout)
        return request(method, url, **kwargs)

    return call


def _transient(error: Exception) -> bool:
    """An LMS that is down or overloaded (worth another try), not one that said no."""
    if isinstance(error, requests.RequestException):
        return True
    if isinstance(error, LtiServiceException):
        status = getattr(getattr(error, "response", None), "status_code", None)
        return status is None or status >= 500 or status == 429
    return False


def with_retries(call: Callable, delays: Iterable[float], log=print):
    """`call()`, tried again after each of `delays` seconds while the LMS is down."""
    delays = list(delays)
    for attempt in range(len(delays) + 1):
        try:
            return call()
        except (LtiServiceException, requests.RequestException) as error:
            if not _transient(error) or attempt == len(delays):
                raise
            log(f"LTI: the LMS did not answer ({_describe(error)}); again in {delays[attempt]:g} s")
            time.sleep(delays[attempt])
    raise AssertionError("unreachable")


def _describe(error: Exception) -> str:
    response = getattr(error, "response", None)
    if response is not None and getattr(response, "status_code", None):
        return f"HTTP {response.status_code}"
    return type(error).__name__


RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0)


def retry_delays(text: str) -> tuple[float, ...]:
    """A `--retry-delays` value ("1,2,4,8"): the seconds between tries."""
    return tuple(float(d) for d in text.split(",") if d.strip())


def members(conn: ServiceConnector, config: LtiConfig, delays=RETRY_DELAYS) -> list[dict]:
    if not config.memberships_url:
        raise LtiError("LTI config: no memberships_url (the LMS's Names and Role service)")
    nrps = NamesRolesProvisioningService(conn, {"context_memberships_url": config.memberships_url})
    try:
        return with_retries(nrps.get_members, delays)
    except (LtiException, requests.RequestException) as error:
        raise LtiError(f"LTI: the LMS's members could not be read ({_describe(error)})") from error


def roster_from_members(found: list[dict], prefix: str = "") -> list[roster.Learner]:
    """The active learners among the LMS's members, through the roster CSV's checks: their
    id is the institution's (lis_person_sourcedid), else the LMS's user id; RosterError
    naming every bad member, as the CSV's names every bad row."""

    def is_learner(member: dict) -> bool:
        roles = {ROLE_CLAIM: member.get("roles", [])}
        return member.get("status", "Active") == "Active" and role_of(roles) == "learner"

    learners = [m for m in found if is_learner(m)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "first_name", "last_name", "email", "lms_id"])
    who = {}
    for row, member in enumerate(learners, start=2):
        given, family = member.get("given_name", ""), member.get("family_name", "")
        if not (given and family) and member.get("name"):
            family, given = roster.split_full_name(" ".join(member["name"].split()))
        learner_id = member.get("lis_person_sourcedid") or member.get("user_id", "")
        writer.writerow(
            [learner_id, given, family, member.get("email", ""), member.get("user_id", "")]
        )
        who[row] = (
            f"{member.get('user_id', '?')} ({member.get('name') or member.get('email') or '?'})"
        )
    try:
        return roster.parse(out.getvalue(), prefix)
    except roster.RosterError as error:
        legend = "\n  ".join(f"row {row} = LMS member {name}" for row, name in who.items())
        raise roster.RosterError(f"{error}\n  (the LMS's members:\n  {legend})") from None


# -- grades back ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One learner's score on one assignment, as the gradebook says."""

    assignment: str
    student: str
    user_id: str  # the LMS's id of the learner (the roster's lms_id)
    score: float | None  # None: no submission, nothing to give yet
    maximum: float
    activity: str  # AGS activityProgress
    grading: str  # AGS gradingProgress

    def key(self) -> list:
        return [self.score, self.maximum, self.activity, self.grading]


def progress(submitted: bool, needs_manual: bool) -> tuple[str, str]:
    """activityProgress, gradingProgress: not submitted, waiting for a TA, graded."""
    if not submitted:
        return "Initialized", "NotReady"
    if needs_manual:
        return "Submitted", "PendingManual"
    return "Completed", "FullyGraded"


@dataclass
class Posting:
    posted: list[Score] = field(default_factory=list)
    unchanged: list[Score] = field(default_factory=list)
    failed: list[tuple[Score | str, str]] = field(default_factory=list)  # what, why
    lineitems_made: list[str] = field(default_factory=list)


def post_grades(
    conn: ServiceConnector, config: LtiConfig, scores: list[Score], ledger: Path,
    delays=RETRY_DELAYS, log=print,
) -> Posting:  # fmt: skip
    """Post every score not yet posted as it is (the ledger); see the module's text."""
    if not config.lineitems_url:
        raise LtiError("LTI config: no lineitems_url (the LMS's Assignment and Grade Service)")
    scopes = [SCOPE_LINEITEM, SCOPE_SCORE]
    ags = AssignmentsGradesService(
        conn,
        {"scope": scopes, "lineitems": config.lineitems_url},  # type: ignore[typeddict-item]
    )
    done = json.loads(ledger.read_text()) if ledger.exists() else {}
    result = Posting()
    by_assignment: dict[str, list[Score]] = {}
    for score in scores:
        by_assignment.setdefault(score.assignment, []).append(score)
    for assignment, group in sorted(by_assignment.items()):
        wanted = LineItem().set_tag(assignment).set_resource_id(assignment)
        wanted.set_label(assignment).set_score_maximum(group[0].maximum)
        try:
            found = with_retries(lambda a=assignment: ags.find_lineitem_by_tag(a), delays, log)
            if found is None:
                found = with_retries(lambda w=wanted: ags.create_lineitem(w), delays, log)
                result.lineitems_made.append(assignment)
        except (LtiException, requests.RequestException) as error:
            result.failed.append((assignment, f"line item: {_describe(error)}"))
            result.failed += [(s, "no line item") for s in group]
            continue
        item = done.setdefault(found.get_id(), {})
        for score in group:
            if not score.user_id:
                result.failed.append((score, "no LMS id in the gradebook"))
                continue
            if item.get(score.user_id) == score.key():
                result.unchanged.append(score)
                continue
            grade = (
                Grade()
                .set_user_id(score.user_id)
                .set_score_maximum(score.maximum)
                .set_activity_progress(score.activity)
                .set_grading_progress(score.grading)
                .set_timestamp(time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()))
            )
            if score.score is not None:
                grade.set_score_given(round(score.score, 2))
            try:
                with_retries(lambda g=grade, f=found: ags.put_grade(g, f), delays, log)
            except (LtiException, requests.RequestException) as error:
                result.failed.append((score, _describe(error)))
                continue
            item[score.user_id] = score.key()
            result.posted.append(score)
            _save(ledger, done)
    _save(ledger, done)
    return result


def _save(ledger: Path, done: dict) -> None:
    tmp = ledger.with_suffix(".tmp")
    tmp.write_text(json.dumps(done, indent=1, sort_keys=True))
    tmp.chmod(0o600)
    tmp.replace(ledger)
