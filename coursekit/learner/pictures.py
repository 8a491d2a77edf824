"""The picture of a failed function on the page's seeded example, for the feedback page.

The grader stored it in the verdict as numbers, labels and a caption
(coursekit.checks.picture); this module reads that record back, checks it
holds nothing else and nothing too big (a submission's own records are
dropped before grading, but a page is drawn from whatever the cell holds),
and turns it into the rows the feedback template prints: heatmap cells as
CSS classes and printed values, never markup from the record. The learner's
panel draws the same record (labextension/src/pictures.ts); `data()` is what
it gets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from coursekit.checks.picture import DECIMALS, FLOW, MAX_CELLS, MAX_LABEL, OMITTED, TABLES
from coursekit.core.messages import N_, _

SHADES = 9  # heatmap classes ck-b1..ck-b9 (and ck-r1..ck-r9 below zero); ck-b0 is white
MAX_PANELS = 16
MAX_TEXT = 300
MAX_STEPS = 8
ALT_CELLS = 6  # differing cells the text alternative names

# The panel's words for a picture (coursekit.learner.panel_server.words()).
WORDS = {
    "picture_expected": N_("expected"),
    "picture_received": N_("received"),
    "picture_left_here": N_("your array left the flow here: {shape}"),
    "picture_none": N_("No picture: {reason}"),
    "picture_title": N_("On the page's example"),
}


class BadPictureError(ValueError):
    """A picture record that is not what the grader writes."""


@dataclass
class Cell:
    text: str
    shade: str  # a CSS class
    outside: bool


@dataclass
class Panel:
    title: str
    columns: list[str]
    rows: list[tuple[str, list[Cell], list[Cell]]]  # label, expected cells, received cells
    alt: str


@dataclass
class Step:
    label: str
    shape: str
    left: bool = False


@dataclass
class Picture:
    kind: str
    caption: str
    reason: str = ""
    panels: list[Panel] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    got_shape: str = ""
    record: dict = field(default_factory=dict)

    @property
    def left_here(self) -> str:
        return _(WORDS["picture_left_here"]).format(shape=self.got_shape)

    @property
    def none_reason(self) -> str:
        return _(WORDS["picture_none"]).format(reason=self.reason)

    def data(self) -> dict:
        """The checked record, as the learner's panel gets it."""
        return self.record


