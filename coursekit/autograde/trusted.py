"""Test cells run by the grader itself, outside the sandbox, on the learner's functions.

The grader keeps a namespace of its own for each notebook: the setup cells
(the instructor's locked cells, as the gradebook knows their source) run in
it, so `np` and `_seed_example` are the grader's. Each test cell then runs
in a copy of that namespace, in which every other name it uses comes from
the learner's kernel through the bridge: a function as a `RemoteFunction`,
a variable as plain data. Hidden checks (`grader_tests`) and the reference
(`solutions`) are imported here and never reach the kernel.
"""

from __future__ import annotations

import builtins
import contextlib
import io
from dataclasses import dataclass

import numpy as np

from coursekit.checks.verdict import CheckFailedError
from coursekit.sandbox.bridge import Session
from coursekit.sandbox.inside.code_names import code_names


@dataclass
class CellResult:
    """How one test cell fared in the grader's run; `record` is a failed hidden
    check's verdict (coursekit.checks.verdict.Verdict.to_record())."""

    passed: bool
    stdout: str = ""
    ename: str = ""
    evalue: str = ""
    record: dict | None = None


@contextlib.contextmanager
def _grader_state():
    """Keep numpy's print options and global random state as they were."""
    options, state = np.get_printoptions(), np.random.get_state()
    try:
        yield
    finally:
        np.set_printoptions(**options)
        np.random.set_state(state)


class TrustedNotebook:
    def __init__(self):
        self.namespace: dict = {"__name__": "__grader__", "__builtins__": builtins}

    def run_setup(self, source: str) -> None:
        """Run an instructor's setup cell here; its failures show in the kernel's run."""
        with (
            _grader_state(),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.suppress(Exception),
        ):
            exec(compile(source, "<setup>", "exec"), self.namespace)

    def run_test(self, source: str, name: str, session: Session) -> CellResult:
        """Run a test cell on the learner's functions; bridge failures propagate."""
        try:
            code = compile(source, f"<{name}>", "exec")
        except SyntaxError as error:
            return CellResult(False, ename="SyntaxError", evalue=str(error))
        wanted = [
            n
            for n in sorted(code_names(code))
            if n not in self.namespace and not hasattr(builtins, n)
        ]
        env = dict(self.namespace)
        if wanted:
            env.update(session.describe(wanted))
        out = io.StringIO()
        try:
            with _grader_state(), contextlib.redirect_stdout(out):
                exec(code, env)
        except CheckFailedError as failed:  # a hidden check's own failure, with its record
            return CellResult(
                False, out.getvalue(), "AssertionError", str(failed), failed.verdict.to_record()
            )
        except Exception as error:
            return CellResult(False, out.getvalue(), type(error).__name__, _message(error))
        return CellResult(True, out.getvalue())


def _message(error: Exception) -> str:
    try:
        return str(error)
    except Exception:
        return type(error).__name__
