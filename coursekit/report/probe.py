"""Group failing learners whose functions give the same wrong output on a fixed probe.

A cluster of learners with one wrong output is one mistake, whether or not the
misconception catalog knows it. The learner's code runs only in a sandboxed
kernel (coursekit.sandbox) under a timeout; the probe's inputs, the reference
and the comparison stay in this process and call the learner's functions
across the bridge.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from coursekit.course import contract_functions
from coursekit.report.data import AssignmentData, LearnerResult
from coursekit.sandbox.bridge import BridgeBroken, CallTimedOut
from coursekit.sandbox.learner_kernel import LearnerKernel
from grader_tests.core import Case, compare, invoke_all, quiet_numpy

TIMEOUT_SECONDS = 20
DECIMALS = 4
PROBE_CASES = 3


@dataclass
class Cluster:
    function: str
    fingerprint: str
    students: list[str]
    keys: list[str]  # misconception keys the hidden checks named for these learners
    example: str  # one learner's answer cell for the function

    @property
    def known(self) -> bool:
        return bool(self.keys)


def probe_cases(assignment: str, function: str) -> list[Case]:
    """The fixed probe of a function: its first seeded hidden-test cases, else the first
    cases whose arguments match the reference's parameters. Several cases, because
    one small case can hide a mistake (a wrong axis on a square input)."""
    module = importlib.import_module(f"grader_tests.{assignment}")
    seeded = getattr(module, "SEEDED_CASES", {})
    cases = [seeded[s][1] for s in sorted(seeded) if seeded[s][0].__name__ == function]
    if cases:
        return cases[:PROBE_CASES]
    reference = getattr(importlib.import_module(f"solutions.{assignment}"), function, None)
    if reference is None:
        return []
    parameters = tuple(inspect.signature(reference).parameters)
    for value in vars(module).values():
        is_cases = isinstance(value, list) and value and isinstance(value[0], Case)
        if is_cases and parameters[: len(value[0].arg_names)] == value[0].arg_names:
            return value[:PROBE_CASES]
    return []


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
            return {"got": f"error:{type(error).__name__}", "agrees": False}
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
                        result[function] = {"got": "error:undefined", "agrees": False}
                        continue
                    result[function] = outcome(fn, getattr(reference, function), cases[function])
    except (CallTimedOut, BridgeBroken):
        timed_out = {"got": "error:timeout", "agrees": False}
        return {**{f: timed_out for f in wanted}, **result}
    return result


def answer_for(learner: LearnerResult, function: str) -> str:
    return next((a for a in learner.answers if f"def {function}(" in a), "")


def clusters(data: AssignmentData, progress=None) -> list[Cluster]:
    """Clusters of failing learners, largest first, one function at a time.

    A learner joins a function's cluster when a failing cell's message names that
    function and its probe output differs from the reference's.
    """
    functions = contract_functions(data.assignment)
    groups: dict[tuple[str, str], list[LearnerResult]] = defaultdict(list)
    failing = [learner for learner in data.learners if learner.failures]
    for i, learner in enumerate(failing, start=1):
        if progress:
            progress(i, len(failing), learner.student)
        named = {f.function for f in learner.failures if f.function}
        learner.probe = {}
        for function, found in run_probe(data.assignment, learner, functions).items():
            learner.probe[function] = found["got"]
            if function in named and not found["agrees"]:
                groups[(function, found["got"])].append(learner)
    found = []
    for (function, fingerprint), members in groups.items():
        keys = sorted(
            {f.key for m in members for f in m.failures if f.function == function and f.key}
        )
        example = answer_for(members[0], function)
        found.append(Cluster(function, fingerprint, [m.student for m in members], keys, example))
    return sorted(found, key=lambda c: (-len(c.students), c.function, c.fingerprint))
