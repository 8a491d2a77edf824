"""Autograde preprocessor: confirm the kernel's test verdicts in a fresh interpreter.

Everything in the learner's kernel can be changed by the learner's code:
numpy's comparison functions, builtins, `get_ipython().showtraceback`, the
`grader_tests` that a shipped folder shadows. So after Execute, the test cells
that passed in the kernel are run again, with the learner's cells before
them, in a separate process whose checker took its references before any
learner code ran (`fresh`).

A test cell keeps its kernel score only if the fresh run passes it too; if
not, it gets an error output (scored 0) saying why in Korean. The rule only
ever lowers a score: for an honest submission both runs agree, so the
gradebook is what stock autograde writes, and a trick that fools the kernel
cannot raise anything. Cells that failed in the kernel are not re-judged.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time

from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Integer, Unicode

from coursekit.grading import incidents

CHILD = "from coursekit.grading.fresh import serve; serve()"


def is_test(cell) -> bool:
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def passed_in_kernel(cell) -> bool:
    return not any(
        out.output_type == "error" or (out.output_type == "stream" and out.name == "stderr")
        for out in cell.get("outputs", [])
    )


class VerifyInFreshInterpreter(NbGraderPreprocessor):
    enabled = Bool(True, help="re-run passing test cells in a fresh interpreter").tag(config=True)
    timeout = Integer(180, help="wall-clock cap of the fresh run of one notebook (s)").tag(
        config=True
    )
    memory_limit_mb = Integer(4096, help="address-space cap of the fresh run (MiB)").tag(
        config=True
    )
    skip_tag = Unicode("skip-autograde", help="cells with this tag are not run").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.enabled:
            return nb, resources
        info = resources["nbgrader"]
        passing = [i for i, cell in enumerate(nb.cells) if is_test(cell) and passed_in_kernel(cell)]
        if not passing:
            return nb, resources
        setup = self._setup_sources(info)
        plan = self._plan(nb, setup, last=max(passing))
        verdicts, why = run_fresh(plan, info["assignment"], self.timeout, self.memory_limit_mb)
        for index in passing:
            verdict = verdicts.get(index)
            if verdict is None:
                message = (
                    f"채점기와 분리된 새 인터프리터에서 답안을 다시 돌렸는데 이 칸에 닿기 전에 "
                    f"끝났습니다 ({why}). 노트북 커널에서만 통과한 결과는 인정하지 않습니다."
                )
            elif not verdict["passed"]:
                message = (
                    "채점기와 분리된 새 인터프리터에서 답안을 다시 돌렸더니 이 검사를 통과하지 "
                    f"못했습니다: {verdict['message'][:600]}\n노트북 커널에서만 통과한 결과는 "
                    "인정하지 않습니다 (numpy·검사 함수를 바꾸는 코드, 검사 칸 수정 등)."
                )
            else:
                continue
            incidents.add(nb.cells[index], incidents.FRESH_RUN_FAILED, message)
        return nb, resources

    def _setup_sources(self, info) -> set[str]:
        """Sources of the locked, ungraded cells the gradebook knows for this notebook."""
        try:
            course_id = self.config.CourseDirectory.get("course_id", "default_course")
            with Gradebook(info["db_url"], course_id) as gb:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
                return {c.source for c in notebook.source_cells if c.locked}
        except MissingEntry:
            return set()

    def _plan(self, nb, setup: set[str], last: int) -> list[dict]:
        plan = []
        for index, cell in enumerate(nb.cells[: last + 1]):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if self.skip_tag in cell.metadata.get("tags", []):
                continue
            if is_test(cell):
                kind = "test"
            elif cell.source in setup and not utils.is_solution(cell):
                kind = "setup"
            else:
                kind = "learner"
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            plan.append({"kind": kind, "index": index, "grade_id": grade_id, "source": cell.source})
        return plan


class Zygote:
    """The `fresh.serve()` process of this grading process, started on first use."""

    process: subprocess.Popen | None = None
    pending = b""
    preload = ("numpy", "numpy.testing", "pandas")

    @classmethod
    def get(cls) -> subprocess.Popen:
        if cls.process is None or cls.process.poll() is not None:
            cls.workdir = tempfile.mkdtemp(prefix="fresh-run-")
            cls.pending = b""
            cls.process = subprocess.Popen(
                [sys.executable, "-I", "-c", CHILD, *cls.preload],
                cwd=cls.workdir,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
        return cls.process

    @classmethod
    def send(cls, job: dict) -> None:
        cls.process.stdin.write(json.dumps(job).encode() + b"\n")

    @classmethod
    def read_line(cls, timeout: float) -> str | None:
        """The zygote's next line, or None after `timeout` seconds or at its end."""
        deadline = time.monotonic() + timeout
        fd = cls.process.stdout.fileno()
        while b"\n" not in cls.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            data = os.read(fd, 4096)
            if not data:
                return None
            cls.pending += data
        line, cls.pending = cls.pending.split(b"\n", 1)
        return line.decode()

    @classmethod
    def discard(cls) -> None:
        if cls.process is not None:
            cls.process.kill()
        cls.process = None


def run_fresh(
    plan: list[dict], assignment: str, timeout: int, memory_limit_mb: int
) -> tuple[dict[int, dict], str]:
    """cell index -> verdict for the test cells the fresh run reached, and why it stopped."""
    nonce = secrets.token_hex(16)
    Zygote.get()
    with tempfile.TemporaryDirectory(prefix="fresh-run-") as work:
        request, results = os.path.join(work, "request.json"), os.path.join(work, "results")
        with open(request, "w", encoding="utf-8") as handle:
            json.dump({"nonce": nonce, "assignment": assignment, "cells": plan}, handle)
        job = {"request": request, "results": results, "cwd": work}
        Zygote.send({**job, "memory_limit_mb": memory_limit_mb})
        started = Zygote.read_line(120)
        if not started or not started.startswith("pid "):
            Zygote.discard()
            return {}, "검증용 인터프리터를 시작하지 못했습니다"
        pid = int(started.split()[1])
        why = "비정상 종료"
        if Zygote.read_line(timeout) is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            if Zygote.read_line(30) is None:
                Zygote.discard()  # out of step with us: start a new one next time
            why = f"시간 제한 {timeout}초 초과"
        try:
            with open(results, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except FileNotFoundError:
            lines = []
    return parse(lines, nonce, why)


def parse(lines: list[str], nonce: str, why: str) -> tuple[dict[int, dict], str]:
    verdicts, done = {}, False
    for line in lines:
        if not line.startswith(nonce):
            continue
        record = json.loads(line[len(nonce) :])
        if record.get("done"):
            done = True
        elif record["index"] in verdicts:  # a second verdict for one cell is forged
            verdicts[record["index"]] = {"passed": False, "message": "검증 결과가 두 번 나왔습니다"}
        else:
            verdicts[record["index"]] = record
    return verdicts, "끝까지 돌았습니다" if done else why
