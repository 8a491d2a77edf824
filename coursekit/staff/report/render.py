"""The report's three forms: a terminal table, a CSV, and a self-contained HTML page."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from coursekit.checks.core import is_misconception
from coursekit.core import templating
from coursekit.core.messages import N_, _, ngettext
from coursekit.learner.diagnosis import display_width
from coursekit.staff.report.clusters import Cluster
from coursekit.staff.report.data import AssignmentData
from coursekit.staff.report.overview import Overview
from coursekit.staff.report.summary import Summary

# A cell's status in the CSV (translated as it is written), and a cluster no catalog entry names.
WRONG = N_("wrong")
NOT_IMPLEMENTED = N_("not implemented")
WAITING_FOR_TA = N_("waiting for a TA")
NOT_IN_CATALOG = N_("a mistake not in the catalog")
EXCHANGE = N_("left out or renamed by the exchange")
EXCHANGE_SHOWN = 5  # lines per learner in the terminal and the page; the CSV has them all

CSV_COLUMNS = [
    "assignment", "student", "late", "score", "max_score", "cell", "status",
    "cell_score", "cell_max", "function", "misconception", "misconception_title",
    "seed", "case", "diagnosis", "cluster",
]  # fmt: skip


def exchange_lines(learner) -> list[str]:
    """What the exchange did to the learner's files, the first EXCHANGE_SHOWN, then a count."""
    lines = [
        _("exchange: {path} — {reason}").format(path=n.path, reason=n.reason)
        if n.path
        else _("exchange: {reason}").format(reason=n.reason)
        for n in learner.exchange[:EXCHANGE_SHOWN]
    ]
    rest = len(learner.exchange) - EXCHANGE_SHOWN
    if rest > 0:
        more = ngettext(
            "exchange: … {count} more (the CSV lists them all)",
            "exchange: … {count} more (the CSV lists them all)",
            rest,
        )
        lines.append(more.format(count=rest))
    return lines


def numbered(clusters: list[Cluster]) -> list[tuple[str, Cluster]]:
    """Labels: `C1`, `C2` … for wrong-output clusters, `E1` … for error groups."""
    wrong = [c for c in clusters if not c.is_error]
    errors = [c for c in clusters if c.is_error]
    return [(f"C{i}", c) for i, c in enumerate(wrong, start=1)] + [
        (f"E{i}", c) for i, c in enumerate(errors, start=1)
    ]


def cluster_ids(clusters: list[Cluster]) -> dict[tuple[str, str], str]:
    """(student, function) -> cluster label like `C1` (or `E1` for an error group)."""
    return {
        (student, c.function): label for label, c in numbered(clusters) for student in c.students
    }


def misconceptions(summary: Summary) -> list[tuple[str, str, int]]:
    return [m for m in summary.misconceptions if is_misconception(m[0])]


def unimplemented_cells(view: Overview, student: str) -> set[str]:
    """The autograded cells that test a function this learner left as released."""
    left = set(view.unimplemented.of(student))
    return {rate.cell for rate in view.cells if rate.function in left}


def learners(n: int, width: int = 0) -> str:
    """`n` learners, the number right-aligned in `width` characters."""
    return ngettext("{count} learner", "{count} learners", n).format(count=f"{n:>{width}}")


def reproduce(data: AssignmentData, seed: int | None) -> str:
    if seed is None:
        return ""
    return f"python -m coursekit.checks.reproduce {data.assignment} {seed}"


def terminal_overview(data: AssignmentData, view: Overview) -> list[str]:
    """The score histogram, each cell's pass rate and the not-implemented line, compactly."""
    lines = ["  " + _("Score distribution (learners; written answers score 0 until a TA grades):")]
    width = max(display_width(b.label) for b in view.histogram)
    for b in view.histogram:
        pad = " " * (width - display_width(b.label))
        n = len(b.students)
        lines.append(f"    {pad}{b.label} {learners(n, 3)} {'█' * n}".rstrip())
    lines.append("  " + _("Pass rate per cell (learners with full marks / all, notebook order):"))
    width = max((len(rate.cell) for rate in view.cells), default=4)
    for rate in view.cells:
        bar = "█" * rate.passed + "░" * (rate.learners - rate.passed)
        points = _("{points:>3g} pt").format(points=rate.points)
        lines.append(f"    {rate.cell:<{width}} {points} {rate.passed:>3}/{rate.learners} {bar}")
    left = view.unimplemented
    nothing = _("Not implemented (no function implemented): {learners} {names}")
    names = ", ".join(left.nothing)
    lines.append("  " + nothing.format(learners=learners(len(left.nothing)), names=names))
    for student, functions in left.partly.items():
        partly = _("partly not implemented, {student}: {functions}")
        lines.append("    " + partly.format(student=student, functions=", ".join(functions)))
    return lines


