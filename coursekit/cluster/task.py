"""One Dask task is one submission: plain data in, plain data out.

In: a `Submission`, out: a `Result` (coursekit.cluster.submission). The
worker never sees the class: a `CoursePlugin` brings it the course once
(coursekit.cluster.bundle), and each task grades its submission with
`worker.grade` (stock autograde, the course's preprocessors) in the worker's
private scratch course, whose gradebook holds the assignment's definitions
and this one learner. Learner code runs, as everywhere, in the
sandboxed kernels that SandboxedExecute starts, never in the worker's process.
"""

from __future__ import annotations

import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

from coursekit.cluster import worker
from coursekit.cluster.bundle import DEFINITIONS_DB, GradingBundle, safe_relative
from coursekit.cluster.submission import NotebookRows, Result, Submission
from coursekit.core import incidents, messages
from coursekit.core.environment import use_environment_bin
from coursekit.core.messages import _
from coursekit.exchange.names import kept_path
from coursekit.nbgrader_internals.rows import scratch_rows

# The grader's modules that import names from them when they are imported.
IMPORTERS = (
    "coursekit.autograde.trusted",
    "coursekit.autograde.execute",
    "coursekit.learner.feedback",
)


class SandboxRefusedError(RuntimeError):
    """This worker has no sandbox for learner code, so it grades nothing."""


def plugin_name(bundle: GradingBundle) -> str:
    return f"coursekit-course-{bundle.digest[:16]}"


