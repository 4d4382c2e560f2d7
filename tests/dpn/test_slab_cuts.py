"""Slabs cut on counted work (`dpn.slab_cuts`): checked against the instances enumerated in Python."""

from __future__ import annotations

import islpy as isl
import pytest

from hls.dpn.slab_cuts import equal_cuts, slab_cuts

TRIANGLE = {"S": isl.Map("{ S[i, j] -> [i, j] : 0 <= j <= i < 32 }")}
SQUARE = {"S": isl.Map("{ S[i, j] -> [i, j] : 0 <= i < 32 and 0 <= j < 24 }")}
# two statements of one band: the cut points are shared, and both statements' work counts
TWO = {"S": isl.Map("{ S[i, j] -> [i, j] : 0 <= j <= i < 32 }"), "T": isl.Map("{ T[i] -> [i, 0] : 0 <= i < 32 }")}


def _work(maps, d: int, low: int, size: int, cuts: tuple[int, ...]) -> list[int]:
    """Instances per slab, enumerated point by point (the oracle)."""
    out = [0] * (len(cuts) - 1)
    for m in maps.values():
        points = []
        m.range().foreach_point(lambda p: points.append(int(p.get_coordinate_val(isl.dim_type.set, d).to_python())))
        for v in points:  # the hyperplanes here are injective: one instance per band point
            off = (v - low) % size
            out[next(k for k in range(len(cuts) - 1) if cuts[k] <= off < cuts[k + 1])] += 1
    return out


def test_equal_cuts():
    assert equal_cuts(16, 4) == (0, 4, 8, 12, 16)
    assert equal_cuts(16, 3) == (0, 6, 12, 16)
    assert equal_cuts(5, 1) == (0, 5)


@pytest.mark.parametrize("parts", [2, 3, 4, 8])
@pytest.mark.parametrize("size", [16, 32])
def test_triangle_slabs_share_the_work(parts, size):
    cuts = slab_cuts(TRIANGLE, 0, 0, size, parts)
    assert cuts[0] == 0 and cuts[-1] == size and all(a < b for a, b in zip(cuts, cuts[1:]))
    counted, equal = _work(TRIANGLE, 0, 0, size, cuts), _work(TRIANGLE, 0, 0, size, equal_cuts(size, parts))
    total = sum(counted)
    assert total == sum(equal) == 32 * 33 // 2
    assert max(counted) <= max(equal)
    if size == 32:  # one tile: the rows' work grows along the cut hyperplane
        assert max(counted) < 0.95 * max(equal)
    assert max(counted) == min(max(_work(TRIANGLE, 0, 0, size, c)) for c in _candidates(size, parts, cuts)) \
        or cuts == equal_cuts(size, parts)


def test_rectangle_keeps_equal_ranges():
    for parts in (2, 3, 4):
        assert slab_cuts(SQUARE, 0, 0, 16, parts) == equal_cuts(16, parts)
        assert slab_cuts(SQUARE, 1, 0, 24, parts) == equal_cuts(24, parts)


def test_band_statements_count_together():
    cuts = slab_cuts(TWO, 0, 0, 32, 4)
    work = _work(TWO, 0, 0, 32, cuts)
    assert sum(work) == 32 * 33 // 2 + 32
    assert max(work) == min(max(_work(TWO, 0, 0, 32, c)) for c in _candidates(32, 4, cuts))


def _candidates(size: int, parts: int, cuts: tuple[int, ...]):
    """`cuts` and every set of cut points one offset away from it: the counted cuts are a local optimum."""
    yield cuts
    for k in range(1, parts):
        for step in (-1, 1):
            c = list(cuts)
            c[k] += step
            if all(a < b for a, b in zip(c, c[1:])):
                yield tuple(c)
