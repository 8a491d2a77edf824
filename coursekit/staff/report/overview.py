"""What TAs see first: the score distribution, each cell's pass rate, who implemented nothing.

A learner who left a function's released stub (`raise NotImplementedError()`)
did not get it wrong: that function is "not implemented", shown once per learner
instead of as a failing cell per test and a probe cluster per function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from coursekit.core import cells
from coursekit.core.course import Course, contract_functions
from coursekit.core.messages import _
from coursekit.learner import diagnosis
from coursekit.staff.report.data import AssignmentData, LearnerResult

BINS = 10


@dataclass
class Bin:
    low: float
    high: float  # exclusive, except for the last bin, which ends at the full score
    last: bool
    students: list[str] = field(default_factory=list)

    @property
    def short_label(self) -> str:
        """The range, without saying whether its top belongs to it (the chart's axis)."""
        return _("{low:g}–{high:g} points").format(low=self.low, high=self.high)

    @property
    def label(self) -> str:
        if self.last:
            return self.short_label
        return _("{range}, top excluded").format(range=self.short_label)


@dataclass
class CellRate:
    cell: str
    function: str
    points: float
    passed: int
    learners: int

    @property
    def rate(self) -> float:
        return self.passed / self.learners if self.learners else 0.0


@dataclass
class Unimplemented:
    nothing: list[str]  # learners who left every contract function as released
    partly: dict[str, list[str]]  # learner -> the functions still as released
    functions: list[str]  # the assignment's contract functions, notebook order

    def of(self, student: str) -> list[str]:
        """The functions a learner left as released (all of them for `nothing`)."""
        return self.functions if student in self.nothing else self.partly.get(student, [])


@dataclass
class Overview:
    full_score: float
    histogram: list[Bin]
    cells: list[CellRate]
    unimplemented: Unimplemented


def full_score(data: AssignmentData) -> float:
    return sum(data.cells.values()) + sum(data.manual.values())


def histogram(data: AssignmentData, bins: int = BINS) -> list[Bin]:
    """Learners per score range: `bins` ranges of whole points (or fewer) up to the full score."""
    top = full_score(data)
    width = max(1, math.ceil(top / bins)) if top >= bins else max(top / bins, 0.5)
    count = max(1, math.ceil(top / width))
    found = [Bin(i * width, min((i + 1) * width, top), i == count - 1) for i in range(count)]
    for learner in data.learners:
        index = min(int(learner.score // width), count - 1) if width else 0
        found[max(index, 0)].students.append(learner.student)
    return found


def cell_functions(root, assignment: str) -> dict[str, str]:
    """Autograded grade_id -> the contract function it tests, from the source notebook."""
    nb = Course(root).source_notebook(assignment)
    return {
        cells.grade_id(test): function.name
        for function in diagnosis.functions(nb)
        for test in function.tests
    }


def pass_rates(data: AssignmentData, functions: dict[str, str]) -> list[CellRate]:
    """Each autograded cell in notebook order: how many learners earned its full points."""
    lost: dict[str, int] = {cell: 0 for cell in data.cells}
    for learner in data.learners:
        for cell in {f.cell for f in learner.failures}:
            if cell in lost:
                lost[cell] += 1
    n = len(data.learners)
    order = [c for c in functions if c in data.cells]
    order += [c for c in data.cells if c not in functions]
    return [CellRate(c, functions.get(c, ""), data.cells[c], n - lost[c], n) for c in order]


def stubbed(learner: LearnerResult, functions: list[str]) -> list[str]:
    """Contract functions whose answer cell still raises the released NotImplementedError."""
    by_name = {cells.defined_function(answer): answer for answer in learner.answers}
    return [f for f in functions if f in by_name and "raise NotImplementedError()" in by_name[f]]


def unimplemented(data: AssignmentData) -> Unimplemented:
    functions = contract_functions(data.assignment)
    nothing, partly = [], {}
    for learner in data.learners:
        left = stubbed(learner, functions)
        if functions and left == functions:
            nothing.append(learner.student)
        elif left:
            partly[learner.student] = left
    return Unimplemented(nothing, partly, functions)


def overview(root, data: AssignmentData) -> Overview:
    functions = cell_functions(root, data.assignment)
    return Overview(
        full_score(data), histogram(data), pass_rates(data, functions), unimplemented(data)
    )
