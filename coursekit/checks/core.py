"""Machinery shared by every hidden check: cases, calling learner code safely,
comparing in a fixed order, and naming the misconception that fits.

A check runs a learner's function on a list of `Case`s and compares each
result with the reference from solutions/. The comparison goes in a fixed
order (nothing returned → wrong type → shape → dtype → nan/inf → values), so
the first problem found is the one reported. When a case fails, the check asks
each `Misconception` of that function whether it explains the evidence, and
the first one that does is named in the message.

Everything a learner or TA reads of it is in the course's language
(coursekit.core.messages); what a course declares (its misconceptions, its
checks' titles) is shown as the course wrote it.
"""

from __future__ import annotations

import contextlib
import copy
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coursekit.core.messages import N_, _, ngettext
from coursekit.sandbox.inside.code_names import code_names

from .verdict import argument_record, describe_case_record, misconception_sentence

# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One call of a learner function: its arguments and how to reproduce it."""

    label: str
    args: tuple
    arg_names: tuple[str, ...]
    seed: int | None = None
    kwargs: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The case as plain data, for a verdict record: label, seed, argument shapes."""
        named = [*zip(self.arg_names, self.args, strict=True), *self.kwargs.items()]
        return {
            "label": self.label,
            "seed": self.seed,
            "arguments": [argument_record(name, value) for name, value in named],
        }

    def describe(self) -> str:
        """`random shapes · seed 3203 — M (5, 12), h=3`."""
        return describe_case_record(self.record())


def distinct_ints(rng: np.random.Generator, k: int, low: int, high: int) -> list[int]:
    """k different integers in [low, high], so that no two axes share a length."""
    return [int(v) for v in rng.choice(np.arange(low, high + 1), size=k, replace=False)]


# ---------------------------------------------------------------- comparing

# The course's one tolerance for float results. A returned array is right when
# every element satisfies
#
#     |got - expected| <= ATOL + RTOL * (|expected| + max |expected|)
#
# with max |expected| the largest magnitude in the same expected array.
#
# Why not np.allclose's own rule, ATOL + RTOL * |expected|: float32 rounding
# (unit roundoff 6e-8) is relative to the numbers that were summed, not to
# the result, so an element that comes out near zero from terms of size ~1
# carries an absolute error of ~1e-7 that atol = 1e-8 rejects. On this
# course's hidden cases, attention and multi-head attention computed entirely
# in float32 deviate by up to 6.2e-7 × max |expected| (1e-4 relative to a
# small element); the term RTOL * max |expected| accepts that with a margin
# of 16, while every catalog mistake differs by far more (tests/test_tolerance.py).
# The rule accepts everything np.allclose with its defaults (rtol = 1e-5,
# atol = 1e-8) accepts, which is what the visible test cells use, so a hidden
# check is never stricter than a visible one. Integers and bool masks are
# compared exactly.
RTOL = 1e-5
ATOL = 1e-8


def tolerance(expected: Any) -> np.ndarray:
    """The largest |got - expected| allowed at each element of a float `expected`."""
    magnitude = np.abs(np.asarray(expected, dtype=np.float64))
    finite = np.isfinite(magnitude)
    largest = float(magnitude[finite].max()) if finite.any() else 0.0
    # A nan or an infinity expected is right only when it is returned exactly.
    return np.where(finite, ATOL + RTOL * (magnitude + largest), 0.0)


def excess(got: Any, expected: Any) -> np.ndarray:
    """|got - expected| / tolerance(expected) per element; above 1 (or nan) is out of tolerance.

    Both are float arrays of the same shape.
    """
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    with np.errstate(all="ignore"):
        difference = np.abs(got - expected)
        ratio = difference / tolerance(expected)
        # Equal values are no difference, an infinity where the same infinity is expected too.
        return np.where(got == expected, 0.0, ratio)


def allclose(got: Any, expected: Any) -> bool:
    """True when `got` agrees with the float array `expected` within the course's tolerance.

    The one definition of "the same value": the hidden checks (`compare`),
    `python -m coursekit.checks.reproduce --got` and the TA report's probe use it.
    Shapes must be equal (no broadcasting); got must hold real numbers.
    """
    try:
        got_array, expected_array = np.asarray(got), np.asarray(expected)
        if got_array.shape != expected_array.shape or got_array.dtype.kind not in "biuf":
            return False
        return bool(np.all(excess(got_array, expected_array) <= 1.0))
    except (TypeError, ValueError):
        return False


class Mismatch:
    """Why a returned value differs from the expected one (for the message).

    `expected` and `got` may be given as functions that format them: they run
    when first read. Most mismatches are only counted (a check's later failing
    cases, misconceptions that do not fit), and formatting arrays is the slow part.
    """

    __slots__ = ("_expected", "_got", "problem")

    def __init__(
        self, problem: str, expected: str | Callable[[], str], got: str | Callable[[], str]
    ):
        self.problem, self._expected, self._got = problem, expected, got

    @property
    def expected(self) -> str:
        if callable(self._expected):
            self._expected = self._expected()
        return self._expected

    @property
    def got(self) -> str:
        if callable(self._got):
            self._got = self._got()
        return self._got

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mismatch):
            return NotImplemented
        return (self.problem, self.expected, self.got) == (other.problem, other.expected, other.got)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Mismatch(problem={self.problem!r}, expected={self.expected!r}, got={self.got!r})"


def format_value(value: Any, at: tuple[int, ...] | None = None) -> str:
    """A short look at a value: shape, dtype and (for arrays) one 2-D slice.

    The slice is the one holding the element `at` (the first slice without it).
    """
    if isinstance(value, np.ndarray):
        shown, where = value, ""
        if value.ndim > 2:
            lead = (
                tuple(at[:-2])
                if at is not None and len(at) == value.ndim
                else (0,) * (value.ndim - 2)
            )
            shown = value[lead]
            where = _(", its slice [{index}]").format(index=", ".join(map(str, lead)))
        with np.printoptions(precision=3, suppress=True, threshold=20, edgeitems=3, linewidth=72):
            body = np.array2string(shown, prefix="        ")
        head = _("shape {shape} {dtype}").format(shape=value.shape, dtype=value.dtype)
        return f"{head}{where}\n        {body}"
    if isinstance(value, tuple | list):
        return _("{type} of length {length}").format(type=type(value).__name__, length=len(value))
    return repr(value)


def compare(got: Any, expected: Any, what: str | None = None) -> Mismatch | None:
    """Compare in a fixed order and return the first problem, or None if they agree.
    `what`: the compared value's name in the problem (default: the return value)."""
    what = _("the return value") if what is None else what
    if isinstance(expected, tuple):
        return _compare_tuple(got, expected, what)
    if isinstance(expected, np.ndarray):
        return _compare_array(got, expected, what)
    return _compare_int(got, expected, what)


