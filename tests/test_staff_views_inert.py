"""Staff views are inert, in a real browser: a learner's script never runs for the staff.

One small class (an honest learner, one with a catalogued mistake, and the same
mistake from an attacker whose outputs, markdown, raw cell, written answer,
notebook metadata and files handed in beside the notebook (HTML, SVG, XHTML, a .js
and a PDF with a JavaScript action) all carry script) is graded with `make
grade`, given feedback and a TA report. Stock `jupyter lab` is started from the
course root with nothing but the environment (no extension named on the command
line: the environment enables coursekit.staff.server). Then headless Chromium
opens, as the instructor, formgrader's pages of the attacker's submission, the
feedback page in JupyterLab, through /files/ and from disk, the TA report, the
autograded notebook through /files/ and /nbconvert/, and every file beside the
notebook under whatever name it reached each folder. The script would send a beacon to a
loopback listener the test runs and, with formgrader's _xsrf cookie, PUT every
grade to full marks plus extra credit and a file through /api/contents. A
control page (the submitted notebook rendered by plain nbconvert, from disk)
shows the same script does fire there, and the files beside the notebook fire
opened from disk. formgrader renders the notebook's formulas with the server's
own MathJax. Screenshots land next to the course (formgrader.png,
formgrader_outputs.png, formgrader_math.png, feedback.png) to look at.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time

import nbformat
import pytest
from nbconvert import HTMLExporter

from coursekit.core.environment import venv_environment
from coursekit.simulate import submissions
from tests.support.browser import CHROMIUM, FLAGS, MISSING, show_line
from tests.support.course_sandbox import CourseSandbox
from tests.support.file_attacks import Listener, attack, beside, open_files, payload, settle
from tests.support.lab_server import running_lab

pytestmark = [pytest.mark.class_graded, pytest.mark.browser]

ASSIGNMENT, NOTEBOOK = "ch3_multihead", "multihead"
HONEST, PLAIN_MISTAKE, ATTACKER = "honest-01", "mistake-02", "mallory-03"
MISTAKE = (
    "def split_heads(M, h):\n    n, d_model = M.shape\n    return M.reshape(h, n, d_model // h)\n"
)
DIAGNOSIS = "짐작되는 실수 [reshape_without_transpose]"
# The honest learner's written answer, with an inline formula for formgrader's MathJax.
HONEST_ANSWER = "head 를 나눠도 $W_Q$ 는 $d_{model} \\times d_{model}$ 그대로입니다."

# A table (pandas HTML) and a heatmap (image/png) every learner shows, as the course's cells do.
SHOWN = """import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
import matplotlib.pyplot as plt
from IPython.display import display

display(pd.DataFrame(np.eye(3).round(2), index=list("abc"), columns=list("xyz")))
plt.figure(figsize=(3, 3))
plt.imshow(np.eye(4), cmap="Blues")
plt.title("heatmap")
plt.show()
"""


def minimal_pdf(js: str) -> bytes:
    """A one-page PDF whose /OpenAction runs `js` (PDF JavaScript) when a viewer opens it."""
    js_literal = js.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    objects = [
        "<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
        f"<< /Type /Action /S /JavaScript /JS ({js_literal}) >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out + trailer.encode()


def files_beside(port: int) -> dict[str, bytes]:
    """The attacker's files handed in beside the notebook, each carrying the payload."""
    svg_onload = payload(port, "file-svg-onload").replace('"', "&quot;")
    return {
        "notes.html": attack(port, "file-html").encode(),
        "diagram.svg": (
            f'<svg xmlns="http://www.w3.org/2000/svg" onload="{svg_onload}">'
            f"<script>{payload(port, 'file-svg-script')}</script></svg>"
        ).encode(),
        "page.xhtml": (
            '<html xmlns="http://www.w3.org/1999/xhtml"><body>'
            f"<script>//<![CDATA[\n{payload(port, 'file-xhtml')}\n//]]></script></body></html>"
        ).encode(),
        "helper.js": payload(port, "file-js").encode(),
        "report.pdf": minimal_pdf(f"app.launchURL('http://127.0.0.1:{port}/beacon/file-pdf');"),
    }


