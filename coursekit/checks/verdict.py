"""What a failed hidden check found, as a record, and the message rendered from it.

The check builds a `Verdict`; the learner and the TA read `render()`, while
the grader stores `to_record()` (plain JSON) in the autograded notebook's
cell metadata (`coursekit.core.cells.store_verdict`), where the TA report and the
feedback page read it back with `from_record`. Nobody parses the prose.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from coursekit.core.messages import _, ngettext

RECORD_VERSION = 3  # 2 added `probe`, 3 `picture`
READABLE_VERSIONS = (1, 2, RECORD_VERSION)  # a version 1 record has no probe, 2 no picture

# How the first failing case failed, in the order the check looks.
NOT_CALLABLE = "not_callable"
RAISED = "raised"
MODIFIED_INPUT = "modified_input"
MISMATCH = "mismatch"
OUTCOMES = (NOT_CALLABLE, RAISED, MODIFIED_INPUT, MISMATCH)


def argument_record(name: str, value: Any) -> dict:
    """`{"name", "shape", "dtype"}` for an array, `{"name", "repr"}` for anything else."""
    if isinstance(value, np.ndarray):
        return {"name": name, "shape": list(value.shape), "dtype": str(value.dtype)}
    return {"name": name, "repr": repr(value)}


def describe_argument_record(argument: dict) -> str:
    """`M (5, 12)` for a float array, `mask (3, 4) bool` for another array, `h=3` otherwise."""
    if "shape" in argument:
        dtype = argument["dtype"]
        kind = "" if np.dtype(dtype).kind == "f" else f" {dtype}"
        return f"{argument['name']} {tuple(argument['shape'])}{kind}"
    return f"{argument['name']}={argument['repr']}"


def describe_case_record(case: dict) -> str:
    """`random shapes · seed 3203 — M (5, 12), h=3` (the label is the check's, as declared)."""
    seed = f" · seed {case['seed']}" if case.get("seed") is not None else ""
    arguments = ", ".join(describe_argument_record(a) for a in case["arguments"])
    return f"{case['label']}{seed} — {arguments}"


@dataclass(frozen=True)
class Verdict:
    """A failed hidden check: which function, which case, what came back, which mistake fits.

    `case` is `{"label", "seed", "arguments": [argument_record, ...]}` (None when
    the name was not even a function); `error` is `{"type", "message"}` when
    the learner's function raised; `misconception` is `{"key", "title",
    "advice"}` when one explains the evidence; `probe` is what the function
    gave on its probe cases (coursekit.checks.probe), for the TA report's clusters;
    `picture` is what it gave on the page's seeded example beside the expected value,
    as the feedback page draws it (coursekit.checks.picture), or None.
    """

    function: str
    check: str
    outcome: str
    total: int = 0
    failed: int = 0
    case: dict | None = None
    error: dict | None = None
    modified_args: tuple[str, ...] = ()
    problem: str = ""
    expected: str = ""
    got: str = ""
    misconception: dict | None = None
    assignment: str | None = None
    grade_id: str | None = None
    probe: dict | None = None
    picture: dict | None = None

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")

    @property
    def seed(self) -> int | None:
        return None if self.case is None else self.case.get("seed")

    @property
    def key(self) -> str | None:
        return None if self.misconception is None else self.misconception["key"]

    def reproduce_command(self) -> str | None:
        """What a TA runs to rebuild the failing case, when it has a seed."""
        if self.assignment is None or self.seed is None:
            return None
        return f"python -m coursekit.checks.reproduce {self.assignment} {self.seed}"

    def to_record(self) -> dict:
        record = asdict(self)
        record["modified_args"] = list(self.modified_args)
        record["version"] = RECORD_VERSION
        return record

    @classmethod
    def from_record(cls, record: dict) -> Verdict:
        if record.get("version") not in READABLE_VERSIONS:
            raise ValueError(f"verdict record version {record.get('version')!r} is not supported")
        fields = {k: v for k, v in record.items() if k != "version"}
        fields["modified_args"] = tuple(fields.get("modified_args", ()))
        return cls(**fields)

    def render(self) -> str:
        """The message the learner reads under the failing cell, in the course's language."""
        name = self.function
        if self.outcome == NOT_CALLABLE:
            return _("[{name}] {name} is not a function: {type}").format(
                name=name, type=self.error["type"]
            )
        failed = ngettext(
            "[{name}] {check}: {failed} of {total} cases was wrong.",
            "[{name}] {check}: {failed} of {total} cases were wrong.",
            self.failed,
        )
        first = _("The first wrong case: {case}").format(case=describe_case_record(self.case))
        lines = [
            failed.format(name=name, check=self.check, failed=self.failed, total=self.total),
            f"  {first}",
        ]
        if self.outcome == RAISED:
            raised = _("The function raised an error: {type}: {message}").format(
                type=self.error["type"], message=self.error["message"]
            )
            lines.append(f"  {raised}".rstrip())
        elif self.outcome == MODIFIED_INPUT:
            changed = _("The input {names} changed in the call.")
            lines.append("  " + changed.format(names=", ".join(self.modified_args)))
        else:
            lines.append(f"  {self.problem}")
            if self.expected:
                lines.append("  " + _("expected: {value}").format(value=self.expected))
            if self.got:
                lines.append("  " + _("got: {value}").format(value=self.got))
        if self.misconception is not None:
            lines.append("  " + misconception_sentence(self.misconception))
        if self.assignment is not None and self.seed is not None:
            again = _("(TA, to reproduce: {assignment} seed {seed})")
            lines.append("  " + again.format(assignment=self.assignment, seed=self.seed))
        return "\n".join(lines)


def misconception_sentence(misconception: dict) -> str:
    title = _("Likely mistake [{key}]: {title}").format(
        key=misconception["key"], title=misconception["title"]
    )
    return f"{title}\n    → {misconception['advice']}"


class CheckFailedError(AssertionError):
    """A hidden check's failure: an AssertionError (what nbgrader scores) carrying its verdict.

    `str()` is the rendered message; `verdict` is the record.
    """

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.render())
        self.verdict = verdict