def hint_lines(summary: Summary) -> list[str]:
    """How far into each function's hints the live workshop's learners got."""
    if not summary.hints:
        return []
    lines = ["  " + _("Hints given in the live workshop (learners, by the last hint seen):")]
    for function, level, n in summary.hints:
        lines.append(f"    {learners(n, 2)} {function}: " + _("up to hint {n}").format(n=level))
    return lines


def terminal(
    data: AssignmentData, summary: Summary, clusters: list[Cluster], view: Overview
) -> str:
    total = view.full_score
    mean = sum(learner.score for learner in data.learners) / max(len(data.learners), 1)
    title = _("{assignment} — {learners}, full score {total:g}, mean {mean:.1f}")
    n = learners(len(data.learners))
    lines = ["■ " + title.format(assignment=data.assignment, learners=n, total=total, mean=mean)]
    lines += terminal_overview(data, view)
    width = max((display_width(learner.label) for learner in data.learners), default=7)
    header = _("learner")
    header += " " * (width + 2 - display_width(header))  # as wide as the labels' column
    score = _("score")  # out of the f-string: babel extracts no _() inside one
    lines.append(f"  {header} {score:>7}  " + _("failing cells and diagnoses"))
    for learner in data.learners:
        late = " " + _("(late)") if learner.late else ""
        pad = " " * (width + 2 - display_width(learner.label))  # Korean names are wide
        head = f"  {learner.label}{pad} {learner.score:>5g}/{total:g}{late}"
        exchange = [("      ⚠ " + line)[:170] for line in exchange_lines(learner)]
        if learner.student in view.unimplemented.nothing:
            lines.append(f"{head}  " + _("not implemented: no function is implemented"))
            lines += exchange
            continue
        lines.append(head)
        lines += exchange
        stubs = unimplemented_cells(view, learner.student)
        if stubs:
            functions = ", ".join(view.unimplemented.of(learner.student))
            stubbed = ngettext(
                "… not implemented: {functions} ({count} autograded cell)",
                "… not implemented: {functions} ({count} autograded cells)",
                len(stubs),
            )
            lines.append("      " + stubbed.format(functions=functions, count=len(stubs)))
        for f in learner.failures:
            if f.cell in stubs:
                continue
            case = f" · seed {f.seed}" if f.seed is not None else ""
            lines.append(f"      ✗ {f.cell} ({f.score:g}/{f.max_score:g}){case}: {f.summary}"[:170])
            if f.case:
                lines.append(("          " + _("case: {case}").format(case=f.case))[:170])
        for cell in learner.manual_cells:
            lines.append(f"      … {cell}: " + _(WAITING_FOR_TA))
    lines.append("  " + _("Likely mistakes (learners):"))
    for key, title, n in misconceptions(summary):
        lines.append(f"    {learners(n, 2)} {'█' * n} [{key}] {title}"[:150])
    lines += hint_lines(summary)
    lines.append("  " + _("Learners grouped by the same wrong output (probe):"))
    for label, c in numbered(clusters):
        if c.is_error or len(c.students) < 2:
            continue  # the HTML page lists every group; the terminal only the real clusters
        named = ", ".join(c.keys) if c.known else _(NOT_IN_CATALOG)
        members = ", ".join(c.students)
        lines.append(f"    {label} {c.function}: {learners(len(c.students))} {members} — {named}")
    errors = [(label, c) for label, c in numbered(clusters) if c.is_error]
    if errors:
        raised = _("Functions that raised an error on the probe, not an output (not grouped):")
        lines.append("  " + raised)
    for label, c in errors:
        members = ", ".join(c.students)
        line = f"    {label} {c.function}: {learners(len(c.students))} {members} — {c.error}"
        lines.append(line[:170])
    return "\n".join(lines)