def _text(value, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise BadPictureError("not text")
    return value[:limit]


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadPictureError("not a number")
    number = float(value)
    if not math.isfinite(number) or abs(number) > 1e6:
        raise BadPictureError("not a drawable number")
    return number


def _shape(value) -> list[int]:
    if not isinstance(value, list) or len(value) > 8:
        raise BadPictureError("not a shape")
    return [int(_number(n)) for n in value]


def _matrix(value, rows: int, columns: int) -> list[list[float]]:
    if not isinstance(value, list) or len(value) != rows:
        raise BadPictureError("rows")
    out = []
    for row in value:
        if not isinstance(row, list) or len(row) != columns:
            raise BadPictureError("columns")
        out.append([_number(v) for v in row])
    return out


def _shade(value: float, scale: float, is_weight: bool) -> str:
    """ck-b0..ck-b9 for 0..scale (blue, as the page's Blues), ck-r1..ck-r9 below zero."""
    if scale <= 0:
        return "ck-b0"
    level = min(SHADES, round(abs(value) / scale * SHADES))
    if value < 0 and not is_weight:
        return f"ck-r{level}" if level else "ck-b0"
    return f"ck-b{level}"


def _format(value: float, is_bool: bool) -> str:
    if is_bool:
        return "True" if value else "False"
    return f"{value:.{DECIMALS}f}".replace("-0.00", "0.00")


def _panel(raw: dict) -> tuple[Panel, dict, int]:
    if not isinstance(raw, dict):
        raise BadPictureError("panel")
    rows = [_text(r, MAX_LABEL) for r in raw.get("rows", [])]
    columns = [_text(c, MAX_LABEL) for c in raw.get("columns", [])]
    if not rows or not columns or len(rows) * len(columns) > MAX_CELLS:
        raise BadPictureError("size")
    expected = _matrix(raw.get("expected"), len(rows), len(columns))
    got = _matrix(raw.get("got"), len(rows), len(columns))
    outside = _matrix(raw.get("outside"), len(rows), len(columns))
    is_bool = bool(raw.get("bool"))
    values = [v for row in expected + got for v in row]
    is_weight = is_bool or all(0 <= v <= 1 for v in values)
    scale = 1.0 if is_weight else max(abs(v) for v in values)
    title = _text(raw.get("title", ""), 80)
    table_rows, differing = [], []
    for label, want, have, off in zip(rows, expected, got, outside, strict=True):
        cells_want = [
            Cell(_format(v, is_bool), _shade(v, scale, is_weight), bool(o))
            for v, o in zip(want, off, strict=True)
        ]
        cells_have = [
            Cell(_format(v, is_bool), _shade(v, scale, is_weight), bool(o))
            for v, o in zip(have, off, strict=True)
        ]
        table_rows.append((label, cells_want, cells_have))
        for column, w, h, o in zip(columns, want, have, off, strict=True):
            if o:
                differing.append(
                    f"{label}·{column} ({_format(w, is_bool)} → {_format(h, is_bool)})"
                )
    alt = _("{title}: {count} cells differ").format(title=title, count=len(differing))
    if differing:
        more = " …" if len(differing) > ALT_CELLS else ""
        alt += ": " + ", ".join(differing[:ALT_CELLS]) + more
    checked = {
        "title": title,
        "rows": rows,
        "columns": columns,
        "expected": expected,
        "got": got,
        "outside": [[int(bool(v)) for v in row] for row in outside],
        "bool": is_bool,
    }
    return Panel(title, columns, table_rows, alt), checked, len(rows) * len(columns)


def read(record) -> Picture | None:
    """The drawable picture of a stored record, or None when there is none or it is not one."""
    if not isinstance(record, dict):
        return None
    try:
        return _read(record)
    except (BadPictureError, TypeError, ValueError, OverflowError):
        return None


def _read(record: dict) -> Picture:
    kind = record.get("kind")
    caption = _text(record.get("caption", ""))
    key = _text(record.get("caption_key", ""), 40)
    if kind == OMITTED:
        reason = _text(record.get("reason", ""))
        checked = {"kind": kind, "caption": "", "caption_key": key, "reason": reason}
        return Picture(kind, "", reason=reason, record=checked)
    if kind == FLOW:
        raw_steps = record.get("steps")
        if not isinstance(raw_steps, list) or not 0 < len(raw_steps) <= MAX_STEPS:
            raise BadPictureError("steps")
        left_at = int(_number(record.get("left_at")))
        got_shape = _shape(record.get("got_shape"))
        steps, checked_steps = [], []
        for i, raw in enumerate(raw_steps):
            label, shape = _text(raw.get("label", ""), 40), _shape(raw.get("shape"))
            steps.append(Step(label, str(tuple(shape)), left=i == left_at))
            checked_steps.append({"label": label, "shape": shape})
        checked = {
            "kind": kind,
            "caption": caption,
            "caption_key": key,
            "steps": checked_steps,
            "left_at": left_at,
            "got_shape": got_shape,
        }
        shown = str(tuple(got_shape))
        return Picture(kind, caption, steps=steps, got_shape=shown, record=checked)
    if kind == TABLES:
        raw_panels = record.get("panels")
        if not isinstance(raw_panels, list) or not 0 < len(raw_panels) <= MAX_PANELS:
            raise BadPictureError("panels")
        panels, checked_panels, cells = [], [], 0
        for raw in raw_panels:
            panel, checked_panel, size = _panel(raw)
            panels.append(panel)
            checked_panels.append(checked_panel)
            cells += size
        if cells > MAX_CELLS * 2:
            raise BadPictureError("too many cells")
        checked = {"kind": kind, "caption": caption, "caption_key": key, "panels": checked_panels}
        return Picture(kind, caption, panels=panels, record=checked)
    raise BadPictureError("kind")


CSS = """
div.ck-picture { margin: 0.4em 0; }
div.ck-picture p.ck-caption { font-weight: bold; margin: 0.2em 0; }
div.ck-picture div.ck-panels { display: flex; flex-wrap: wrap; gap: 0.8em 1.6em; }
div.ck-picture div.ck-pair { display: flex; gap: 0.6em; }
div.course-summary div.ck-picture table.ck-heat { width: auto; border-collapse: separate;
  border-spacing: 2px; margin: 0; }
div.course-summary div.ck-picture table.ck-heat caption { caption-side: top; text-align: left;
  font-size: 0.9em; color: #333; padding-bottom: 0.2em; }
div.course-summary div.ck-picture table.ck-heat th { font-weight: normal; font-size: 0.85em;
  padding: 0.1em 0.3em; border: none; white-space: nowrap; vertical-align: middle; }
div.course-summary div.ck-picture table.ck-heat td { text-align: center; min-width: 3.2em;
  padding: 0.25em 0.3em; border: 3px solid transparent; font-variant-numeric: tabular-nums;
  font-size: 0.9em; white-space: nowrap; }
div.course-summary div.ck-picture table.ck-heat td.ck-off { border: 3px dashed #000;
  box-shadow: inset 0 0 0 2px #fff; font-weight: bold; }
div.course-summary div.ck-picture table.ck-heat td.ck-off::after { content: " ≠"; }
div.ck-picture .ck-b0 { background: #f7fbff; color: #000; }
div.ck-picture .ck-b1 { background: #deebf7; color: #000; }
div.ck-picture .ck-b2 { background: #c6dbef; color: #000; }
div.ck-picture .ck-b3 { background: #9ecae1; color: #000; }
div.ck-picture .ck-b4 { background: #6baed6; color: #000; }
div.ck-picture .ck-b5 { background: #4292c6; color: #fff; }
div.ck-picture .ck-b6 { background: #2171b5; color: #fff; }
div.ck-picture .ck-b7 { background: #08519c; color: #fff; }
div.ck-picture .ck-b8 { background: #08306b; color: #fff; }
div.ck-picture .ck-b9 { background: #041f45; color: #fff; }
div.ck-picture .ck-r1 { background: #fee6ce; color: #000; }
div.ck-picture .ck-r2 { background: #fdd0a2; color: #000; }
div.ck-picture .ck-r3 { background: #fdae6b; color: #000; }
div.ck-picture .ck-r4 { background: #fd8d3c; color: #000; }
div.ck-picture .ck-r5 { background: #f16913; color: #fff; }
div.ck-picture .ck-r6 { background: #d94801; color: #fff; }
div.ck-picture .ck-r7 { background: #a63603; color: #fff; }
div.ck-picture .ck-r8 { background: #7f2704; color: #fff; }
div.ck-picture .ck-r9 { background: #5a1b02; color: #fff; }
div.ck-picture p.ck-alt { font-size: 0.85em; color: #333; margin: 0.2em 0; }
div.ck-picture div.ck-flow { display: flex; flex-wrap: wrap; gap: 0.4em; margin: 0.3em 0;
  align-items: flex-start; }
div.ck-picture div.ck-flow span.ck-step { border: 1px solid #555; padding: 0.2em 0.5em;
  text-align: center; }
div.ck-picture div.ck-flow span.ck-step.ck-left { border: 3px dashed #000; font-weight: bold; }
div.ck-picture div.ck-flow span.ck-got { display: block; font-weight: bold; }
div.ck-picture div.ck-flow span.ck-arrow { padding-top: 0.25em; }
"""
