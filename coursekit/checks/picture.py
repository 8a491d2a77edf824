"""A failed function on the page's seeded example, as the course pages draw it: plain data.

When a hidden check fails, the grader (trusted side) calls the learner's
function once more on the seeded example the notebook's visible cell used
(the page's words and sizes: four words, d_model 8, h 2) and keeps
what came back beside the reference's answer as a bounded record in the
verdict (`Verdict.picture`). The feedback page and the learner's panel draw it
from those numbers only: tables side by side, one panel per head, values to
two decimals, the cells outside the tolerance marked, and a one-line caption
saying what the difference looks like; or, for a wrong shape, the page's shape
flow with the step where the learner's array left it. No learner code runs to
draw it and nothing the learner wrote is kept but numbers and shapes.

A course declares its seeded examples next to its checks
(`HiddenChecks(seed_examples={function: SeedExample(...)})`); a function
without one gets no picture. Hidden random cases are never drawn.

    {"kind": "tables", "caption": "...", "caption_key": "heads_swapped",
     "panels": [{"title": "weights · head 0", "rows": [...], "columns": [...],
                 "expected": [[...]], "got": [[...]], "outside": [[0, 1, ...]], "bool": false}]}
    {"kind": "flow", "caption": "...", "caption_key": "shape",
     "steps": [{"label": "Q", "shape": [4, 8]}, ...], "left_at": 1, "got_shape": [4, 2, 4]}
    {"kind": "omitted", "caption": "", "caption_key": "omitted", "reason": "..."}
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coursekit.core.messages import _

from .core import Case, excess, invoke_all, quiet_numpy

DECIMALS = 2  # the page prints its tables to two decimals
MAX_CELLS = 256  # per drawn array: the seeded examples have at most 2 × 4 × 8
MAX_NDIM = 4
MAX_MAGNITUDE = 1e6  # beyond this a value is not one of the page's numbers
MAX_LABEL = 24
MAX_SHAPE_NDIM = 8
MAX_HEADS_PERMUTED = 4  # heads swapped is looked for among at most 4! orders

TABLES, FLOW, OMITTED = "tables", "flow", "omitted"
# Caption keys: what the difference looks like (the test of the catalog reads them).
GENERIC = "values_differ"
CAPTION_KEYS = (
    "swapped_outputs",
    "heads_swapped",
    "sees_future",
    "sees_masked",
    "mask_inverted",
    "blocks_own_word",
    "blocks_allowed",
    "rows_not_one",
    "columns_one",
    "transposed",
    "sharper",
    "flatter",
    "rows_misplaced",
    "values_misplaced",
    "scaled",
    "not_bool",
    "only_output",
    "only_weights",
    "weights_differ",
    "shape",
    GENERIC,
)


@dataclass(frozen=True)
class Table:
    """How one returned array is labelled: `rows` and `columns` name its last two axes
    (None: numbered), `head_axis` says its leading axis is the heads (one panel each)."""

    name: str
    rows: tuple[str, ...] | None = None
    columns: tuple[str, ...] | None = None
    weights: bool = False  # a table of attention weights: rows sum to 1
    flow: tuple[tuple[str, tuple[int, ...]], ...] = ()  # the page's shape flow
    step: int | None = None  # where in `flow` this array stands


@dataclass(frozen=True)
class SeedExample:
    """The seeded example a function's visible cell runs, and how its results are drawn:
    one Table per returned value (a tuple's items in order)."""

    case: Case
    tables: tuple[Table, ...]
    causal: bool = False  # the case's mask hides the future (an upper triangle)
    notes: dict = field(default_factory=dict)


def seed_picture(
    examples: SeedExample | Sequence[SeedExample], fn: Callable, reference: Callable
) -> dict | None:
    """The picture record of `fn` on the first of its seeded examples where it differs from
    the reference, or None when it agrees on all (or raised: the message says why, in words).
    All examples are called in one round trip."""
    examples = (examples,) if isinstance(examples, SeedExample) else tuple(examples)
    results = invoke_all(fn, [example.case for example in examples])
    for example, (got, _after, error) in zip(examples, results, strict=True):
        if error is not None:
            continue
        case = example.case
        with quiet_numpy():
            expected = reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
        try:
            picture = picture_of(example, got, expected)
        except Exception:  # a value nothing here reads: no picture, and say so
            picture = omitted(_("The returned value could not be read as numbers."))
        if picture is not None:
            return picture
    return None


def omitted(reason: str) -> dict:
    return {"kind": OMITTED, "caption": "", "caption_key": OMITTED, "reason": reason}


def picture_of(example: SeedExample, got: Any, expected: Any) -> dict | None:
    """The record from the returned and the expected values (both as returned)."""
    tables = example.tables
    if isinstance(expected, tuple):
        if not isinstance(got, tuple | list) or len(got) != len(expected):
            return omitted(_("It did not return {count} values.").format(count=len(expected)))
        gots, expecteds = list(got), list(expected)
    else:
        gots, expecteds = [got], [expected]
    arrays = []
    for item in gots:
        reason = unreadable(item)
        if reason:
            return omitted(reason)
        arrays.append(np.asarray(item))
    expecteds = [np.asarray(e) for e in expecteds]
    differing = [
        i for i, (g, e) in enumerate(zip(arrays, expecteds, strict=True)) if not _agrees(g, e)
    ]
    if not differing:
        return None
    if len(arrays) == 2 and _swapped(arrays, expecteds):
        key, caption = (
            "swapped_outputs",
            _("{first} and {second} are swapped.").format(
                first=tables[0].name, second=tables[1].name
            ),
        )
        return _tables_record(tables, arrays, expecteds, range(2), key, caption)
    for i in differing:
        if arrays[i].shape != expecteds[i].shape:
            return _flow_record(tables[i], arrays[i].shape, expecteds[i].shape)
    described = [
        (i, *describe(arrays[i], expecteds[i], tables[i], example.causal)) for i in differing
    ]
    first, key, caption = next((d for d in described if d[1] != GENERIC), described[0])
    if key == GENERIC and len(arrays) == 2 and len(differing) == 1:
        right = tables[1 - first].name
        key = "only_output" if first == 0 else "only_weights"
        caption = _("{right} is right; {wrong} differs.").format(
            right=right, wrong=tables[first].name
        )
    elif key == GENERIC and len(differing) > 1:
        drawn = [i for i in differing if tables[i].weights][:1] or differing[:1]
        first, key = drawn[0], "weights_differ" if tables[drawn[0]].weights else GENERIC
        if key != GENERIC:
            caption = _("The weights table already differs, and so does everything after it.")
    # The value the caption speaks of first, then the others that differ.
    drawn_order = [first, *(i for i in differing if i != first)]
    return _tables_record(tables, arrays, expecteds, drawn_order, key, caption)


def unreadable(value: Any) -> str:
    """Why a returned value is not drawn ("" when it can be)."""
    if not isinstance(value, np.ndarray):
        return _("It returned {type}, not a NumPy array.").format(type=type(value).__name__)
    if value.dtype.kind not in "biuf":
        return _("Its values are not real numbers (dtype {dtype}).").format(dtype=value.dtype)
    if value.ndim > MAX_SHAPE_NDIM:
        return _("It has {ndim} axes, too many to draw.").format(ndim=value.ndim)
    if value.size > MAX_CELLS or value.ndim > MAX_NDIM:
        return _("It has {size} values, too many to draw.").format(size=value.size)
    numbers = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(numbers)):
        return _("It holds nan or inf, which cannot be drawn.")
    if numbers.size and np.abs(numbers).max() > MAX_MAGNITUDE:
        return _("Its values are too large to draw.")
    return ""


