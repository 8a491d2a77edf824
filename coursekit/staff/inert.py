"""Learner material reaches staff pages inert: no script, no beacon, nothing live.

`InertLearnerContent` runs last in `c.Autograde.autograde_preprocessors` (so it
cannot change a score) and again in `c.GenerateFeedback.preprocessors` (before
the course's own summary cell is added). Formgrader, the feedback page (in
JupyterLab, under /files/ or opened from disk) and anything else that renders
autograded/ then only ever sees what it leaves:

- outputs: text/plain, stream and error text (nbconvert escapes them), PNG,
  JPEG and GIF images as base64, text/latex without markup; text/html and
  text/markdown through nbconvert's SanitizeHTML (bleach) with the allow-list
  below; SVG as an <img> of a data: URI (an image never runs its script);
  everything else (JavaScript, widgets, PDF, JSON ...) is dropped;
- markdown cells (written answers, cells a learner adds) and raw cells: when
  nbconvert would render live markup from them, their HTML goes through bleach;
  an honest Korean answer renders to clean HTML and is left as it is;
- metadata: tags reduced to plain words, output metadata to numeric sizes,
  attachments to base64 images, and the notebook's widget state, title and
  authors removed.

The allow-list keeps what the course shows: pandas tables (their inline
`style` attributes through bleach's CSS sanitizer), headings, lists, code,
emphasis, links to http(s) and relative files, and images only from data: or
relative URLs, so no tag can fetch from another host.
"""

from __future__ import annotations

import base64
import functools
import html
import re
from html.parser import HTMLParser

from bleach.css_sanitizer import CSSSanitizer
from bleach.sanitizer import Cleaner
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets import Bool

TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup",
        "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5",
        "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "samp",
        "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
        "tfoot", "th", "thead", "tr", "u", "ul",
    }
)  # fmt: skip
ATTRIBUTES = {
    "*": ["class", "style", "title", "align"],
    "a": ["href", "title"],
    "img": ["src", "alt", "width", "height"],
    "table": ["border", "cellpadding", "cellspacing"],  # pandas writes border="1"
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan"],
    "ol": ["start"],
    # nbconvert gives every heading an id for its anchor link.
    **{f"h{n}": ["id"] for n in range(1, 7)},
}
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})

IMAGES = ("image/png", "image/jpeg", "image/gif")
SAFE_TEXT = ("text/plain",)
SANITIZED = ("text/html", "text/markdown")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_TAG_WORD = re.compile(r"^[\w.-]+$")
# Content that must not survive as text when its element is removed.
_DEAD_ELEMENTS = re.compile(
    r"<(script|style|template|noscript|iframe|object|embed|svg|math)\b.*?</\1\s*>",
    re.IGNORECASE | re.DOTALL,
)
_NOTEBOOK_METADATA_DROPPED = ("widgets", "title", "authors")


def _only_data_images(tag: str, name: str, value: str) -> bool:
    """img src only from data:image/... or a relative URL: no fetch from another host."""
    if name == "src":
        lowered = value.strip().lower()
        if lowered.startswith("data:"):
            return lowered.startswith(tuple(f"data:{m};" for m in IMAGES))
        return not re.match(r"^([a-z][a-z0-9+.-]*:|//)", lowered)
    return name in ATTRIBUTES["img"] or name in ATTRIBUTES["*"]


def _attribute_filter(tag: str, name: str, value: str) -> bool:
    if tag == "img":
        return _only_data_images(tag, name, value)
    return name in ATTRIBUTES.get(tag, ()) or name in ATTRIBUTES["*"]


_CLEANER = Cleaner(
    tags=TAGS,
    attributes=_attribute_filter,
    protocols=PROTOCOLS,
    strip=True,
    strip_comments=True,
    css_sanitizer=CSSSanitizer(),
)


def clean_html(markup: str) -> str:
    """Markup with nothing live left: bleach with the course's allow-list."""
    return _CLEANER.clean(_DEAD_ELEMENTS.sub("", markup))


def _is_base64(value) -> bool:
    text = "".join(value) if isinstance(value, list) else value
    return isinstance(text, str) and bool(_BASE64.match(text))


def _svg_as_image(svg) -> str:
    text = "".join(svg) if isinstance(svg, list) else str(svg)
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt="SVG">'


