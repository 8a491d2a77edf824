"""What learners, TAs and instructors read, in the course's language, through one catalog.

Every such string of coursekit is an English msgid marked in the code: `_()`
(or `ngettext`) where it is said, `N_()` for a module-level constant that is
translated where it is used (`_(CONSTANT)`). `make messages` extracts them into
coursekit/locale/coursekit.pot and compiles the `ko` and `en` catalogs
(coursekit/locale/<language>/LC_MESSAGES/coursekit.po and .mo); `ko`'s text is
the course's own Korean, `en`'s is the msgid unless its .po says otherwise.

The language is the course's `c.CourseKit.language` (coursekit.core.course),
read where the process is: a command chooses it for its course root
(`use_course`, through `add_root_argument`), code handed an nbgrader config
speaks its language for what it does with it (`speaking`: Validate's configure
and hooks), and anything else (stock nbgrader commands and their
preprocessors, a Dask worker in its scratch course) reads the course of the
working folder, "ko" when there is none. A course's language is read from its
config's text where the text says it plainly (coursekit.core.root), else by
running the config: a message imports neither nbgrader nor the course's
preprocessors. Loading a config never changes the process's language: a
process may read several courses' configs. The sandbox gets no catalog: the
code inside it says nothing a learner reads, and what the grader's side builds
from its replies is translated there.

A course's own texts (its catalog's mistakes, its checks' messages, its
notebooks) are never looked up: they stay as the course wrote them.
"""

from __future__ import annotations

import contextlib
import functools
import gettext
from pathlib import Path

from coursekit.core import root as course_root

DOMAIN = "coursekit"
LOCALE = Path(__file__).resolve().parent.parent / "locale"
LANGUAGES = ("ko", "en")
DEFAULT = "ko"

# The language a command or a config chose for this process; None: the working folder's.
_chosen: str | None = None


class UnknownLanguageError(ValueError):
    """A course asked for a language coursekit has no messages in."""


def check(language: str) -> str:
    """`language` if coursekit speaks it, else an UnknownLanguageError that says which it does."""
    if language not in LANGUAGES:
        raise UnknownLanguageError(
            f"c.CourseKit.language = {language!r}: coursekit has messages in "
            f"{', '.join(LANGUAGES)} only ({LOCALE}/<language>/LC_MESSAGES/{DOMAIN}.po)"
        )
    return language


@functools.cache
def translation(language: str) -> gettext.GNUTranslations:
    """The compiled catalog of `language` (a missing .mo is an error, not English)."""
    return gettext.translation(DOMAIN, localedir=LOCALE, languages=[check(language)])


def use(language: str | None) -> None:
    """Speak `language` in this process from now on (None: the working folder's course again)."""
    global _chosen
    _chosen = None if language is None else check(language)


def use_course(root: str | Path) -> None:
    """Speak the language of the course at `root`."""
    use(of_course(root))


def checked_setting(value: str) -> str:
    """`c.CourseKit.language` as a course may set it: a TraitError naming the languages
    there are, as traitlets reports a wrong setting, when coursekit does not speak it."""
    try:
        return check(value)
    except UnknownLanguageError as error:
        from traitlets import TraitError  # a config is at hand: traitlets is loaded

        raise TraitError(str(error)) from None


def of_config(config) -> str:
    """The language an nbgrader config sets (`c.CourseKit.language`, default ko)."""
    settings = config.get("CourseKit", {})
    return checked_setting(settings["language"]) if "language" in settings else DEFAULT


@contextlib.contextmanager
def speaking(language: str):
    """Speak `language` inside the block, then what was spoken before."""
    global _chosen
    before, _chosen = _chosen, check(language)
    try:
        yield
    finally:
        _chosen = before


def of_course(root: str | Path | None = None) -> str:
    """The language of the course at `root` (else the one find_root finds; ko without one):
    `CourseKit.of(root).language`, read from the config's text where it says it plainly
    (coursekit.core.root): no nbgrader, no course preprocessors imported for a message."""
    try:
        stated = course_root.plain_setting(course_root.find_root(root), "CourseKit", "language")
    except (course_root.NoCourseError, FileNotFoundError):
        return DEFAULT  # as CourseKit.of: no course config, the defaults
    if stated is course_root.NOT_SET:
        return DEFAULT
    if stated in LANGUAGES:
        return stated
    # Computed, set some other way, or unknown (the config's run raises the error).
    config = course_root.find_root(root) / course_root.CONFIG_FILE
    return _of_config_file(str(config.parent), config.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _of_config_file(root: str, mtime_ns: int) -> str:
    """The language of a course whose config must be run to tell (once per version)."""
    return of_config(course_root.load_config(Path(root)))


def language() -> str:
    """The language this process speaks: chosen, else the working folder's course's."""
    if _chosen is not None:
        return _chosen
    return of_course()


def _(message: str) -> str:
    """`message` (an English msgid) in the course's language."""
    return translation(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of `singular`/`plural` for `n`, in the course's language."""
    return translation(language()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Mark a module-level msgid for extraction; translate it where it is used: `_(NAME)`."""
    return message
