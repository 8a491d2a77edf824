"""A Jupyter server extension for the staff's server: pages with learner material run
no script but formgrader's own.

`coursekit/staff/inert.py` already takes everything live out of a submission on its
way into autograded/ and feedback/. This is the second wall, for what it may
miss and for notebooks graded before it existed: a Content-Security-Policy on
every response of the instructor's server that can carry learner material.

- formgrader's pages (Manual Grading and the lists): scripts only from
  formgrader's static folder and formgrader's own inline scripts and handlers,
  by hash. On a submission page the hashes are taken only from the template's
  part before the notebook, so a script in the notebook never matches unless
  it is a copy of formgrader's own. No fetch, image or form beyond the server;
  images also from data: (the heatmaps).
- files of a submission that formgrader serves beside the notebook
  (/formgrader/submissions/<id>/<file>): a sandboxed, script-less response;
  anything but a PNG/JPEG/GIF image is a download, never a page of the
  instructor's origin.
- /files/ and /nbconvert/ (feedback pages, autograded/ and submitted/ in the
  course root): `sandbox` without allow-scripts, no script at all (Jupyter's
  own policy lets scripts run in a unique origin, which can still send a
  beacon).

MathJax: formgrader's template loads it from a CDN with an inline configuration
that MathJax runs through eval(); on formgrader's pages that part of the template
is replaced by the copy jupyter-server-mathjax serves and the same configuration
as a plain object (hashed like formgrader's own scripts), so formulas render
offline and without 'unsafe-eval'.

Enabled for every Jupyter server the project's environment starts (`make venv`
installs jupyter-config/jupyter_server_config.d/coursekit.json under the venv's
etc/jupyter): stock `jupyter lab`, `jupyter server`, the hub's single-user
servers. A learner's own server carries the same policies; they touch only
formgrader (off for learners) and /files/ and /nbconvert/ opened as pages.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

from tornado.web import OutputTransform

NOTEBOOK_MARKER = b'id="notebook-container"'
# nbconvert's mathjax() macro (base/mathjax.html.j2): the CDN script and its eval'd config.
_CDN_MATHJAX = re.compile(
    rb"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL
)
# The macro's configuration, as an object MathJax reads before it starts (no eval).
# jupyter-server-mathjax ships the STIX-Web fonts only (as the classic notebook used).
MATHJAX_CONFIG = (
    "window.MathJax = {TeX: {equationNumbers: {autoNumber: 'AMS', useLabelIds: true}}, "
    "tex2jax: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], "
    "displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']], "
    "processEscapes: true, processEnvironments: true}, displayAlign: 'center', "
    "messageStyle: 'none', 'HTML-CSS': {linebreaks: {automatic: true}, availableFonts: [], "
    "preferredFont: null, webFont: 'STIX-Web', imageFont: null}};"
)
_INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_HANDLER = re.compile(rb"""\son[a-z]+\s*=\s*"([^"]*)\"""", re.IGNORECASE)
_NAVIGATION = r"(?:next_incorrect|prev_incorrect|next|prev)"
IMAGES = ("image/png", "image/jpeg", "image/gif")

# A page that runs no script and loads nothing but its own images and styles.
INERT = (
    "sandbox; default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "font-src 'self' data:; frame-ancestors 'self'"
)


def _hash(text: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode("ascii") + "'"


def trusted_hashes(page: bytes) -> list[str]:
    """CSP hashes of the inline scripts and event handlers formgrader's template wrote:
    those before the notebook on a submission page, all of them on the other pages."""
    cut = page.find(NOTEBOOK_MARKER)
    trusted = page if cut < 0 else page[:cut]
    hashes = []
    for match in _INLINE_SCRIPT.finditer(trusted):
        if b"src=" not in match.group(1).lower():
            hashes.append(_hash(match.group(2)))
    for match in _HANDLER.finditer(trusted):
        hashes.append(_hash(html.unescape(match.group(1).decode("utf-8")).encode("utf-8")))
    return sorted(set(hashes))


def local_mathjax(page: bytes, mathjax_url: str, mathjax_config: str) -> bytes:
    """`page` with the template's CDN MathJax (before the notebook) replaced by the
    server's own copy at `mathjax_url`; unchanged when the template has none."""
    cut = page.find(NOTEBOOK_MARKER)
    head, rest = (page, b"") if cut < 0 else (page[:cut], page[cut:])
    src = f"{html.escape(mathjax_url)}?config={html.escape(mathjax_config)}"
    script = f'<script>{MATHJAX_CONFIG}</script>\n<script src="{src}"></script>'.encode()
    return _CDN_MATHJAX.sub(lambda _: script, head, count=1) + rest


