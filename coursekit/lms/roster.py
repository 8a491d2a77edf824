"""The class roster: who the learners are, read from one CSV and checked whole.

    id,name,email,lms_id
    2026001,Kim Minjun,minjun@example.ac.kr,10501
    2026002,"Namgung Seoyeon",seoyeon@example.ac.kr,10502

Columns (header names in English or in the course's language, any order): `id` is
required; the name is either one `name` column (full name, split as below) or
`first_name` + `last_name`; `email` and `lms_id` (`lms_user_id`, LMS id) are
optional. The course's language names the id, name, last-name and email columns
too (its catalog's `roster column: ...` messages), and its name column beside its
last-name column is the given name (Korean rosters write family name, given name).
A learner's nbgrader id, and on the hub its Linux account, is the hub's prefix +
`id`.

A full name with a space splits there ("Namgung Seoyeon" → Namgung, Seoyeon); one
without takes its first character as the family name (a Korean name of three
syllables: family name, then given name). Write a two-syllable family name with
a space, or use the last-name column.

`read` checks every row before anything is made from it: a roster with one bad
row raises `RosterError` naming each bad row, and nothing is created.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from coursekit.core.messages import N_, _

# A Linux account name once the hub's prefix is added (useradd's own rule, lower case).
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
MAX_ACCOUNT = 32
EMAIL_PATTERN = re.compile(r"^[^@\s,;<>\"']+@[^@\s,;<>\"']+\.[^@\s,;<>\"']+$")
MAX_NAME = 64

# The header names of a column in the course's language (en: the English ones).
ID_COLUMN = N_("roster column: id")
NAME_COLUMN = N_("roster column: name")
LAST_NAME_COLUMN = N_("roster column: last_name")
EMAIL_COLUMN = N_("roster column: email")
ENGLISH = {
    "id": "id",
    "student_id": "id",
    "name": "name",
    "first_name": "first_name",
    "last_name": "last_name",
    "email": "email",
    "lms_id": "lms_user_id",
    "lms id": "lms_user_id",
    "lms_user_id": "lms_user_id",
}


def aliases() -> dict[str, str]:
    """Header name -> field: the English names, each field's own language's name after it."""
    local = {
        "id": _(ID_COLUMN),
        "name": _(NAME_COLUMN),
        "last_name": _(LAST_NAME_COLUMN),
        "email": _(EMAIL_COLUMN),
    }
    found: dict[str, str] = {}
    for header, field in ENGLISH.items():
        found.setdefault(header, field)
        if header == field and field in local:
            found.setdefault(local.pop(field), field)
    return found


class RosterError(ValueError):
    """A roster that cannot be used as it is; the message names every bad row."""


@dataclass(frozen=True)
class Learner:
    id: str  # the roster's id; the nbgrader id and account is prefix + id
    first_name: str
    last_name: str
    email: str = ""
    lms_user_id: str = ""

    def account(self, prefix: str) -> str:
        return f"{prefix}{self.id}"


def split_full_name(name: str) -> tuple[str, str]:
    """(last_name, first_name) of a full name: at the first space, else after one syllable."""
    if " " in name:
        last, first = name.split(" ", 1)
        return last, first.strip()
    return name[:1], name[1:]


def _check_name(value: str, what: str) -> str | None:
    if not value:
        return f"{what} is empty"
    if len(value) > MAX_NAME:
        return f"{what} is longer than {MAX_NAME} characters"
    for ch in value:
        category = unicodedata.category(ch)
        if category[0] in "CZ" and ch != " ":  # control, format, line/paragraph separators
            return f"{what} holds a control or invisible character (U+{ord(ch):04X})"
        if ch in '<>"`&;,\\/':  # markup, quoting, paths; an apostrophe (O'Brien) is fine
            return f"{what} holds {ch!r}"
    return None


def _fields(header: list[str]) -> dict[str, int]:
    """field -> column index; the language's name column beside its last-name column (not
    an English one) is the given name."""
    names = [unicodedata.normalize("NFC", h).strip().lower() for h in header]
    known = aliases()
    last_name = _(LAST_NAME_COLUMN)
    given_beside_family = last_name not in ENGLISH and last_name in names
    fields: dict[str, int] = {}
    for index, name in enumerate(names):
        field = known.get(name)
        if field is None:
            raise RosterError(
                f"roster: unknown column {header[index]!r} (known: {', '.join(known)})"
            )
        if field == "name" and given_beside_family:
            field = "first_name"
        if field in fields:
            raise RosterError(f"roster: two columns for {field} ({header[index]!r})")
        fields[field] = index
    if "id" not in fields:
        names = " or ".join(dict.fromkeys(["id", _(ID_COLUMN)]))
        raise RosterError(f"roster: no id column ({names})")
    has_split = "first_name" in fields and "last_name" in fields
    if "name" not in fields and not has_split:
        name = _(NAME_COLUMN)
        raise RosterError(f"roster: no name column ({name}, or first_name and last_name)")
    if "name" in fields and ("first_name" in fields or "last_name" in fields):
        raise RosterError("roster: both a full name and first/last name columns")
    return fields


def parse(text: str, prefix: str = "") -> list[Learner]:
    """The learners of a roster's text; RosterError naming every bad row."""
    text = text.removeprefix("\ufeff")  # Excel's UTF-8 CSV starts with a BOM
    rows = list(csv.reader(io.StringIO(text)))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise RosterError("roster: empty file")
    fields = _fields(rows[0])
    learners, problems = [], []
    seen: dict[str, int] = {}
    seen_email: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(rows[0]):
            problems.append(f"row {line}: {len(row)} cells, the header has {len(rows[0])}")
            continue
        value = {f: unicodedata.normalize("NFC", row[i]).strip() for f, i in fields.items()}
        errors = []
        learner_id = value["id"].lower()
        if not ID_PATTERN.match(learner_id):
            errors.append(f"id {value['id']!r} is not lower-case letters, digits, - and _")
        elif len(prefix + learner_id) > MAX_ACCOUNT:
            errors.append(
                f"id {value['id']!r} is too long for an account ({MAX_ACCOUNT} with the prefix)"
            )
        elif learner_id in seen:
            errors.append(f"id {value['id']!r} is also on row {seen[learner_id]}")
        if "name" in value:
            full = " ".join(value["name"].split())
            error = _check_name(full, _(NAME_COLUMN))
            if error:
                errors.append(error)
                last, first = "", ""
            else:
                last, first = split_full_name(full)
                if not first:
                    errors.append(f"{_(NAME_COLUMN)} {full!r} has a family name only")
        else:
            last, first = value["last_name"], value["first_name"]
            errors += [
                e for e in (_check_name(last, "last name"), _check_name(first, "first name")) if e
            ]
        email = value.get("email", "")
        if email and not EMAIL_PATTERN.match(email):
            errors.append(f"email {email!r} is not an address")
        elif email and email.lower() in seen_email:
            errors.append(f"email {email!r} is also on row {seen_email[email.lower()]}")
        lms_id = value.get("lms_user_id", "")
        if lms_id and (len(lms_id) > 128 or not re.fullmatch(r"[\w.@:-]+", lms_id)):
            errors.append(f"LMS id {lms_id!r} is not an id")
        if errors:
            problems.append(f"row {line}: " + "; ".join(errors))
            continue
        seen[learner_id] = line
        if email:
            seen_email[email.lower()] = line
        learners.append(Learner(learner_id, first, last, email, lms_id))
    if problems:
        raise RosterError(
            "roster: nothing was created; fix these rows:\n  " + "\n  ".join(problems)
        )
    if not learners:
        raise RosterError("roster: no learners")
    return learners


def read(path: Path, prefix: str = "") -> list[Learner]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RosterError(f"roster {path}: not UTF-8 ({error}); save it as CSV UTF-8") from error
    return parse(text, prefix)


def nbgrader_csv(learners: list[Learner], prefix: str = "") -> str:
    """The CSV `nbgrader db student import` reads (its own column names)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "first_name", "last_name", "email", "lms_user_id"])
    for learner in learners:
        writer.writerow(
            [
                learner.account(prefix),
                learner.first_name,
                learner.last_name,
                learner.email,
                learner.lms_user_id,
            ]
        )
    return out.getvalue()
