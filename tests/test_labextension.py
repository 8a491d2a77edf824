"""The learners' JupyterLab extension (labextension/ -> coursekit/labextension/): is the
committed build the build of the committed sources, installed in .venv, and does its code
put nothing the server sends into the page as markup?"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from coursekit.learner import labextension

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "labextension"


def test_the_committed_build_is_of_the_committed_sources():
    recorded = labextension.DIGEST_FILE.read_text().strip()
    assert recorded == labextension.source_digest(SOURCE), (
        "labextension/ changed since coursekit/labextension/ was built: run make labextension"
    )
    built = json.loads((labextension.BUILT / "package.json").read_text())
    source = json.loads((SOURCE / "package.json").read_text())
    assert (built["name"], built["version"]) == (labextension.NAME, source["version"])
    remote = built["jupyterlab"]["_build"]["load"]
    assert (labextension.BUILT / remote).is_file(), remote


def test_make_venv_installed_the_build():
    installed = Path(sys.prefix, "share", "jupyter", "labextensions", labextension.NAME)
    built = sorted(p.relative_to(labextension.BUILT) for p in labextension.BUILT.rglob("*"))
    built.remove(Path(labextension.DIGEST_FILE.name))
    assert sorted(p.relative_to(installed) for p in installed.rglob("*")) == built
    for relative in built:
        if (labextension.BUILT / relative).is_file():
            assert (installed / relative).read_bytes() == (
                labextension.BUILT / relative
            ).read_bytes()


def test_the_panel_writes_text_never_markup():
    code = "\n".join(p.read_text() for p in sorted((SOURCE / "src").glob("*.ts")))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in code, sink
    assert re.search(r"\.textContent = ", code)