def _compare_tuple(got: Any, expected: tuple, what: str) -> Mismatch | None:
    names = ("output", "weights") if len(expected) == 2 else tuple(range(len(expected)))
    if got is None:
        return Mismatch(_returned_none(what), "", "")
    if not isinstance(got, tuple | list) or len(got) != len(expected):
        kind = type(got).__name__
        shown = kind
        if isinstance(got, np.ndarray):
            shown = _("{type} of shape {shape}").format(type=kind, shape=got.shape)
        return Mismatch(
            _(
                "{what}: should return the two values ({names}) as a tuple, but returned {shown}"
            ).format(what=what, names=", ".join(map(str, names)), shown=shown),
            _("a tuple of length {length}").format(length=len(expected)),
            shown,
        )
    for name, got_item, expected_item in zip(names, got, expected, strict=True):
        mismatch = compare(got_item, expected_item, f"{what} {name}")
        if mismatch:
            return mismatch
    return None


def _compare_array(got: Any, expected: np.ndarray, what: str) -> Mismatch | None:
    found = _array_problem(got, expected, what)
    if found is None:
        return None
    problem, at = found
    # Formatting is the slow part: only a mismatch that is shown pays for it.
    if isinstance(got, np.ndarray):
        shown = lambda: format_value(np.asarray(got), at)  # noqa: E731
    else:
        shown = repr(got)[:200]
    return Mismatch(problem, lambda: format_value(expected, at), shown)


