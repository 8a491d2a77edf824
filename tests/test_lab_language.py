"""Learners' JupyterLab in Korean: the pinned language pack is one JupyterLab finds, and
the settings overrides make it the default language (the hub browser test sees the
Korean menus on a learner's page)."""

from __future__ import annotations

import json

from jupyterlab_server.translation_utils import get_language_pack, get_language_packs

from coursekit.learner.lab_language import KOREAN, TRANSLATION_PLUGIN, write_overrides


def test_the_korean_pack_is_installed_for_jupyterlab():
    packs, error = get_language_packs()
    assert not error, error
    assert KOREAN in packs, sorted(packs)
    catalogue, _ = get_language_pack(KOREAN)
    assert catalogue["jupyterlab"]["menu\x04File"] == ["파일"]


def test_overrides_make_korean_the_default(tmp_path):
    folder = write_overrides(tmp_path / "settings")
    written = json.loads((folder / "overrides.json").read_text())
    assert written == {TRANSLATION_PLUGIN: {"locale": "ko_KR"}}
