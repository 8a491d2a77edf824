"""What coursekit.staff.inert leaves of a learner's notebook, and the policies
coursekit.staff.server sets, without a browser (tests/test_staff_views_inert.py drives
Chromium); and that a plain Jupyter server of the environment sets them."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import jinja2
import nbformat
import pytest
from nbconvert import HTMLExporter
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

from coursekit.core.environment import venv_environment
from coursekit.staff.inert import InertLearnerContent, clean_html
from coursekit.staff.server import (
    INERT,
    MATHJAX_CONFIG,
    NOTEBOOK_MARKER,
    transform_for,
    trusted_hashes,
)
from tests.support.lab_server import running_lab

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


def respond(path: str, body: bytes = b"", kind: str = "text/html", settings=None):
    """(headers, body) as the staff server sends them for `path` on a server at /user/prof/."""
    start = RequestStartLine("GET", path, "HTTP/1.1")
    request = HTTPServerRequest(headers=HTTPHeaders({"Host": "h:1"}), start_line=start)
    transform = transform_for("/user/prof/", settings)(request)
    headers = HTTPHeaders({"Content-Type": kind, "Content-Length": str(len(body))})
    _, headers, body = transform.transform_first_chunk(200, headers, body, True)
    return headers, body


def policy(path: str, body: bytes = b"", kind: str = "text/html") -> HTTPHeaders:
    return respond(path, body, kind)[0]


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


MATHJAX = {
    "mathjax_url": "/user/prof/static/jupyter_server_mathjax/MathJax.js",
    "mathjax_config": "TeX-AMS-MML_HTMLorMML-full,Safe",
}


def nbconvert_mathjax() -> str:
    """What formgrader's template writes for `{{ mathjax() }}`: nbconvert's own macro."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HTMLExporter().template_paths))
    return env.from_string("{% from 'mathjax.html.j2' import mathjax %}{{ mathjax() }}").render()


def test_formgrader_gets_the_servers_own_mathjax_and_the_learners_copy_stays_blocked():
    macro = nbconvert_mathjax()
    assert "cdnjs.cloudflare.com" in macro and "text/x-mathjax-config" in macro
    body = (
        f"<html><head>{macro}</head><body><div {NOTEBOOK_MARKER.decode()}>{macro}</div>"
        "</body></html>"
    ).encode()
    headers, sent = respond("/user/prof/formgrader/submissions/abc/", body, settings=MATHJAX)
    head, notebook = sent.split(NOTEBOOK_MARKER)
    assert b"cdnjs" not in head and b"x-mathjax-config" not in head  # no eval'd config
    src = b'src="/user/prof/static/jupyter_server_mathjax/MathJax.js?config='
    assert src in head and f"<script>{MATHJAX_CONFIG}</script>".encode() in head
    assert notebook.count(b"cdnjs") == 1  # a learner's copy is not trusted, nor rewritten
    assert headers["Content-Length"] == str(len(sent))
    scripts = headers["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    assert "h:1/user/prof/static/jupyter_server_mathjax/ " in scripts
    assert "cdnjs" not in scripts and "'unsafe-eval'" not in scripts
    assert trusted_hashes(f"<script>{MATHJAX_CONFIG}</script>".encode())[0] in scripts
    # Without jupyter-server-mathjax the page is left as it is (formulas as TeX).
    _, unchanged = respond("/user/prof/formgrader/submissions/abc/", body)
    assert unchanged == body


def jupyter(*args: str, cwd: Path, env: dict) -> str:
    command = [str(Path(sys.executable).parent / "jupyter"), *args]
    result = subprocess.run(
        command, cwd=cwd, env={**venv_environment(), **env}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def only_the_environment(tmp_path: Path) -> dict:
    """No user config (an empty JUPYTER_CONFIG_DIR), no extra config path: the venv's own."""
    return {"JUPYTER_CONFIG_DIR": str(tmp_path / "no-user-config"), "JUPYTER_CONFIG_PATH": ""}


def test_the_environment_enables_the_staff_server(tmp_path):
    env = only_the_environment(tmp_path)
    listed = jupyter("server", "extension", "list", cwd=tmp_path, env=env)
    listed = re.sub(r"\x1b\[[0-9;]*m", "", listed)
    assert re.search(r"coursekit\.staff\.server\s+enabled", listed), listed
    assert re.search(r"coursekit\.staff\.server\s+OK", listed), listed
    assert re.search(r"jupyter_server_mathjax\s+enabled", listed), listed


@pytest.mark.parametrize(
    "options",
    [(), ("--ServerApp.jpserver_extensions={'nbgrader.server_extensions.formgrader': True}",)],
    ids=["plain", "extensions-on-the-command-line"],
)
def test_a_plain_server_of_the_environment_sets_the_policies(tmp_path, options):
    """`jupyter server` outside the course, with nothing but the environment (and extensions
    named on the command line, which add to the environment's, never replace them)."""
    root = tmp_path / "anywhere"
    root.mkdir()
    (root / "notes.html").write_text(f"<script>{JS}</script>", encoding="utf-8")
    env = only_the_environment(tmp_path)
    log = tmp_path / "server.log"
    with running_lab(root, tmp_path / "rt", log, *options, app="server", env=env) as (base, token):
        # The token as a header, so that it survives formgrader's redirect.
        auth = {"Authorization": f"token {token}", "Referer": f"{base}/lab"}

        def get(path):
            return urllib.request.urlopen(urllib.request.Request(base + path, headers=auth))

        with get("/files/notes.html") as response:
            assert response.headers["Content-Security-Policy"] == INERT
        with get("/formgrader") as response:
            csp = response.headers["Content-Security-Policy"]
            assert f"script-src {base.split('//')[1]}/formgrader/static/" in csp, csp
        mathjax = f"{base}/static/jupyter_server_mathjax/MathJax.js"
        with urllib.request.urlopen(mathjax, timeout=30) as response:
            assert b"MathJax.version=" in response.read()
    assert "coursekit.staff.server: staff pages run no learner script" in log.read_text()