def _array_problem(
    got: Any, expected: np.ndarray, what: str
) -> tuple[str, tuple[int, ...] | None] | None:
    """The first problem in the fixed order None → type → shape → dtype → nan/inf → values.

    Returns the sentence and the element it names (or None), or None when the
    arrays agree.
    """
    if got is None:
        return _returned_none(what), None
    if not isinstance(got, np.ndarray):
        problem = _("{what}: returned {type}, not a NumPy array")
        return problem.format(what=what, type=type(got).__name__), None
    if got.shape != expected.shape:
        problem = _("{what}: the shape differs — expected {expected}, got {got}")
        return problem.format(what=what, expected=expected.shape, got=got.shape), None
    if expected.dtype == bool:
        if got.dtype != bool:
            problem = _("{what}: should be a bool array, but its dtype is {dtype}")
            return problem.format(what=what, dtype=got.dtype), None
        wrong = np.argwhere(np.asarray(got) != expected)
        if len(wrong):
            where = tuple(int(i) for i in wrong[0])
            problem = ngettext(
                "{what}: {count} element differs (the first at {where}: "
                "expected {expected}, got {got})",
                "{what}: {count} elements differ (the first at {where}: "
                "expected {expected}, got {got})",
                len(wrong),
            )
            return (
                problem.format(
                    what=what,
                    count=len(wrong),
                    where=list(where),
                    expected=bool(expected[where]),
                    got=bool(got[where]),
                ),
                where,
            )
        return None
    if got.dtype.kind not in "f":
        # float32 is as right as float64: only the values are compared below.
        problem = _("{what}: should be a float array, but its dtype is {dtype}")
        return problem.format(what=what, dtype=got.dtype), None
    # A plain float64 copy: learner subclasses and views cannot affect the comparison.
    values = np.array(got, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        problem = ngettext(
            "{what}: {count} element is nan or inf", "{what}: {count} elements are nan or inf", bad
        )
        return problem.format(what=what, count=bad), None
    reference = np.asarray(expected, dtype=np.float64)
    ratio = excess(values, reference)
    outside = ~(ratio <= 1.0)
    if not outside.any():
        return None
    return _value_problem(what, values, reference, ratio, outside)


def _value_problem(
    what: str, values: np.ndarray, expected: np.ndarray, ratio: np.ndarray, outside: np.ndarray
) -> tuple[str, tuple[int, ...]]:
    """Name the element that breaks the tolerance worst, relative to its own tolerance.

    The largest absolute difference may well be within tolerance (a large
    element); the element shown here never is.
    """
    worst = np.where(outside, np.nan_to_num(ratio, nan=np.inf), -1.0)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(worst)), worst.shape))
    want, have = float(expected[where]), float(values[where])
    difference = abs(have - want)
    allowed = float(tolerance(expected)[where])
    if want:
        relative = _("relative difference {relative}").format(
            relative=f"{difference / abs(want):.3g}"
        )
    else:
        relative = _("no relative difference, as 0 was expected")
    want_text, have_text = _distinct_numbers(want, have)
    problem = _(
        "{what}: the values differ — {outside} of {size} elements are outside the tolerance. "
        "The element furthest out, {where}: expected {expected}, got {got} "
        "(difference {difference}, {relative}; this element's allowed difference {allowed})"
    )
    return (
        problem.format(
            what=what,
            outside=int(outside.sum()),
            size=values.size,
            where=list(where),
            expected=want_text,
            got=have_text,
            difference=f"{difference:.3g}",
            relative=relative,
            allowed=f"{allowed:.3g}",
        ),
        where,
    )


def _distinct_numbers(want: float, have: float) -> tuple[str, str]:
    """The two numbers with just enough significant digits that they read differently."""
    for digits in range(4, 18):
        texts = f"{want:.{digits}g}", f"{have:.{digits}g}"
        if texts[0] != texts[1]:
            return texts
    return repr(want), repr(have)


def _compare_int(got: Any, expected: int, what: str) -> Mismatch | None:
    if got is None:
        return Mismatch(_returned_none(what), repr(expected), "")
    if isinstance(got, bool) or not isinstance(got, int | np.integer):
        problem = _("{what}: should be an integer (int), but returned {type} {value}")
        return Mismatch(
            problem.format(what=what, type=type(got).__name__, value=repr(got)),
            repr(expected),
            repr(got),
        )
    if int(got) != expected:
        problem = _("{what}: expected {expected}, got {got}")
        return Mismatch(problem.format(what=what, expected=expected, got=int(got)), "", "")
    return None


