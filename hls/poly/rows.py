"""Integer rows (points, time stamps) as numpy arrays: one mixed-radix key per row, and the orders
and deduplication built on it.

Sorting rows field by field (`np.unique(axis=0)`, `np.lexsort` over a dozen time columns) was a
quarter of enumerating a schedule and of replaying a channel's events.  Where the rows' box fits an
int64, each row becomes one number whose order is the rows' lexicographic order, and a single
integer sort does the work; where it does not, runs of columns become a few such numbers, sorted
one after another (`_chunk_keys`); numpy's field-by-field sorts only where one column alone spans
more than 2^62.
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
    return sum(_bits(r) for r in radix) <= KEY_BITS


def _bits(radix) -> int:
    """Bits of the offsets 0 .. radix - 1: none for a constant column."""
    return (int(radix) - 1).bit_length()


def _keys(columns: list[np.ndarray], lows, radix, count: int) -> np.ndarray:
    key = np.zeros(count, dtype=np.int64)
    for c, lo, r in zip(columns, lows, radix):
        key *= int(r)
        key += c
        key -= int(lo)
    return key


def _chunk_keys(columns: list[np.ndarray]) -> Optional[list[np.ndarray]]:
    """Runs of consecutive columns, each packed into mixed-radix keys that fit an int64: their
    lexicographic order is the columns'.  A channel relation's wrapped rows (two time stamps, 32
    columns at conv2d's full size) fit three or four such keys where one did not fit.  None where a
    column alone does not fit."""
    runs: list[list[tuple[np.ndarray, int, int]]] = [[]]
    bits = 0
    for c in columns:
        lo = int(c.min())
        r = int(c.max()) - lo + 1
        b = _bits(r)
        if b > KEY_BITS:
            return None
        if runs[-1] and bits + b > KEY_BITS:
            runs.append([])
            bits = 0
        runs[-1].append((c, lo, r))
        bits += b
    return [_keys(*(list(x) for x in zip(*run)), columns[0].shape[0]) for run in runs]


def sorted_unique_rows(rows: np.ndarray) -> np.ndarray:
    """`np.unique(rows, axis=0)`: the distinct rows in lexicographic order.  numpy's own sorts the
    rows as opaque records, 1.3 s for conv2d's 160,800 rows of 32 columns at H=122, W=136, where
    a sort on their keys takes a few hundredths."""
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        return np.unique(rows, axis=0)
    keys = _chunk_keys([rows[:, k] for k in range(rows.shape[1])])
    if keys is None:
        return np.unique(rows, axis=0)
    order = np.lexsort(keys[::-1])
    same = np.ones(order.shape[0] - 1, dtype=bool)  # a row equal to the one before it in that order
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
    return np.ascontiguousarray(rows[order[np.concatenate(([True], ~same))]])


def lex_order(*columns: np.ndarray) -> np.ndarray:
    """The stable permutation that sorts rows by the concatenated columns of the given arrays,
    lexicographically (the first array's first column most significant): `np.lexsort`'s."""
    cols = [a[:, k] for a in columns for k in range(a.shape[1])]
    if not cols or cols[0].shape[0] == 0:
        return np.arange(columns[0].shape[0])
    keys = _chunk_keys(cols)  # column by column: no copy of the rows (a replay's events: millions)
    return np.lexsort((cols if keys is None else keys)[::-1])