def formgrader_policy(
    host: str, base_url: str, hashes: list[str], mathjax_url: str | None = None
) -> str:
    sources = [f"{host}{base_url}formgrader/static/"]
    if mathjax_url:
        # MathJax loads its own parts (config, jax, extensions) from its folder.
        sources.append(host + mathjax_url.rsplit("/", 1)[0] + "/")
    scripts = " ".join([*sources, *hashes, "'unsafe-hashes'" if hashes else ""]).strip()
    return (
        f"default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'self'"
    )


def transform_for(base_url: str, settings: dict | None = None) -> type[OutputTransform]:
    """The OutputTransform class that sets the policies on a server at `base_url`.

    `settings` (the web app's) gives jupyter-server-mathjax's `mathjax_url` and
    `mathjax_config`, read per request: that extension is loaded after this one."""
    settings = {} if settings is None else settings
    base = base_url if base_url.endswith("/") else base_url + "/"
    prefix = re.escape(base)
    submission_page = re.compile(rf"^{prefix}formgrader/submissions/(?!components/)[^/]+/?$")
    navigation = re.compile(rf"^{prefix}formgrader/submissions/[^/]+/{_NAVIGATION}/?$")
    submission_file = re.compile(rf"^{prefix}formgrader/submissions/(?!components/)[^/]+/.+")
    formgrader_page = re.compile(rf"^{prefix}formgrader(/|$)(?!api/|static/)")
    inert_tree = re.compile(rf"^{prefix}(files|nbconvert)/")

    class StaffPagePolicy(OutputTransform):
        def __init__(self, request):
            super().__init__(request)
            self.path, self.host = request.path, request.host

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            path = self.path
            beside = not (submission_page.match(path) or navigation.match(path))
            if submission_file.match(path) and beside:
                self._submission_file(headers)
            elif inert_tree.match(path):
                headers["Content-Security-Policy"] = INERT
                headers["X-Content-Type-Options"] = "nosniff"
            elif formgrader_page.match(path):
                mathjax_url = settings.get("mathjax_url")
                hashes = []
                # Hashes need the whole page; a page sent in pieces gets none (no inline script).
                if finishing:
                    if mathjax_url and b"<!-- Load mathjax -->" in chunk:
                        config = settings.get("mathjax_config", "TeX-AMS-MML_HTMLorMML-full,Safe")
                        chunk = local_mathjax(chunk, mathjax_url, config)
                        if "Content-Length" in headers:
                            headers["Content-Length"] = str(len(chunk))
                    hashes = trusted_hashes(chunk)
                headers["Content-Security-Policy"] = formgrader_policy(
                    self.host, base, hashes, mathjax_url
                )
                # Never revalidated: a 304 carries no page to hash, and its policy (none
                # of formgrader's scripts) would replace the cached page's.
                headers["Cache-Control"] = "no-store"
            return status_code, headers, chunk

        def _submission_file(self, headers):
            headers["Content-Security-Policy"] = INERT
            headers["X-Content-Type-Options"] = "nosniff"
            kind = str(headers.get("Content-Type", "")).split(";")[0].strip().lower()
            if kind not in IMAGES:
                headers["Content-Type"] = "application/octet-stream"
                headers["Content-Disposition"] = "attachment"

    return StaffPagePolicy


def _jupyter_server_extension_points():
    return [{"module": "coursekit.staff.server"}]


def _load_jupyter_server_extension(serverapp):
    web_app = serverapp.web_app
    # First, so that it sees the page before any compression.
    base_url = web_app.settings.get("base_url", "/")
    web_app.transforms.insert(0, transform_for(base_url, web_app.settings))
    serverapp.log.info("coursekit.staff.server: staff pages run no learner script")
