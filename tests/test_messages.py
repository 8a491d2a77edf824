"""coursekit speaks through one message catalog, in the course's language.

Its strings are English msgids (no Hangul in any string literal of its Python, docstrings
included, nor in its templates); `ko` translates every one of them, and the committed
.pot, .po and .mo files are what `make messages` makes of the code as it is now.
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from traitlets import TraitError

from coursekit.core import incidents, messages
from coursekit.core.course import CourseKit
from tests.support.hangul import HANGUL

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "coursekit"
LOCALE = LIBRARY / "locale"
KEYWORDS = {"_", "ngettext", "N_"}
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}|%\((\w+)\)")


def hangul_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every str constant with Hangul: f-string parts and docstrings too;
    comments are no constants."""
    return [
        (node.lineno, node.value[:60])
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and HANGUL.search(node.value)
    ]


def test_the_literal_finder_finds_hangul_in_every_kind_of_string_but_comments():
    source = '''"""독스트링"""
# 주석은 문자열이 아니다
x = "값"
y = f"{x} 개"
z = "English"
'''
    assert [line for line, _ in hangul_literals(source)] == [1, 3, 4]


def test_no_string_literal_of_coursekit_holds_hangul():
    found = {
        str(path.relative_to(ROOT)): hangul_literals(path.read_text(encoding="utf-8"))
        for path in sorted(LIBRARY.rglob("*.py"))
    }
    found = {path: lines for path, lines in found.items() if lines}
    assert found == {}, "coursekit's text goes through coursekit.core.messages (msgids English)"
    assert len(list(LIBRARY.rglob("*.py"))) >= 12


