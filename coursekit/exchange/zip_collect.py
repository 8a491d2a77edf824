"""`nbgrader zip_collect` plugins under which no collected file keeps a name a browser renders.

ZipCollectApp names each file it copies into submitted/ by the collector's
`file_id` with the extension of the file in extracted/ put back on, so the
name is decided where the file is extracted: `InertExtractorPlugin` extracts
as nbgrader's ExtractorPlugin does, then renames every file of extracted/ to
its kept name (`names.kept_name`: `..._notes.html` -> `..._notes.html.txt`),
and `InertFileNameCollectorPlugin` matches the instructor's `named_regexp`
and `valid_ext` against the name as handed in, and returns a `file_id` from
which the app makes the kept name again. A rendering name found in extracted/
(put there by hand, not extracted) is not collected. Each rename and refusal
is logged in the course's language and added to reports/exchange_incidents.json.

nbgrader_config.py: `c.ZipCollectApp.extractor_plugin`, `collector_plugin`;
the instructor's settings stay `c.FileNameCollectorPlugin.named_regexp` etc.
"""

from __future__ import annotations

import os

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin

from coursekit.core.messages import N_, _
from coursekit.exchange import reasons, record
from coursekit.exchange.names import INERT_SUFFIX, kept_name, kept_path, unused_kept_name
from coursekit.exchange.plain_copy import shown

RENDERING_IN_EXTRACTED = N_(
    "Not collected: a file put in extracted/ by hand whose name a browser would open as a "
    "page or cannot tell the type of. Put it in archive/ and run again: it is collected "
    "renamed."
)


# What this process's extractor renamed: the renamed file's real path -> the name handed in.
# zip_collect extracts and collects in one run; a run that finds extracted/ made by an
# earlier one falls back to the names (handed_in_name).
_RENAMED: dict[str, str] = {}


class InertExtractorPlugin(ExtractorPlugin):
    """nbgrader's extractor, then every extracted file renamed to its kept name."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        super().extract(archive_path, extracted_path)
        for current, _dirs, names in os.walk(extracted_path):
            for name in names:
                kept = unused_kept_name(current, name)
                if kept != name:
                    os.rename(os.path.join(current, name), os.path.join(current, kept))
                    _RENAMED[os.path.realpath(os.path.join(current, kept))] = name
                    renamed = _("Renamed: {name} -> {kept}")
                    self.log.info(renamed.format(name=shown(name), kept=shown(kept)))


def handed_in_name(path: str) -> str:
    """The name before InertExtractorPlugin renamed the file (its name if it did not).

    As this process's extractor recorded it; for a file it did not extract, only a
    rendering suffix is taken back (`notes.html.txt` -> `notes.html`): a name with
    none (`README` -> `README.txt`) cannot be told from a `.txt` handed in as such
    (nbgrader's own `timestamp.txt`), which is collected as it is.
    """
    name = os.path.basename(path)
    recorded = _RENAMED.get(os.path.realpath(path))
    if recorded is not None:
        return recorded
    if name.endswith(INERT_SUFFIX):
        original = name[: -len(INERT_SUFFIX)]
        if os.path.splitext(original)[1] and kept_name(original) != original:
            return original
    return name


class InertFileNameCollectorPlugin(FileNameCollectorPlugin):
    """nbgrader's file-name collector, matching the names as handed in."""

    def collect(self, submitted_file: str):
        folder, name = os.path.split(submitted_file)
        if kept_name(name) != name:
            self.log.warning("%s: %s", shown(name), _(RENDERING_IN_EXTRACTED))
            self._note(None, name, _(RENDERING_IN_EXTRACTED))
            return None
        original = handed_in_name(submitted_file)
        info = super().collect(os.path.join(folder, original))
        if not info or original == name:
            return info
        # The app names it splitext(file_id)[0] + ".txt": the kept name of what stock names it.
        stock = os.path.splitext(info["file_id"])[0] + os.path.splitext(original)[1]
        info = dict(info, file_id=kept_path(stock))
        reason = reasons.renamed(os.path.basename(info["file_id"]))
        self.log.warning("%s %s: %s", info.get("student_id"), shown(stock), reason)
        self._note(info.get("student_id"), original, reason, stock)
        return info

    def _note(self, student, submission: str, reason: str, path: str = "") -> None:
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            return
        entry = {"submission": shown(submission), "path": shown(path), "reason": reason}
        where = os.path.join(coursedir.root, record.DEFAULT_PATH)
        record.add(where, coursedir.assignment_id, student or "?", [entry])
