"""The report's three forms: a terminal table, a CSV, and a self-contained HTML page."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

from coursekit.report.data import AssignmentData
from coursekit.report.probe import Cluster
from coursekit.report.summary import Summary

CSV_COLUMNS = [
    "assignment", "student", "late", "score", "max_score", "cell", "status",
    "cell_score", "cell_max", "function", "misconception", "misconception_title",
    "seed", "case", "diagnosis", "cluster",
]  # fmt: skip


def cluster_ids(clusters: list[Cluster]) -> dict[tuple[str, str], str]:
    """(student, function) -> cluster label like `C1`."""
    return {
        (student, c.function): f"C{i}"
        for i, c in enumerate(clusters, start=1)
        for student in c.students
    }


def reproduce(data: AssignmentData, seed: int | None) -> str:
    return f"python -m grader_tests.reproduce {data.assignment} {seed}" if seed is not None else ""


def terminal(data: AssignmentData, summary: Summary, clusters: list[Cluster]) -> str:
    total = sum(data.cells.values()) + sum(data.manual.values())
    lines = [f"■ {data.assignment} — 학습자 {len(data.learners)}명, 만점 {total:g}점"]
    width = max((len(learner.student) for learner in data.learners), default=7)
    lines.append(f"  {'학습자':<{width - 1}} {'점수':>7}  틀린 칸과 진단")
    for learner in data.learners:
        late = " (마감 뒤)" if learner.late else ""
        lines.append(f"  {learner.student:<{width + 2}} {learner.score:>5g}/{total:g}{late}")
        for f in learner.failures:
            case = f" · seed {f.seed}" if f.seed is not None else ""
            lines.append(f"      ✗ {f.cell} ({f.score:g}/{f.max_score:g}){case}: {f.summary}"[:170])
            if f.case:
                lines.append(f"          사례: {f.case}"[:170])
        for cell in learner.manual_cells:
            lines.append(f"      … {cell}: 조교 채점 대기")
    lines.append("  짐작되는 실수 (학습자 수):")
    for key, title, n in summary.misconceptions:
        lines.append(f"    {n:>2}명 {'█' * n} [{key}] {title}"[:150])
    lines.append("  가장 어려운 칸 (점수를 잃은 학습자 수):")
    for cell, n in summary.hardest_cells[:5]:
        lines.append(f"    {n:>2}명 {'█' * n} {cell}")
    lines.append("  같은 틀린 출력으로 묶인 학습자 (probe):")
    for i, c in enumerate(clusters, start=1):
        if len(c.students) < 2:
            continue  # the HTML page lists every group; the terminal only the real clusters
        label = ", ".join(c.keys) if c.known else "카탈로그에 없는 실수"
        members = ", ".join(c.students)
        lines.append(f"    C{i} {c.function}: {len(c.students)}명 {members} — {label}")
    return "\n".join(lines)


def write_csv(path: Path, data: AssignmentData, clusters: list[Cluster]) -> None:
    ids = cluster_ids(clusters)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for learner in data.learners:
            base = [data.assignment, learner.student, int(learner.late), learner.score]
            base.append(learner.max_score)
            for f in learner.failures:
                writer.writerow(
                    [*base, f.cell, "틀림", f.score, f.max_score, f.function or "", f.key or "",
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
vertical-align:top;text-align:left}th{background:#f4f4f4}.fail{color:#b00020}
.manual{color:#8a6d00}.ok{color:#1b7f3b}.late{background:#fff3cd;padding:0 .3em}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
.bar text{font-size:13px}.muted{color:#777;font-size:.9em}
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


HARDEST_SHOWN = 10


def without_docstring(code: str) -> str:
    """A learner's answer cell without the released docstring, to keep examples short."""
    return re.sub(r'\n\s*"""(?:.|\n)*?"""\n', "\n", code, count=1).strip()


