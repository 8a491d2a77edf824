"""Reasons for what the exchange left out or refused (learners and TAs read them).

Each is a msgid of coursekit.core.messages: a constant is shown as `_(reasons.LINK)`,
a function says its reason in the course's language.
"""

from __future__ import annotations

import pwd

from coursekit.core.messages import N_, _

LINK = N_("Not copied: it is a link. Put real files in a submission, not links.")
SPECIAL = N_("Not copied: it is not a regular file (a FIFO, a device or a socket).")
ODD_NAME = N_(
    "Not copied: its name has characters a name cannot have (bytes that are not UTF-8, "
    "or control characters)."
)
CHANGED = N_("Not copied: it changed into something else while it was being copied.")
NOT_A_FOLDER = N_("Not received: the submission is not a folder (a link or a file).")
BAD_FOLDER_NAME = N_(
    "Not received: the submitted folder's name is not nbgrader's "
    "(<learner>+<assignment>+<time>[+<random string>])."
)
BAD_LEARNER_ID = N_("Not received: the learner's name has characters a name cannot have.")


def account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def other_owner(uid: int, owner_uid: int) -> str:
    text = _(
        "Not copied: it belongs to an account ({account}) other than the one that made "
        "the submitted folder ({owner})."
    )
    return text.format(account=account(uid), owner=account(owner_uid))


def planted(owner: str, learner: str, claimed: str) -> str:
    text = _(
        "Not received: the account {owner} (learner {learner}) put it there in the name of "
        "another learner, {claimed}. A submission is recorded only for the learner of the "
        "account that submitted it."
    )
    return text.format(owner=owner, learner=learner, claimed=claimed)


def too_big(size: int, limit: int) -> str:
    text = _("The file is too big ({size} bytes). The limit for one file is {limit} bytes.")
    return text.format(size=size, limit=limit)


def over_total(limit: int | None) -> str:
    text = _("Not copied: over the limit for the whole submission ({limit} bytes).")
    return text.format(limit=limit)


def too_many_files(limit: int) -> str:
    text = _(
        "Too many files. Of one submission, at most {limit} files are copied (notebooks first)."
    )
    return text.format(limit=limit)


def too_many_entries(limit: int) -> str:
    return _("Too many entries: nothing after the {limit}th was looked at.").format(limit=limit)


def too_deep(limit: int) -> str:
    text = _(
        "The folder is too deep. At most {limit} levels below the submitted folder are copied."
    )
    return text.format(limit=limit)


def unreadable(error: OSError) -> str:
    return _("Not copied: it could not be read ({why}).").format(why=error.strerror or error)


def renamed(kept: str) -> str:
    text = _(
        "Renamed to {kept}: a browser would open its name as a page or cannot tell its type "
        "(the content is unchanged). A notebook that reads this file by its first name will "
        "not find it."
    )
    return text.format(kept=kept)


def name_taken(kept: str) -> str:
    text = _(
        "Not copied: a browser would open its name as a page or cannot tell its type, so it "
        "would be renamed to {kept}, but a file of that name is already there."
    )
    return text.format(kept=kept)


def set_aside(where: str) -> str:
    text = _(
        "The files beyond the limits and the renamed files' originals were moved to {where} "
        "(they are not graded)."
    )
    return text.format(where=where)


def left_out(what: str, path: str, reason: str) -> str:
    """A log line: of `what` (a command, a learner's submission), `path` was left out."""
    return _("{what}: {path} was left out — {reason}").format(what=what, path=path, reason=reason)


def feedback_not_released(why: str) -> str:
    return _("The feedback could not be released: {why}").format(why=why)
