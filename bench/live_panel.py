"""`make bench ARGS="--live"`, the browser's side: from the button press to the result drawn.

A hub class of its own, as `make hub` sets one up (coursekit.hub.trial_class: one
learner and the instructor, accounts `tpp-…`, on loopback, the live service as a
hub service; every account and permission undone at the end), with
`c.LiveGrading.min_interval = 0` so that every press is graded. The instructor
releases the live workshop's assignment in formgrader; one learner, in headless
Chromium (Debian's, driven by Playwright, as tests/test_hub_browser.py), logs in,
fetches it, types the reference answers and presses 제출하고 채점 받기 `--panel N`
times (default 10), each once the last result is drawn. Each press is timed from
the click to the moment the 채점 결과 panel lists one attempt more and its newest
one is graded (tests.test_hub_browser.press_submit): what the learner waits for,
the live service's grading and the panel's polls included. It prints p50, p95
and max against the issue's targets (alone: p50 ≤ 2 s, p95 ≤ 4 s).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import shutil
import statistics
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.live_latency import percentile

ROOT = Path(__file__).resolve().parent.parent

TARGET_P50, TARGET_P95 = 2.0, 4.0
PRESS_TIMEOUT = 300  # seconds: a bound on one press's wait, never a measurement
POLICY = "\n# bench/live_panel.py: every press graded.\nc.LiveGrading.min_interval = 0\n"


def summary(values: list[float]) -> dict[str, float | bool]:
    """p50, p95 (nearest rank) and max of the presses, and whether each target is met."""
    p50, p95 = percentile(values, 0.50), percentile(values, 0.95)
    return {
        "p50": p50,
        "p95": p95,
        "max": max(values),
        "p50_met": p50 <= TARGET_P50,
        "p95_met": p95 <= TARGET_P95,
    }


def panel_lines(values: list[float]) -> str:
    figures = summary(values)

    def mark(met: bool) -> str:
        return "met" if met else "NOT met"

    return "\n".join(
        [
            f"  {'press → panel (browser)':<24} {'p50':>7} {'p95':>7} {'max':>7}",
            f"  {'one learner':<24} {figures['p50']:7.2f} {figures['p95']:7.2f} "
            f"{figures['max']:7.2f} s  ({len(values)} presses; target p50 ≤ {TARGET_P50:g} s "
            f"{mark(figures['p50_met'])}, p95 ≤ {TARGET_P95:g} s {mark(figures['p95_met'])})",
        ]
    )


def stage_lines(pressed: list[datetime], took: list[float], records: list) -> str:
    """Median seconds from each step of a press to the next: the press, the exchange's
    receipt (the submission's newest file), each stage the live service recorded
    (coursekit.live.attempts.STAGES), and the result drawn in the panel."""
    from coursekit.live import attempts

    steps: dict[str, list[float]] = {}
    for at_press, seconds, record in zip(pressed, took, records, strict=True):
        marks = [("press", at_press), ("received", datetime.fromisoformat(record.submitted_at))]
        marks += [
            (n, datetime.fromisoformat(record.stages[n]))
            for n in attempts.STAGES
            if n in record.stages
        ]
        marks.append(("drawn", at_press + timedelta(seconds=seconds)))
        for (a, t0), (b, t1) in itertools.pairwise(marks):
            steps.setdefault(f"{a} → {b}", []).append((t1 - t0).total_seconds())
    lines = ["  median per step (the service's attempt records)"]
    lines += [f"    {step:<28} {statistics.median(v):6.2f} s" for step, v in steps.items()]
    return "\n".join(lines)


@contextlib.contextmanager
def hub_class(work: Path) -> Iterator[tuple]:
    """A running hub with one learner and the live service; yields (settings, passwords)."""
    from coursekit.hub import accounts, trial_class
    from coursekit.hub.settings import HubSettings
    from tests.support.hub_class import everyone, one_class_at_a_time, running_hub
    from tests.support.ports import free_ports

    root = tempfile.mkdtemp(prefix="coursekit-bench-hub-", dir="/srv")
    settings = HubSettings(root=root, port=free_ports(4), prefix="tpp-", learners=1)
    work.mkdir(parents=True, exist_ok=True)
    with one_class_at_a_time():
        for user in everyone(settings):  # a run killed before its end left them
            accounts.remove_account(user)
        try:
            with running_hub(settings, work / "live-panel-jupyterhub.log", POLICY) as passwords:
                yield settings, passwords
        finally:
            trial_class.down(settings)
            shutil.rmtree(root, ignore_errors=True)


def measure(work: Path, presses: int) -> str:
    from playwright.sync_api import sync_playwright

    from coursekit.live import attempts
    from tests.support import hub_pages as ui
    from tests.support.browser import CHROMIUM, FLAGS
    from tests.support.hub_answers import answered_cells
    from tests.support.hub_class import LEARNER_LOCALE, LIVE_ASSIGNMENT, LIVE_NOTEBOOK, press_submit

    reference = importlib.import_module(f"solutions.{LIVE_ASSIGNMENT}")
    correct = {name: getattr(reference, name) for name in reference.__all__}
    typed = answered_cells(ROOT / "release" / LIVE_ASSIGNMENT / f"{LIVE_NOTEBOOK}.ipynb", correct)
    took: list[float] = []
    pressed: list[datetime] = []
    print(f"live: the panel in a browser on a hub, one learner, {presses} presses …", flush=True)
    with hub_class(work) as (settings, passwords), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            base, instructor = settings.url, settings.instructor
            (learner,) = settings.learner_names
            teacher = ui.log_in(browser, base, instructor, passwords[instructor])
            teacher.goto(f"{base}/user/{instructor}/formgrader")
            for step in ("assign", "release"):
                ui.formgrader_button(teacher, ui.formgrader_row(teacher, LIVE_ASSIGNMENT), step)
            page = ui.log_in(browser, base, learner, passwords[learner], LEARNER_LOCALE)
            ui.fetch_and_open(page, LIVE_ASSIGNMENT, LIVE_NOTEBOOK)
            for name, text in typed.items():
                ui.replace_cell_text(page, f"def {name}(", text)
            for before in range(presses):
                pressed.append(datetime.now(UTC))
                took.append(press_submit(page, before, timeout=PRESS_TIMEOUT))
                held = page.locator("#coursekit-result-panel .ck-last .ck-held").count()
                if held:
                    raise RuntimeError("a press was held back: the policy is not min_interval 0")
            records = attempts.of_learner(settings.course_root, LIVE_ASSIGNMENT, learner)
        finally:
            browser.close()
    return (
        f"live grading, the learner's panel: a hub on loopback, Chromium headless, one learner "
        f"pressing 제출하고 채점 받기 {presses} times, each once the last result was drawn\n"
        + panel_lines(took)
        + "\n"
        + stage_lines(pressed, took, records)
    )
