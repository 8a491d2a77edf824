"""Hangul, for the tests that look for Korean text."""

from __future__ import annotations

import re

HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff]")
