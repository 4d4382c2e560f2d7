"""Slabs cut on counted work (`dpn.slab_cuts`): checked against the instances enumerated in Python."""

from __future__ import annotations

import islpy as isl
import pytest

from hls.dpn.slab_cuts import equal_cuts, slab_cuts, slab_grid

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


def _grid_work(maps, grid, lows, sizes) -> list[int]:
    """Instances per part of a `slab_grid`, enumerated point by point; each point in exactly one part."""
    out = [0] * len(grid)
    for m in maps.values():
        points = []
        m.range().foreach_point(lambda p: points.append(
            [int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(len(sizes))]))
        for v in points:
            inside = [k for k, part in enumerate(grid)
                      if all(a <= (v[d] - lows[d]) % sizes[d] < b for d, a, b in part)]
            assert len(inside) == 1, (v, inside)
            out[inside[0]] += 1
    return out


def test_thin_tiles_are_cut_in_two_levels():
    """8 rows cannot hold 16 parts: the rows are cut in 8 (or fewer) and each row range in columns,
    and every part gets an equal share of the rectangle."""
    grid = slab_grid(SQUARE, (0, 1), (0, 0), (8, 24), 16)
    assert len(grid) == 16 and all(len(part) == 2 for part in grid)
    work = _grid_work(SQUARE, grid, (0, 0), (8, 24))
    assert sum(work) == 32 * 24 and max(work) == 32 * 24 // 16
    flat = slab_grid(SQUARE, (0,), (0, 0), (8, 24), 16)  # one level: half the parts empty
    assert max(_grid_work(SQUARE, flat, (0, 0), (8, 24))) == 2 * max(work)


def test_triangle_two_levels_lower_the_busiest_part():
    """On a triangle cut into as many parts as it has rows, one level leaves the longest row as the
    busiest part; two levels cut each row range on its own counted work."""
    grid = slab_grid(TRIANGLE, (0, 1), (0, 0), (32, 32), 32)
    work = _grid_work(TRIANGLE, grid, (0, 0), (32, 32))
    assert sum(work) == 32 * 33 // 2
    flat = _grid_work(TRIANGLE, slab_grid(TRIANGLE, (0,), (0, 0), (32, 32), 32), (0, 0), (32, 32))
    assert max(flat) == 32 and max(work) <= 0.95 * max(flat)


def test_rectangle_with_enough_rows_keeps_one_level():
    grid = slab_grid(SQUARE, (0, 1), (0, 0), (32, 24), 4)
    assert all(len(part) == 1 for part in grid)
    assert tuple(a for (_d, a, _b), in grid) + (32,) == equal_cuts(32, 4)
