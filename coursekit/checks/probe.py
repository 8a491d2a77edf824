"""What a learner's function gave on its probe cases, as plain data for the verdict record.

The TA report groups failing learners whose function gives the same wrong
output on a fixed probe: the function's first seeded hidden-test cases
(`HiddenChecks.probe_cases`). The grader already calls the function on those
cases while it judges the hidden check that declares them, so a failed
check's verdict carries the probe's result (`Verdict.probe`), computed here on
the trusted side, and the report only reads records: it never runs learner
code. A submission's own records are dropped before grading.

    {"digest": "3f2a…", "agrees": false, "summary": "(3, 4) float64 [0.25, 0.25, …]"}
    {"digest": "error:ValueError", "agrees": false, "summary": …, "error": "ValueError: …"}

`digest` is equal for equal rounded outputs on every probe case; `agrees` is
whether they equal the reference's by the hidden checks' own comparison.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from coursekit.core.messages import _

from .core import same

PROBE_CASES = 3  # several, because one small case can hide a mistake (a wrong axis on a square)
DECIMALS = 4
ERROR = "error:"
SUMMARY_VALUES = 4
TEXT_LIMIT = 300
# A learner's message may carry terminal escapes; the report prints it in a terminal too.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def canonical(value: Any) -> object:
    """A JSON-able, rounded form of a result, so that equal outputs hash equally."""
    if isinstance(value, tuple | list):
        return [canonical(v) for v in value]
    if isinstance(value, np.ndarray | np.generic | int | float | bool):
        array = np.asarray(value)
        if array.dtype.kind in "fc":
            array = np.round(array.astype(float), DECIMALS) + 0.0  # no -0.0
            return {"shape": array.shape, "values": np.nan_to_num(array, nan=1e300).tolist()}
        return {"shape": array.shape, "dtype": array.dtype.kind, "values": array.tolist()}
    return _repr(value)[:200]


def summary(value: Any) -> str:
    """A short look at one result: shape, dtype and a few rounded values, or its type."""
    if isinstance(value, tuple | list):
        inner = ", ".join(summary(v) for v in value[:2])
        more = ", …" if len(value) > 2 else ""
        return f"{type(value).__name__}({inner}{more})"
    if isinstance(value, np.ndarray):
        flat = value.reshape(-1)[:SUMMARY_VALUES]
        if value.dtype.kind in "fc":
            shown = [f"{float(np.real(v)):.4g}" for v in flat]
        else:
            shown = [_repr(v.item())[:20] for v in flat]
        more = ", …" if value.size > SUMMARY_VALUES else ""
        return f"{value.shape} {value.dtype} [{', '.join(shown)}{more}]"
    return _repr(value)[:80]


def error_name(error: BaseException) -> str:
    """The learner's exception's own type name (the bridge keeps it beside a safe class)."""
    return CONTROL.sub(" ", str(getattr(error, "type_name", type(error).__name__)))


def result_record(results: Sequence[tuple[Any, Any, BaseException | None]], expected: list) -> dict:
    """The probe record from `invoke_all`'s (value, arguments after, error) per probe case."""
    for _value, _after, error in results:
        if error is not None:
            name = error_name(error)
            message = CONTROL.sub(" ", f"{name}: {_text(error).strip()}").strip().rstrip(":")
            return {
                "digest": f"{ERROR}{name}",
                "agrees": False,
                "summary": name,
                "error": message[:TEXT_LIMIT],
            }
    got = [value for value, _after, _error in results]
    agrees = all(same(g, e) for g, e in zip(got, expected, strict=True))
    try:
        text = json.dumps(canonical(got), sort_keys=True, default=str)
        shown = summary(got[0]) if got else ""
    except Exception:  # a value no rule above reads: all such values look alike
        text, shown = "unreadable", "?"
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    return {"digest": digest, "agrees": agrees, "summary": shown[:TEXT_LIMIT]}


def undefined_record(function: str) -> dict:
    """The probe record of a name that is not a function."""
    message = _("{function} is not defined").format(function=function)
    return {"digest": f"{ERROR}undefined", "agrees": False, "summary": "", "error": message}


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:
        return ""
