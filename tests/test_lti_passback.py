"""Live grades back (coursekit/lms/passback.py), without a hub: against the LTI 1.3
platform of tests/support/lti_platform.py on loopback, the tool's key set served as
`make hub --roster-from-lms` serves it before the hub is up. What the hub's LTI poster
does with a score it accepted: posted with the ledger `make export --to lti` keeps, kept
waiting with why while the LMS is down and posted with the next score once it is up,
posted once only, and superseded by the gradebook's score at `make export --to lti`.
Who may hand it a score is tests/test_lti_hub.py's (the hub checks the token).
"""

from __future__ import annotations

import math

import pytest

from coursekit.hub import lti as hub_lti
from coursekit.hub.settings import HubSettings
from coursekit.lms import lti, passback
from coursekit.lms.lti import Score
from tests.support.lti_platform import LEARNER, FakeLms, Member
from tests.support.ports import free_ports

A = Member("u-1", "김 민준", "minjun@example.ac.kr", [LEARNER], "2026101")
B = Member("u-2", "남궁 서연", "seoyeon@example.ac.kr", [LEARNER], "2026102")
FAST = [0.05, 0.1]  # the LMS's retries, short


def score(student="tp-2026101", user_id="u-1", points=7.5, grading="PendingManual"):
    activity = {"PendingManual": "Submitted", "FullyGraded": "Completed"}[grading]
    return Score("ch3_multihead", student, user_id, points, 10.0, activity, grading)


def test_a_score_on_the_wire_is_checked():
    good = passback.to_wire(score())
    assert passback.from_wire(good) == score()
    assert passback.from_wire({**good, "score": None, "activity": "Initialized",
                               "grading": "NotReady"}).score is None  # fmt: skip
    bad = [
        ({**good, "extra": 1}, "exactly the fields"),
        ({k: v for k, v in good.items() if k != "user_id"}, "exactly the fields"),
        ({**good, "student": ""}, "may not be empty"),
        ({**good, "assignment": 3}, "not a string"),
        ({**good, "score": "10"}, "not a number"),
        ({**good, "score": True}, "not a number"),
        ({**good, "score": math.inf}, "finite"),
        ({**good, "maximum": -1}, "finite"),
        ({**good, "grading": "FullyGraded"}, "no such progress"),  # Submitted/FullyGraded
        ({**good, "score": None}, "exactly when"),
        ([good], "exactly the fields"),
    ]
    for data, why in bad:
        with pytest.raises(ValueError, match=why):
            passback.from_wire(data)


@pytest.fixture
def lms_and_tool(tmp_path):
    """The LMS, the tool's lti folder (key, config) and its key set served on loopback."""
    tool_port = free_ports(1)
    with FakeLms(free_ports(1), f"http://127.0.0.1:{tool_port}", [A, B]) as lms:
        settings = HubSettings(root=str(tmp_path), port=tool_port, lti=lms.tool_config())
        key = hub_lti.install(settings)
        config = lti.LtiConfig.from_dict(settings.lti)
        with hub_lti.serving_jwks(settings):
            yield lms, settings.lti_dir, lti.connector(config, key.read_text()), config


def test_a_live_score_waits_while_the_lms_is_down_and_goes_with_the_next(lms_and_tool):
    lms, folder, conn, config = lms_and_tool
    said = []
    lms.down = 1000
    done, still = passback.post_live(conn, config, folder, [score()], FAST, said.append)
    lms.down = 0
    assert not done.posted and not lms.score_posts
    assert len(said) == len(FAST) and "HTTP 503" in said[0]  # retried with backoff
    (waiting,) = still
    assert waiting.score == score() and "line item" in waiting.why
    assert passback.waiting(folder) == still  # listed in the lti folder
    assert (folder / passback.WAITING_FILE).stat().st_mode & 0o777 == 0o600

    # A newer score of the same learner's assignment replaces the waiting one, and the
    # next post (another learner's) takes the waiting one along once the LMS answers.
    newer = score(points=9.0)
    lms.down = 1000
    passback.post_live(conn, config, folder, [newer], [], said.append)
    lms.down = 0
    assert [w.score for w in passback.waiting(folder)] == [newer]
    other = score("tp-2026102", "u-2", 10.0, "FullyGraded")
    lms.down = 1
    done, still = passback.post_live(conn, config, folder, [other], FAST, said.append)
    assert {(s.student, s.score) for s in done.posted} == {
        ("tp-2026101", 9.0),
        ("tp-2026102", 10.0),
    }
    assert not still and not (folder / passback.WAITING_FILE).exists()
    (item,) = lms.lineitems
    assert lms.scores[item]["u-1"]["scoreGiven"] == 9.0
    assert lms.scores[item]["u-1"]["gradingProgress"] == "PendingManual"
    assert lms.scores[item]["u-2"]["gradingProgress"] == "FullyGraded"

    # The same score again: the ledger says the LMS has it, nothing is posted.
    posts = len(lms.score_posts)
    done, still = passback.post_live(conn, config, folder, [newer], FAST, said.append)
    assert done.unchanged == [newer] and not done.posted and not still
    assert len(lms.score_posts) == posts


def test_make_export_supersedes_what_live_grading_left_waiting(lms_and_tool):
    lms, folder, conn, config = lms_and_tool
    lms.down = 1000
    passback.post_live(conn, config, folder, [score(), score("tp-2026102", "u-2")], [], print)
    lms.down = 0
    assert len(passback.waiting(folder)) == 2
    # The gradebook's score of the first learner (graded by a TA since): posted, and the
    # live one that waited for it dropped; the other learner's still waits.
    graded = score(points=8.0, grading="FullyGraded")
    done, superseded = passback.post_export(conn, config, folder, [graded], FAST, print)
    assert done.posted == [graded]
    assert [w.score for w in superseded] == [score()]
    assert [w.score.student for w in passback.waiting(folder)] == ["tp-2026102"]
    (item,) = lms.lineitems
    assert lms.scores[item]["u-1"]["scoreGiven"] == 8.0
