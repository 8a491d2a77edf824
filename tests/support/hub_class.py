"""A class on a real JupyterHub, as the hub browser test and the live panel bench drive it:
free ports, the class's accounts, and the learner's press of the submit button."""

from __future__ import annotations

import contextlib
import fcntl
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from coursekit.hub import trial_class
from coursekit.hub.settings import HubSettings

LEARNER_LOCALE = "ko_KR"
PANEL = "#coursekit-result-panel"  # the 채점 결과 side panel (labextension/src/panel.ts)
SUBMIT_BUTTON = "제출하고 채점 받기"
# The assignment the live workshop on the hub is tried with.
LIVE_ASSIGNMENT, LIVE_NOTEBOOK = "ch4_cross_attention", "cross_attention"
# Seconds from the button press to the answer drawn in the panel. The bound for one
# learner is p50 <= 2 s, p95 <= 4 s (make bench ARGS=--live measures it); one press on a
# shared CI machine with a hub, a board and two labs running gets this much room.
PANEL_BOUND = 20


# One hub class on this machine at a time: a class opens folders on the way to the
# interpreter (o+x) and gives the repo's course files to its instructors' group, and its
# `down` puts them back, which would pull them from under a second class of the same
# repo (two test modules, a bench, or another worktree's suite).
CLASS_LOCK = Path("/run/lock/coursekit-hub-class.lock")


@contextlib.contextmanager
def one_class_at_a_time() -> Iterator[None]:
    """Held from a class's setup to its `down`; a second one waits here for the first."""
    CLASS_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(CLASS_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def everyone(settings: HubSettings) -> list[str]:
    return [settings.instructor, *settings.learner_names, *settings.ta_names]


def press_submit(page, attempts_before: int, timeout: float = PANEL_BOUND) -> float:
    """Press 제출하고 채점 받기 in the notebook's toolbar; the seconds until the panel lists
    one attempt more and its newest one is answered (graded or held back), not waiting.
    (bench/live_panel.py times the learner's wait with it too.)"""
    button = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").get_by_role(
        "button", name=SUBMIT_BUTTON
    )
    start = time.monotonic()
    button.click()
    page.wait_for_function(
        "([selector, count]) => {"
        " const panel = document.querySelector(selector);"
        " if (!panel || !panel.querySelector('.ck-last')) return false;"
        " return panel.querySelectorAll('.ck-attempt').length === count"
        "   && !panel.querySelector('.ck-last .ck-waiting'); }",
        arg=[PANEL, attempts_before + 1],
        timeout=timeout * 1000,
    )
    took = time.monotonic() - start
    print(f"panel: press to result drawn in {took:.2f} s", flush=True)
    return took


@contextlib.contextmanager
def running_hub(settings: HubSettings, log_path: Path, policy: str = "") -> Iterator[dict]:
    """The class set up (`policy` added to the instructor's nbgrader config) and its
    JupyterHub running until the block ends, its output in `log_path`; yields the
    accounts' passwords. The class is left set up: the caller removes it."""
    passwords = trial_class.setup(settings)
    with open(settings.course_root / "nbgrader_config.py", "a") as config:
        config.write(policy)
    command, env = trial_class.hub_command(settings)
    with open(log_path, "w") as log:
        hub = subprocess.Popen(
            command, env=env, cwd=settings.root, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"{settings.url}/hub/login", timeout=5)
                    break
                except OSError:
                    if hub.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"JupyterHub did not start:\n{log_path.read_text()[-3000:]}"
                        ) from None
                    time.sleep(1)
            yield passwords
        finally:
            hub.send_signal(signal.SIGTERM)  # stops the proxy and every user's server
            try:
                hub.wait(timeout=90)
            except subprocess.TimeoutExpired:
                hub.kill()
                hub.wait()
