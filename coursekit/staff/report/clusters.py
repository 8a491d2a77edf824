"""Group failing learners whose functions give the same wrong output on a fixed probe.

A cluster of learners with one wrong output is one mistake, whether or not the
misconception catalog knows it. The grader recorded, in each failed hidden
check's verdict, what the learner's function gave on its probe cases
(coursekit.checks.probe, computed on the trusted side while grading): the report
groups by those records and runs no learner code.

Only real wrong outputs make clusters. A function still as released
(`raise NotImplementedError()`) is not clustered: the report shows it as
not implemented (coursekit.staff.report.overview), and a learner who implemented nothing is
in no group. A function that raised on the probe (any exception, or not a
function) gave no output to compare: it joins an error group, one per function
and error type, which the report lists apart from the clusters.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from coursekit.checks.probe import ERROR
from coursekit.core.course import contract_functions
from coursekit.staff.report import overview
from coursekit.staff.report.data import AssignmentData, Failure, LearnerResult


@dataclass
class Cluster:
    function: str
    fingerprint: str
    students: list[str]
    keys: list[str]  # misconception keys the hidden checks named for these learners
    example: str  # one learner's answer cell for the function
    error: str = ""  # for an error group: the first member's error, "Type: message"
    summary: str = ""  # the first member's output on the first probe case, in short

    @property
    def known(self) -> bool:
        return bool(self.keys)

    @property
    def is_error(self) -> bool:
        return self.fingerprint.startswith(ERROR)


def answer_for(learner: LearnerResult, function: str) -> str:
    return next((a for a in learner.answers if f"def {function}(" in a), "")


def probes(learner: LearnerResult, functions: list[str]) -> dict[str, dict]:
    """function -> the probe record of its first failed check that has one."""
    found: dict[str, dict] = {}
    for failure in learner.failures:
        if failure.function in functions and failure.probe is not None:
            found.setdefault(failure.function, failure.probe)
    return found


def clusters(data: AssignmentData) -> list[Cluster]:
    """Clusters of failing learners, largest first, one function at a time; then the
    error groups (`Cluster.is_error`), largest first.

    The functions a learner left as released are not clustered (they are not
    implemented), nor is a learner who implemented nothing.
    """
    left = overview.unimplemented(data)
    learners = [m for m in data.learners if m.student not in left.nothing]
    return grouped(learners, contract_functions(data.assignment), left.of)


def grouped(
    learners: list[LearnerResult], functions: list[str], left_out=lambda student: []
) -> list[Cluster]:
    """The grouping rule itself, for any reader of verdict records (the TA report, the
    live board): a learner joins a function's group when a failed hidden check of that
    function recorded a probe output that differs from the reference's; the group is
    the function and the probe's digest. `left_out(student)` names functions not to
    group for that learner."""
    groups: dict[tuple[str, str], list[LearnerResult]] = defaultdict(list)
    first: dict[tuple[str, str], dict] = {}
    for learner in learners:
        if not learner.failures:
            continue
        wanted = [f for f in functions if f not in left_out(learner.student)]
        for function, probe in probes(learner, wanted).items():
            if not probe.get("agrees"):
                group = (function, str(probe.get("digest", "")))
                groups[group].append(learner)
                first.setdefault(group, probe)
    found = []
    for (function, fingerprint), members in groups.items():
        keys = sorted({f.key for m in members for f in failures_of(m, function) if f.key})
        probe = first[(function, fingerprint)]
        error = str(probe.get("error", "")) if fingerprint.startswith(ERROR) else ""
        students = [m.student for m in members]
        example = answer_for(members[0], function)
        summary = str(probe.get("summary", ""))
        found.append(Cluster(function, fingerprint, students, keys, example, error, summary))
    return sorted(found, key=lambda c: (c.is_error, -len(c.students), c.function, c.fingerprint))


def failures_of(learner: LearnerResult, function: str) -> list[Failure]:
    return [f for f in learner.failures if f.function == function]
