"""Where `tiling.parallel_parts` cuts each tile into slabs: on counted work, not on equal ranges.

A tile is cut along one hyperplane into `parallel` slabs, one compute process each, and every slab
runs its share of every tile.  Equal ranges of the hyperplane hold equal work only on rectangular
domains: on a triangle (syrk's `j <= i`, cut along `i`) the last quarter of the rows holds 43% of the
instances, and that process alone sets the band's pace.  Here the cut points are chosen on the work
itself: the band's statement instances whose coordinate along the hyperplane, taken inside its
tile, lies below each offset are counted with isl (barvinok's count when installed, else isl's
`count_val` on bands of moderate size: never a Python loop over instances), and the cut points
are those whose busiest slab holds the least work.  Counting the band's statements together keeps one set of cut
points per band, so the statements of a slab stay in one process (`partition.slab_groups`).

Equal ranges are kept unless the counted cuts lower the busiest slab's work by `GAIN` at least: on
the rectangular bands, where both agree up to rounding, the networks do not change.

A slab cannot be thinner than one hyperplane of its tile: 64 parts of conv2d's 40-row tiles leave 24
empty, and syrk's last row alone holds 1/41 of its triangle.  So a band with a second coincident
hyperplane may be cut in two levels instead (`slab_grid`): p1 slabs along the first, each cut into
p2 along the second on its own counted work (p1 x p2 = parts), when the busiest part then holds
`GAIN` less work than with the one-level cut, where that cut's busiest part is `UNEVEN` above an
even share.
"""

from __future__ import annotations

import functools
from typing import Mapping, Optional

import islpy as isl

from ..poly import isl_utils as iu

__all__ = ["GAIN", "equal_cuts", "slab_cuts", "slab_grid", "offset_in_tile"]

GAIN = 0.05  # the counted cuts are kept when the busiest slab does at least 5% less work
#: two levels are tried only where one level leaves the busiest part this far above an even share of
#: the band's work: they cost processes, controls and loads, and they change which corner the choice is
#: made on (2mm at P = 16: 14 parts of 3 rows against 2.5 rows each, 20% above; the corner that keeps
#: both hyperplanes whole chose a fused band that models 22,617 cycles at full size, against 19,913)
UNEVEN = 0.25


