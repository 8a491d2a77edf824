"""JupyterLab's display language as a default, through JupyterLab's own settings overrides.

JupyterLab reads `overrides.json` in its application settings folder
(`LabApp.app_settings_dir`) as the default of every setting; the language is
the translation extension's `locale`, and the Korean strings come from the
pinned `jupyterlab-language-pack-ko-KR`. A server started with
`--LabApp.app_settings_dir=FOLDER` opens in that language, and a learner who
picks another one (Settings → Language) keeps it in their own user settings.

    python -m coursekit.learner.lab_language FOLDER [--locale ko_KR]   # make lab LAB_LANG=ko_KR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

KOREAN = "ko_KR"
TRANSLATION_PLUGIN = "@jupyterlab/translation-extension:plugin"


def write_overrides(folder: Path, locale: str = KOREAN) -> Path:
    """FOLDER/overrides.json making `locale` JupyterLab's default language; returns FOLDER."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "overrides.json"
    path.write_text(json.dumps({TRANSLATION_PLUGIN: {"locale": locale}}, indent=2) + "\n")
    path.chmod(0o644)
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--locale", default=KOREAN)
    args = parser.parse_args(argv)
    folder = write_overrides(args.folder, args.locale)
    print(f"--LabApp.app_settings_dir={folder.resolve()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
