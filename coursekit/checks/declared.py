"""Hidden checks declared as data: one `HiddenCheck` per hidden test cell.

An assignment's module in grader_tests/ declares its checks once:

    CHECKS = HiddenChecks(
        "ch3_multihead",
        reference=solutions.ch3_multihead,
        notebook_globals={...},
        checks=[HiddenCheck("split_heads_random_shapes", "split_heads", "random shapes", cases, ...), ...],
        hints={"split_heads": ("a nudge ...", "the idea, just short of the code ...")},
    )
    globals().update(CHECKS.wrappers())

Everything else is derived from that declaration: the `check_<grade_id>`
functions the hidden cells call, the reference each check compares with (the
function of the same name in solutions/), the seeded cases that
`python -m coursekit.checks.reproduce` rebuilds, and the probe cases whose results a
failed check's verdict carries for the TA report's clusters.

`hints` are the course's progressive hints per function, in the course's
language and in the order a stuck learner gets them (coursekit.live.hints
decides when): course material, like the misconceptions, not the catalog's.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

from coursekit.core.messages import _

from .core import (
    READS_NOTEBOOK_GLOBALS,
    Case,
    CaseResults,
    Evidence,
    Misconception,
    Mismatch,
    evaluate,
    invoke_all,
    matching_misconception,
    quiet_numpy,
    with_helpers,
)
from .picture import SeedExample, seed_picture
from .probe import PROBE_CASES, result_record, undefined_record
from .verdict import MISMATCH, MODIFIED_INPUT, NOT_CALLABLE, RAISED, CheckFailedError, Verdict


@dataclass(frozen=True)
class HiddenCheck:
    """One hidden test cell: the learner function it grades, on which cases, and how to explain.

    `helpers` names reference functions swapped in for the learner's own when
    grading a composite function (attention calls softmax): a mistake in a
    helper loses points in the helper's cells, not again here.
    """

    grade_id: str
    function: str
    title: str
    cases: tuple[Case, ...]
    misconceptions: tuple[Misconception, ...] = ()
    helpers: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "cases", tuple(self.cases))
        object.__setattr__(self, "misconceptions", tuple(self.misconceptions))
        object.__setattr__(self, "helpers", tuple(self.helpers))
        if not self.cases:
            raise ValueError(f"hidden check {self.grade_id} has no cases")


class HiddenChecks:
    """Every hidden check of one assignment, in notebook order.

    `reads_globals_title`: the assignment's own title of `reads_notebook_globals`,
    in which `{names}` becomes the notebook globals the function read (the
    advice stays the check's). Without it, the shared title.

    `hints`: function -> its hints, from a nudge to the idea just short of the
    code, in the order a learner stuck on it gets them. A function without any
    gets none; every function named must have a check here.
    """

    def __init__(
        self,
        assignment: str,
        *,
        reference: ModuleType,
        notebook_globals: Iterable[str],
        checks: Sequence[HiddenCheck],
        reads_globals_title: str | None = None,
        hints: Mapping[str, Sequence[str]] | None = None,
        seed_examples: dict[str, SeedExample | tuple[SeedExample, ...]] | None = None,
    ):
        self.assignment = assignment
        self.reference = reference
        # Names the notebook defines at top level: a learner function that reads
        # one of them instead of its arguments is right on the notebook's example only.
        self.notebook_globals = frozenset(notebook_globals)
        self.reads_globals_title = reads_globals_title
        # function -> the page's seeded examples its visible cells run, drawn when it fails
        self.seed_examples = dict(seed_examples or {})
        self._checks = {c.grade_id: c for c in checks}
        if len(self._checks) != len(checks):
            raise ValueError(f"{assignment}: two hidden checks share a grade_id")
        for declared in checks:
            for name in (declared.function, *declared.helpers):
                if not callable(getattr(reference, name, None)):
                    raise ValueError(f"{assignment}: solutions have no function {name!r}")
        self.hints = _checked_hints(assignment, hints or {}, {c.function for c in checks})

    def __iter__(self) -> Iterator[HiddenCheck]:
        return iter(self._checks.values())

    def __getitem__(self, grade_id: str) -> HiddenCheck:
        return self._checks[grade_id]

    def __contains__(self, grade_id: str) -> bool:
        return grade_id in self._checks

    def hints_for(self, function: str) -> tuple[str, ...]:
        """The function's hints in the order they are given (none: empty)."""
        return self.hints.get(function, ())

    def reference_for(self, function: str) -> Callable:
        return getattr(self.reference, function)

    # ------------------------------------------------------------ running

    def run(self, grade_id: str, fn: Callable) -> None:
        """Grade `fn` by the check of this grade_id; raise CheckFailedError (an AssertionError)
        with its verdict if any case fails.

        With helpers, a function that fails with the learner's own helpers is
        tried again with the reference helpers; if it then passes, its own code
        is right and this check passes (the helpers lose points in their cells).
        """
        declared = self._checks[grade_id]
        if not callable(fn):
            error, probe = {"type": type(fn).__name__}, undefined_record(declared.function)
            raise CheckFailedError(self._verdict(declared, NOT_CALLABLE, error=error, probe=probe))
        reference = self.reference_for(declared.function)
        outcome = evaluate(fn, reference, declared.cases, self.notebook_globals)
        if outcome.passed:
            return
        own = outcome  # the learner's function with its own helpers: what the probe shows
        drawn = fn  # what the picture of the seeded example shows
        if declared.helpers:
            helpers = {name: self.reference_for(name) for name in declared.helpers}
            rebound = with_helpers(fn, helpers)
            if rebound is not None:
                isolated = evaluate(rebound, reference, declared.cases, self.notebook_globals)
                if isolated.passed:
                    note = _(
                        "Note: {function} itself is right. One of the functions it calls "
                        "({helpers}) is wrong, and lost points in the checks before."
                    )
                    print(
                        note.format(function=declared.function, helpers=", ".join(declared.helpers))
                    )
                    return
                outcome, drawn = isolated, rebound
        evidence, mismatch = outcome.failures[0]
        probe = self.probe_record(declared.function, fn, own)
        verdict = self.failure_verdict(declared, evidence, mismatch, len(outcome.failures), probe)
        picture = self.seed_picture(declared.function, drawn)
        if picture is not None:
            verdict = dataclasses.replace(verdict, picture=picture)
        raise CheckFailedError(verdict)

    def seed_picture(self, function: str, fn: Callable) -> dict | None:
        """The picture of `fn` on the function's seeded example (coursekit.checks.picture),
        or None: no seeded example, or `fn` is right there (only hidden cases fail: text)."""
        example = self.seed_examples.get(function)
        if example is None:
            return None
        return seed_picture(example, fn, self.reference_for(function))

    def probe_record(self, function: str, fn: Callable, outcome: CaseResults) -> dict:
        """What `fn` gave on the function's probe cases (coursekit.checks.probe), for the verdict.

        The check that declares the probe cases called fn on them already: those
        results are reused. Another check of the same function calls fn on them
        here, in one more round trip, so that every failed check's record carries
        the probe and the TA report never has to run learner code.
        """
        cases = self.probe_cases(function)
        known = {id(case): result for case, result in outcome.results}
        missing = [case for case in cases if id(case) not in known]
        if missing:
            known.update(zip(map(id, missing), invoke_all(fn, missing), strict=True))
        reference = self.reference_for(function)
        with quiet_numpy():
            expected = [
                reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs)) for case in cases
            ]
        return result_record([known[id(case)] for case in cases], expected)

    def failure_verdict(
        self,
        declared: HiddenCheck,
        evidence: Evidence,
        mismatch: Mismatch | None,
        failed: int,
        probe: dict | None = None,
    ) -> Verdict:
        """The record of a failed check, from the first failing case's evidence."""
        details: dict = {}
        if evidence.error is not None:
            outcome = RAISED
            details["error"] = {
                "type": type(evidence.error).__name__,
                "message": _text(evidence.error),
            }
        elif evidence.modified_args:
            outcome = MODIFIED_INPUT
            details["modified_args"] = evidence.modified_args
        else:
            outcome = MISMATCH
            if mismatch is not None:
                details.update(
                    problem=mismatch.problem, expected=mismatch.expected, got=mismatch.got
                )
        found = matching_misconception(evidence, declared.misconceptions)
        if found is not None and found.key == READS_NOTEBOOK_GLOBALS.key:
            found = self._reads_globals(evidence, found)
        return self._verdict(
            declared,
            outcome,
            failed=failed,
            case=evidence.case.record(),
            misconception=None if found is None else found.record(),
            probe=probe,
            **details,
        )

    def _reads_globals(self, evidence: Evidence, found: Misconception) -> Misconception:
        """A global read in the assignment's own title, naming the globals this function read."""
        if self.reads_globals_title is None:
            return found
        names = ", ".join(sorted(evidence.globals_read())) or "?"
        return dataclasses.replace(found, title=self.reads_globals_title.format(names=names))

    def _verdict(self, declared: HiddenCheck, outcome: str, **fields) -> Verdict:
        return Verdict(
            function=declared.function,
            check=declared.title,
            outcome=outcome,
            total=len(declared.cases),
            assignment=self.assignment,
            grade_id=declared.grade_id,
            **fields,
        )

    # ------------------------------------------------------------ derived

    def wrappers(self) -> dict[str, Callable[[Callable], None]]:
        """`check_<grade_id>(function)` for each check: what the hidden cells call."""
        return {f"check_{c.grade_id}": self._wrapper(c) for c in self}

    def _wrapper(self, declared: HiddenCheck) -> Callable[[Callable], None]:
        def run(fn: Callable) -> None:
            self.run(declared.grade_id, fn)

        run.__name__ = run.__qualname__ = f"check_{declared.grade_id}"
        run.__doc__ = f"{declared.function}: {declared.title}"
        return run

    def seeded_cases(self) -> dict[int, tuple[Callable, Case]]:
        """seed -> (reference function, case) for every seeded case, for reproduction."""
        found: dict[int, tuple[Callable, Case]] = {}
        for declared in self:
            reference = self.reference_for(declared.function)
            for case in declared.cases:
                if case.seed is None:
                    continue
                if case.seed in found and found[case.seed] != (reference, case):
                    raise ValueError(f"{self.assignment}: seed {case.seed} names two cases")
                found[case.seed] = (reference, case)
        return found

    def cases_for(self, function: str) -> list[Case]:
        """Every case of the function's checks, seeded ones first, in declaration order."""
        cases = [case for c in self if c.function == function for case in c.cases]
        return sorted(cases, key=lambda case: case.seed is None)

    def probe_cases(self, function: str) -> list[Case]:
        """The fixed probe of a function (coursekit.checks.probe): its first cases, seeded first."""
        return self.cases_for(function)[:PROBE_CASES]

    def functions(self) -> list[str]:
        """The learner functions with hidden checks, in notebook order."""
        return list(dict.fromkeys(c.function for c in self))


def checks_of(assignment: str, kit=None) -> HiddenChecks:
    """The declared hidden checks of an assignment: its module in the course's checks
    package (`c.CourseKit.checks_package`, grader_tests/ by default)."""
    # Here, not at the top: a kernel or worker that imports a course's checks would
    # otherwise import nbgrader with core.course (seconds, for a lookup it may never make).
    from coursekit.core.course import CourseKit

    return (kit or CourseKit.of()).checks(assignment).CHECKS


def _checked_hints(
    assignment: str, hints: Mapping[str, Sequence[str]], functions: set[str]
) -> dict[str, tuple[str, ...]]:
    """The hints as tuples of non-empty text, each of a function with a check."""
    checked = {}
    for function, texts in hints.items():
        if function not in functions:
            raise ValueError(f"{assignment}: hints for {function!r}, which has no check")
        if isinstance(texts, str) or not all(isinstance(t, str) and t.strip() for t in texts):
            raise ValueError(f"{assignment}: the hints of {function!r} are not a list of text")
        checked[function] = tuple(t.strip() for t in texts)
    return checked


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # a learner exception whose __str__ fails
        return ""