def hostile_outputs(port: int) -> str:
    """Code appended to the attacker's answer cell: displays produced when the grader re-runs it."""
    onload = payload(port, "svg-onload").replace('"', "&quot;")
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" onload="{onload}">'
        f"<script>{payload(port, 'svg-script')}</script></svg>"
    )
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2}}
    return "\n".join(
        [
            "from IPython.display import HTML, SVG, Javascript, Markdown, display",
            f"display(HTML({attack(port, 'output-html')!r}))",
            f"display(Javascript({payload(port, 'output-javascript')!r}))",
            f"display(Markdown({attack(port, 'output-markdown')!r}))",
            f"display(SVG({svg!r}))",
            f"display({{**{widget!r}, 'text/html': {attack(port, 'output-widget')!r}}}, raw=True)",
        ]
    )


def attacker_notebook(release, source, port: int):
    nb = submissions.fill(release, source, replace={"split_heads": MISTAKE + hostile_outputs(port)})
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "why_256_answer":
            cell.source = "head 를 늘리면 d_head 가 줄어듭니다. " + attack(port, "written-answer")
    extra = [
        nbformat.v4.new_markdown_cell(
            "제 풀이 노트: "
            + " ".join(f"[{name}]({name})" for name in files_beside(port))
            + "\n\n"
            + attack(port, "markdown-cell")
        ),
        nbformat.v4.new_raw_cell(attack(port, "raw-cell")),
    ]
    # A tag may hold no comma (nbformat's schema): a short beacon.
    beacon = f"new Image().src='http://127.0.0.1:{port}/beacon/tag'"
    extra[0].metadata["tags"] = [f'x" onmouseover="{beacon}" class="']
    nb.cells[40:40] = extra
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {},
            "version_major": 2,
            "version_minor": 0,
            "x": f"</script><script>{payload(port, 'widget-state')}</script>",
        }
    }
    return nb


def honest_notebook(release, source):
    nb = submissions.fill(release, source)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "why_256_answer":
            cell.source = HONEST_ANSWER
    return nb


def with_shown_cell(nb):
    nb = copy.deepcopy(nb)
    nb.cells.insert(22, nbformat.v4.new_code_cell(SHOWN))
    return nb


def grades(course) -> dict[str, tuple]:
    """grade id -> (auto, manual, extra credit) of the attacker, from the gradebook."""
    with course.gradebook() as gb:
        nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, ATTACKER)
        return {g.name: (g.auto_score, g.manual_score, g.extra_credit) for g in nb.grades}