def misconception_section(summary: Summary, n: int) -> list[str]:
    e = html.escape
    rows = [(f"[{key}]", count) for key, _, count in summary.misconceptions]
    table = ["<table><tr><th>실수</th><th>뜻</th><th>학습자</th></tr>"]
    for key, title, _ in summary.misconceptions:
        who = ", ".join(summary.hit_by[key])
        table.append(f"<tr><td>[{e(key)}]</td><td>{e(title)}</td><td>{e(who)}</td></tr>")
    return [
        "<h2>짐작되는 실수별 학습자 수</h2>",
        bar_chart(rows, n, "#d9534f"),
        *table,
        "</table>",
    ]


def cluster_section(clusters: list[Cluster]) -> list[str]:
    e = html.escape
    parts = [
        "<h2>같은 틀린 출력으로 묶인 학습자</h2>",
        "<p class='muted'>고정된 probe 입력에서 함수의 틀린 출력이 같은 학습자끼리 묶었습니다. "
        "카탈로그가 모르는 실수도 여기서 무리로 보입니다.</p>",
    ]
    singles = []
    for i, c in enumerate(clusters, start=1):
        label = ", ".join(f"[{k}]" for k in c.keys) if c.known else "카탈로그에 없는 실수"
        if len(c.students) < 2:
            singles.append(
                f"<tr id='C{i}'><td>C{i}</td><td>{e(c.function)}</td>"
                f"<td>{e(c.students[0])}</td><td>{e(label)}</td></tr>"
            )
            continue
        parts.append(
            f"<h3 id='C{i}'>C{i} · {e(c.function)} · {len(c.students)}명 — {e(label)}</h3>"
            f"<p>{e(', '.join(c.students))}</p><p class='muted'>예시 ({e(c.students[0])}의 코드):"
            f"</p><pre>{e(without_docstring(c.example))}</pre>"
        )
    if len(parts) == 2:
        parts.append("<p class='muted'>두 명 이상이 같은 틀린 출력을 낸 묶음은 없습니다.</p>")
    if singles:
        parts += ["<h3>혼자인 틀린 출력</h3><table><tr><th>묶음</th><th>함수</th><th>학습자</th>"
                  "<th>진단</th></tr>", *singles, "</table>"]  # fmt: skip
    return parts


def learner_rows(data: AssignmentData, clusters: list[Cluster], total: float) -> list[str]:
    e = html.escape
    ids = cluster_ids(clusters)
    parts = ["<h2>학습자별 결과</h2><table><tr><th>학습자</th><th>점수</th>"
             "<th>틀린 칸 · 진단 · 재현</th></tr>"]  # fmt: skip
    for learner in data.learners:
        late = " <span class='late'>마감 뒤</span>" if learner.late else ""
        rows = []
        for f in learner.failures:
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
            f"<tr><td>{e(learner.student)}{late}</td><td>{learner.score:g}&nbsp;/&nbsp;{total:g}"
            f"</td><td>{''.join(rows)}</td></tr>"
        )
    return [*parts, "</table>"]


def write_html(path: Path, data: AssignmentData, summary: Summary, clusters: list[Cluster]) -> None:
    e = html.escape
    n = len(data.learners)
    total = sum(data.cells.values()) + sum(data.manual.values())
    mean = sum(learner.score for learner in data.learners) / max(n, 1)
    parts = [
        "<!DOCTYPE html><html lang='ko'><head><meta charset='utf-8'>",
        f"<title>{e(data.assignment)} 채점 보고서</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(data.assignment)} — 조교용 채점 보고서</h1>",
        f"<p>학습자 {n}명 · 평균 {mean:.1f} / {total:g}점 · "
        f"조교 채점을 기다리는 학습자 {summary.manual_waiting}명 · "
        f"마감 뒤 제출 {len(summary.late)}명 {e(', '.join(summary.late))}</p>",
        *misconception_section(summary, n),
        f"<h2>가장 어려운 칸 (점수를 잃은 학습자 수, 상위 {HARDEST_SHOWN}개)</h2>",
        bar_chart(summary.hardest_cells[:HARDEST_SHOWN], n, "#f0ad4e"),
        *cluster_section(clusters),
        *learner_rows(data, clusters, total),
        "</body></html>",
    ]
    path.write_text("\n".join(parts), encoding="utf-8")
