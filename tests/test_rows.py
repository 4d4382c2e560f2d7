"""Row keys (`hls.poly.rows`) against numpy's field-by-field sorts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hls.poly.rows import lex_order, sorted_unique_rows

WIDE = [0, 1, -(1 << 49), 1 << 49]  # a column of span 2^50: two of them fit no one int64 key
HUGE = [0, -(1 << 62), (1 << 62) - 1]  # a column of span 2^63: no key at all (numpy's sorts then)
rows3 = st.lists(st.tuples(st.integers(-40, 40), st.integers(-3, 3), st.sampled_from(WIDE), st.sampled_from(WIDE),
                           st.sampled_from(HUGE)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(rows3)
def test_sorted_unique_rows_equal_numpy_unique(rows):
    a = np.array(rows, dtype=np.int64).reshape(len(rows), 5)
    for cols in ([0], [0, 1], [0, 1, 2], [2, 0, 3, 1], [0, 4, 1]):
        assert np.array_equal(sorted_unique_rows(a[:, cols]), np.unique(a[:, cols], axis=0))


@settings(max_examples=150, deadline=None)
@given(rows3, st.booleans())
def test_lex_order_is_numpys_stable_lexsort(rows, narrow):
    """The same permutation, ties in their first order included, over arrays of both integer widths
    (a process's stamps are kept as int32)."""
    a = np.array(rows, dtype=np.int64).reshape(len(rows), 5)
    first = a[:, :2].astype(np.int32) if narrow else a[:, :2]
    for parts in ((first,), (first, a[:, 2:3]), (a[:, 1:2], first), (a[:, 2:4], first, a[:, 3:4]), (first, a[:, 4:])):
        cols = [p[:, k] for p in parts for k in range(p.shape[1])]
        assert np.array_equal(lex_order(*parts), np.lexsort(cols[::-1]))