def write_csv(path: Path, data: AssignmentData, clusters: list[Cluster], view: Overview) -> None:
    """One row per failing cell (WRONG, or NOT_IMPLEMENTED when its function is still as
    released) and per manual cell WAITING_FOR_TA; the statuses in the course's language."""
    ids = cluster_ids(clusters)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for learner in data.learners:
            base = [data.assignment, learner.student, int(learner.late), learner.score]
            base.append(learner.max_score)
            stubs = unimplemented_cells(view, learner.student)
            for f in learner.failures:
                status = _(NOT_IMPLEMENTED) if f.cell in stubs else _(WRONG)
                writer.writerow(
                    [*base, f.cell, status, f.score, f.max_score, f.function or "", f.key or "",
                     f.key_title, "" if f.seed is None else f.seed, f.case, f.summary,
                     ids.get((learner.student, f.function), "")]
                )  # fmt: skip
            for cell in learner.manual_cells:
                writer.writerow(
                    [*base, cell, _(WAITING_FOR_TA), "", data.manual.get(cell, ""), *[""] * 7]
                )
            for note in learner.exchange:  # cell: the file ("" for the whole submission)
                writer.writerow([*base, note.path, _(EXCHANGE), *[""] * 7, note.reason, ""])


STYLE = """
body{font-family:'NanumGothic','Noto Sans KR',sans-serif;margin:2em;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.35em .5em;
vertical-align:top;text-align:left}th{background:#f4f4f4;white-space:nowrap}.fail{color:#b00020}
.manual{color:#8a6d00}.ok{color:#1b7f3b}.late{background:#fff3cd;padding:0 .3em}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
.bar text{font-size:13px}.muted{color:#777;font-size:.9em}
.rate{background:#eee;height:.9em;min-width:8em}.rate div{background:#1b7f3b;height:100%}
"""


def bar_geometry(rows: list[tuple[str, int]], total: int) -> dict:
    """A horizontal bar chart's layout: per row its label, bar and count of learners."""
    row_h, label_w, bar_w = 26, 430, 420
    bars = []
    for i, (label, n) in enumerate(rows):
        y, width = 5 + i * row_h, bar_w * n / max(total, 1)
        bars.append(
            {
                "label": label,
                "short": label if len(label) <= 48 else label[:47] + "…",
                "n": n,
                "text_y": y + 17,
                "bar_y": y + 3,
                "width": f"{width:.1f}",
                "count_x": f"{label_w + width + 6:.1f}",
            }
        )
    return {
        "rows": bars,
        "width": label_w + bar_w + 60,
        "height": row_h * len(rows) + 10,
        "label_x": label_w - 8,
        "bar_x": label_w,
        "bar_height": row_h - 8,
    }


def histogram_geometry(view: Overview) -> dict:
    """The score distribution's column chart layout: learners per score range."""
    bins = view.histogram
    most = max((len(b.students) for b in bins), default=0)
    col_w, plot_h, top, bottom = 84, 160, 22, 46
    columns = []
    for i, b in enumerate(bins):
        n, x = len(b.students), 10 + i * col_w
        height = plot_h * n / max(most, 1)
        y = top + plot_h - height
        columns.append(
            {
                "x": x + 6,
                "y": f"{y:.1f}",
                "width": col_w - 12,
                "height": f"{height:.1f}",
                "label": b.label,
                "short_label": b.short_label,
                "n": n,
                "who": ", ".join(b.students) or _("nobody"),
                "middle": x + col_w / 2,
                "count_y": f"{y - 5:.1f}",
            }
        )
    return {
        "columns": columns,
        "width": col_w * len(bins) + 20,
        "height": plot_h + top + bottom,
        "axis_y": top + plot_h,
        "axis_label_y": top + plot_h + 18,
        "axis_end": 10 + col_w * len(bins),
    }


def cell_rates(view: Overview) -> list[dict]:
    return [
        {
            "function": rate.function,
            "cell": rate.cell,
            "points": f"{rate.points:g}",
            "passed": rate.passed,
            "learners": rate.learners,
            "percent": f"{100 * rate.rate:.0f}",
        }
        for rate in view.cells
    ]