def _agrees(got: np.ndarray, expected: np.ndarray) -> bool:
    if got.shape != expected.shape:
        return False
    if expected.dtype == bool:
        return got.dtype == bool and bool(np.array_equal(got, expected))
    return bool(np.all(excess(got, expected) <= 1.0))


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all(excess(a, b) <= 1.0))


def _swapped(arrays: list, expecteds: list) -> bool:
    return _close(arrays[0], expecteds[1]) and _close(arrays[1], expecteds[0])


# ---------------------------------------------------------------- captions


def describe(got: np.ndarray, expected: np.ndarray, table: Table, causal: bool) -> tuple[str, str]:
    """(caption key, one-line caption) naming what the difference looks like."""
    g, e = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if expected.dtype == bool and got.dtype != bool and _close(g, e):
        return "not_bool", _("The cells are right, but they are numbers, not True/False.")
    if g.ndim == 3 and 1 < g.shape[0] <= MAX_HEADS_PERMUTED:
        for order in itertools.permutations(range(g.shape[0])):
            if order != tuple(range(g.shape[0])) and _close(g[list(order)], e):
                moved = next(i for i, j in enumerate(order) if i != j)
                return "heads_swapped", _("head {a} and head {b} are swapped.").format(
                    a=moved, b=order[moved]
                )
    hidden = e == 0 if expected.dtype != bool else ~expected
    if g.ndim >= 2 and hidden.any():
        shown = g != 0
        seen = hidden & shown
        blocked = ~hidden & ~shown
        if seen.any() and blocked.any() and np.array_equal(shown, ~hidden):
            return "mask_inverted", _(
                "The mask is the wrong way round: it hides what should be seen and shows the rest."
            )
        if seen.any():
            upper = np.triu(np.ones(g.shape[-2:], dtype=bool), k=1)
            if causal and np.any(seen & upper):
                return "sees_future", _("It looks at future words.")
            return "sees_masked", _("It looks at masked words.")
    if g.ndim >= 2:
        own = np.eye(*g.shape[-2:], dtype=bool)
        if np.any(own & (g == 0) & (e != 0)):
            return "blocks_own_word", _("A word does not look at itself.")
        if np.any((g == 0) & (e != 0)):
            return "blocks_allowed", _("It hides words that should be seen.")
    if table.weights and g.ndim >= 2 and not np.allclose(g.sum(axis=-1), 1.0):
        if np.allclose(g.sum(axis=-2), 1.0):
            return "columns_one", _("The rows do not sum to 1: the columns do.")
        return "rows_not_one", _("The rows do not sum to 1.")
    if g.ndim >= 2 and g.shape[-1] == g.shape[-2] and _close(np.swapaxes(g, -1, -2), e):
        return "transposed", _("Rows and columns are swapped (transposed).")
    if table.weights and g.ndim >= 2 and np.array_equal(g.argmax(-1), e.argmax(-1)):
        with np.errstate(all="ignore"):
            spread = lambda w: -np.nansum(w * np.log(np.where(w > 0, w, 1)))  # noqa: E731
        if spread(g) < spread(e):
            return "sharper", _("The weights lean more to one word than expected.")
        if spread(g) > spread(e):
            return "flatter", _("The weights are spread more evenly than expected.")
    if g.ndim >= 2:
        rows_g = g.reshape(-1, g.shape[-1])
        rows_e = e.reshape(-1, e.shape[-1])
        if all(any(_close(r, s) for s in rows_e) for r in rows_g):
            return "rows_misplaced", _(
                "Each row is a right row, in the wrong place: words and heads are mixed up."
            )
    if _close(np.sort(g, axis=None), np.sort(e, axis=None)):
        return "values_misplaced", _("The values are all there, in the wrong cells.")
    scale = _common_factor(g, e)
    if scale is not None:
        return "scaled", _("Every value is {factor} times the expected one.").format(
            factor=f"{scale:.3g}"
        )
    outside = int(np.count_nonzero(~(excess(g, e) <= 1.0)))
    return GENERIC, _("{count} of {size} cells are outside the tolerance.").format(
        count=outside, size=g.size
    )


