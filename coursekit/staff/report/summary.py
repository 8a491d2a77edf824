"""Class-wide counts: how many learners each misconception hit, which cells were hardest."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from coursekit.staff.report.data import AssignmentData


@dataclass
class Summary:
    misconceptions: list[tuple[str, str, int]]  # key, the catalog's title, learners hit
    hit_by: dict[str, list[str]]  # misconception key -> the learners it hit
    hardest_cells: list[tuple[str, int]]  # grade_id, learners who lost points there
    manual_waiting: int  # learners with a manual cell waiting for a TA
    late: list[str]
    # The live workshop's hints (coursekit.live.hints.counts, set by the report's command):
    # (function, hint level, learners whose highest hint seen is that level).
    hints: list[tuple[str, int, int]] = field(default_factory=list)


def summarize(data: AssignmentData) -> Summary:
    hits: Counter[str] = Counter()
    titles: dict[str, str] = {}
    cells: Counter[str] = Counter()
    hit_by: dict[str, list[str]] = {}
    for learner in data.learners:
        keys = {f.key for f in learner.failures if f.key}
        hits.update(keys)
        for key in sorted(keys):
            hit_by.setdefault(key, []).append(learner.student)
        for f in learner.failures:
            if f.key:
                titles[f.key] = f.key_title
        cells.update({f.cell for f in learner.failures})
    ranked = sorted(hits.items(), key=lambda item: (-item[1], item[0]))
    misconceptions = [(key, titles[key], n) for key, n in ranked]
    order = list(data.cells)
    hardest = sorted(cells.items(), key=lambda i: (-i[1], order.index(i[0])))
    return Summary(
        misconceptions,
        hit_by,
        hardest,
        sum(1 for learner in data.learners if learner.manual_cells),
        [learner.student for learner in data.learners if learner.late],
    )
