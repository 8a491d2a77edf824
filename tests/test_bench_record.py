"""make bench's record in docs/performance.md: dated, newest first, the people's text kept."""

from __future__ import annotations

from datetime import UTC, datetime

from bench import record

DOC = "# Performance\n\nMeasured by hand, 2026-12-01.\n\n## Later\n\nMore prose.\n"


def run(n: int) -> str:
    when = datetime(2026, 12, 2, 10, n, tzinfo=UTC)
    return record.block(f"ratio 1.0{n}×\n", "make bench", f"c{n}", when)


def test_the_first_run_adds_the_section_after_the_prose():
    text = record.insert(DOC, run(1))
    assert text.startswith(DOC.rstrip("\n"))
    assert text.index(record.HEADING) > text.index("More prose.")
    assert "**2026-12-02 10:01 UTC**, commit `c1`" in text
    assert "ratio 1.01×" in text


def test_runs_are_newest_first_and_only_the_last_ones_stay():
    text = DOC
    for n in range(1, 8):
        text = record.insert(text, run(n), keep=3)
    assert text.count(record.BEGIN) == 3 == text.count(record.END)
    assert text.index("c7") < text.index("c6") < text.index("c5")
    assert "`c4`" not in text
    assert "Measured by hand, 2026-12-01." in text and "More prose." in text


def test_the_text_after_the_section_stays_where_it_was():
    text = record.insert(DOC, run(1))
    text += "\n## After\n\nKept.\n"
    again = record.insert(text, run(2))
    assert again.index("c2") < again.index("c1") < again.index("## After")
    assert again.endswith("Kept.\n")
    assert record.insert(again, run(3)).count(record.HEADING) == 1
