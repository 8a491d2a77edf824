"""How the learner's server reads an attempt from a fetched feedback page
(coursekit.learner.panel_server.read_page, coursekit.learner.feedback.read_attempt):
the summary wherever the page's long head puts it, the first one only, and each
version of a page parsed once however often the panel asks."""

from __future__ import annotations

import html
import json
import os

import pytest

from coursekit.learner import feedback, panel_server


def page(data: dict, head: int = 0, after: str = "") -> str:
    """A feedback page: `head` characters of style first (nbconvert inlines ~140 KB of
    CSS), then the summary's element with its data, then `after`."""
    attribute = html.escape(json.dumps(data, ensure_ascii=False))
    return (
        f"<html><head><style>{'p{}' * (head // 3)}</style></head><body>"
        f'<div id="{feedback.ATTEMPT_ID}" data-attempt="{attribute}"></div>{after}</body></html>'
    )


def attempt(score: float) -> dict:
    return {"schema": feedback.ATTEMPT_SCHEMA, "total": {"score": score, "max": 10}}


@pytest.mark.parametrize("head", [0, feedback.READ_CHUNK - 40, 3 * feedback.READ_CHUNK + 7])
def test_the_summary_is_found_past_any_head_and_across_a_chunks_end(head):
    # the attribute straddles a chunk's end for the middle case
    forged = page(attempt(10.0))  # a learner's output later on the page
    assert feedback.read_attempt(page(attempt(4.0), head, forged)) == attempt(4.0)


def test_a_page_is_parsed_once_per_version(tmp_path, monkeypatch):
    panel_server._page_attempt.cache_clear()
    parsed = []

    def counting(text):
        parsed.append(len(text))
        return feedback.read_attempt(text)

    monkeypatch.setattr(panel_server, "read_attempt", counting)
    folder = tmp_path / "feedback" / "2026-12-07 10:00:00.000000 UTC" / "ch3_multihead"
    folder.mkdir(parents=True)
    target = folder / "multihead.html"
    target.write_text(page(attempt(4.0)), encoding="utf-8")
    relative = str(target.relative_to(tmp_path))
    assert [panel_server.read_page(str(tmp_path), relative) for _ in range(3)] == [attempt(4.0)] * 3
    assert len(parsed) == 1
    # fetched again with another page (nbgrader's fetch_feedback rewrites it): read anew
    target.write_text(page(attempt(7.0)), encoding="utf-8")
    stamp = target.stat().st_mtime_ns + 1_000_000
    os.utime(target, ns=(stamp, stamp))
    assert panel_server.read_page(str(tmp_path), relative) == attempt(7.0)
    assert len(parsed) == 2


def test_only_a_page_inside_the_learners_folder_is_read(tmp_path):
    panel_server._page_attempt.cache_clear()
    root, outside = tmp_path / "home", tmp_path / "elsewhere.html"
    root.mkdir()
    outside.write_text(page(attempt(9.0)), encoding="utf-8")
    (root / "link.html").symlink_to(outside)
    (root / "folder.html").mkdir()
    big = root / "big.html"
    big.write_text(page(attempt(1.0), head=panel_server.PAGE_LIMIT), encoding="utf-8")
    for name in ("../elsewhere.html", "link.html", "folder.html", "missing.html", "big.html"):
        assert panel_server.read_page(str(root), name) is None, name
