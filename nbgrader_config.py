"""nbgrader configuration for the Transformer·PEFT course.

Every stock command (`nbgrader generate_assignment`, `release_assignment`,
`collect`, `autograde`, `formgrader`, `generate_feedback`, `export`) reads
this file when run from the repo root. Paths are anchored to this file, so a
copy of the course in another folder (the test suite makes such copies) is a
course of its own.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from coursekit.autograde.execute import SandboxedExecute
from coursekit.autograde.roles import RestoreCells
from coursekit.autograde.shapes import BoundedNotebookExporter
from coursekit.exchange import configure as configure_safe_exchange
from coursekit.exchange.bound import bound_autograded, bound_submitted
from coursekit.exchange.zip_collect import (
    InertExtractorPlugin,
    InertFileNameCollectorPlugin,
)
from coursekit.learner.feedback import FeedbackSummary
from coursekit.learner.feedback_link import configure as configure_feedback_link
from coursekit.learner.tracebacks import SanitizeHiddenTracebacks
from coursekit.learner.validation import configure as configure_validate
from coursekit.nbgrader_internals.new_gradebook import gradebook_url
from coursekit.staff.inert import InertLearnerContent

c = get_config()  # noqa: F821 -- injected by traitlets when it loads this file

COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "transformer-peft"
c.CourseDirectory.root = COURSE_ROOT

# What coursekit needs of this course besides nbgrader's settings (coursekit/core/course.py):
# its time zone (the hub's servers and timestamps); its packages keep the default names
# solutions/, grader_tests/ and catalog/ (`c.CourseKit.*_package` would rename them).
c.CourseKit.timezone = "Asia/Seoul"

# SQLite in the course root unless a deployment names another gradebook
# (for example PostgreSQL shared by several graders). A busy gradebook delays a write,
# never drops it: WAL mode, so a reader (a staff page, the TA report) never blocks a
# writer (a TA's save in formgrader, make grade, make live), and a writer waits up to
# 120 s for another one (`?timeout=120&plugin=coursekit.wal`), in every process given
# this URL (coursekit/core/gradebook_wal.py); a new one is stamped with nbgrader's schema
# version in-process (`&plugin=coursekit.stamp`, coursekit/nbgrader_internals).
c.CourseDirectory.db_url = os.environ.get(
    "COURSE_GRADEBOOK_URL", gradebook_url(os.path.join(COURSE_ROOT, "gradebook.db"))
)

# A course-local exchange: release, fetch, submit and collect work on one
# machine without a system-wide /srv/nbgrader/exchange.
c.Exchange.root = os.environ.get("COURSE_EXCHANGE_ROOT", os.path.join(COURSE_ROOT, "exchange"))

# Stubs the learners see where a solution region was.
c.ClearSolutions.code_stub = {"python": "# 여기에 코드를 쓰세요\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "여기에 답을 쓰세요."

# A deleted or emptied test cell is put back from the gradebook, so it is
# graded like every other submission instead of going to manual grading.
c.OverwriteCells.add_missing_cells = True

# Cell roles (graded or not, grade_id, points, locked and solution flags, the
# skip tag) come from the instructor's notebook, never from the submitted JSON:
# RestoreCells (nbgrader's OverwriteCells, subclassed) rebuilds each cell's
# nbgrader metadata and tags from the gradebook and the source notebook before
# anything reads them, and puts back cells that are missing or mangled
# (coursekit/autograde/roles.py). Otherwise nbgrader 0.9.6's default list.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    RestoreCells,
    DeduplicateIds,
    OverwriteKernelspec,
    CheckCellMetadata,
]

# A submission is read within stated bounds (file size, nesting, number of
# cells), repaired where nbformat's schema would fail it, and graded with a
# reason in the course's language where it was cut; one that is no notebook at all scores 0 on
# every cell (coursekit/autograde/shapes.py, `c.BoundedNotebookExporter.*`).
c.Autograde.exporter_class = BoundedNotebookExporter
# nbconvert validates the whole notebook after each of a pass's preprocessors (13 in
# the two passes); once at the end of each pass finds the same invalid notebooks and
# saves ~20 CPU-ms per notebook (the time budget, bench/budget.py).
c.BoundedNotebookExporter.optimistic_validation = True

# Each hidden check runs in well under a second; the slowest cell (the first
# matplotlib heatmap, which may build the font cache) takes a few seconds.
# 30 s per cell leaves room for a loaded machine and still stops a runaway loop.
c.Execute.timeout = 30

# Grading runs every cell except the drawings (tag `skip-autograde`), which
# earn no points and cost about a third of a notebook's grading time.
# The list is nbgrader 0.9.6's default with Execute replaced by SandboxedExecute
# (nbgrader's Execute, drawings skipped): the learner's kernel runs in a
# bubblewrap sandbox, test cells are judged by the grader outside it, and dead,
# stuck, flooding and memory-hungry kernels cost only their own cells
# (coursekit/cluster/, coursekit/sandbox/).
# As root, each sandboxed kernel is forked from a warm parent that imported
# ipykernel and these once (the first cell of both notebooks imports them):
# a third of a graded notebook's CPU otherwise (the time budget, bench/budget.py).
c.SandboxedExecute.preload_modules = ["numpy", "pandas"]

c.Autograde.autograde_preprocessors = [
    SandboxedExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
    # Last, so it cannot change a score: nothing a learner wrote stays live in
    # autograded/, which formgrader renders for the instructor (coursekit/staff/inert.py).
    InertLearnerContent,
]

# Learner feedback shows each failing test's message, but neither the hidden
# test source (nbgrader #917) nor the frames of the grader's own code. The page
# opens with a summary per function in the course's language, and long lines wrap
# (coursekit/learner/feedback.py).
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    SanitizeHiddenTracebacks,
    InertLearnerContent,  # again, for notebooks graded before it (before our own summary)
    CSSHTMLHeaderPreprocessor,
    FeedbackSummary,
]

# Validate (the learners' button and `nbgrader validate`) in the course's language: nbgrader's
# message templates, and hooks of the Execute inside the Validator only, which
# open its report with one line per function (coursekit/learner/validation.py). After
# c.Execute.timeout: the time-out message names that limit.
configure_validate(c)

# The Assignments tab's "(view feedback)" goes to the feedback page itself, not
# to its folder: nbgrader's ExchangeList plugin with that one path changed
# (coursekit/learner/feedback_link.py).
configure_feedback_link(c)

# The exchange hands over plain files only (no links followed, no FIFOs or
# devices, nbgrader's size limits counted as bytes read), a submission counts
# for the account that wrote it at the time the exchange received it, and one
# learner's odd folder never stops collect or release_feedback for the others
# (coursekit/exchange/).
configure_safe_exchange(c)

# Files beside a notebook, however they reached submitted/ (collect, zip_collect, a
# copy by hand): before nbgrader copies them into autograded/ (or feedback/), the
# folder holds only what the exchange would collect, within the same budget
# (`c.PlainFileLimits.*`, `c.CourseDirectory.max_file_size` / `max_dir_size`), and no
# name a browser renders as a page (`notes.html` -> `notes.html.txt`); the rest is
# moved to left_out/, with a reason in the course's language (coursekit/exchange/bound.py,
# names.py).
c.Autograde.pre_convert_hook = bound_submitted
c.GenerateFeedback.pre_convert_hook = bound_autograded
# `nbgrader zip_collect` (an LMS download): each file renamed so as it is extracted,
# and collected under that name (coursekit/exchange/zip_collect.py).
c.ZipCollectApp.extractor_plugin = InertExtractorPlugin
c.ZipCollectApp.collector_plugin = InertFileNameCollectorPlugin
# The TA live board of `make live` (coursekit/live/board.py): a learner is "stuck" on a
# function failed on this many graded attempts in a row.
c.LiveBoard.stuck_after = 3