def _returned_none(what: str) -> str:
    return _("{what}: returned None (a missing return?)").format(what=what)


def same(got: Any, predicted: Any) -> bool:
    """True when `got` agrees with a predicted (possibly wrong) result, by `compare`."""
    try:
        return compare(got, predicted) is None
    except Exception:
        return False


# ---------------------------------------------------------------- misconceptions


@dataclass(frozen=True)
class Misconception:
    """A known mistake: how to recognise it and what to say about it.

    `predict(*args)` gives what the mistaken code would return for a case;
    `detect(evidence)` decides from the evidence itself (the returned value,
    the exception, the function's code). Either may be given.
    """

    key: str
    title: str
    advice: str
    predict: Callable[..., Any] | None = None
    detect: Callable[[Evidence], bool] | None = None
    # coursekit's own (the generic ones below): title and advice are msgids, said in the
    # course's language; a course's misconceptions are shown as the course wrote them.
    ours: bool = False

    def explains(self, evidence: Evidence) -> bool:
        try:
            if self.detect is not None and self.detect(evidence):
                return True
            if self.predict is not None and evidence.error is None:
                with quiet_numpy():
                    predicted = self.predict(*copy.deepcopy(evidence.case.args))
                return same(evidence.got, predicted)
        except Exception:
            return False
        return False

    def record(self) -> dict:
        title, advice = (_(self.title), _(self.advice)) if self.ours else (self.title, self.advice)
        return {"key": self.key, "title": title, "advice": advice}

    def sentence(self) -> str:
        return misconception_sentence(self.record())


@dataclass
class Evidence:
    """What one call of the learner's function left behind."""

    fn: Callable
    case: Case
    got: Any = None
    error: BaseException | None = None
    modified_args: tuple[str, ...] = ()
    # The names the assignment's setup cells define (HiddenChecks.notebook_globals).
    notebook_globals: frozenset[str] = frozenset()

    def globals_read(self) -> set[str]:
        """Notebook globals the learner's function reads instead of its arguments."""
        return reads_globals(self.fn, self.notebook_globals)


def reads_globals(fn: Callable, names: frozenset[str]) -> set[str]:
    """Global names among `names` that the function's code (and nested code) reads.

    A function in the grading sandbox carries its code's names (`code_names`,
    gathered there by coursekit.sandbox.inside.kernel_side with the same code_names).
    """
    remote = getattr(fn, "code_names", None)
    if isinstance(remote, frozenset):
        return set(remote & names)
    return code_names(getattr(fn, "__code__", None)) & names


def uses_attribute(fn: Callable, attribute: str) -> bool:
    """True when the function's code uses `.attribute` (e.g. `.T`) anywhere."""
    return bool(reads_globals(fn, frozenset({attribute})))


READS_NOTEBOOK_GLOBALS = Misconception(
    key="reads_notebook_globals",
    title=N_(
        "Reads the notebook globals (n, h, d_model …) inside the function: right on the seed "
        "example only"
    ),
    advice=N_("Take the shapes from the arguments: n, d_model = M.shape, d_head = d_model // h."),
    detect=lambda ev: bool(ev.globals_read()),
    ours=True,
)

MODIFIES_INPUT = Misconception(
    key="modifies_input",
    title=N_("Changed an array it was given in place"),
    advice=N_("Do not overwrite the input as x -= ... or np.exp(x, out=x) do: make a new array."),
    detect=lambda ev: bool(ev.modified_args),
    ours=True,
)

NOT_IMPLEMENTED = Misconception(
    key="not_implemented",
    title=N_("Not implemented yet (raise NotImplementedError is still there)"),
    advice=N_("Write your code where the stub's comment is and delete the raise line."),
    detect=lambda ev: isinstance(ev.error, NotImplementedError),
    ours=True,
)


def is_misconception(key: str | None) -> bool:
    """Whether a verdict's misconception is shown to people as one (the feedback summary and
    the panel, the TA report, the live board): a function still as released is shown once
    as not implemented, not again as a misconception."""
    return bool(key) and key != NOT_IMPLEMENTED.key


