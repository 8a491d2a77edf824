"""The report's three forms: a terminal table, a CSV, and a self-contained HTML page."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

from coursekit.diagnosis import display_width
from coursekit.report.clusters import Cluster
from coursekit.report.data import AssignmentData
from coursekit.report.overview import Overview
from coursekit.report.summary import Summary

# A function still as released is shown once as 미구현, not as a misconception.
NOT_IMPLEMENTED_KEY = "not_implemented"

CSV_COLUMNS = [
    "assignment", "student", "late", "score", "max_score", "cell", "status",
    "cell_score", "cell_max", "function", "misconception", "misconception_title",
    "seed", "case", "diagnosis", "cluster",
]  # fmt: skip


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
    return [m for m in summary.misconceptions if m[0] != NOT_IMPLEMENTED_KEY]


def unimplemented_cells(view: Overview, student: str) -> set[str]:
    """The autograded cells that test a function this learner left as released."""
    left = set(view.unimplemented.of(student))
    return {rate.cell for rate in view.cells if rate.function in left}


def reproduce(data: AssignmentData, seed: int | None) -> str:
    if seed is None:
        return ""
    return f"python -m coursekit.checks.reproduce {data.assignment} {seed}"


def terminal_overview(data: AssignmentData, view: Overview) -> list[str]:
    """The score histogram, each cell's pass rate and the 미구현 line, compactly."""
    lines = ["  점수 분포 (학습자 수; 조교가 채점하기 전의 서술형은 0점):"]
    width = max(display_width(b.label) for b in view.histogram)
    for b in view.histogram:
        pad = " " * (width - display_width(b.label))
        lines.append(f"    {pad}{b.label} {len(b.students):>3}명 {'█' * len(b.students)}".rstrip())
    lines.append("  칸별 통과율 (만점을 받은 학습자 / 전체, 노트북 순서):")
    width = max((len(rate.cell) for rate in view.cells), default=4)
    for rate in view.cells:
        bar = "█" * rate.passed + "░" * (rate.learners - rate.passed)
        lines.append(
            f"    {rate.cell:<{width}} {rate.points:>3g}점 {rate.passed:>3}/{rate.learners} {bar}"
        )
    left = view.unimplemented
    lines.append(
        f"  미구현 (아무 함수도 구현하지 않음): {len(left.nothing)}명 {', '.join(left.nothing)}"
    )
    for student, functions in left.partly.items():
        lines.append(f"    일부 미구현 {student}: {', '.join(functions)}")
    return lines


def terminal(
    data: AssignmentData, summary: Summary, clusters: list[Cluster], view: Overview
) -> str:
    total = view.full_score
    mean = sum(learner.score for learner in data.learners) / max(len(data.learners), 1)
    lines = [
        f"■ {data.assignment} — 학습자 {len(data.learners)}명, 만점 {total:g}점, 평균 {mean:.1f}점"
    ]
    lines += terminal_overview(data, view)
    width = max((display_width(learner.label) for learner in data.learners), default=7)
    lines.append(f"  {'학습자':<{width - 1}} {'점수':>7}  틀린 칸과 진단")
    for learner in data.learners:
        late = " (마감 뒤)" if learner.late else ""
        pad = " " * (width + 2 - display_width(learner.label))  # Korean names are wide
        head = f"  {learner.label}{pad} {learner.score:>5g}/{total:g}{late}"
        if learner.student in view.unimplemented.nothing:
            lines.append(f"{head}  미구현: 아무 함수도 구현하지 않았습니다")
            continue
        lines.append(head)
        stubs = unimplemented_cells(view, learner.student)
        if stubs:
            functions = ", ".join(view.unimplemented.of(learner.student))
            lines.append(f"      … 미구현: {functions} (자동 채점 칸 {len(stubs)}개)")
        for f in learner.failures:
            if f.cell in stubs:
                continue
            case = f" · seed {f.seed}" if f.seed is not None else ""
            lines.append(f"      ✗ {f.cell} ({f.score:g}/{f.max_score:g}){case}: {f.summary}"[:170])
            if f.case:
                lines.append(f"          사례: {f.case}"[:170])
        for cell in learner.manual_cells:
            lines.append(f"      … {cell}: 조교 채점 대기")
    lines.append("  짐작되는 실수 (학습자 수):")
    for key, title, n in misconceptions(summary):
        lines.append(f"    {n:>2}명 {'█' * n} [{key}] {title}"[:150])
    lines.append("  같은 틀린 출력으로 묶인 학습자 (probe):")
    for label, c in numbered(clusters):
        if c.is_error or len(c.students) < 2:
            continue  # the HTML page lists every group; the terminal only the real clusters
        named = ", ".join(c.keys) if c.known else "카탈로그에 없는 실수"
        members = ", ".join(c.students)
        lines.append(f"    {label} {c.function}: {len(c.students)}명 {members} — {named}")
    errors = [(label, c) for label, c in numbered(clusters) if c.is_error]
    if errors:
        lines.append("  probe 에서 출력 대신 오류를 낸 함수 (묶음에 넣지 않음):")
    for label, c in errors:
        members = ", ".join(c.students)
        lines.append(f"    {label} {c.function}: {len(c.students)}명 {members} — {c.error}"[:170])
    return "\n".join(lines)


