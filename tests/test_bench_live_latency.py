"""bench.live_latency's arithmetic, without accounts or a service (make bench --live runs it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench import live_latency
from coursekit.live import attempts


def test_a_percentile_is_the_nearest_rank():
    values = [float(v) for v in range(10, 0, -1)]  # unsorted on purpose
    assert live_latency.percentile(values, 0.50) == 5.0
    assert live_latency.percentile(values, 0.95) == 10.0
    assert live_latency.percentile([3.0], 0.95) == 3.0


def test_each_stage_is_timed_from_the_one_before_and_the_first_from_the_submit():
    start = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)

    def record(entry: str, seconds: dict[str, float]) -> attempts.Attempt:
        stages = {name: (start + timedelta(seconds=s)).isoformat() for name, s in seconds.items()}
        return attempts.Attempt("x", "a", entry, start.isoformat(), stages=stages)

    submits = live_latency.Submits(c=None, assignment="a")
    submits.ended = {"one": start, "two": start + timedelta(seconds=1)}
    one = record("one", {"noticed": 0.5, "collected": 1, "scheduled": 2, "released": 6})
    two = record("two", {"noticed": 2, "collected": 4, "scheduled": 5, "released": 9})
    medians = live_latency.stage_medians(submits, [one, two])
    assert list(medians) == [
        "submit → noticed",
        "noticed → collected",
        "collected → scheduled",
        "scheduled → released",  # a stage a record lacks is skipped, not counted as 0
    ]
    assert medians["submit → noticed"] == 0.75
    assert medians["noticed → collected"] == 1.25
    assert medians["scheduled → released"] == 4.0
    assert submits.latency(one) == 6.0 and submits.latency(two) == 8.0


def test_the_panels_figure_is_p50_and_p95_against_the_issues_targets():
    from bench import live_panel

    presses = [1.2, 0.9, 1.5, 1.1, 3.8, 1.0, 1.3, 0.8, 1.4, 1.6]  # seconds, unsorted
    figures = live_panel.summary(presses)
    assert figures["p50"] == 1.2 and figures["p95"] == 3.8 and figures["max"] == 3.8
    assert figures["p50_met"] and figures["p95_met"]
    slow = live_panel.summary([*presses[:-1], 4.5])  # the slowest of ten is the p95
    assert slow["p95"] == 4.5 and not slow["p95_met"] and slow["p50_met"]
    lines = live_panel.panel_lines(presses)
    assert "   1.20    3.80    3.80 s  (10 presses" in lines, lines
    assert "p95 ≤ 4 s met" in lines and "NOT met" not in lines
    assert "p95 ≤ 4 s NOT met" in live_panel.panel_lines([*presses[:-1], 4.5])


def test_a_press_is_split_from_the_click_through_the_services_stages_to_the_drawing():
    from bench import live_panel

    start = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)

    def at(seconds: float) -> str:
        return (start + timedelta(seconds=seconds)).isoformat()

    one = attempts.Attempt(
        "x", "a", "one", at(0.2), stages={"noticed": at(0.3), "released": at(1.5)}
    )
    two = attempts.Attempt(
        "x", "a", "two", at(10.4), stages={"noticed": at(10.5), "released": at(11.9)}
    )
    pressed = [start, start + timedelta(seconds=10)]
    lines = live_panel.stage_lines(pressed, [1.7, 2.2], [one, two]).splitlines()
    steps = {line.split("  ")[2].strip(): line.split()[-2] for line in lines[1:]}
    assert list(steps) == [
        "press → received",
        "received → noticed",
        "noticed → released",
        "released → drawn",
    ]
    assert steps == {
        "press → received": "0.30",  # median of 0.2 and 0.4
        "received → noticed": "0.10",
        "noticed → released": "1.30",
        "released → drawn": "0.25",  # 0.2 and 0.3
    }
