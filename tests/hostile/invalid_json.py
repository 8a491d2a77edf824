"""The submitted notebook is cut off half way: not valid JSON."""

from tests.hostile import ALL_CELLS

ZERO = ALL_CELLS
INCIDENT = "InvalidNotebook"


def corrupt(path):
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
