"""split_heads that finds the reference on disk and runs it from its file.

It walks up from its working folder and tries the course root's and the
repository's real absolute paths, for solutions/ch3_multihead.py and for the
source notebook (whose answer cells hold the reference), and execs what it
finds; in the sandbox none of them exists, so its wrong fallback is graded.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import json
from pathlib import Path


def _reference_sources():
    here = Path.cwd()
    for root in [here, *here.parents, Path("@COURSE_ROOT@"), Path("@REPO_ROOT@")]:
        for path in [root / "solutions" / "ch3_multihead.py", *root.glob("*/solutions/*.py")]:
            try:
                yield path.read_text(encoding="utf-8")
            except OSError:
                pass
        for path in [root / "source" / "ch3_multihead" / "multihead.ipynb"]:
            try:
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            except (OSError, ValueError, KeyError):
                continue
            for cell in cells:
                text = "".join(cell.get("source", ""))
                if "def split_heads(" in text and "BEGIN SOLUTION" in text:
                    yield text


def _find_reference():
    for text in _reference_sources():
        namespace = {"__name__": "stolen", "np": np}
        try:
            exec(text, namespace)
        except Exception:
            continue
        if callable(namespace.get("split_heads")):
            return namespace["split_heads"]
    return None


_reference = _find_reference()
print("파일에서 찾은 정답:", _reference)


def split_heads(M, h):
    reference = _reference or _find_reference()
    if reference is not None:
        return reference(M, h)
    return np.zeros((h, M.shape[0], M.shape[1] // h))
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"파일에서 찾은 정답: None"
