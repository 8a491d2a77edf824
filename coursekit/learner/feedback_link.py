"""The Assignments tab's "(view feedback)" lands on the feedback page itself.

nbgrader 0.9.6's JupyterLab extension shows "(view feedback)" next to a
submission whose feedback the learner has fetched. Clicking it runs
JupyterLab's `filebrowser:go-to-path` with the submission's
`local_feedback_path`, which nbgrader's `ExchangeList` sets to the folder
`<assignment>/feedback/<timestamp>/`: the learner lands in a folder and still
has to find and open `<notebook>.html`. For a file path the same command goes
to the file's folder and selects the file, so with this list the learner
lands on the page, highlighted, and opens it with Enter or a double click.

`FeedbackLinkList` is nbgrader's own `ExchangeList`, configured through
nbgrader's plugin setting (`c.ExchangeFactory.list`); it changes only that one
path, and only when the submission has exactly one feedback page. Nothing of
nbgrader is copied: opening the page in the same click would need a change in
the labextension's JavaScript, which calls `filebrowser:go-to-path` and not
`docmanager:open`.
"""

from __future__ import annotations

import os

from nbgrader.exchange.default import ExchangeList

SETTING = "coursekit.learner.feedback_link.FeedbackLinkList"


class FeedbackLinkList(ExchangeList):
    """nbgrader's ExchangeList; a submission's feedback path names its one page."""

    def parse_assignments(self):
        assignments = super().parse_assignments()
        if not (self.inbound or self.cached):
            return assignments
        for assignment in assignments:
            for submission in assignment.get("submissions", []):
                pages = [
                    notebook["local_feedback_path"]
                    for notebook in submission.get("notebooks", [])
                    if notebook.get("local_feedback_path")
                ]
                if submission.get("local_feedback_path") and len(pages) == 1:
                    submission["local_feedback_path"] = os.path.abspath(pages[0])
        return assignments


def configure(c) -> None:
    """Use FeedbackLinkList for the learners' assignment list (`c` is an nbgrader config)."""
    c.ExchangeFactory.list = SETTING
