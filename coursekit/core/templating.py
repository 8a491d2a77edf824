"""The course's HTML pages from Jinja templates (`templates/` here), as nbconvert builds its own.

Autoescaping is on: every value a template prints is escaped unless the code
marks it safe, so learner text reaches a staff or learner page as text.
Undefined names fail loudly instead of printing nothing. Text is English
msgids in `{% trans %}` blocks (or `_()`), in the course's language through
coursekit's catalog (coursekit.core.messages): one environment per language.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from coursekit.core import messages

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def environment(language: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        extensions=["jinja2.ext.i18n"],
    )
    # newstyle: a translated text is escaped and formatted as `_()` in Python would be.
    env.install_gettext_translations(messages.translation(language), newstyle=True)
    env.globals["language"] = language  # <html lang>
    return env


def render(name: str, **data) -> str:
    return environment(messages.language()).get_template(name).render(**data)


def render_one_line(name: str, **data) -> str:
    """A template's output with each line's indentation dropped and the lines joined:
    for HTML inside a markdown cell, where an indented line would read as code."""
    return "".join(line.strip() for line in render(name, **data).splitlines())