@pytest.fixture(scope="module")
def staff_class(tmp_path_factory):
    """The class graded, its feedback and report made, and the instructor's `make lab` running."""
    root = tmp_path_factory.mktemp("staff_views")
    course = CourseSandbox(root)
    listener = Listener()
    course.generate(ASSIGNMENT)
    release, source = course.release_notebook(ASSIGNMENT), course.source_notebook(ASSIGNMENT)
    course.submit(HONEST, ASSIGNMENT, with_shown_cell(honest_notebook(release, source)))
    plain = submissions.fill(release, source, replace={"split_heads": MISTAKE})
    course.submit(PLAIN_MISTAKE, ASSIGNMENT, with_shown_cell(plain))
    hostile = with_shown_cell(attacker_notebook(release, source, listener.port))
    folder = course.submit(ATTACKER, ASSIGNMENT, hostile)
    for name, content in files_beside(listener.port).items():
        (folder / name).write_bytes(content)
    course.grade("-j", "2")
    course.run("generate_feedback", ASSIGNMENT, "--force")
    report = subprocess.run(
        [sys.executable, "-m", "coursekit.staff.report", ASSIGNMENT, "--root", str(root)],
        cwd=root, env=venv_environment(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert report.returncode == 0, report.stdout[-2000:] + report.stderr[-2000:]

    try:
        # Stock `jupyter lab` from the course root: the environment alone sets the policies.
        with running_lab(root, root / "runtime", root / "lab.log") as (base, token):
            yield course, listener, base, token
    finally:
        listener.close()


def submission_id(course, student: str) -> str:
    with course.gradebook() as gb:
        return gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).id


def visible(page, selector: str) -> bool:
    return page.locator(selector).first.is_visible()


def heatmap_drawn(page) -> bool:
    return page.evaluate(
        "() => [...document.querySelectorAll('img[src^=\"data:image/png\"]')]"
        ".some(i => i.complete && i.naturalWidth > 100)"
    )


def math_rendered(page) -> int:
    """How many formulas MathJax typeset (its HTML-CSS output, or v3's element)."""
    return page.evaluate(
        "() => document.querySelectorAll('span.MathJax, div.MathJax_Display, mjx-container').length"
    )


def test_the_payload_is_live_outside_the_staff_views(staff_class, tmp_path):
    """Control: the attacker's submitted notebook, rendered by plain nbconvert, fires the beacon."""
    from playwright.sync_api import sync_playwright

    course, listener, _, _ = staff_class
    submitted = course.root / "submitted" / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(submitted, as_version=4)
    body, _ = HTMLExporter().from_notebook_node(nb)
    page_file = tmp_path / "raw.html"
    page_file.write_text(body, encoding="utf-8")
    before = len(listener.hits)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            settle(page)
            # The files beside the notebook, opened from disk, run their script too.
            for name, content in files_beside(listener.port).items():
                (tmp_path / name).write_bytes(content)
                if name in ("notes.html", "diagram.svg", "page.xhtml"):
                    page.goto((tmp_path / name).as_uri())
                    settle(page, 1.0)
        finally:
            browser.close()
    fired = listener.hits[before:]
    del listener.hits[before:]  # the control's beacons are not the staff views'
    assert {"/beacon/markdown-cell", "/beacon/written-answer"} <= set(fired), fired
    assert {"/beacon/file-html", "/beacon/file-xhtml", "/beacon/file-svg-script"} <= set(fired)


def test_no_learner_script_runs_in_formgrader_feedback_or_the_report(staff_class, tmp_path):
    from playwright.sync_api import sync_playwright

    course, listener, base, token = staff_class
    assert CHROMIUM.exists(), MISSING
    root = course.root
    before = grades(course)
    attacker, honest = submission_id(course, ATTACKER), submission_id(course, HONEST)
    feedback = root / "feedback" / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.html"
    report = root / "reports" / f"{ASSIGNMENT}.html"
    autograded = f"autograded/{ATTACKER}/{ASSIGNMENT}"
    seen = {}
    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), args=FLAGS,
            headless=True, viewport={"width": 1280, "height": 900}, accept_downloads=True,
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.goto(f"{base}/formgrader?token={token}")
            page.wait_for_selector(f"text={ASSIGNMENT}")

            # Manual Grading: the attacker's submission, as the instructor opens it.
            page.goto(f"{base}/formgrader/submissions/{attacker}/")
            settle(page)
            page.locator("input#why_256_answer").wait_for(state="visible")
            seen["formgrader"] = page.inner_text("body")
            seen["formgrader_table"] = visible(page, "table.dataframe")
            seen["formgrader_heatmap"] = heatmap_drawn(page)
            show_line(page.locator(f"text={DIAGNOSIS}").first)
            page.screenshot(path=str(root / "formgrader.png"))
            page.locator("table.dataframe").first.scroll_into_view_if_needed()
            page.screenshot(path=str(root / "formgrader_outputs.png"))
            # formgrader's own script still works: a TA's score is saved.
            saved = lambda r: "/api/grade/" in r.url and r.request.method == "PUT"  # noqa: E731
            with page.expect_response(saved, timeout=60_000):
                page.locator("input#why_256_answer").fill("1")
                page.locator("input#why_256_answer").press("Tab")
            # The attacker's files, as the notebook links them (they may have reached
            # autograded/ under another name: then a 404 page) ...
            links = page.eval_on_selector_all(
                "#notebook-container a[href]", "as => as.map(a => a.href)"
            )
            linked = [u for u in links if u.rsplit("/", 1)[-1] in files_beside(listener.port)]
            assert len(linked) == len(files_beside(listener.port)), links
            open_files(browser, linked)
            # ... and under the names they have in autograded/: downloads, never pages
            # (formgrader serves PNG/JPEG/GIF as images; the attacker handed in none).
            reached = beside(root / autograded)
            assert reached, "no file beside the notebook reached autograded/"
            base_file = f"{base}/formgrader/submissions/{attacker}/"
            shown = open_files(browser, [base_file + name for name in reached])
            seen["shown_as_page"] = [url for url, download in shown.items() if download is None]
            # The course's own formulas, typeset by the server's MathJax under the policy,
            # and an inline one in the honest learner's written answer.
            page.goto(f"{base}/formgrader/submissions/{honest}/")
            page.wait_for_function(
                "() => document.querySelectorAll('span.MathJax, div.MathJax_Display,"
                " mjx-container').length >= 4",
                timeout=60_000,
            )
            seen["math"] = math_rendered(page)
            seen["math_text"] = page.inner_text("#notebook-container")
            answer = page.locator(".text_cell_render", has_text="그대로입니다").first
            seen["inline_math"] = answer.locator("span.MathJax").count()
            answer.scroll_into_view_if_needed()
            page.screenshot(path=str(root / "formgrader_math.png"))
            # The neighbours and the lists that show submissions.
            neighbours = open_files(
                browser,
                [
                    f"{base}/formgrader/submissions/{honest}/",
                    f"{base}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK}",
                    f"{base}/formgrader/manage_students/{ATTACKER}/{ASSIGNMENT}",
                    f"{base}/formgrader/manage_submissions/{ASSIGNMENT}",
                ],
                seconds=1.0,
            )
            assert set(neighbours.values()) == {None}, neighbours  # pages, not downloads
            # A second visit (no cached page without its hashes): formgrader's handlers work.
            page.goto(f"{base}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK}")
            page.locator(f"a.name-shown:text-is('{ATTACKER}')").wait_for(state="attached")
            page.click("text=Show All Names")
            page.locator(f"a.name-shown:text-is('{ATTACKER}')").wait_for(state="visible")
            # The same material under /files/ and /nbconvert/, and the feedback page.
            lab = f"{base}/lab"
            folders = [autograded, f"submitted/{ATTACKER}/{ASSIGNMENT}"]
            folders.append(f"feedback/{ATTACKER}/{ASSIGNMENT}")
            files = [f"{base}/files/{f}/{name}" for f in folders for name in beside(root / f)]
            open_files(browser, files, referer=lab)
            for path in (
                f"/nbconvert/html/{autograded}/{NOTEBOOK}.ipynb?download=false",
                f"/files/reports/{ASSIGNMENT}.html",
                f"/files/feedback/{ATTACKER}/{ASSIGNMENT}/{NOTEBOOK}.html",
            ):
                # As JupyterLab opens them (Jupyter refuses /files/ without a referer).
                response = page.goto(base + path, referer=f"{base}/lab")
                assert response.status == 200, (path, response.status)
                settle(page, 1.0)
            seen["feedback_files"] = page.inner_text("body")
            # In JupyterLab: its HTML viewer shows the feedback page in a frame.
            page.goto(f"{base}/lab/tree/feedback/{ATTACKER}/{ASSIGNMENT}/{NOTEBOOK}.html")
            viewer = page.frame_locator("iframe").first
            viewer.locator("#course-summary").wait_for(state="visible", timeout=120_000)
            seen["feedback_lab"] = viewer.locator("body").inner_text()
            settle(page)
            # From disk: the feedback page and the TA report.
            page.goto(feedback.as_uri())
            settle(page)
            seen["feedback"] = page.inner_text("body")
            seen["feedback_table"] = visible(page, "table.dataframe")
            seen["feedback_heatmap"] = heatmap_drawn(page)
            page.screenshot(path=str(root / "feedback.png"), full_page=False)
            page.goto(report.as_uri())
            settle(page)
            seen["report"] = page.inner_text("body")
        finally:
            browser.close()
    time.sleep(2)

    assert listener.hits == [], listener.hits
    after = grades(course)
    expected = {**before, "why_256_answer": (before["why_256_answer"][0], 1.0, None)}
    assert after == expected, (before, after)
    assert sorted(p.name for p in root.rglob("pwned_*")) == []
    assert seen["shown_as_page"] == []

    # MathJax typeset the two display formulas and the inline ones; no TeX left as text.
    assert seen["math"] >= 4 and seen["inline_math"] == 2, (seen["math"], seen["inline_math"])
    # MathJax found every part it asked for (its fonts included) on the server.
    assert "404 GET /static/jupyter_server_mathjax/" not in (root / "lab.log").read_text()
    assert "\\mathrm{softmax}" not in seen["math_text"] and "$W_Q$" not in seen["math_text"]

    assert DIAGNOSIS in seen["formgrader"]
    assert seen["formgrader_table"] and seen["formgrader_heatmap"]
    assert "요약: 함수마다 점수와 첫 번째 진단" in seen["feedback"]
    assert "요약: 함수마다 점수와 첫 번째 진단" in seen["feedback_files"]
    assert DIAGNOSIS in seen["feedback_lab"]
    assert DIAGNOSIS in seen["feedback"]
    assert seen["feedback_table"] and seen["feedback_heatmap"]
    assert "조교용 채점 보고서" in seen["report"] and ATTACKER in seen["report"]