# ---------------------------------------------------------------- running


@contextlib.contextmanager
def quiet_numpy():
    """Silence numpy floating-point warnings and Python warnings.

    nbgrader scores any stderr output of a test cell as a failure, so a
    correct answer that triggers a harmless warning must not write one.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def invoke_all(fn: Callable, cases: Sequence[Case]) -> list[tuple[Any, list, Exception | None]]:
    """(returned value, arguments after the call, exception) for each case.

    A function in the grading sandbox (`coursekit.sandbox.bridge.RemoteFunction`)
    takes all cases in one round trip and works on its own copies; a local one
    is called here on private copies.
    """
    if hasattr(fn, "invoke_many"):
        return fn.invoke_many([(case.args, case.kwargs) for case in cases])
    results = []
    for case in cases:
        args, kwargs = copy.deepcopy(list(case.args)), copy.deepcopy(case.kwargs)
        try:
            with quiet_numpy():
                results.append((fn(*args, **kwargs), args, None))
        except Exception as error:  # learner code may raise anything
            results.append((None, args, error))
    return results


def run_case(fn: Callable, case: Case) -> Evidence:
    """Call fn on a private copy of the case's arguments and record what happened."""
    ((got, args_after, error),) = invoke_all(fn, [case])
    return _evidence(fn, case, got, args_after, error)


def _evidence(fn: Callable, case: Case, got: Any, args_after: list, error) -> Evidence:
    evidence = Evidence(fn=fn, case=case, got=got, error=error)
    evidence.modified_args = tuple(
        name
        for name, before, after in zip(case.arg_names, case.args, args_after, strict=True)
        if isinstance(before, np.ndarray) and not _identical(before, after)
    )
    return evidence


def _identical(before: np.ndarray, after: Any) -> bool:
    if not isinstance(after, np.ndarray) or after.shape != before.shape:
        return False
    return bool(np.array_equal(np.asarray(after), before, equal_nan=True))


def with_helpers(fn: Callable, helpers: dict[str, Callable]) -> Callable | None:
    """The same function, but with the named helpers it calls replaced.

    Grades a composite function (attention, multi-head) on its own: a mistake
    in split_heads costs points in split_heads' cells, not again here.
    """
    if hasattr(fn, "with_helpers"):  # in the grading sandbox: helpers are called back
        return fn.with_helpers(helpers)
    if not isinstance(fn, types.FunctionType):
        return None
    namespace = dict(fn.__globals__)
    namespace.update(helpers)
    rebound = types.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )
    rebound.__kwdefaults__ = fn.__kwdefaults__
    return rebound


@dataclass
class CaseResults:
    """The result of running a function over all of a check's cases."""

    failures: list[tuple[Evidence, Mismatch | None]]
    total: int
    # case -> what the call gave, (value, arguments after, error), for the verdict's probe
    results: list[tuple[Case, tuple]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def evaluate(
    fn: Callable,
    reference: Callable,
    cases: Sequence[Case],
    notebook_globals: frozenset[str] = frozenset(),
) -> CaseResults:
    failures = []
    results = list(zip(cases, invoke_all(fn, cases), strict=True))
    for case, (got, args_after, error) in results:
        evidence = _evidence(fn, case, got, args_after, error)
        evidence.notebook_globals = notebook_globals
        mismatch = None
        if evidence.error is None and not evidence.modified_args:
            with quiet_numpy():
                expected = reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            mismatch = compare(evidence.got, expected)
            if mismatch is None:
                continue
        failures.append((evidence, mismatch))
    return CaseResults(failures=failures, total=len(cases), results=results)


GENERIC_MISCONCEPTIONS = (NOT_IMPLEMENTED, MODIFIES_INPUT)


def matching_misconception(
    evidence: Evidence, misconceptions: Sequence[Misconception]
) -> Misconception | None:
    """The first misconception that explains the evidence, generic ones first."""
    for candidate in (*GENERIC_MISCONCEPTIONS, *misconceptions, READS_NOTEBOOK_GLOBALS):
        if candidate.explains(evidence):
            return candidate
    return None
