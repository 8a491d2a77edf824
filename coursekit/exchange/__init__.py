"""The course's nbgrader exchange for accounts it cannot trust (issue 18's exchange half).

nbgrader's own exchange classes, plugged in through nbgrader's ExchangeFactory
setting (as coursekit/learner/feedback_link.py plugs in `list`):

- `collect` (SafeExchangeCollect): a submission counts for the account that
  wrote it and at the time the exchange received it; plain files only, within
  a budget; what is left out or refused is logged in the course's language and recorded in
  reports/exchange_incidents.json; one odd submission never stops the others.
- `submit`, `fetch_assignment` (transfer.py): the same plain-file copy; a
  submission folder only its owner (and the instructors) may write.
- `release_assignment`: stock's, with the sticky bit on the inbound folder.
- `release_feedback`: every page it can, each on its own, no links followed.
"""

from __future__ import annotations

SETTINGS = {
    "collect": "coursekit.exchange.collect.SafeExchangeCollect",
    "submit": "coursekit.exchange.transfer.SafeExchangeSubmit",
    "fetch_assignment": "coursekit.exchange.transfer.SafeExchangeFetchAssignment",
    "release_assignment": "coursekit.exchange.transfer.SafeExchangeReleaseAssignment",
    "release_feedback": "coursekit.exchange.transfer.SafeExchangeReleaseFeedback",
}


def configure(c) -> None:
    """Use the safe exchange classes (`c` is an nbgrader config)."""
    for kind, setting in SETTINGS.items():
        setattr(c.ExchangeFactory, kind, setting)