def _sizes(metadata) -> dict:
    """Output metadata reduced to numeric image sizes (nbconvert puts them into attributes)."""
    kept = {}
    for mime, value in (metadata or {}).items():
        if mime in IMAGES and isinstance(value, dict):
            sizes = {
                k: v
                for k, v in value.items()
                if k in ("width", "height") and isinstance(v, (int, float))
            }
            if sizes:
                kept[mime] = sizes
    return kept


class _MarkupCheck(HTMLParser):
    """Walks rendered markup as a tokenizer does; `live` when anything falls outside the
    allow-list (a tag, an attribute, a URL scheme, a style, a comment)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.live = False

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.live = True
        for name, value in attrs:
            value = value or ""
            if name == "style" or not _attribute_filter(tag, name, value):
                self.live = True
            scheme = re.match(r"^\s*([a-z][a-z0-9+.-]*):", value, re.IGNORECASE)
            if name == "href" and scheme and scheme.group(1).lower() not in PROTOCOLS - {"data"}:
                self.live = True

    handle_startendtag = handle_starttag

    def handle_comment(self, data):
        self.live = True

    def handle_decl(self, decl):
        self.live = True

    def handle_pi(self, data):
        self.live = True

    unknown_decl = handle_decl


# The instructor's markdown cells come back unchanged in every submission: each source
# is rendered once per grading process (~0.6 ms a cell, ~8 ms a notebook). Long
# sources, which only a learner writes, are not kept.
_REMEMBERED_SOURCE_CHARS = 20_000


def renders_live(markdown: str) -> bool:
    """True when nbconvert's markdown renders this source to markup outside the allow-list."""
    if len(markdown) <= _REMEMBERED_SOURCE_CHARS:
        return _renders_live_remembered(markdown)
    return _renders_live(markdown)


@functools.lru_cache(maxsize=512)
def _renders_live_remembered(markdown: str) -> bool:
    return _renders_live(markdown)


def _renders_live(markdown: str) -> bool:
    check = _MarkupCheck()
    check.feed(markdown2html_mistune(markdown))
    check.close()
    return check.live


class InertLearnerContent(SanitizeHTML):
    """Sanitize everything of a submission that a staff page renders as HTML."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors start disabled

    def sanitize_html_tags(self, html_str):
        return clean_html(html_str)

    def preprocess(self, nb, resources):
        for key in _NOTEBOOK_METADATA_DROPPED:
            nb.metadata.pop(key, None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        tags = cell.metadata.get("tags")
        if tags is not None:
            cell.metadata["tags"] = [t for t in tags if isinstance(t, str) and _TAG_WORD.match(t)]
        if cell.cell_type == "markdown":
            self._markdown(cell)
        elif cell.cell_type == "raw":
            cell.source = clean_html(cell.source)
        elif cell.cell_type == "code":
            for output in cell.get("outputs", []):
                self._output(output)
        return cell, resources

    def _markdown(self, cell):
        attachments = cell.get("attachments")
        if attachments:
            cell["attachments"] = {
                name: {m: v for m, v in bundle.items() if m in IMAGES and _is_base64(v)}
                for name, bundle in attachments.items()
                if isinstance(bundle, dict)
            }
        if renders_live(cell.source):
            cell.source = clean_html(cell.source)
            if renders_live(cell.source):
                # What bleach left still renders live through markdown: show it as text.
                cell.source = "<pre>" + html.escape(cell.source) + "</pre>"

    def _output(self, output):
        if output.get("output_type") not in ("display_data", "execute_result"):
            return
        data = output.get("data", {})
        kept = {}
        for mime, value in data.items():
            plain = mime in SAFE_TEXT or (mime == "text/latex" and "<" not in "".join(value))
            if plain or (mime in IMAGES and _is_base64(value)):
                kept[mime] = value
            elif mime in SANITIZED:
                kept["text/html"] = clean_html(
                    markdown2html_mistune("".join(value))
                    if mime == "text/markdown"
                    else "".join(value)
                )
        if "image/svg+xml" in data and "text/html" not in kept:
            kept["text/html"] = _svg_as_image(data["image/svg+xml"])
        output["data"] = kept
        output["metadata"] = _sizes(output.get("metadata"))
