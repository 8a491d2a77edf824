"""What coursekit.inert leaves of a learner's notebook, and the policies coursekit.staff_server
sets, without a browser (tests/test_staff_views_inert.py drives Chromium)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

from coursekit.inert import InertLearnerContent, clean_html
from coursekit.staff_server import INERT, NOTEBOOK_MARKER, transform_for, trusted_hashes

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "source").glob("*/*.ipynb"))
JS = "fetch('http://127.0.0.1:9/beacon')"
LIVE = [
    f"<script>{JS}</script>",
    f'<img src="x" onerror="{JS}">',
    f'<img/src="x"/onerror="{JS}">',
    f'<svg onload="{JS}"></svg>',
    '<a href="javascript:alert(1)">x</a>',
    '<a href="jav&#x61;script:alert(1)">x</a>',
    '<iframe src="http://127.0.0.1:9/"></iframe>',
    '<img src="http://127.0.0.1:9/beacon">',
    '<div style="background:url(http://127.0.0.1:9/beacon)">x</div>',
    f'<details open ontoggle="{JS}">x</details>',
    '<form action="http://127.0.0.1:9/"><button>x</button></form>',
]
MARKDOWN_ONLY = ["[x](javascript:alert(1))", "![x](http://127.0.0.1:9/beacon)"]


def rendered(nb) -> str:
    """The notebook as formgrader and feedback render it (nbconvert's classic template),
    without the template's own head, which is not the learner's."""
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    return body[body.index("<body") :]


def live_markup(page: str) -> list[str]:
    found = re.findall(r"<script\b[^>]*>(?!\s*</script>)", page)
    found += re.findall(r"<(?:iframe|object|embed|form|svg)\b", page)
    found += re.findall(r"\son[a-z]+\s*=", page)
    # A link to a web page stays (it needs a click and runs nothing); a fetch does not.
    found += re.findall(r"src\s*=\s*[\"']?\s*https?://|href\s*=\s*[\"']?\s*jav", page)
    found += re.findall(r"url\(", page)
    return found


def learner_notebook(markup: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("show()")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": markup, "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"text/markdown": markup, "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": markup, "text/plain": "x"}),
        nbformat.v4.new_output(
            "display_data", data={"application/javascript": JS, "text/plain": "x"}
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": f'"><script>{JS}</script>'},
            metadata={"image/png": {"width": f'1 onerror="{JS}"'}},
        ),
    ]
    markdown = nbformat.v4.new_markdown_cell("답: " + markup)
    markdown.metadata["tags"] = [f'x" onmouseover="{JS}']
    raw = nbformat.v4.new_raw_cell(markup)
    nb.cells = [code, markdown, raw]
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {},
            "version_major": 2,
            "version_minor": 0,
            "x": f"</script><script>{JS}</script>",
        }
    }
    return nb


@pytest.mark.parametrize("markup", LIVE + MARKDOWN_ONLY)
def test_no_channel_keeps_live_markup(markup):
    shown = nbformat.v4.new_code_cell("show()")
    shown.outputs = [nbformat.v4.new_output("display_data", data={"text/html": markup})]
    alone = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markup), shown])
    assert live_markup(rendered(alone)), "the case must be live before sanitizing"
    nb = learner_notebook(markup)
    nb, _ = InertLearnerContent()(nb, {})
    assert live_markup(rendered(nb)) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_the_course_notebooks_pass_unchanged(path):
    """The instructor's markdown (and so an honest answer in the same Markdown) is not touched."""
    nb = nbformat.read(path, as_version=4)
    cleaned, _ = InertLearnerContent()(copy.deepcopy(nb), {})
    assert [c.source for c in cleaned.cells] == [c.source for c in nb.cells]


def test_tables_and_images_still_show():
    table = (
        "<style scoped>.dataframe tbody tr th { vertical-align: top; }</style>"
        '<table border="1" class="dataframe"><thead><tr style="text-align: right;">'
        "<th></th><th>나는</th></tr></thead><tbody><tr><th>갔다</th><td>0.57</td></tr>"
        "</tbody></table>"
    )
    kept = clean_html(table)
    assert '<table border="1" class="dataframe">' in kept and "<td>0.57</td>" in kept
    assert 'style="text-align: right;"' in kept and "vertical-align" not in kept
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("plt.show()")
    code.outputs = [
        nbformat.v4.new_output(
            "display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
        )
    ]
    nb.cells = [code]
    nb, _ = InertLearnerContent()(nb, {})
    assert nb.cells[0].outputs[0].data["image/png"] == "iVBORw0KGgo="


def page(head_script: str, learner_script: str) -> bytes:
    return (
        f"<html><head><script>{head_script}</script></head><body>"
        f'<span onclick="toggle_name(true);">x</span><div {NOTEBOOK_MARKER.decode()}>'
        f"<script>{learner_script}</script></div></body></html>"
    ).encode()


def test_only_the_template_part_of_a_submission_page_is_trusted():
    ours = trusted_hashes(page("var submission_id = 'a';", JS))
    theirs = trusted_hashes(page("var submission_id = 'a';", "other()"))
    assert ours == theirs and len(ours) == 2  # the head script and formgrader's handler
    assert trusted_hashes(page(JS, "x")) != ours


def policy(path: str, body: bytes = b"", kind: str = "text/html") -> HTTPHeaders:
    start = RequestStartLine("GET", path, "HTTP/1.1")
    request = HTTPServerRequest(headers=HTTPHeaders({"Host": "h:1"}), start_line=start)
    transform = transform_for("/user/prof/")(request)
    headers = HTTPHeaders({"Content-Type": kind})
    _, headers, _ = transform.transform_first_chunk(200, headers, body, True)
    return headers


def test_each_staff_route_gets_its_policy():
    grading = policy("/user/prof/formgrader/submissions/abc/", page("init()", JS))
    csp = grading["Content-Security-Policy"]
    assert "script-src h:1/user/prof/formgrader/static/ 'sha256-" in csp
    assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    assert "connect-src 'self'" in csp
    assert grading["Cache-Control"] == "no-store"  # a 304 would bring a policy without hashes
    extra = policy("/user/prof/formgrader/submissions/abc/notes.html")
    assert extra["Content-Security-Policy"] == INERT
    assert extra["Content-Disposition"] == "attachment"
    assert extra["Content-Type"] == "application/octet-stream"
    image = policy("/user/prof/formgrader/submissions/abc/heatmap.png", kind="image/png")
    assert "Content-Disposition" not in image and image["Content-Type"] == "image/png"
    for path in ("/user/prof/files/feedback/a/ch3/multihead.html", "/user/prof/nbconvert/html/x"):
        assert policy(path)["Content-Security-Policy"] == INERT
    assert "Content-Security-Policy" not in policy("/user/prof/formgrader/api/grades")
    assert "Content-Security-Policy" not in policy("/user/prof/lab")
