"""The reference answers, with files of odd names beside it: a newline, a tab, a leading
dash, 250 characters, a hidden file, and a name that is not UTF-8 at all.

Each name reaches make grade's own bookkeeping; before nbgrader's copy into
autograded/ the names that break tools further on are left out and the names
a browser might render are renamed (coursekit/exchange/bound.py), with
the reasons recorded. The honest answers keep full marks.
"""

import os

from coursekit.core.incidents import SUBMISSION_FILES

ZERO = frozenset()
INCIDENT = SUBMISSION_FILES
ODD_NAMES = ("줄\n바꿈.txt", "탭\t이름.csv", " -rf", "--help", "a" * 250 + ".py", ".hidden")


def tamper(nb, folder):
    for name in ODD_NAMES:
        (folder / name).write_text("x", encoding="utf-8")
    os.close(os.open(os.fsencode(folder) + b"/\xff\xfe-latin1.txt", os.O_CREAT | os.O_WRONLY))
