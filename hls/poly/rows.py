"""Integer rows (points, time stamps) as numpy arrays: one mixed-radix key per row, and the orders
and deduplication built on it.

Sorting rows field by field (`np.unique(axis=0)`, `np.lexsort` over a dozen time columns) was a
quarter of enumerating a schedule and of replaying a channel's events.  Where the rows' box fits an
int64, each row becomes one number whose order is the rows' lexicographic order, and a single
integer sort does the work; where it does not, the field-by-field sort gives the same answer.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

KEY_BITS = 62  # mixed-radix keys must fit an int64


def mixed_radix_keys(offset: np.ndarray, radix: np.ndarray) -> np.ndarray:
    """Mixed-radix numbers of non-negative offsets: their order is the rows' lexicographic order."""
    return _keys([offset[:, d] for d in range(offset.shape[1])], [0] * offset.shape[1], radix, offset.shape[0])


def key_radix(points: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(smallest coordinate, span) per dimension of non-empty rows, or None when their mixed-radix
    keys would not fit an int64."""
    low = points.min(axis=0)
    radix = points.max(axis=0).astype(np.int64) - low + 1
    return (low, radix) if _fits(radix) else None


def _fits(radix) -> bool:
    return sum(int(r).bit_length() for r in radix) <= KEY_BITS


def _keys(columns: list[np.ndarray], lows, radix, count: int) -> np.ndarray:
    key = np.zeros(count, dtype=np.int64)
    for c, lo, r in zip(columns, lows, radix):
        key *= int(r)
        key += c
        key -= int(lo)
    return key


def _column_keys(columns: list[np.ndarray]) -> Optional[np.ndarray]:
    """The mixed-radix keys of the rows whose columns are given, or None when they do not fit."""
    if not columns or columns[0].shape[0] == 0:
        return None
    lows = [int(c.min()) for c in columns]
    radix = [int(c.max()) - lo + 1 for c, lo in zip(columns, lows)]
    return _keys(columns, lows, radix, columns[0].shape[0]) if _fits(radix) else None


def sorted_unique_rows(rows: np.ndarray) -> np.ndarray:
    """`np.unique(rows, axis=0)`: the distinct rows in lexicographic order."""
    keys = _column_keys([rows[:, k] for k in range(rows.shape[1])])
    if keys is None:
        return np.unique(rows, axis=0)
    _, first = np.unique(keys, return_index=True)
    return np.ascontiguousarray(rows[first])


def lex_order(*columns: np.ndarray) -> np.ndarray:
    """The stable permutation that sorts rows by the concatenated columns of the given arrays,
    lexicographically (the first array's first column most significant): `np.lexsort`'s."""
    cols = [a[:, k] for a in columns for k in range(a.shape[1])]
    keys = _column_keys(cols)  # column by column: no copy of the rows (a replay's events: millions)
    if keys is not None:
        return np.argsort(keys, kind="stable")
    return np.lexsort(cols[::-1]) if cols else np.arange(columns[0].shape[0])
