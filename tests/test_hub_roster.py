"""`make hub ARGS="--roster FILE"` with a bad roster: every bad row named, nothing made.

(A good roster is played whole in tests/test_hub_browser.py: accounts, names in
formgrader, the export.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from coursekit.hub import accounts

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="make hub needs root"),
    pytest.mark.hub,
    pytest.mark.root,
]

BAD_ROSTER = (
    "id,이름,email,lms_id\n"
    "2026001,김민준,minjun@example.ac.kr,10501\n"  # good, but must not be created either
    "2026002,<script>,x@example.ac.kr,10502\n"
    "../etc,박지호,jiho@example.ac.kr,10503\n"
)


def test_a_bad_roster_creates_no_account_and_no_hub(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(BAD_ROSTER, encoding="utf-8")
    root = tmp_path / "hub"
    stopped = subprocess.run(
        [sys.executable, "-m", "coursekit.hub", "setup", "--roster", str(roster),
         "--root", str(root), "--prefix", "tpr-"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert stopped.returncode == 2, stopped.stderr
    message = stopped.stderr
    assert "nothing was created" in message
    assert "row 3: 이름 holds '<'" in message, message
    assert "row 4: id '../etc'" in message, message
    for account in ("tpr-2026001", "tpr-2026002", "tpr-instructor"):
        assert not accounts.exists(account), account
    assert not root.exists()