def test_honest_learners_are_graded_as_without_the_attacker(staff_class):
    course = staff_class[0]
    scores, max_scores = course.scores(ASSIGNMENT), course.max_scores(ASSIGNMENT)
    automatic = [g for g in max_scores if g != "why_256_answer"]
    assert all(scores[HONEST][g] == max_scores[g] for g in automatic), scores[HONEST]
    # The script in its outputs and cells changes nothing in the attacker's own grades.
    assert {g: scores[ATTACKER][g] for g in automatic} == {
        g: scores[PLAIN_MISTAKE][g] for g in automatic
    }
    assert scores[PLAIN_MISTAKE]["split_heads_seed"] == 0


def test_the_autograded_notebook_keeps_no_live_markup(staff_class):
    """What formgrader renders: markdown, raw cells, outputs and metadata hold no live markup
    (the answer's code itself is shown as highlighted text)."""
    course = staff_class[0]
    nb = course.autograded_notebook(ATTACKER, ASSIGNMENT)
    rendered = [json.dumps(nb.metadata)]
    for cell in nb.cells:
        rendered.append(json.dumps(cell.metadata))
        if cell.cell_type == "code":
            rendered.append(json.dumps(cell.get("outputs", [])))
        else:
            rendered.append(cell.source)
    text = "\n".join(rendered)
    for live in ("<script", "onerror", "onload", "onmouseover", "application/javascript"):
        assert live not in text, live
    assert "head 를 늘리면 d_head 가 줄어듭니다." in text  # the written answer is still there
    honest = course.autograded_notebook(HONEST, ASSIGNMENT)
    outputs = [o for c in honest.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    kinds = {m for o in outputs for m in o.get("data", {})}
    assert {"text/html", "image/png", "text/plain"} <= kinds, kinds
