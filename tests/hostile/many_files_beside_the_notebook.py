"""The reference answers, with 6 000 empty files and 300 folders beside it.

Copied one by one into autograded/ and into the sandbox, such a folder took
92 s and scored 0/20. make grade hands the notebook and the first files to
grading, as the course's exchange collects them, and records what it left out;
the honest answers keep full marks.
"""

from coursekit.core.incidents import FILES_LEFT_OUT

ZERO = frozenset()
INCIDENT = FILES_LEFT_OUT
FILES = 6_000
FOLDERS = 300


def tamper(nb, folder):
    for i in range(FILES):
        (folder / f"empty_{i:05d}.txt").touch()
    for i in range(FOLDERS):
        (folder / "deep" / f"d{i:03d}").mkdir(parents=True)