def lookups_in_f_strings(source: str) -> list[int]:
    """Lines of `_("...")` (or ngettext, N_) inside an f-string: babel's extractor skips them,
    so their msgid would never reach the catalog and every language would show it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and getattr(inner.func, "id", None) in KEYWORDS
                    and inner.args
                    and isinstance(inner.args[0], ast.Constant)
                ):
                    found.append(inner.lineno)
    return found


def test_no_message_is_looked_up_inside_an_f_string():
    assert lookups_in_f_strings('x = f"{_(\'Note\')}: {_(name)}"\ny = _("Note")') == [1]
    found = {
        str(path.relative_to(ROOT)): lookups_in_f_strings(path.read_text(encoding="utf-8"))
        for path in sorted(LIBRARY.rglob("*.py"))
    }
    assert {path: lines for path, lines in found.items() if lines} == {}


def bindings_of_underscore(source: str) -> list[int]:
    """Lines where a module that imports messages' `_` binds the name `_` again (a throwaway
    `for _ in`, `a, _ = ...`, a `**_` parameter): inside that scope `_()` is no lookup."""
    tree = ast.parse(source)
    if not any(
        isinstance(node, ast.ImportFrom)
        and node.module == "coursekit.core.messages"
        and any(alias.name == "_" for alias in node.names)
        for node in ast.walk(tree)
    ):
        return []
    found = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, ast.Store)
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            every = [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg]
            found += [arg.lineno for arg in every if arg is not None and arg.arg == "_"]
    return sorted(found)


def test_no_module_that_looks_up_messages_binds_the_underscore():
    source = "from coursekit.core.messages import _\n\ndef f(**_):\n    a, _ = 1, 2\n"
    assert bindings_of_underscore(source) == [3, 4]
    assert bindings_of_underscore("a, _ = 1, 2\n") == []
    found = {
        str(path.relative_to(ROOT)): bindings_of_underscore(path.read_text(encoding="utf-8"))
        for path in sorted(LIBRARY.rglob("*.py"))
    }
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_no_template_holds_hangul():
    """Its text is English msgids in {% trans %} blocks: no Hangul anywhere in it."""
    found = {}
    for path in sorted((LIBRARY / "core" / "templates").glob("*.j2")):
        lines = path.read_text(encoding="utf-8").splitlines()
        found[path.name] = [n for n, line in enumerate(lines, 1) if HANGUL.search(line)]
    assert {name: lines for name, lines in found.items() if lines} == {}


# ------------------------------------------------------------------ the catalog files


def catalog(path: Path):
    with path.open("rb") as f:
        return read_po(f)


def po(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{messages.DOMAIN}.po"


def ids(messages_) -> set:
    return {m.id for m in messages_ if m.id}


def extracted_now() -> set:
    """The msgids `make messages` would extract from the code as it is now (a plural's:
    its two forms)."""
    with (LOCALE / "babel.cfg").open() as f:
        method_map, options_map = parse_mapping_cfg(f)
    found = set()
    for _filename, _lineno, message, _comments, _context in extract_from_dir(
        str(LIBRARY), method_map, options_map
    ):
        found.add(tuple(message) if isinstance(message, (tuple, list)) else message)
    return found


def test_the_catalogs_hold_exactly_the_messages_of_the_code():
    template = catalog(LOCALE / f"{messages.DOMAIN}.pot")
    found = extracted_now()
    assert found, "the code marks its messages"
    assert ids(template) == found, "run make messages"
    for language in messages.LANGUAGES:
        assert ids(catalog(po(language))) == found, f"run make messages ({language})"


def test_every_message_has_its_korean_text_with_the_same_placeholders():
    for message in catalog(po("ko")):
        if not message.id:
            continue
        texts = message.string if message.pluralizable else (message.string,)
        source = message.id[0] if message.pluralizable else message.id
        assert all(texts) and "fuzzy" not in message.flags, f"no ko text: {source!r}"
        assert not HANGUL.search(source), f"a msgid is English: {source!r}"
        for text in texts:
            assert sorted(PLACEHOLDER.findall(text)) == sorted(PLACEHOLDER.findall(source)), text


@pytest.mark.parametrize("language", messages.LANGUAGES)
def test_the_compiled_catalog_is_a_fresh_compile_of_its_po(language):
    fresh = io.BytesIO()
    write_mo(fresh, catalog(po(language)))
    assert po(language).with_suffix(".mo").read_bytes() == fresh.getvalue(), "run make messages"


# ------------------------------------------------------------------ the language in use


def course(folder: Path, settings: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text(f"c = get_config()\n{settings}\n")
    return folder


def test_a_course_speaks_korean_unless_its_config_says_english(tmp_path, monkeypatch):
    plain = course(tmp_path / "plain", "")
    english = course(tmp_path / "english", 'c.CourseKit.language = "en"')
    assert CourseKit.of(plain).language == "ko"

    monkeypatch.chdir(plain)  # no command chose: the working folder's course speaks
    assert incidents.worker_lost(3).text.startswith("이 제출물을 채점하던 작업자 프로세스가 3번")
    monkeypatch.chdir(english)
    english_text = incidents.worker_lost(3).text
    assert english_text.startswith("The worker processes grading this submission died 3 times")
    assert incidents.worker_lost(1).text.startswith("The worker process grading")

    messages.use_course(plain)  # a command's --root wins over the working folder
    assert not incidents.files_left_out(2, 5).text.isascii()
    messages.use(None)
    assert incidents.files_left_out(2, 5).text.startswith("2 files of the submitted folder")


def test_an_unknown_language_is_refused_naming_those_there_are(tmp_path):
    french = course(tmp_path / "french", 'c.CourseKit.language = "fr"')
    with pytest.raises(TraitError, match=r"'fr': coursekit has messages in ko, en only"):
        CourseKit.of(french)
    with pytest.raises(messages.UnknownLanguageError):
        messages.use("fr")
    with pytest.raises(messages.UnknownLanguageError):
        messages.translation("ko_KR")


def test_reading_a_config_never_changes_the_language_a_block_speaks(tmp_path):
    """A process may read several courses' configs (configure(c) runs in each): only a
    command's root or a `speaking` block chooses."""
    english = course(
        tmp_path / "english",
        'c.CourseKit.language = "en"\n'
        "from coursekit.learner.validation import configure\nconfigure(c)",
    )
    messages.use("ko")
    assert CourseKit.of(english).language == "en"
    assert messages.language() == "ko"
    with messages.speaking("en"):
        assert incidents.worker_lost(2).text.startswith("The worker processes")
        with messages.speaking("ko"):
            assert not incidents.worker_lost(2).text.isascii()
        assert messages.language() == "en"
    assert messages.language() == "ko"


def test_validate_speaks_the_language_of_the_config_it_configures(tmp_path):
    from traitlets.config import Config

    from coursekit.learner import validation

    for language, failed in (("ko", "검사 결과:"), ("en", "Check result:")):
        c = Config()
        c.CourseKit.language = language
        validation.configure(c)
        assert c.Validator.failed_warning.startswith(failed)
        assert c.Validator.Execute.on_cell_start.keywords == {"language": language}
    assert messages.language() == "ko"  # the working folder's course: configure chose nothing


# ------------------------------------------------------------------ the language, cheaply

SAYS = (
    "import sys\n"
    "from coursekit.core.messages import _, language\n"
    "print(language(), _('Stuck'))\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}\n"
    "             or m.startswith('coursekit.') and not m.startswith('coursekit.core')))\n"
)
# What running a course's config imports and a message must not: nbgrader, traitlets, the
# course's preprocessors (coursekit's other folders), its packages.
HEAVY = {"nbgrader", "traitlets", "nbconvert", "sqlalchemy", "grader_tests", "solutions"}


