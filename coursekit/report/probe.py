"""Group failing learners whose functions give the same wrong output on a fixed probe.

A cluster of learners with one wrong output is one mistake, whether or not the
misconception catalog knows it. Learner code runs only in a subprocess
(probe_worker) with a timeout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass

from coursekit.course import contract_functions
from coursekit.release import venv_environment
from coursekit.report.data import AssignmentData, LearnerResult

TIMEOUT_SECONDS = 20


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


def run_probe(assignment: str, learner: LearnerResult, functions: list[str]) -> dict:
    """function -> {"got", "reference"} fingerprints; {} when the learner's code timed out."""
    job = {
        "assignment": assignment,
        "setup": learner.setup,
        "answers": learner.answers,
        "functions": functions,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "coursekit.report.probe_worker"],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            env=venv_environment(),
        )
    except subprocess.TimeoutExpired:
        return {f: {"got": "error:timeout", "reference": ""} for f in functions}
    if done.returncode != 0:
        return {}
    return json.loads(done.stdout)


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
        for function, outcome in run_probe(data.assignment, learner, functions).items():
            learner.probe[function] = outcome["got"]
            if function in named and outcome["got"] != outcome["reference"]:
                groups[(function, outcome["got"])].append(learner)
    found = []
    for (function, fingerprint), members in groups.items():
        keys = sorted(
            {f.key for m in members for f in m.failures if f.function == function and f.key}
        )
        example = answer_for(members[0], function)
        found.append(Cluster(function, fingerprint, [m.student for m in members], keys, example))
    return sorted(found, key=lambda c: (-len(c.students), c.function, c.fingerprint))