class CoursePlugin(WorkerPlugin):
    """The course on a worker: unpacked once, its checks importable, its warm-kernel parent up."""

    def __init__(self, bundle: GradingBundle, unsafe_no_sandbox: bool = False):
        self.bundle = bundle
        self.name = plugin_name(bundle)
        self.unsafe_no_sandbox = unsafe_no_sandbox

    def setup(self, worker):
        use_environment_bin()  # kernels and alembic by name, wherever `dask worker` started
        self.folder = Path(worker.local_directory) / self.name
        self.bundle.unpack(self.folder)
        messages.use_course(self.folder)  # wherever the worker started: the bundle's language
        # Every submission is graded on this one thread, one at a time (autograde chdirs).
        # Dask runs each task in a fresh copy of its thread's contextvars, where
        # jupyter_core's run_sync (nbclient, jupyter_client) keeps its event loop: graded
        # on Dask's thread, each notebook made a new loop that was never closed (three
        # descriptors more per task, and more objects for every later collection).
        self.grader = ThreadPoolExecutor(1, thread_name_prefix="coursekit-grader")
        self.refused = None
        if not self.unsafe_no_sandbox:
            from coursekit.sandbox import policy

            try:
                policy.check_available()
            except policy.SandboxUnavailableError as error:
                self.refused = str(error)
                return
        use_course_packages(self.folder)
        from coursekit.autograde.execute import start_warm_parent
        from coursekit.core.course import load_config

        # This worker process's own warm-kernel parent; it imports while the worker waits.
        self.zygote = (
            None if self.unsafe_no_sandbox else start_warm_parent(load_config(self.folder))
        )

    def teardown(self, worker):
        grader = getattr(self, "grader", None)
        if grader is not None:
            grader.shutdown(wait=True)
        zygote = getattr(self, "zygote", None)
        if zygote is not None:
            zygote.close()

    def grade(self, submission: Submission, extra_args: list[str]) -> Result:
        """Grade on the plugin's own thread; Dask's task thread waits (and names the worker)."""
        address = worker_address()
        return self.grader.submit(self._grade, submission, extra_args, address).result()

    def _grade(self, submission: Submission, extra_args: list[str], address: str) -> Result:
        if self.refused:
            refused = _("This worker cannot isolate learner code, so it grades nothing: {why}")
            raise SandboxRefusedError(refused.format(why=self.refused))
        assignment, student = submission.assignment, submission.student
        for leftover in ("submitted", "autograded", "gradebook.db"):
            path = self.folder / leftover
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        submitted = self.folder / "submitted" / student / assignment
        for relative, content in submission.files.items():
            path = submitted / safe_relative(relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        submitted.mkdir(parents=True, exist_ok=True)
        database = self.folder / "gradebook.db"
        shutil.copyfile(self.folder / DEFINITIONS_DB, database)
        db_url = f"sqlite:///{database}"
        if submission.extension is not None:
            grant_extension(db_url, self.bundle.course_id, submission)
        worker.prepare(str(self.folder))
        result = worker.grade(
            assignment, student, [f"--CourseDirectory.db_url={db_url}", *extra_args]
        )
        result.digest, result.bundle_digest = submission.digest, self.bundle.digest
        result.worker = address
        if result.ok:
            read_outcome(result, db_url, self.folder)
        return result


def worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except ValueError:
        return "local"


def use_course_packages(folder: Path) -> None:
    """Import the course's packages (its reference and checks) from the bundle, not from
    the environment's path.

    Modules already imported from elsewhere are forgotten, and so are the
    grader's modules that hold names from them (IMPORTERS), so that nothing
    keeps a class of the other copy (an `except CheckFailedError` would miss).
    """
    from coursekit.core.course import CourseKit

    packages = CourseKit.of(folder).secret_packages
    if sys.path[:1] != [str(folder)]:
        sys.path.insert(0, str(folder))
    stale = [
        name
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in packages
        and not (getattr(module, "__file__", None) or "").startswith(str(folder))
    ]
    for name in [*stale, *(IMPORTERS if stale else ())]:
        sys.modules.pop(name, None)


def grant_extension(db_url: str, course_id: str, submission: Submission) -> None:
    """The learner's extension in the scratch gradebook, where autograde's late penalty finds it."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        gb.update_or_create_student(submission.student)
        gb.update_or_create_submission(
            submission.assignment, submission.student, extension=submission.extension
        )


def read_outcome(result: Result, db_url: str, folder: Path) -> None:
    """The scratch gradebook's rows for this learner and the autograded files, as plain data."""
    import nbformat

    from coursekit.core import cells

    assignment, student = result.assignment, result.student
    submitted = folder / "submitted" / student / assignment
    timestamp, notebooks = scratch_rows(db_url, assignment, student)
    result.timestamp = timestamp
    for name, (penalty, grades, comments) in notebooks.items():
        result.notebooks[name] = NotebookRows(
            submitted=(submitted / f"{name}.ipynb").exists(),
            late_submission_penalty=penalty,
            grades=grades,
            comments=comments,
        )
    out = folder / "autograded" / student / assignment
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            # The pre-convert hook already renamed the learner's files (exchange.bound);
            # the class's autograded/ gets no rendering name even if it did not run.
            kept = kept_path(str(path.relative_to(out)))
            result.autograded.setdefault(kept, path.read_bytes())
    # Each autograded notebook parsed once, from the bytes just read (not read again and
    # validated for its incidents, then for its verdicts): autograde wrote it, as version 4.
    for relative, content in sorted(result.autograded.items()):
        if "/" in relative or not relative.endswith(".ipynb"):
            continue
        try:
            nb = nbformat.from_dict(json.loads(content))
            if nb.get("nbformat") != 4:
                nb = nbformat.reads(content.decode("utf-8"), as_version=4)
            found, records = incidents.in_notebook(nb), cells.verdict_records(nb)
        except Exception:  # an unreadable output notebook has nothing to give
            continue
        result.incidents += found
        if records:
            result.verdicts[relative[: -len(".ipynb")]] = records


def grade_on_worker(submission: Submission, name: str, extra_args: list[str]) -> Result:
    """The Dask task: grade one submission with the course plugin `name` of this worker."""
    from distributed import get_worker

    plugin = get_worker().plugins.get(name)
    if plugin is None:
        raise RuntimeError(_("This worker has no grading bundle {name}").format(name=name))
    return plugin.grade(submission, list(extra_args))
