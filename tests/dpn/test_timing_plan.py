"""The cycle model's plan (`timing.plan_of`): its per-iteration grouping of reads and writes, by one
sort and in blocks, against appending them entry by entry."""

import numpy as np
import pytest

from hls.dpn import timing
from hls.dpn.timing import rows_by_iteration


def _appended(n, columns):
    out = [[] for _ in range(n)]
    for ci, cols in columns:
        for row in zip(*(c.tolist() for c in cols)):
            out[row[0]].append((ci,) + tuple(row[1:]))
    return out


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 16])
def test_grouping_by_iteration_keeps_channel_then_pair_order(monkeypatch, block):
    monkeypatch.setattr(timing, "ROWS_AT_ONCE", block)
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 25))
        columns = []
        for ci in rng.permutation(5)[:int(rng.integers(0, 4))].tolist():
            m = int(rng.integers(0, 30))
            at = rng.integers(0, n, m)
            columns.append((ci, (at, rng.integers(0, 9, m), rng.random(m) < 0.5, rng.integers(0, 5, m))))
        got = rows_by_iteration(n, columns, 3).listed()
        assert got == _appended(n, columns)
        assert len(got) == n


def test_an_iteration_with_more_entries_than_a_block_is_not_split(monkeypatch):
    monkeypatch.setattr(timing, "ROWS_AT_ONCE", 3)
    at = np.array([0, 2, 2, 2, 2, 2, 3])
    cols = (at, np.arange(7), np.zeros(7, dtype=bool), np.zeros(7, dtype=np.int64))
    got = rows_by_iteration(5, [(4, cols)], 3).listed()
    assert [len(g) for g in got] == [1, 0, 5, 1, 0]
    assert got[2] == [(4, v, False, 0) for v in range(1, 6)]
