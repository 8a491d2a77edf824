"""coursekit's LTI 1.3 pieces without a hub (tests/test_lti_hub.py plays them against an
LTI 1.3 platform on loopback): the registration's checks, who a launch logs in as, the
roster read from the LMS's members, where grading stands, the retries, the tool's key,
the refusal page."""

from __future__ import annotations

import pytest
import requests
from pylti1p3.exception import LtiServiceException

from coursekit.core import messages
from coursekit.hub import lti as hub_lti
from coursekit.lms import lti, roster
from tests.support.lti_platform import INSTRUCTOR, LEARNER, TA

CONFIG = {
    "issuer": "https://lms.example.ac.kr",
    "client_id": "10000000000042",
    "deployment_id": "1:abc",
    "auth_login_url": "https://lms.example.ac.kr/api/lti/authorize_redirect",
    "auth_token_url": "https://lms.example.ac.kr/login/oauth2/token",
    "key_set_url": "https://lms.example.ac.kr/api/lti/security/jwks",
}
LEARNERS = [
    roster.Learner("2026001", "민준", "김", "minjun@example.ac.kr", "u-1"),
    roster.Learner("2026002", "서연", "남궁", "seoyeon@example.ac.kr", ""),
]


def token(sub: str, roles: list[str], email: str = "", custom: dict | None = None) -> dict:
    claims = {"sub": sub, lti.ROLE_CLAIM: roles, "email": email}
    if custom:
        claims[lti.CUSTOM_CLAIM] = custom
    return claims


def test_a_config_names_every_problem():
    assert lti.LtiConfig.from_dict(CONFIG).deployment_id == "1:abc"
    bad = {**CONFIG, "client_id": "", "key_set_url": "ftp://x", "colour": "blue"}
    with pytest.raises(lti.LtiError) as error:
        lti.LtiConfig.from_dict(bad)
    text = str(error.value)
    assert "unknown key 'colour'" in text
    assert "client_id is missing or empty" in text
    assert "key_set_url 'ftp://x' is not an http(s) URL" in text


def test_who_a_launch_logs_in_as():
    config = lti.LtiConfig.from_dict(CONFIG)
    args = (config, LEARNERS, "tp-", "tp-instructor", ["tp-ta01"])
    # A learner by the roster's LMS id, else by email (case aside).
    assert lti.account_for(token("u-1", [LEARNER]), *args) == "tp-2026001"
    assert lti.account_for(token("x", [LEARNER], "SeoYeon@example.ac.kr"), *args) == "tp-2026002"
    assert lti.account_for(token("x", [LEARNER], custom={"lms_user_id": "u-1"}), *args) == (
        "tp-2026001"
    )
    # Anyone else is nobody: an unknown learner, an observer, no role at all.
    assert lti.account_for(token("u-404", [LEARNER], "who@example.ac.kr"), *args) is None
    observer = "http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"
    assert lti.account_for(token("u-1", [observer]), *args) is None
    assert lti.account_for(token("u-1", []), *args) is None
    # An instructor is the hub's instructor; a TA only when the config maps them.
    assert lti.account_for(token("p", [INSTRUCTOR]), *args) == "tp-instructor"
    assert lti.account_for(token("t", [TA]), *args) is None
    staffed = lti.LtiConfig.from_dict({**CONFIG, "staff": {"t": "tp-ta01", "p": "tp-instructor"}})
    args = (staffed, LEARNERS, "tp-", "tp-instructor", ["tp-ta01"])
    assert lti.account_for(token("t", [TA]), *args) == "tp-ta01"
    by_email = lti.LtiConfig.from_dict({**CONFIG, "staff": {"TA@Example.ac.kr": "tp-ta01"}})
    by_email_args = (by_email, LEARNERS, "tp-", "tp-instructor", ["tp-ta01"])
    assert lti.account_for(token("z", [TA], "ta@example.ac.kr"), *by_email_args) == "tp-ta01"
    assert lti.account_for(token("p", [INSTRUCTOR]), *args) == "tp-instructor"
    # With a staff list, an instructor not on it is refused; a mapping to a learner's
    # account is never followed.
    assert lti.account_for(token("q", [INSTRUCTOR]), *args) is None
    wrong = lti.LtiConfig.from_dict({**CONFIG, "staff": {"t": "tp-2026001"}})
    assert lti.account_for(token("t", [TA]), wrong, LEARNERS, "tp-", "tp-instructor", []) is None