def without_docstring(code: str) -> str:
    """A learner's answer cell without the released docstring, to keep examples short."""
    return re.sub(r'\n\s*"""(?:.|\n)*?"""\n', "\n", code, count=1).strip()


def misconception_rows(summary: Summary) -> list[dict]:
    return [
        {"key": key, "title": title, "who": summary.hit_by[key]}
        for key, title, _count in misconceptions(summary)
    ]


def cluster_groups(clusters: list[Cluster]) -> dict:
    """Real clusters (two learners or more), lone wrong outputs, and error groups."""
    groups, singles, errors = [], [], []
    for label, c in numbered(clusters):
        if c.is_error:
            errors.append(
                {"label": label, "function": c.function, "students": c.students, "error": c.error}
            )
            continue
        named = ", ".join(f"[{k}]" for k in c.keys) if c.known else _(NOT_IN_CATALOG)
        row = {"label": label, "function": c.function, "named": named}
        if len(c.students) < 2:
            singles.append({**row, "student": c.students[0]})
            continue
        groups.append(
            {
                **row,
                "students": c.students,
                # The cluster's output on the first probe case, as the grader recorded it.
                "summary": c.summary or "",
                "example": without_docstring(c.example),
            }
        )
    return {"groups": groups, "singles": singles, "errors": errors}


def learner_table(data: AssignmentData, clusters: list[Cluster], view: Overview) -> list[dict]:
    """Per learner: score, what is unimplemented, each failing cell and how to reproduce it."""
    ids = cluster_ids(clusters)
    rows = []
    for learner in data.learners:
        stubs = unimplemented_cells(view, learner.student)
        nothing = learner.student in view.unimplemented.nothing
        failures = [
            {
                "cell": f.cell,
                "score": f"{f.score:g}",
                "max_score": f"{f.max_score:g}",
                "cluster": ids.get((learner.student, f.function)),
                "summary": f.summary,
                "seed": f.seed,
                "case": f.case,
                "command": reproduce(data, f.seed),
            }
            for f in learner.failures
            if f.cell not in stubs
        ]
        stub_functions = view.unimplemented.of(learner.student) if stubs and not nothing else []
        rows.append(
            {
                "label": learner.label,
                "late": learner.late,
                "score": f"{learner.score:g}",
                "full_score": f"{view.full_score:g}",
                "nothing": nothing,
                "stub_functions": stub_functions,
                "stub_cells": len(stubs),
                "failures": failures,
                "manual_cells": learner.manual_cells,
                "exchange": exchange_lines(learner),
                "all_passed": not (nothing or stub_functions or failures or learner.manual_cells),
            }
        )
    return rows


def learner_rows(data: AssignmentData, clusters: list[Cluster], view: Overview) -> list[str]:
    """The table of learners as HTML (the page includes the same template)."""
    table = learner_table(data, clusters, view)
    return [templating.render("report_learners.html.j2", learner_table=table)]


REPORT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def page_data(
    data: AssignmentData, summary: Summary, clusters: list[Cluster], view: Overview
) -> dict:
    """Everything the report's page shows, computed; report.html.j2 only lays it out."""
    n = len(data.learners)
    mean = sum(learner.score for learner in data.learners) / max(n, 1)
    found = misconceptions(summary)
    return {
        "policy": REPORT_POLICY,
        "style": STYLE,
        "assignment": data.assignment,
        "learners_n": n,
        "mean": f"{mean:.1f}",
        "full_score": f"{view.full_score:g}",
        "manual_waiting": summary.manual_waiting,
        "late": summary.late,
        "histogram": histogram_geometry(view),
        "cell_rates": cell_rates(view),
        "unimplemented": view.unimplemented,
        "misconception_bars": bar_geometry([(f"[{k}]", count) for k, _title, count in found], n),
        "misconceptions": misconception_rows(summary),
        "hints": [{"function": f, "level": level, "n": n} for f, level, n in summary.hints],
        "clusters": cluster_groups(clusters),
        "learner_table": learner_table(data, clusters, view),
    }


def write_html(
    path: Path, data: AssignmentData, summary: Summary, clusters: list[Cluster], view: Overview
) -> None:
    page = templating.render("report.html.j2", **page_data(data, summary, clusters, view))
    path.write_text(page, encoding="utf-8")