def equal_cuts(size: int, parts: int) -> tuple[int, ...]:
    """Offsets 0 = c_0 < ... <= c_parts = size of slabs of equal width (the last one shorter)."""
    width = -(-size // parts)
    return tuple(min(size, k * width) for k in range(parts + 1))


def offset_in_tile(names: list[str], d: int, low: int, size: int) -> str:
    """isl text of a band point's coordinate `d` taken inside its tile (tiles `size` wide from `low`)."""
    rel = f"({names[d]} - ({low}))"
    return f"({rel} - {size} * floor({rel} / {size}))"


def slab_cuts(hyperplanes: Mapping[str, isl.Map], d: int, low: int, size: int, parts: int) -> tuple[int, ...]:
    """The cut offsets (`equal_cuts`' form) of `parts` slabs along hyperplane `d` of a band whose tiles
    start at `low` and are `size` wide (module docstring).  `hyperplanes` are the band's statements'
    maps to the band's coordinates, restricted to their domains."""
    texts = tuple(sorted(str(m) for m in hyperplanes.values()))
    return _cuts(texts, d, low, size, parts)


#: A part of a tile: per cut hyperplane (its index in the band), the range [start, end) of offsets
#: inside the tile that the part holds.
Part = tuple[tuple[int, int, int], ...]


def slab_grid(hyperplanes: Mapping[str, isl.Map], dims: tuple[int, ...], lows: tuple[int, ...],
              sizes: tuple[int, ...], parts: int) -> tuple[Part, ...]:
    """The `parts` parts of every tile (module docstring): one level of `slab_cuts` along `dims[0]`,
    or two levels along `dims[0]` then `dims[1]` (coincident hyperplanes) where that lowers the
    busiest part's work by `GAIN`.  Parts may be empty (a tile thinner than the parts)."""
    texts = tuple(sorted(str(m) for m in hyperplanes.values()))
    return _grid(texts, tuple(dims), tuple(lows), tuple(sizes), parts)


@functools.lru_cache(maxsize=64)
def _grid(texts: tuple[str, ...], dims: tuple[int, ...], lows: tuple[int, ...], sizes: tuple[int, ...],
          parts: int) -> tuple[Part, ...]:
    d1 = dims[0]
    one = _cuts(texts, d1, lows[d1], sizes[d1], parts)
    flat = tuple(((d1, a, b),) for a, b in zip(one, one[1:]))
    if len(dims) < 2 or parts <= 1:
        return flat
    d2 = dims[1]
    maps = [isl.Map(t) for t in texts]
    prefix = _prefix_counts(maps, d1, lows[d1], sizes[d1])
    counted = prefix is not None and prefix[-1] > 0

    best = flat
    best_work = (max(prefix[b] - prefix[a] for a, b in zip(one, one[1:])) if counted
                 else max(b - a for a, b in zip(one, one[1:])) / sizes[d1])
    if best_work <= (1 + UNEVEN) * (prefix[-1] if counted else 1) / parts:
        return flat
    for p1 in sorted((p for p in range(2, parts) if parts % p == 0), reverse=True):
        p2 = parts // p1
        if p2 > sizes[d2]:
            continue
        rows = _cuts(texts, d1, lows[d1], sizes[d1], p1)
        grid, work = [], 0.0
        for a, b in zip(rows, rows[1:]):
            cols, busiest = _nested_cuts(maps, d1, a, b, d2, lows, sizes, p2, counted)
            grid.extend(((d1, a, b), (d2, c, e)) for c, e in zip(cols, cols[1:]))
            work = max(work, busiest if counted else (b - a) / sizes[d1] * busiest)
        if work <= (1 - GAIN) * best_work and (best is flat or work < best_work):
            best, best_work = tuple(grid), work
    return best


def _nested_cuts(maps: list[isl.Map], d1: int, a: int, b: int, d2: int, lows: tuple[int, ...],
                 sizes: tuple[int, ...], parts: int, counted: bool) -> tuple[tuple[int, ...], float]:
    """The cuts along `d2` of the slab [a, b) along `d1`, on that slab's own counted work where
    `counted` (else equal ranges), and its busiest part's work (counted instances, or the fraction of
    the tile's width along `d2`)."""
    equal = equal_cuts(sizes[d2], parts)
    if not counted:
        return equal, max(e - c for c, e in zip(equal, equal[1:])) / sizes[d2]
    n = maps[0].dim(isl.dim_type.out) if maps else 0
    f = [f"f{k}" for k in range(n)]
    local = offset_in_tile(f, d1, lows[d1], sizes[d1])
    slab = isl.Set(f"{{ [{', '.join(f)}] : {a} <= {local} < {b} }}")
    prefix = _prefix_counts([m.intersect_range(slab) for m in maps], d2, lows[d2], sizes[d2])
    if prefix is None:
        return equal, float("inf")  # not counted: the two-level cut is not compared
    if prefix[-1] == 0:
        return equal, 0
    cuts = _minimax_cuts(prefix, parts) if parts < sizes[d2] else equal
    return cuts, max(prefix[e] - prefix[c] for c, e in zip(cuts, cuts[1:]))


SCAN_BELOW = 2_000_000  # without barvinok, instances up to which the prefix counts are scanned by isl


@functools.lru_cache(maxsize=256)
def _cuts(texts: tuple[str, ...], d: int, low: int, size: int, parts: int) -> tuple[int, ...]:
    equal = equal_cuts(size, parts)
    if parts <= 1 or size <= parts:
        return equal
    prefix = _prefix_counts([isl.Map(t) for t in texts], d, low, size)
    if prefix is None or prefix[-1] == 0:
        return equal
    counted = _minimax_cuts(prefix, parts)

    def busiest(cs: tuple[int, ...]) -> int:
        return max(prefix[b] - prefix[a] for a, b in zip(cs, cs[1:]))

    return counted if busiest(counted) <= (1 - GAIN) * busiest(equal) else equal


def _prefix_counts(maps: list[isl.Map], d: int, low: int, size: int) -> Optional[list[int]]:
    """For c = 0 .. size: the band's instances whose offset along `d` inside their tile is below c.
    barvinok counts them once per statement as a function of c (milliseconds at any size); isl's
    scan counts them per c, only while the band has under `SCAN_BELOW` instances.  None when they
    are not counted (the caller keeps equal ranges)."""
    if any(not m.domain().is_bounded() for m in maps):
        return None
    n = maps[0].dim(isl.dim_type.out) if maps else 0
    f = [f"f{k}" for k in range(n)]
    local = offset_in_tile(f, d, low, size)
    out = [0] * (size + 1)
    if iu.counting_available():
        below = isl.Map(f"{{ [c] -> [{', '.join(f)}] : 0 <= c <= {size} and {local} < c }}")
        for m in maps:
            count = below.apply_range(m.reverse()).card()
            space = count.get_domain_space()
            for c in range(size + 1):
                at = isl.Point.zero(space).set_coordinate_val(isl.dim_type.set, 0, c)
                out[c] += int(count.eval(at).to_python())
        return out
    if sum(iu.card(m.domain()) for m in maps) >= SCAN_BELOW:
        return None
    for m in maps:
        for c in range(1, size + 1):
            out[c] += iu.card(m.intersect_range(isl.Set(f"{{ [{', '.join(f)}] : {local} < {c} }}")).domain())
    return out


def _minimax_cuts(prefix: list[int], parts: int) -> tuple[int, ...]:
    """Cut offsets of `parts` non-empty slabs whose busiest one holds the least work: the smallest
    bound B for which cutting each slab as late as B allows reaches the end (a binary search on B)."""
    size = len(prefix) - 1

    def greedy(bound: int) -> Optional[tuple[int, ...]]:
        cuts = [0]
        for k in range(1, parts):
            a, last = cuts[-1], size - (parts - k)
            if prefix[a + 1] - prefix[a] > bound:
                return None
            lo, hi = a + 1, last  # the latest c with prefix[c] - prefix[a] <= bound
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if prefix[mid] - prefix[a] <= bound:
                    lo = mid
                else:
                    hi = mid - 1
            cuts.append(lo)
        return tuple(cuts) + (size,) if prefix[size] - prefix[cuts[-1]] <= bound else None

    lo = max(prefix[c + 1] - prefix[c] for c in range(size))
    hi = prefix[size]
    while lo < hi:
        mid = (lo + hi) // 2
        if greedy(mid) is None:
            lo = mid + 1
        else:
            hi = mid
    return greedy(lo) or equal_cuts(size, parts)