def test_the_roster_from_the_lms_goes_through_the_roster_checks():
    def member(user_id, name, email, roles=(LEARNER,), sourcedid="", status="Active"):
        return {"user_id": user_id, "name": name, "email": email, "roles": list(roles),
                "lis_person_sourcedid": sourcedid, "status": status}  # fmt: skip

    good = [
        member("u-1", "김 민준", "minjun@example.ac.kr", sourcedid="2026001"),
        member("u-2", "남궁 서연", "seoyeon@example.ac.kr", sourcedid="2026002"),
        member("u-9", "이 교수", "prof@example.ac.kr", roles=[INSTRUCTOR]),
        member("u-8", "최 조교", "ta@example.ac.kr", roles=[TA]),
        member("u-3", "정 하나", "hana@example.ac.kr", sourcedid="2026003", status="Inactive"),
    ]
    learners = lti.roster_from_members(good, "tp-")
    assert [(one.id, one.last_name, one.first_name, one.lms_user_id) for one in learners] == [
        ("2026001", "김", "민준", "u-1"),
        ("2026002", "남궁", "서연", "u-2"),
    ]
    bad = [
        *good[:2],
        member("u-4", "<b>", "b@example.ac.kr", sourcedid="../x"),
        member("u-5", "오 세훈", "minjun@example.ac.kr", sourcedid="2026001"),
    ]
    with pytest.raises(roster.RosterError) as error:
        lti.roster_from_members(bad, "tp-")
    text = str(error.value)
    assert "nothing was created" in text
    assert "row 4: id '../x'" in text and "row 5: id '2026001' is also on row 2" in text
    assert "row 4 = LMS member u-4 (<b>)" in text and "row 5 = LMS member u-5" in text


def test_where_grading_stands():
    assert lti.progress(False, False) == ("Initialized", "NotReady")
    assert lti.progress(True, True) == ("Submitted", "PendingManual")
    assert lti.progress(True, False) == ("Completed", "FullyGraded")


class Answer:
    def __init__(self, status):
        self.status_code, self.url = status, "https://lms.example.ac.kr/x"


def test_an_lms_that_is_down_is_tried_again_one_that_says_no_is_not():
    calls, said = [], []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise LtiServiceException("down", Answer(503))
        return "ok"

    assert lti.with_retries(flaky, [0, 0, 0], said.append) == "ok"
    assert len(calls) == 3 and len(said) == 2 and "HTTP 503" in said[0]

    def unreachable():
        raise requests.ConnectionError("refused")

    with pytest.raises(requests.ConnectionError):
        lti.with_retries(unreachable, [0, 0], said.append)

    calls.clear()

    def refused():
        calls.append(1)
        raise LtiServiceException("no", Answer(401))

    with pytest.raises(LtiServiceException):
        lti.with_retries(refused, [0, 0, 0], said.append)
    assert len(calls) == 1  # a 401 is an answer: not tried again


def test_the_tool_key_is_made_once_and_its_key_set_is_public(tmp_path):
    path = lti.ensure_tool_key(tmp_path / "lti")
    made = path.read_bytes()
    assert lti.ensure_tool_key(tmp_path / "lti").read_bytes() == made
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "lti").stat().st_mode & 0o777 == 0o700
    (key,) = lti.tool_jwks(made.decode())["keys"]
    assert key["kty"] == "RSA" and key["alg"] == "RS256" and key["kid"]
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(key)


def test_the_refusal_page_speaks_the_course_language():
    with messages.speaking("ko"):
        page = hub_lti.refusal_page(unknown=True)
        assert 'lang="ko"' in page and "수강생 명단에 없어서" in page
        assert "제대로 온 요청이 아닙니다" in hub_lti.refusal_page(unknown=False)
    with messages.speaking("en"):
        page = hub_lti.refusal_page(unknown=True)
        assert 'lang="en"' in page and "not on this course&#x27;s roster" in page