def write_csv(path: Path, data: AssignmentData, clusters: list[Cluster], view: Overview) -> None:
    """One row per failing cell ("틀림", or "미구현" when its function is still as released)
    and per manual cell waiting for a TA."""
    ids = cluster_ids(clusters)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for learner in data.learners:
            base = [data.assignment, learner.student, int(learner.late), learner.score]
            base.append(learner.max_score)
            stubs = unimplemented_cells(view, learner.student)
            for f in learner.failures:
                status = "미구현" if f.cell in stubs else "틀림"
                writer.writerow(
                    [*base, f.cell, status, f.score, f.max_score, f.function or "", f.key or "",
                     f.key_title, "" if f.seed is None else f.seed, f.case, f.summary,
                     ids.get((learner.student, f.function), "")]
                )  # fmt: skip
            for cell in learner.manual_cells:
                writer.writerow(
                    [*base, cell, "조교 채점 대기", "", data.manual.get(cell, ""), *[""] * 7]
                )


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


def bar_chart(rows: list[tuple[str, int]], total: int, color: str) -> str:
    """A horizontal SVG bar chart: label, bar, count of learners."""
    if not rows:
        return "<p class='muted'>없음</p>"
    row_h, label_w, bar_w = 26, 430, 420
    svg = [
        f"<svg class='bar' width='{label_w + bar_w + 60}' height='{row_h * len(rows) + 10}'"
        " xmlns='http://www.w3.org/2000/svg' role='img'>"
    ]
    for i, (label, n) in enumerate(rows):
        y, width = 5 + i * row_h, bar_w * n / max(total, 1)
        short = label if len(label) <= 48 else label[:47] + "…"
        svg.append(
            f"<text x='{label_w - 8}' y='{y + 17}' text-anchor='end'>{html.escape(short)}</text>"
            f"<rect x='{label_w}' y='{y + 3}' width='{width:.1f}' height='{row_h - 8}'"
            f" fill='{color}'><title>{html.escape(label)}: {n}명</title></rect>"
            f"<text x='{label_w + width + 6:.1f}' y='{y + 17}'>{n}명</text>"
        )
    return "".join([*svg, "</svg>"])


def histogram_svg(view: Overview) -> str:
    """The score distribution as an inline SVG column chart: learners per score range."""
    bins = view.histogram
    most = max((len(b.students) for b in bins), default=0)
    col_w, plot_h, top, bottom = 84, 160, 22, 46
    svg = [
        f"<svg class='bar' width='{col_w * len(bins) + 20}' height='{plot_h + top + bottom}'"
        " xmlns='http://www.w3.org/2000/svg' role='img'>"
    ]
    for i, b in enumerate(bins):
        n, x = len(b.students), 10 + i * col_w
        height = plot_h * n / max(most, 1)
        y = top + plot_h - height
        who = ", ".join(b.students) or "없음"
        svg.append(
            f"<rect x='{x + 6}' y='{y:.1f}' width='{col_w - 12}' height='{height:.1f}'"
            f" fill='#5b8def'><title>{html.escape(b.label)}: {n}명 ({html.escape(who)})"
            f"</title></rect><text x='{x + col_w / 2}' y='{y - 5:.1f}' text-anchor='middle'>"
            f"{n}명</text><text x='{x + col_w / 2}' y='{top + plot_h + 18}'"
            f" text-anchor='middle'>{html.escape(b.label.removesuffix(' 미만'))}</text>"
        )
    svg.append(
        f"<line x1='10' x2='{10 + col_w * len(bins)}' y1='{top + plot_h}' y2='{top + plot_h}'"
        " stroke='#999'/></svg>"
    )
    return "".join(svg)


