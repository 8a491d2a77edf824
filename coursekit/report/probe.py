"""Group failing learners whose functions give the same wrong output on a fixed probe.

A cluster of learners with one wrong output is one mistake, whether or not the
misconception catalog knows it. The learner's code runs only in a sandboxed
kernel (coursekit.sandbox) under a timeout; the probe's inputs, the reference
and the comparison stay in this process and call the learner's functions
across the bridge.

Only real wrong outputs make clusters. A function still as released
(`raise NotImplementedError()`) is not probed at all: the report shows it as
"미구현" (coursekit.report.overview), and a learner who implemented nothing is
not probed. A probed function that raised (any exception, a time-out, or not
defined) gave no output to compare: it joins an error group, one per function
and error type, which the report lists apart from the clusters.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from coursekit.course import contract_functions
from coursekit.report import overview
from coursekit.report.data import AssignmentData, LearnerResult
from coursekit.sandbox.bridge import BridgeBroken, CallTimedOut
from coursekit.sandbox.learner_kernel import LearnerKernel
from grader_tests.checks import checks_of
from grader_tests.core import Case, compare, invoke_all, quiet_numpy

TIMEOUT_SECONDS = 20
DECIMALS = 4
PROBE_CASES = 3
ERROR = "error:"


@dataclass
class Cluster:
    function: str
    fingerprint: str
    students: list[str]
    keys: list[str]  # misconception keys the hidden checks named for these learners
    example: str  # one learner's answer cell for the function
    error: str = ""  # for an error group: the first member's error, "Type: message"

    @property
    def known(self) -> bool:
        return bool(self.keys)

    @property
    def is_error(self) -> bool:
        return self.fingerprint.startswith(ERROR)


def probe_cases(assignment: str, function: str) -> list[Case]:
    """The fixed probe of a function: the first cases its hidden checks declare, seeded
    ones first. Several cases, because one small case can hide a mistake (a wrong
    axis on a square input)."""
    return checks_of(assignment).cases_for(function)[:PROBE_CASES]


def canonical(value) -> object:
    """A JSON-able, rounded form of a result, so that equal outputs hash equally."""
    if isinstance(value, tuple | list):
        return [canonical(v) for v in value]
    if isinstance(value, np.ndarray | np.generic | int | float | bool):
        array = np.asarray(value)
        if array.dtype.kind in "fc":
            array = np.round(array.astype(float), DECIMALS) + 0.0  # no -0.0
            return {"shape": array.shape, "values": np.nan_to_num(array, nan=1e300).tolist()}
        return {"shape": array.shape, "dtype": array.dtype.kind, "values": array.tolist()}
    return repr(value)[:200]


def outcome(fn, reference, cases: list[Case]) -> dict:
    """{"got": fingerprint, "agrees": bool}: the learner's outputs on the probe, and whether
    they equal the reference's by the hidden checks' own comparison."""
    results = invoke_all(fn, cases)
    for _, _, error in results:
        if error is not None:
            name = getattr(error, "type_name", type(error).__name__)
            message = f"{name}: {str(error).strip()}".strip().rstrip(":")
            return {"got": f"{ERROR}{name}", "agrees": False, "error": message[:300]}
    got = [value for value, _, _ in results]
    with quiet_numpy():
        expected = [reference(*c.args, **c.kwargs) for c in cases]
    agrees = all(compare(g, e) is None for g, e in zip(got, expected, strict=True))
    text = json.dumps(canonical(got), sort_keys=True, default=str)
    return {"got": hashlib.sha1(text.encode()).hexdigest()[:12], "agrees": agrees}


def run_probe(assignment: str, learner: LearnerResult, functions: list[str]) -> dict:
    """function -> {"got": fingerprint, "agrees": bool}; error:timeout when the code hangs."""
    reference = importlib.import_module(f"solutions.{assignment}")
    cases = {f: probe_cases(assignment, f) for f in functions}
    wanted = [f for f in functions if cases[f]]
    result: dict = {}
    try:
        with LearnerKernel(timeout=TIMEOUT_SECONDS) as kernel:
            if not kernel.run_cells([*learner.setup, *learner.answers]):
                raise CallTimedOut()
            with kernel.session() as session:
                found = session.describe(wanted)
                for function in wanted:
                    fn = found.get(function)
                    if not callable(fn):
                        undefined = f"{function} 이(가) 정의되어 있지 않습니다"
                        result[function] = {
                            "got": f"{ERROR}undefined",
                            "agrees": False,
                            "error": undefined,
                        }
                        continue
                    result[function] = outcome(fn, getattr(reference, function), cases[function])
    except (CallTimedOut, BridgeBroken):
        timed_out = {
            "got": f"{ERROR}timeout", "agrees": False,
            "error": f"{TIMEOUT_SECONDS} 초 안에 끝나지 않았습니다",
        }  # fmt: skip
        return {**{f: timed_out for f in wanted}, **result}
    return result


def answer_for(learner: LearnerResult, function: str) -> str:
    return next((a for a in learner.answers if f"def {function}(" in a), "")


def clusters(data: AssignmentData, progress=None) -> list[Cluster]:
    """Clusters of failing learners, largest first, one function at a time; then the
    error groups (`Cluster.is_error`), largest first.

    A learner joins a function's cluster when a failing cell's message names that
    function and its probe output differs from the reference's; the functions a
    learner left as released are not probed (they are "미구현").
    """
    functions = contract_functions(data.assignment)
    groups: dict[tuple[str, str], list[LearnerResult]] = defaultdict(list)
    errors: dict[tuple[str, str], str] = {}
    left = overview.unimplemented(data)
    failing = [
        learner for learner in data.learners
        if learner.failures and learner.student not in left.nothing
    ]  # fmt: skip
    for i, learner in enumerate(failing, start=1):
        if progress:
            progress(i, len(failing), learner.student)
        named = {f.function for f in learner.failures if f.function}
        stubs = set(left.of(learner.student))
        wanted = [f for f in functions if f not in stubs]
        learner.probe = {}
        for function, found in run_probe(data.assignment, learner, wanted).items():
            learner.probe[function] = found["got"]
            if function in named and not found["agrees"]:
                groups[(function, found["got"])].append(learner)
                errors.setdefault((function, found["got"]), found.get("error", ""))
    found = []
    for (function, fingerprint), members in groups.items():
        keys = sorted(
            {f.key for m in members for f in m.failures if f.function == function and f.key}
        )
        example = answer_for(members[0], function)
        error = errors[(function, fingerprint)] if fingerprint.startswith(ERROR) else ""
        students = [m.student for m in members]
        found.append(Cluster(function, fingerprint, students, keys, example, error))
    return sorted(found, key=lambda c: (c.is_error, -len(c.students), c.function, c.fingerprint))
