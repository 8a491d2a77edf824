"""Wrong split_heads whose cell prints every notebook and hidden-test file it can find.

It walks the filesystem from / (all but /usr and the Python installation)
and from the course root's and the repository's real paths, for *.ipynb
(other learners' submissions, the source notebook with the reference) and
for grader_tests/ and solutions/, prints what it finds, and asks Python for
those modules by name. In the sandbox it finds only the installed packages'
files, so neither its autograded notebook nor its feedback page shows a
line of the hidden tests, the reference or a classmate's answer.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
import importlib
import inspect
import os
import sys

SECRET_FOLDERS = {"grader_tests", "solutions"}
budget = [400_000]  # characters, below the output cap
walked, shown = [0], [0]


def show(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read(budget[0])
    except OSError as error:
        print("읽지 못함:", path, type(error).__name__)
        return
    budget[0] -= len(text)
    shown[0] += 1
    print(f"===== {path} =====")
    print(text)


def mentions_split_heads(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return "split_heads" in file.read()
    except OSError:
        return False


# The system and the Python installation hold nothing of the course; skipping
# them keeps the walk within the cell's time limit.
skip = {"/proc", "/sys", "/dev", "/usr", sys.base_prefix, os.path.realpath(os.getcwd())}
seen = set()
for top in ("@COURSE_ROOT@", "@REPO_ROOT@", "/"):
    for folder, dirs, files in os.walk(top):
        if folder in skip or folder in seen:
            dirs[:] = []
            continue
        seen.add(folder)
        secret = bool(SECRET_FOLDERS & set(folder.split(os.sep)))
        for name in files:
            walked[0] += 1
            path = os.path.join(folder, name)
            if name.endswith(".ipynb"):
                print("노트북:", path)
                if budget[0] > 0 and mentions_split_heads(path):
                    show(path)
            elif secret and name.endswith(".py") and budget[0] > 0:
                show(path)

print(f"훑은 파일 {walked[0]}개, 보여 준 파일 {shown[0]}개")
for name in ("grader_tests.ch3_multihead", "grader_tests.core", "solutions.ch3_multihead"):
    try:
        print(inspect.getsource(importlib.import_module(name)))
    except Exception as error:
        print("모듈 없음:", name, type(error).__name__)
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"훑은 파일 \d{4,}개, 보여 준 파일 0개"
