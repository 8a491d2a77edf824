"""Reduce a value returned by learner code to plain, trustworthy types.

An ndarray subclass can override `__eq__`, `__array_ufunc__` or `shape`, an
int subclass `__int__`, and any object can lie about its `__class__`. The
checker only needs data: arrays become exact ndarrays (a copy of the data,
without calling any learner method), int subclasses exact ints, tuples and
lists are rebuilt from their items, and anything else the checker could be
fooled by becomes a `Rejected` marker that no comparison accepts.
"""

from __future__ import annotations

import numpy as np

EXACT = (type(None), bool, int, float, complex, str, bytes)


class Rejected:
    """Stands for a returned object of a type the checker does not trust."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<검사할 수 없는 {self.kind} 객체>"


def plain(value, depth: int = 0):
    kind = type(value)
    if kind in EXACT or kind is np.ndarray:
        return value
    if depth > 3:
        return Rejected(kind.__name__)
    if issubclass(kind, np.ndarray):
        return np.ndarray.copy(np.ndarray.view(value, np.ndarray))
    if kind in (tuple, list) or issubclass(kind, tuple | list):
        base = tuple if issubclass(kind, tuple) else list
        return base(plain(item, depth + 1) for item in base.__iter__(value))
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    if issubclass(kind, np.generic) and kind.__module__ == "numpy":
        return value
    return Rejected(kind.__name__)
