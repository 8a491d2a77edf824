"""The course environment works the same on Python 3.11, 3.12 and 3.13.

The notebooks' `import koreanize_matplotlib` needs `distutils`, which Python 3.12
removed; setuptools' shim provides it, so setuptools must be pinned, not merely
present by chance.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Renders Hangul with the font the notebooks' import registers; a warning such as a missing
# glyph fails the run (distutils' own deprecation notice is hidden in notebooks too).
HANGUL_PLOT = """
import warnings
warnings.simplefilter("error")
warnings.simplefilter("ignore", DeprecationWarning)
import matplotlib
matplotlib.use("Agg")
import koreanize_matplotlib  # noqa: F401  the notebooks' own line
import matplotlib.pyplot as plt
from matplotlib import font_manager

assert matplotlib.rcParams["font.family"] == ["NanumGothic"], matplotlib.rcParams["font.family"]
path = font_manager.findfont("NanumGothic", fallback_to_default=False)
assert path.endswith("NanumGothic.ttf"), path
fig, ax = plt.subplots()
ax.set_title("어텐션 가중치 — 한글 제목")
ax.set_xlabel("키 위치")
fig.canvas.draw()
print("ok", path)
"""


def test_notebooks_koreanize_import_renders_hangul():
    run = subprocess.run(
        [sys.executable, "-c", HANGUL_PLOT],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok "), run.stdout


def test_requirements_pin_setuptools_for_distutils():
    pins = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^setuptools==\d", pins, re.MULTILINE), (
        "requirements.txt must pin setuptools: koreanize-matplotlib imports distutils, "
        "which only setuptools provides on Python 3.12+ (make lock uses pip freeze --all)"
    )


GROUPED_TESTS = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("one_class")


@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    print("worker", os.environ["PYTEST_XDIST_WORKER"])


@pytest.mark.parametrize("i", range(6))
def test_ungrouped(i):
    pass
"""


def test_xdist_keeps_each_group_on_one_worker(tmp_path):
    """`make test` relies on it: each group grades its class once, in a module fixture.

    pytest 9.2 with pytest-xdist 3.8 ignored the groups, and every class was graded on
    both workers (the suite took twice as long).
    """
    (tmp_path / "test_groups.py").write_text(GROUPED_TESTS)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-q",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    workers = set(re.findall(r"^worker (gw\d+)$", run.stdout, re.MULTILINE))
    assert len(workers) == 1, f"the group ran on {sorted(workers)}: pin pytest in requirements.in"