def _common_factor(g: np.ndarray, e: np.ndarray) -> float | None:
    big = np.abs(e) > 1e-9
    if not big.any():
        return None
    ratios = g[big] / e[big]
    factor = float(np.median(ratios))
    if factor in (0.0, 1.0) or not _close(g, e * factor):
        return None
    return factor


# ---------------------------------------------------------------- records


def _labels(given: Sequence[str] | None, length: int) -> list[str]:
    if given is not None and len(given) == length:
        return [str(label)[:MAX_LABEL] for label in given]
    return [str(i) for i in range(length)]


def _panels(table: Table, got: np.ndarray, expected: np.ndarray) -> list[dict]:
    """One panel per 2-D slice (per head), at most MAX_CELLS values in all."""
    is_bool = expected.dtype == bool
    e = np.asarray(expected, dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    outside = g != e if is_bool else ~(excess(g, e) <= 1.0)
    if e.ndim == 1:
        e, g, outside = e[None], g[None], outside[None]
    lead_shape = e.shape[:-2]
    panels = []
    for lead in np.ndindex(*lead_shape) if lead_shape else [()]:
        title = table.name
        if lead:
            title = f"{table.name} · head {', '.join(map(str, lead))}"
        rows = table.rows if e.ndim >= 2 and e.shape[-2] > 1 else None
        panels.append(
            {
                "title": title,
                "rows": _labels(rows, e.shape[-2]),
                "columns": _labels(table.columns, e.shape[-1]),
                "expected": _rounded(e[lead]),
                "got": _rounded(g[lead]),
                "outside": outside[lead].astype(int).tolist(),
                "bool": is_bool,
            }
        )
    return panels


def _rounded(values: np.ndarray) -> list:
    return (np.round(values, DECIMALS) + 0.0).tolist()


def _tables_record(tables, arrays, expecteds, which, key: str, caption: str) -> dict:
    panels = []
    for i in which:
        panels.extend(_panels(tables[i], arrays[i], expecteds[i]))
    return {"kind": TABLES, "caption": caption, "caption_key": key, "panels": panels}


def _flow_record(table: Table, got_shape: tuple, expected_shape: tuple) -> dict:
    steps = [{"label": label, "shape": list(shape)} for label, shape in table.flow]
    step = table.step
    if not steps or step is None:
        steps, step = [{"label": table.name, "shape": list(expected_shape)}], 0
    caption = _("{name} should have the shape {expected}, but has {got}.").format(
        name=table.name, expected=tuple(expected_shape), got=tuple(got_shape)
    )
    return {
        "kind": FLOW,
        "caption": caption,
        "caption_key": "shape",
        "steps": steps,
        "left_at": step,
        "got_shape": [int(n) for n in got_shape],
    }
