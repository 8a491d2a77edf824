"""bench.same_outputs: what it masks as run-to-run noise, and what it calls a difference."""

from __future__ import annotations

from pathlib import Path

from bench import same_outputs


def test_dates_times_durations_and_the_tree_path_are_masked_and_nothing_else():
    tree = Path("/work/build/same-outputs/abc")
    text = (
        f"{tree}/feedback/a.html 2026-12-03 12:31:05.123456 UTC, 채점 끝 3.4 s, 12 ms\n"
        "make: *** [Makefile:111: export] Error 1\n"
        "learner-01 1.5 / 3.0 점: 0.57 · 0.89"
    )
    masked = same_outputs.masked(text, tree)
    assert masked == (
        "<tree>/feedback/a.html <when>, 채점 끝 <duration>, <duration>\n"
        "make: *** [Makefile:<line>: export] Error 1\n"
        "learner-01 1.5 / 3.0 점: 0.57 · 0.89"
    )


def test_make_grades_lines_are_compared_whatever_worker_took_what():
    def run(order, worker_port, results):
        lines = ["2개 제출물을 2개 작업자로 채점합니다"]
        lines += [f"[{n}/2] ch3 · {who} ✓ 1.0 s" for n, who in enumerate(order, start=1)]
        lines += [f"  작업자 tcp://127.0.0.1:{worker_port}: {results}개, 평균 1.2 s", "채점 끝"]
        return same_outputs.masked("\n".join(lines), Path("/x"))

    assert run(["a", "b"], 4001, 2) == run(["b", "a"], 5002, 1)
    assert run(["a", "b"], 4001, 2) != run(["a", "c"], 4001, 2)


def test_a_changed_score_or_an_output_on_one_side_only_differs(capsys):
    before = {"gradebook": "[1.0, 2.0]", "feedback/x.html": "같다", "reports/old.csv": "a"}
    after = {"gradebook": "[1.0, 0.0]", "feedback/x.html": "같다", "reports/new.csv": "a"}
    assert (
        same_outputs.compare(before, after)
        == [
            "feedback/x.html",
            "gradebook",
            "reports/new.csv",
            "reports/old.csv",
        ][1:]
    )
    shown = capsys.readouterr().out
    assert "same: feedback/x.html" in shown
    assert "DIFFERS: gradebook" in shown and "+[1.0, 0.0]" in shown
    assert "only after: reports/new.csv" in shown and "only before: reports/old.csv" in shown
    assert same_outputs.compare(before, dict(before)) == []
