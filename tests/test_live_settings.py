"""A wrong live setting in nbgrader_config.py (c.LiveGrading, c.LiveBoard) stops `make live`
and `make grade` before anything starts: exit status 2 and one line naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursekit.cluster import cli as make_grade
from coursekit.live import cli as make_live
from tests.support.course_sandbox import CourseSandbox

WRONG = {
    "counted_unknown": (
        'c.LiveGrading.per_assignment = {"ch3_multihead": {"counted": "first"}}',
        "c.LiveGrading.per_assignment['ch3_multihead']['counted']: 'first'",
    ),
    "misspelt_key": (
        'c.LiveGrading.per_assignment = {"ch3_multihead": {"min_intervall": 30}}',
        "c.LiveGrading.per_assignment['ch3_multihead']: 모르는 설정 'min_intervall'",
    ),
    "no_attempt_allowed": (
        'c.LiveGrading.per_assignment = {"ch4_cross_attention": {"max_attempts": 0}}',
        "c.LiveGrading.per_assignment['ch4_cross_attention']['max_attempts']: 0 ",
    ),
    "seconds_as_text": (
        'c.LiveGrading.per_assignment = {"ch3_multihead": {"min_interval": "60"}}',
        "c.LiveGrading.per_assignment['ch3_multihead']['min_interval']: '60' ",
    ),
    "not_a_dict": (
        'c.LiveGrading.per_assignment = {"ch3_multihead": 60}',
        "c.LiveGrading.per_assignment['ch3_multihead']: ",
    ),
    "stuck_after_zero": ("c.LiveBoard.stuck_after = 0", "'stuck_after'"),
}


@pytest.fixture
def course(tmp_path) -> Path:
    """The course's config and sources, in a folder of its own (nothing graded yet)."""
    return CourseSandbox(tmp_path).root


@pytest.mark.parametrize("command", [make_live, make_grade], ids=["make_live", "make_grade"])
@pytest.mark.parametrize("wrong", WRONG, ids=list(WRONG))
def test_a_wrong_live_setting_stops_the_command_with_one_line(course, command, wrong, capsys):
    line, named = WRONG[wrong]
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\n{line}\n")
    assert command.main(["--root", str(course)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert named in err, err
    assert "Traceback" not in err
    assert not (course / "gradebook.db").exists() and not (course / "live").exists()


def test_the_course_settings_pass(course, capsys):
    """The course's own live settings (and an override a course may have) are accepted."""
    from coursekit.core.course import load_config
    from coursekit.live.policy import check_settings

    with open(course / "nbgrader_config.py", "a") as config:
        config.write(
            '\nc.LiveGrading.per_assignment = {"ch3_multihead": '
            '{"min_interval": 0, "max_attempts": 5, "counted": "best"}}\n'
        )
    check_settings(load_config(course))