def overview_section(view: Overview) -> list[str]:
    """What TAs see first: score distribution, pass rate per cell, who implemented nothing."""
    e = html.escape
    parts = [
        "<h2>점수 분포</h2>",
        "<p class='muted'>학습자 수. 구간은 아래 끝을 포함하고 위 끝은 포함하지 않습니다 "
        "(마지막 구간은 만점까지). 조교가 채점하기 전의 서술형은 0점으로 셉니다.</p>",
        histogram_svg(view),
        "<h2>칸별 통과율 (노트북 순서)</h2>",
        "<table><tr><th>함수</th><th>칸</th><th>배점</th><th>만점을 받은 학습자</th>"
        "<th style='width:40%'></th></tr>",
    ]
    for rate in view.cells:
        percent = 100 * rate.rate
        parts.append(
            f"<tr><td><code>{e(rate.function)}</code></td><td>{e(rate.cell)}</td>"
            f"<td>{rate.points:g}</td><td>{rate.passed} / {rate.learners}</td>"
            f"<td><div class='rate'><div style='width:{percent:.0f}%'></div></div></td></tr>"
        )
    parts.append("</table>")
    left = view.unimplemented
    nothing = ", ".join(left.nothing) if left.nothing else "없음"
    parts.append(
        f"<p id='unimplemented'><b>미구현</b> (아무 함수도 구현하지 않은 학습자) "
        f"{len(left.nothing)}명: {e(nothing)}</p>"
    )
    if left.partly:
        parts.append("<p class='muted'>일부 함수를 구현하지 않은 학습자:</p><ul>")
        for student, functions in left.partly.items():
            parts.append(f"<li>{e(student)}: {e(', '.join(functions))}</li>")
        parts.append("</ul>")
    return parts


def without_docstring(code: str) -> str:
    """A learner's answer cell without the released docstring, to keep examples short."""
    return re.sub(r'\n\s*"""(?:.|\n)*?"""\n', "\n", code, count=1).strip()


def misconception_section(summary: Summary, n: int) -> list[str]:
    e = html.escape
    found = misconceptions(summary)
    rows = [(f"[{key}]", count) for key, _, count in found]
    table = ["<table><tr><th>실수</th><th>뜻</th><th>학습자</th></tr>"]
    for key, title, _ in found:
        who = ", ".join(summary.hit_by[key])
        table.append(f"<tr><td>[{e(key)}]</td><td>{e(title)}</td><td>{e(who)}</td></tr>")
    return [
        "<h2>짐작되는 실수별 학습자 수</h2>",
        "<p class='muted'>미구현은 위의 미구현 줄에만 셉니다.</p>",
        bar_chart(rows, n, "#d9534f"),
        *table,
        "</table>",
    ]


def summary_line(c: Cluster) -> str:
    """The cluster's output on the first probe case, as the grader recorded it."""
    if not c.summary:
        return ""
    return f"<p class='muted'>첫 probe 사례의 출력: <code>{html.escape(c.summary)}</code></p>"


def cluster_section(clusters: list[Cluster]) -> list[str]:
    e = html.escape
    parts = [
        "<h2>같은 틀린 출력으로 묶인 학습자</h2>",
        "<p class='muted'>고정된 probe 입력에서 함수의 틀린 출력이 같은 학습자끼리 묶었습니다 "
        "(채점기가 숨은 검사를 돌리며 남긴 기록으로 묶으며, 보고서는 학습자 코드를 실행하지 "
        "않습니다). 카탈로그가 모르는 실수도 여기서 무리로 보입니다. 구현하지 않은 함수는 "
        "묶지 않고, 출력 대신 오류를 낸 함수는 묶음이 아니라 아래 오류 표에 있습니다.</p>",
    ]
    singles, errors = [], []
    for label, c in numbered(clusters):
        if c.is_error:
            errors.append(
                f"<tr id='{label}'><td>{label}</td><td>{e(c.function)}</td>"
                f"<td>{e(', '.join(c.students))}</td><td>{e(c.error)}</td></tr>"
            )
            continue
        named = ", ".join(f"[{k}]" for k in c.keys) if c.known else "카탈로그에 없는 실수"
        if len(c.students) < 2:
            singles.append(
                f"<tr id='{label}'><td>{label}</td><td>{e(c.function)}</td>"
                f"<td>{e(c.students[0])}</td><td>{e(named)}</td></tr>"
            )
            continue
        parts.append(
            f"<h3 id='{label}'>{label} · {e(c.function)} · {len(c.students)}명 — {e(named)}</h3>"
            f"<p>{e(', '.join(c.students))}</p>{summary_line(c)}<p class='muted'>예시 "
            f"({e(c.students[0])}의 코드):</p><pre>{e(without_docstring(c.example))}</pre>"
        )
    if len(parts) == 2:
        parts.append("<p class='muted'>두 명 이상이 같은 틀린 출력을 낸 묶음은 없습니다.</p>")
    if singles:
        parts += ["<h3>혼자인 틀린 출력</h3><table><tr><th>묶음</th><th>함수</th><th>학습자</th>"
                  "<th>진단</th></tr>", *singles, "</table>"]  # fmt: skip
    if errors:
        parts += ["<h3>probe 에서 출력 대신 오류를 낸 함수</h3><table><tr><th>묶음</th>"
                  "<th>함수</th><th>학습자</th><th>오류 (첫 학습자)</th></tr>", *errors,
                  "</table>"]  # fmt: skip
    return parts


