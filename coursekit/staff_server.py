"""A Jupyter server extension for the staff's server: pages with learner material run
no script but formgrader's own.

`coursekit/inert.py` already takes everything live out of a submission on its
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

Enabled on the instructor's server only: `make lab` and the instructor's
~/.jupyter config on `make hub` set
`ServerApp.jpserver_extensions = {"coursekit.staff_server": True}`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

from tornado.web import OutputTransform

NOTEBOOK_MARKER = b'id="notebook-container"'
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


def formgrader_policy(host: str, base_url: str, hashes: list[str]) -> str:
    static = f"{host}{base_url}formgrader/static/"
    scripts = " ".join([static, *hashes, "'unsafe-hashes'" if hashes else ""]).strip()
    return (
        f"default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'self'"
    )


def transform_for(base_url: str) -> type[OutputTransform]:
    """The OutputTransform class that sets the policies on a server at `base_url`."""
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
                # Hashes need the whole page; a page sent in pieces gets none (no inline script).
                hashes = trusted_hashes(chunk) if finishing else []
                headers["Content-Security-Policy"] = formgrader_policy(self.host, base, hashes)
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
    return [{"module": "coursekit.staff_server"}]


def _load_jupyter_server_extension(serverapp):
    web_app = serverapp.web_app
    # First, so that it sees the page before any compression.
    web_app.transforms.insert(0, transform_for(web_app.settings.get("base_url", "/")))
    serverapp.log.info("coursekit.staff_server: staff pages run no learner script")
