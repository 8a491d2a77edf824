"""The learner's result panel, server side: submit a notebook, read back its graded attempts.

A Jupyter server extension that runs in the learner's own server, as the learner.
It adds nothing of its own to the exchange: it calls the manager of nbgrader's
assignment list extension (`assignment_list_manager`, what the Assignments tab
calls) to submit and to fetch feedback, so every rule of the course's exchange
classes holds (a learner fetches only the feedback of what their account
submitted). The panel gets data, never markup: each attempt's summary is read
from its fetched feedback page (`coursekit.learner.feedback.read_attempt`), the
page the trusted grader made; the page itself is opened from /files/, where the
staff server's policy lets no script run.

    GET  {base}/coursekit/panel/words                         -> the panel's words, settings
    POST {base}/coursekit/panel/submit   {"path": notebook}  -> the attempts, after submit
    GET  {base}/coursekit/panel/attempts?path=notebook        -> the attempts (fetches feedback)
         &answered=N&wait=S  held open up to S s (at most LONGEST_WAIT) until the notebook
                             has N attempts and the newest is answered (a long poll)

A held request fetches feedback again only when the exchange's feedback folder
changes (a stat every NOTICE_PERIOD, which costs nothing like a fetch) or every
poll_seconds as a safety net: the result is drawn within ~0.1 s of its release, and
a class of waiting panels does not run nbgrader's fetch several times a second each.

`c.LearnerPanel.enabled = False` in a course's nbgrader config turns both off
(404), and the JupyterLab extension then shows no button.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import stat
import time

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from nbgrader.exchange.default import Exchange
from tornado import web
from traitlets import Bool, Integer
from traitlets.config import Configurable

from coursekit.core import messages
from coursekit.core.messages import N_, _
from coursekit.learner import pictures
from coursekit.learner.feedback import read_attempt

# Words the panel shows, in the course's language (the extension has none of its own).
WORDS = {
    "submit": N_("Submit and get graded"),
    "title": N_("Grading results"),
    "submitting": N_("Submitting..."),
    "grading": N_("Submitted: being graded..."),
    "total": N_("Total"),
    "function": N_("Function"),
    "points": N_("Points"),
    "diagnosis": N_("First diagnosis"),
    "passed": N_("All passed"),
    "mistake": N_("Likely mistake"),
    "seed": N_("seed"),
    "expected": N_("expected"),
    "received": N_("got"),
    "hint": N_("Hint {n}"),
    "answers": N_("Written answers"),
    "waiting": N_("not graded yet"),
    "left_blank": N_("handed in as released: no points"),
    "graded": N_("graded by a TA"),
    "held_back": N_("Kept, not graded"),
    "too_soon": N_("Graded at most once in a while: submit again from {time}."),
    "too_many": N_("This assignment has been graded the most times it may be."),
    "unreadable": N_("This attempt's page has no summary: open the page."),
    "attempts": N_("Attempts"),
    "open_page": N_("Open the feedback page"),
    "none_yet": N_("No submission yet: press the button to submit this notebook."),
    "not_an_assignment": N_("This notebook is not part of a fetched assignment."),
    "failed": N_("Could not submit: {reason}"),
    "arrived": N_("Your result is in: {score}"),
}
PAGE_LIMIT = 8 * 1024 * 1024  # bytes of a feedback page read for its summary
LONGEST_WAIT = 20.0  # seconds an attempts request may be held open (a proxy's patience)
NOTICE_PERIOD = 0.05  # seconds between a held request's looks at the feedback folder
PAGES_KEPT = 256  # parsed feedback pages a learner's server keeps (one per attempt)


class LearnerPanel(Configurable):
    """The result panel in learners' JupyterLab (an nbgrader config's c.LearnerPanel)."""

    enabled = Bool(True, help="Show the submit button and the result panel.").tag(config=True)
    poll_seconds = Integer(
        2, help="How often the panel asks for a result while an attempt is being graded."
    ).tag(config=True)


def words() -> dict[str, str]:
    return {key: _(text) for key, text in {**WORDS, **pictures.WORDS}.items()}


def assignment_of(manager, path: str) -> dict | None:
    """The fetched assignment (nbgrader's list entry) that holds the notebook at `path`."""
    released = manager.list_released_assignments()
    if not released.get("success"):
        return None
    path = os.path.normpath(path)
    for assignment in released["value"]:
        folder = assignment.get("path")
        fetched = assignment.get("status") == "fetched" and folder
        if fetched and path.startswith(os.path.normpath(folder) + os.sep):
            return assignment
    return None


def feedback_released(config, course_id: str) -> bool:
    """Whether the course's exchange has a feedback folder yet: before its first release,
    nbgrader's fetch_feedback logs a CRITICAL error and a traceback, once per ask."""
    return os.path.isdir(os.path.join(Exchange(config=config).root, course_id, "feedback"))


def feedback_stamp(config, course_id: str) -> int | None:
    """When the course's exchange feedback folder last changed (a page released to anyone
    changes it), or None: what a held request watches before fetching again."""
    try:
        return os.stat(
            os.path.join(Exchange(config=config).root, course_id, "feedback")
        ).st_mtime_ns
    except OSError:
        return None


def answered(reply: dict, count: int) -> bool:
    """Whether the reply lists `count` attempts or more, the newest graded or held back (or
    says why it cannot): what a held request waits for."""
    found = reply.get("attempts")
    if "error" in reply or found is None:
        return True
    return len(found) >= count and (not found or found[-1]["state"] != "waiting")


def read_page(root: str, page: str) -> dict | None:
    """The attempt data of a fetched feedback page inside the learner's root, or None.
    Read for shared use: callers only put it in a reply."""
    full = os.path.realpath(os.path.join(root, page))
    if not full.startswith(os.path.realpath(root) + os.sep):
        return None
    try:
        found = os.stat(full)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return _page_attempt(full, found.st_ino, found.st_mtime_ns, found.st_size)


# Each reply lists every attempt's page, and a held request replies again at each release:
# parsed once per version of a page (the stat is the key; a page rewritten is read anew).
@functools.lru_cache(maxsize=PAGES_KEPT)
def _page_attempt(full: str, _inode: int, _mtime_ns: int, size: int) -> dict | None:
    if size > PAGE_LIMIT:
        return None
    try:
        with open(full, "rb") as handle:
            text = handle.read(PAGE_LIMIT + 1)
    except OSError:
        return None
    if len(text) > PAGE_LIMIT:
        return None
    return read_attempt(text.decode("utf-8", errors="replace"))


def attempts(manager, root: str, course_id: str, assignment_id: str) -> list[dict]:
    """This learner's submissions of the assignment, oldest first, each with its summary
    once its feedback has been fetched."""
    listed = manager.list_submitted_assignments(course_id=course_id)
    if not listed.get("success"):
        return []
    found = []
    for assignment in listed["value"]:
        if assignment.get("assignment_id") != assignment_id:
            continue
        for submission in assignment.get("submissions", []):
            pages = [
                n["local_feedback_path"]
                for n in submission.get("notebooks", [])
                if n.get("local_feedback_path")
            ]
            page = os.path.relpath(pages[0], root) if pages else None
            data = read_page(root, page) if page else None
            state = "waiting" if page is None else "unreadable" if data is None else "graded"
            if data is not None and data.get("held_back"):
                state = "held_back"
            found.append(
                {"timestamp": submission.get("timestamp"), "page": page, "state": state,
                 "summary": data}
            )  # fmt: skip
    return found


class _PanelHandler(APIHandler):
    @property
    def manager(self):
        manager = self.settings.get("assignment_list_manager")
        if manager is None:  # nbgrader's own server extension is off: nothing to call
            raise web.HTTPError(404)
        return manager

    def course_config(self):
        """The learner's nbgrader config, read as nbgrader's assignment list reads it; 404
        when it turns the panel off."""
        before = os.getcwd()
        os.chdir(self.manager.root_dir)  # nbgrader's own methods read it from there too
        try:
            config = self.manager.load_config()
        finally:
            os.chdir(before)
        if not LearnerPanel(config=config).enabled:
            raise web.HTTPError(404)
        return config

    def settings_reply(self, config) -> dict:
        with messages.speaking(messages.of_config(config)):
            return {"words": words(), "poll_seconds": LearnerPanel(config=config).poll_seconds}

    def answer(self, config, path: str, submitted: dict | None = None) -> None:
        self.finish(json.dumps(self.reply(config, path, submitted)))

    def reply(self, config, path: str, submitted: dict | None = None) -> dict:
        manager = self.manager
        with messages.speaking(messages.of_config(config)):
            reply = self.settings_reply(config)
            assignment = assignment_of(manager, path)
            if assignment is None:
                reply["error"] = _(WORDS["not_an_assignment"])
            else:
                course_id, assignment_id = assignment["course_id"], assignment["assignment_id"]
                if submitted is not None and not submitted.get("success"):
                    last = str(submitted.get("value", "")).strip().splitlines()[-1:] or [""]
                    reply["error"] = _(WORDS["failed"]).format(reason=last[0][:300])
                if feedback_released(config, course_id):
                    manager.fetch_feedback(course_id, assignment_id)
                reply.update(
                    course_id=course_id,
                    assignment_id=assignment_id,
                    attempts=attempts(manager, manager.root_dir, course_id, assignment_id),
                )
        return reply


class WordsHandler(_PanelHandler):
    @web.authenticated
    def get(self):
        self.finish(json.dumps(self.settings_reply(self.course_config())))


class AttemptsHandler(_PanelHandler):
    @web.authenticated
    async def get(self):
        config, path = self.course_config(), self.get_argument("path")
        try:
            count = int(self.get_argument("answered", "0"))
            wait = min(max(float(self.get_argument("wait", "0")), 0.0), LONGEST_WAIT)
        except ValueError:
            raise web.HTTPError(400, "answered, wait") from None
        deadline = time.monotonic() + wait
        # the stamp before the fetch, so a page released after it is seen; the course id
        # the learner's config names, else (a learner of several courses) the reply's
        course_id = config.CourseDirectory.course_id
        stamp = feedback_stamp(config, course_id)
        reply = self.reply(config, path)
        if reply.get("course_id", course_id) != course_id:
            course_id = reply["course_id"]
            stamp = feedback_stamp(config, course_id)
        poll_seconds = LearnerPanel(config=config).poll_seconds
        refetch = time.monotonic() + poll_seconds
        while not answered(reply, count) and time.monotonic() < deadline:
            await asyncio.sleep(NOTICE_PERIOD)
            now = feedback_stamp(config, course_id)
            if now != stamp or time.monotonic() >= refetch:
                stamp, refetch = now, time.monotonic() + poll_seconds
                reply = self.reply(config, path)
        self.finish(json.dumps(reply))


class SubmitHandler(_PanelHandler):
    @web.authenticated
    def post(self):
        config = self.course_config()
        body = self.get_json_body() or {}
        path = body.get("path")
        if not isinstance(path, str):
            raise web.HTTPError(400, "path")
        assignment = assignment_of(self.manager, path)
        submitted = None
        if assignment is not None:  # nbgrader's submit, as the Assignments tab calls it
            submitted = self.manager.submit_assignment(
                assignment["course_id"], assignment["assignment_id"]
            )
        self.answer(config, path, submitted)


def _load_jupyter_server_extension(server_app) -> None:
    web_app = server_app.web_app
    base = url_path_join(web_app.settings["base_url"], "coursekit", "panel")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, "words"), WordsHandler),
            (url_path_join(base, "attempts"), AttemptsHandler),
            (url_path_join(base, "submit"), SubmitHandler),
        ],
    )


def _jupyter_server_extension_points():
    return [{"module": "coursekit.learner.panel_server"}]