def learner_rows(data: AssignmentData, clusters: list[Cluster], view: Overview) -> list[str]:
    e = html.escape
    ids = cluster_ids(clusters)
    parts = ["<h2>학습자별 결과</h2><table><tr><th>학습자</th><th>점수</th>"
             "<th>틀린 칸 · 진단 · 재현</th></tr>"]  # fmt: skip
    for learner in data.learners:
        late = " <span class='late'>마감 뒤</span>" if learner.late else ""
        rows = []
        stubs = unimplemented_cells(view, learner.student)
        if learner.student in view.unimplemented.nothing:
            rows.append("<div class='fail'><a href='#unimplemented'>미구현</a>: "
                        "아무 함수도 구현하지 않았습니다</div>")  # fmt: skip
        elif stubs:
            functions = ", ".join(view.unimplemented.of(learner.student))
            rows.append(
                f"<div class='fail'>… 미구현: {e(functions)} (자동 채점 칸 {len(stubs)}개)</div>"
            )
        for f in learner.failures:
            if f.cell in stubs:
                continue
            cluster = ids.get((learner.student, f.function))
            seed = f"seed {f.seed} · " if f.seed is not None else ""
            case = f"<br><span class='muted'>{seed}{e(f.case)}</span>" if f.case else ""
            command = reproduce(data, f.seed)
            command = f"<br><code>{e(command)}</code>" if command else ""
            link = f" <a href='#{cluster}'>{cluster}</a>" if cluster else ""
            rows.append(
                f"<div class='fail'>✗ <b>{e(f.cell)}</b> ({f.score:g}/{f.max_score:g}){link}: "
                f"{e(f.summary)}{case}{command}</div>"
            )
        for cell in learner.manual_cells:
            rows.append(f"<div class='manual'>… <b>{e(cell)}</b>: 조교 채점 대기</div>")
        if not rows:
            rows.append("<div class='ok'>✓ 모든 자동 채점 칸 통과</div>")
        parts.append(
            f"<tr><td>{e(learner.label)}{late}</td><td>{learner.score:g}&nbsp;/&nbsp;"
            f"{view.full_score:g}</td><td>{''.join(rows)}</td></tr>"
        )
    return [*parts, "</table>"]


REPORT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def write_html(
    path: Path, data: AssignmentData, summary: Summary, clusters: list[Cluster], view: Overview
) -> None:
    e = html.escape
    n = len(data.learners)
    total = view.full_score
    mean = sum(learner.score for learner in data.learners) / max(n, 1)
    parts = [
        "<!DOCTYPE html><html lang='ko'><head><meta charset='utf-8'>",
        # Everything is escaped already; the policy keeps the page script-less when opened
        # from disk or /files/ too, whatever a learner's code or message holds.
        f"<meta http-equiv='Content-Security-Policy' content=\"{REPORT_POLICY}\">",
        f"<title>{e(data.assignment)} 채점 보고서</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(data.assignment)} — 조교용 채점 보고서</h1>",
        f"<p>학습자 {n}명 · 평균 {mean:.1f} / {total:g}점 · "
        f"조교 채점을 기다리는 학습자 {summary.manual_waiting}명 · "
        f"마감 뒤 제출 {len(summary.late)}명 {e(', '.join(summary.late))}</p>",
        *overview_section(view),
        *misconception_section(summary, n),
        *cluster_section(clusters),
        *learner_rows(data, clusters, view),
        "</body></html>",
    ]
    path.write_text("\n".join(parts), encoding="utf-8")