@pytest.mark.parametrize("language, stuck", [("ko", "막힌 학습자"), ("en", "Stuck")])
def test_the_first_message_of_a_fresh_process_runs_no_course_config(tmp_path, language, stuck):
    """A copy of this course's own config (nbgrader and its preprocessors imported at its
    top), in each language: a fresh interpreter's first `_()` speaks it and imports none."""
    import subprocess
    import sys

    config = (ROOT / "nbgrader_config.py").read_text(encoding="utf-8")
    if language != "ko":
        config += f'\nc.CourseKit.language = "{language}"\n'
    (tmp_path / "nbgrader_config.py").write_text(config, encoding="utf-8")
    assert CourseKit.of(tmp_path).language == language  # as running the config says
    said = subprocess.run(
        [sys.executable, "-c", SAYS.format(HEAVY=HEAVY)],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    first, imported = said.stdout.splitlines()
    assert first == f"{language} {stuck}"
    assert imported == "[]", "a message ran the course's config"


# Config texts and what reading them without running them must give: the literal, the
# default (NOT_SET), or UNKNOWN (then the config is run; the answer is the same either way).
PLAIN, NOT_SET, UNKNOWN = "plain", "not set", "unknown"
CONFIGS = {
    "": NOT_SET,
    'c.CourseKit.timezone = "Europe/Berlin"': NOT_SET,
    'c.CourseKit.language = "en"': PLAIN,
    'c.CourseKit.language = "en"\nc.CourseKit.language = "ko"': PLAIN,  # the last one
    'c.CourseKit.language = "ko"\nc.CourseKit.language = "en"': PLAIN,
    "c.Execute.timeout = 30\nx = c.Execute.timeout": NOT_SET,  # a trait read back
    'import os\nc.CourseKit.language = os.environ.get("NO_SUCH_VARIABLE", "en")': UNKNOWN,
    'if True:\n    c.CourseKit.language = "en"': UNKNOWN,
    'def f():\n    c.CourseKit.language = "en"\nf()': UNKNOWN,
    'c.CourseKit.update({"language": "en"})': UNKNOWN,
    "c.CourseKit.update(dict(language='en'))": UNKNOWN,
    'c["CourseKit"]["language"] = "en"': UNKNOWN,
    'setattr(c.CourseKit, "lang" + "uage", "en")': UNKNOWN,
    "from traitlets.config import Config\nd = Config()\n"
    'd.CourseKit.language = "en"\nc.merge(d)': UNKNOWN,
    'def configure(config):\n    config.CourseKit.language = "en"\nconfigure(c)': UNKNOWN,
    'c = get_config()\nc.CourseKit.language = "en"': UNKNOWN,  # a second get_config()
    'c.CourseKit.language = "en"\nc.CourseKit.language += ""': UNKNOWN,
    # coursekit's configure helpers set no CourseKit trait (the test below)
    "from coursekit.learner.validation import configure as configure_validate\n"
    'c.CourseKit.language = "en"\nconfigure_validate(c)': PLAIN,
}


@pytest.mark.parametrize("settings", list(CONFIGS), ids=range(len(CONFIGS)))
def test_the_language_read_from_the_text_is_the_one_running_the_config_gives(tmp_path, settings):
    from coursekit.core import root

    folder = course(tmp_path / "course", settings)
    stated = root.plain_setting(folder, "CourseKit", "language")
    expected = CONFIGS[settings]
    if expected == NOT_SET:
        assert stated is root.NOT_SET
    elif expected == UNKNOWN:
        assert stated is root.UNKNOWN
    else:
        assert stated in messages.LANGUAGES
    assert messages.of_course(folder) == CourseKit.of(folder).language


def test_an_unknown_language_stated_plainly_is_refused_as_running_the_config_refuses(tmp_path):
    french = course(tmp_path / "french", 'c.CourseKit.language = "fr"')
    with pytest.raises(TraitError, match=r"'fr': coursekit has messages in ko, en only"):
        messages.of_course(french)
    assert messages.of_course(tmp_path) == "ko"  # no course: the default, as CourseKit.of


def test_coursekits_configure_helpers_set_no_coursekit_trait():
    """What lets a config pass `c` to them and still have its language read from its text."""
    from traitlets.config import Config

    from coursekit.exchange import configure as configure_safe_exchange
    from coursekit.learner.feedback_link import configure as configure_feedback_link
    from coursekit.learner.validation import configure as configure_validate

    for configure in (configure_validate, configure_feedback_link, configure_safe_exchange):
        for language in (None, "en"):
            c = Config()
            if language:
                c.CourseKit.language = language
            before = dict(c.CourseKit)
            configure(c)
            assert dict(c.CourseKit) == before, configure.__module__
