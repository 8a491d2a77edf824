"""Validate says in Korean what autograde will say about the visible tests.

One small class of ch3_multihead, a learner per case of issue 10: the
reference, the untouched release, one catalog mistake, a function that calls
input(), one that reads a notebook global instead of its argument, one that
never returns. Each notebook is validated as a learner validates it: in a
folder of their own, with the course's Validate configuration
(`coursekit.learner.validation.configure`) and no gradebook, through nbgrader's
Validator as the Validate button calls it. The same notebooks are graded by
`make grade` in a scratch copy of the course. Both use a cell time limit of
TIMEOUT seconds; the learner who never returns waits in a sleep, so each of the
cells that call it costs the time limit but no core (the time limit on a loop
that spins, or ignores the interrupt: tests/test_sandbox.py, test_cell_runner.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbgrader.validator import Validator
from traitlets.config.loader import PyFileConfigLoader

from catalog import catalogs
from coursekit.core.course import contract_functions
from coursekit.core.environment import venv_environment
from coursekit.core.messages import _
from coursekit.learner import validation
from coursekit.simulate import submissions
from tests.support.course_sandbox import CourseSandbox
from tests.support.notebook_namespace import notebook_namespace

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"
# Long enough for the heatmap cell (matplotlib and the Korean font) on a loaded
# 2-core machine; short enough that the never-returning learner costs little.
TIMEOUT = 15
LEARNER_CONFIG = f"""\
c = get_config()
c.Execute.timeout = {TIMEOUT}
from coursekit.learner.validation import configure
configure(c)
"""
VISIBLE = {  # the visible test cell of each function
    "split_heads": "split_heads_seed",
    "softmax": "softmax_seed_values",
    "scaled_dot_product_attention": "attention_seed_weights",
    "merge_heads": "merge_heads_seed",
    "multi_head_attention": "mha_seed_example",
    "mha_param_count": "param_count_seed",
}
MISTAKE = next(
    e
    for e in catalogs()[ASSIGNMENT].mistakes
    if e.function == "split_heads" and e.key == "reshape_without_transpose"
)
GLOBAL_READ = '''\
def split_heads(M, h):
    """reads the notebook's n and d_model instead of M.shape"""
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)
'''
CALLS_INPUT = """\
def mha_param_count(d_model, h):
    answer = input("d_model 이 몇인가요? ")
    return 4 * int(answer) ** 2
"""
NEVER_RETURNS = """\
def mha_param_count(d_model, h):
    import time

    total = 4 * d_model * d_model
    while True:  # waits for a total that is already there
        time.sleep(0.05)
"""
CASES = {
    "reference": {},
    "blank": None,
    "catalog-mistake": {"split_heads": MISTAKE.source},
    "calls-input": {"mha_param_count": CALLS_INPUT},
    "reads-global": {"split_heads": GLOBAL_READ},
    "never-returns": {"mha_param_count": NEVER_RETURNS},
}

pytestmark = [
    pytest.mark.xdist_group("validate_class"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]


def plain(text: str) -> str:
    """Without the ANSI colours (the Validate dialog shows them, the terminal does not)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def report_rows(text: str) -> dict[str, str]:
    """function -> status (validation's constant), from the summary Validate prints in the
    course's language."""
    shown = {
        _(status): status
        for status in (
            validation.PASSED,
            validation.WRONG,
            validation.UNIMPLEMENTED,
            validation.WAITING,
        )
    }
    pattern = rf"^\s+(\w+)\s+({'|'.join(map(re.escape, shown))})\b"
    return {name: shown[status] for name, status in re.findall(pattern, plain(text), re.MULTILINE)}


class ValidatedClass:
    def __init__(self, path: Path):
        (path / "course").mkdir()
        self.course = CourseSandbox(path / "course")
        config = self.course.root / "nbgrader_config.py"
        text = config.read_text()
        assert "c.Execute.timeout = 30" in text
        config.write_text(text.replace("c.Execute.timeout = 30", f"c.Execute.timeout = {TIMEOUT}"))
        self.course.generate(ASSIGNMENT)
        release = self.course.release_notebook(ASSIGNMENT)
        source = self.course.source_notebook(ASSIGNMENT)
        self.learners = path / "learners"
        self.name = self.course.notebook_name(ASSIGNMENT)
        for student, replace in CASES.items():
            if replace is None:
                nb = submissions.fill(release, source, blank=True)
            else:
                nb = submissions.fill(release, source, replace=replace)
            self.course.submit(student, ASSIGNMENT, nb)
            home = self.learners / student
            (home / ASSIGNMENT).mkdir(parents=True)
            (home / "nbgrader_config.py").write_text(LEARNER_CONFIG)
            nbformat.write(nb, home / ASSIGNMENT / self.name)
        self.outcomes: dict[str, validation.ValidationResult] = {}
        self.results: dict[str, dict] = {}
        self.scores: dict[str, dict[str, float | None]] = {}
        self.max_scores: dict[str, float] = {}

    def notebook(self, student: str) -> Path:
        return self.learners / student / ASSIGNMENT / self.name

    def validate(self, student: str) -> None:
        """What the Validate button does: nbgrader's Validator with the learner's config."""
        config = PyFileConfigLoader(
            "nbgrader_config.py", str(self.learners / student)
        ).load_config()
        before = len(validation.VERDICTS)
        self.results[student] = Validator(config=config).validate(str(self.notebook(student)))
        assert len(validation.VERDICTS) == before + 1, "the course's hooks did not run"
        self.outcomes[student] = validation.VERDICTS[-1]

    def validate_on_command_line(self, student: str, *command: str):
        return subprocess.run(
            [sys.executable, "-m", *command, f"{ASSIGNMENT}/{self.name}"],
            cwd=self.learners / student,
            env=venv_environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    # Build matplotlib's font cache first, once: on a fresh machine that alone
    # can take longer than the cell time-out.
    subprocess.run(
        [sys.executable, "-c", "import koreanize_matplotlib, matplotlib.pyplot"],
        env=venv_environment(),
        check=True,
        capture_output=True,
        timeout=300,
    )
    group = ValidatedClass(tmp_path_factory.mktemp("validate"))
    grading = subprocess.Popen(
        [sys.executable, "-m", "coursekit.cluster", "--root", str(group.course.root), "-j", "2"],
        cwd=ROOT,
        env=venv_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    for student in CASES:
        group.validate(student)
    output, _errors = grading.communicate(timeout=900)
    assert grading.returncode == 0, output
    group.scores = group.course.scores(ASSIGNMENT)
    group.max_scores = group.course.max_scores(ASSIGNMENT)
    return group


def failed_items(results: dict) -> list[dict]:
    return results.get("failed", [])


@pytest.mark.parametrize("student", list(CASES))
def test_visible_verdicts_agree_with_autograde(graded_class, student):
    outcome = graded_class.outcomes[student]
    scores, max_scores = graded_class.scores[student], graded_class.max_scores
    autograde = {cell: scores[cell] == max_scores[cell] for cell in VISIBLE.values()}
    assert outcome.visible == autograde
    assert bool(graded_class.results[student]) == (student != "reference")


def test_the_reference_passes(graded_class):
    assert graded_class.results["reference"] == {}
    assert not graded_class.outcomes["reference"].failed
    assert set(graded_class.outcomes["reference"].statuses.values()) == {validation.PASSED}


def test_the_report_comes_first_and_lists_every_function(graded_class):
    for student in set(CASES) - {"reference"}:
        first = failed_items(graded_class.results[student])[0]
        assert first["source"].startswith("검사 요약: 보이는 검사 칸 6개 중")
        assert set(report_rows(first["raw_error"])) == set(VISIBLE), first["raw_error"]


def test_unimplemented_functions_are_one_line_each(graded_class):
    results = graded_class.results["blank"]
    (report,) = failed_items(results)  # no test cell source, no traceback
    assert report_rows(report["raw_error"]) == dict.fromkeys(VISIBLE, validation.UNIMPLEMENTED)
    assert "Traceback" not in report["raw_error"] and "NotImplementedError" not in report["error"]
    assert "why_256_answer" in report["raw_error"] and "아직 쓰지 않음" in report["raw_error"]
    assert graded_class.outcomes["blank"].failed


def test_a_catalog_mistake_shows_the_tests_korean_message(graded_class):
    items = failed_items(graded_class.results["catalog-mistake"])
    rows = report_rows(items[0]["raw_error"])
    assert rows["split_heads"] == validation.WRONG
    assert rows["softmax"] == validation.PASSED
    assert "transpose 를" in items[0]["raw_error"]
    details = {
        item["source"].split('"""')[1].split()[0]: plain(item["raw_error"]) for item in items[1:]
    }
    assert "split_heads" in details, "the failing test cell is listed after the report"
    assert details["split_heads"].startswith("[split_heads] 틀림")
    assert "Traceback" not in details["split_heads"]
    # multi_head_attention calls the learner's split_heads: the report says so
    assert "부르는 split_heads" in items[0]["raw_error"]


def test_input_gets_a_korean_message(graded_class):
    report = failed_items(graded_class.results["calls-input"])[0]["raw_error"]
    assert report_rows(report)["mha_param_count"] == validation.WRONG
    assert "input() 을 불렀습니다" in report
    assert "StdinNotImplementedError: raw_input" not in report


def test_a_global_read_passes_the_visible_test_but_is_reported(graded_class):
    outcome = graded_class.outcomes["reads-global"]
    assert all(outcome.visible.values()), "the seed example hides the global read"
    assert outcome.failed, "Validate must not say Success: the hidden tests will fail"
    (report,) = failed_items(graded_class.results["reads-global"])
    assert "노트북 전역 변수 d_model, n" in report["raw_error"]
    hidden = graded_class.scores["reads-global"]
    assert hidden["split_heads_random_shapes"] == 0, "autograde's hidden tests catch it"


def test_a_time_out_gets_a_korean_message(graded_class):
    items = failed_items(graded_class.results["never-returns"])
    report = items[0]["raw_error"]
    assert report_rows(report)["mha_param_count"] == validation.WRONG
    assert f"시간 제한({TIMEOUT}초)" in report and "멈추지 않던 곳: mha_param_count" in report
    assert "KeyboardInterrupt" not in "".join(item["raw_error"] for item in items)


def test_the_command_line_says_the_same_and_exits_non_zero_on_failure(graded_class):
    with ThreadPoolExecutor(2) as pool:
        blank = pool.submit(
            graded_class.validate_on_command_line, "blank", "coursekit.learner.validation"
        )
        reference = pool.submit(
            graded_class.validate_on_command_line, "reference", "nbgrader", "validate"
        )
        blank, reference = blank.result(), reference.result()
    assert blank.returncode == 1, blank.stdout + blank.stderr
    assert report_rows(blank.stdout) == dict.fromkeys(VISIBLE, validation.UNIMPLEMENTED)
    assert _(validation.TEMPLATES["failed_warning"]) in blank.stdout
    assert "The error was:" in blank.stdout  # nbgrader's own words around the report
    assert reference.returncode == 0
    assert "Success! Your notebook passes all the tests." in reference.stdout


@pytest.mark.parametrize("assignment", sorted(catalogs()))
def test_the_global_read_probe_flags_exactly_the_functions_that_read_globals(assignment):
    """The probe, run in-process on the reference with each catalog entry in its place."""
    (path,) = (ROOT / "release" / assignment).glob("*.ipynb")
    given = sorted(validation.given_names(nbformat.read(path, as_version=4)))
    names = contract_functions(assignment)
    probe = validation.PROBE_SOURCE.format(marker=validation.PROBE_MARKER, names=names, given=given)
    flagged_entries = set()
    for entry in [None, *catalogs()[assignment].entries]:
        namespace = notebook_namespace(assignment, entry)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(probe, namespace)
        found = json.loads(out.getvalue().split(validation.PROBE_MARKER, 1)[1])
        flagged = {name for name, info in found.items() if info["globals"] or info["input"]}
        if entry is None:
            assert not flagged, f"the reference is flagged: {found}"
            continue
        label = f"{entry.function}__{entry.key}"
        assert flagged <= {entry.function}, f"{label}: {found}"
        if flagged:
            flagged_entries.add(label)
    assert flagged_entries == catalogs()[assignment].reads_live_globals
