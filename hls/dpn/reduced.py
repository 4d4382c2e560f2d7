"""A reduced instance of a tiled program, on which the pipeline chooses its network.

Choosing a network means building and modelling about twenty candidates (point orders, fused or
aligned bands, merges, slabs) and trying channel depths on each: the cycle model replays every
instance, so that choice grows with the problem.  What it decides depends on the tile structure (the
point order against the operators' latencies, which statements share a process, how slabs split a
tile), not on how many tiles there are or how long a tile's loops run once they cover the latencies.
So it is made on the corner of every band's hyperplane space: the same statements, bands,
hyperplanes and schedule, tiles of at most `TILE_CAP` along a cut hyperplane with two whole tiles
and a partial one, and at most `SPAN_CAP` along a hyperplane one tile spans (both doubled until the
corner holds `MIN_CORNER` instances; cut by a quarter while it holds more than `MAX_CORNER`).  The
full-size network is then built once, with the choice (`pipeline._realized`).  The corner is a
program of its own: its dataflow is recomputed, values from outside it are live-in.

With parallel parts (`--parallel P`), the hyperplanes the tiles are cut into slabs along
(`tiling.cut_dims`) keep their full tile size in the corner, one tile of them: a part's slab is then as
wide there as at full size, and there are as many parts (`TileBand.full`: the cut points and part
counts come from the full-size band's work).  On a corner cut to 16 along it, syrk's 16 parts at M=60,
N=80 had one row each (five at full size), too few iterations between a reduction's steps to hide
the adder's latency; the network chosen there was estimated at 98k cycles and modelled 32k at full
size, 24k now (the choice made on the whole problem: 17k).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import islpy as isl

from ..poly import isl_utils as iu
from ..poly.program import PolyProgram
from .restrict import instance_count, loops_capped, restricted
from .tiling import Tiling, cut_dims, with_bands

__all__ = ["REDUCE_ABOVE", "TILE_CAP", "SPAN_CAP", "MIN_CORNER", "MAX_CORNER", "MIN_TILE_CAP",
           "MIN_SPAN_CAP", "SHORT_SPANS_ABOVE", "reduced_instance"]

REDUCE_ABOVE = 8_000  # statement instances above which the choice is made on a reduced instance (bench/results/reduce-above.md)
TILE_CAP = 8  # tile size of a cut hyperplane in the reduced instance
SPAN_CAP = 16  # extent of a hyperplane that one tile spans, in the reduced instance
MIN_CORNER = 1_500  # statement instances below which the caps double (`reduced_instance`)
#: statement instances above which the caps shrink by a quarter, down to tiles of `MIN_TILE_CAP`: a
#: band of four hyperplanes holds 2.5^4 tiles of 8^4 points (heat-3d's corner at T=10, N=26: 32,640
#: instances, 50 s per candidate network).  Halving them instead left heat-3d's choice at T=7, N=18
#: 9% slower than the one made on the larger corner; a quarter, 1% (8,034 instances, 39 s against 50 s)
MAX_CORNER = 12_000
MIN_TILE_CAP = 4
#: the shortest span of a one-tile hyperplane, or loop below a band, that a corner is cut to when a
#: corner at `SPAN_CAP` is not half the program (`reduced_instance`): it still covers the operators'
#: pipelines (a point order hides a latency over the loop it puts innermost)
MIN_SPAN_CAP = 8
#: statement instances above which such shorter corners are taken.  Below, the full-size model is
#: affordable and a shorter corner can mislead: 3mm at its own size (22,636 instances) chose the
#: aligned band on a corner of spans of 12, 13,639 cycles in Verilator against the 8,726 of the
#: full-size choice, and doitgen's estimate from a corner whose free loops were cut from 12 to 8 was
#: 44% high (a loop of 8 no longer covers its multiply-add's latency).  Above, the full-size model
#: of a latency-bound kernel costs most of a minute (ADI at 41,760 instances: 56 s, against 30 s)
SHORT_SPANS_ABOVE = 30_000


def _placed_in(hyper: isl.Map, lows: tuple[int, ...], spans: list[int],
              spanned: list[bool]) -> Optional[tuple[isl.Map, list[tuple[int, int]]]]:
    """`hyper` placed in the corner, and its window (first value, end) along every hyperplane, or
    None when it cannot be.

    A coordinate that meets the corner keeps it.  One that takes a single value outside it is moved to
    the corner's nearest edge: a statement after an inner loop sits at that loop's last hyperplane
    value (fir-int's rounding at `k = TAPS - 1`), and at the corner's last value it keeps its place
    after the loop's last instance in the corner.  Along a hyperplane one tile spans, a coordinate
    that lies wholly beyond the corner gets a window of the same length from its own first value:
    fused bands put their statements one after another along such a hyperplane (2mm's second
    product after the first), and one tile still holds them all, in the same order."""
    n = hyper.dim(isl.dim_type.out)
    image = hyper.range()
    target, windows = [], []
    for d, (lo, span) in enumerate(zip(lows, spans)):
        coord = image.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
        window = isl.Set(f"{{ [x] : {lo} <= x < {lo + span} }}")
        if not coord.intersect(window).is_empty():
            target.append(f"f{d}")
            windows.append((lo, lo + span))
            continue
        if coord.is_singleton():
            value = coord.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
            at = lo + span - 1 if value >= lo + span else lo
            target.append(str(at))
            windows.append((at, at + 1))
        elif spanned[d]:
            first = coord.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
            target.append(f"f{d}")
            windows.append((first, first + span))
        else:
            return None
    if any(t != f"f{d}" for d, t in enumerate(target)):
        f = ", ".join(f"f{d}" for d in range(n))
        hyper = hyper.apply_range(isl.Map(f"{{ [{f}] -> [{', '.join(target)}] }}"))
    return hyper, windows


def _window_box(windows: list[tuple[int, int]]) -> isl.Set:
    f = [f"f{d}" for d in range(len(windows))]
    cons = " and ".join(f"{a} <= {x} < {b}" for x, (a, b) in zip(f, windows))
    return isl.Set(f"{{ [{', '.join(f)}] : {cons} }}")


def _free_loops(hyper: isl.Map) -> list[int]:
    """The loops of a statement that no hyperplane of its band involves: those below the band."""
    n = hyper.dim(isl.dim_type.in_)
    used: set[int] = set()
    pma = isl.PwMultiAff.from_map(hyper)
    for k in range(hyper.dim(isl.dim_type.out)):
        pma.get_pw_aff(k).foreach_piece(lambda _s, aff: used.update(
            d for d in range(n) if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()))
    return [d for d in range(n) if d not in used]


def reduced_instance(program: PolyProgram, tiling: Tiling, parallel: int = 1) -> Optional[tuple[PolyProgram, Tiling]]:
    """The corner instance of a tiled program and its tiling (module docstring), or None when the
    program cannot be reduced (a statement outside the corner, a local whose producer lies outside
    it) or is not smaller.  A group without a tiled band (band-mask's row sums beside its tiled
    copy) keeps its source order, with its loops cut like those below a band.

    The caps double while the corner has fewer than `MIN_CORNER` instances: a triangular solve's
    corner of 8-wide tiles holds 88 instances, too few to show how its point orders hide the
    divider's latency, and the choice made there was 75% slower than the full-size one.

    `parallel`: the parts each tile is cut into; above 1, the slab hyperplane keeps its tile size
    (module docstring)."""
    if not tiling.is_tiled:
        return None
    whole = instance_count(program)
    kept = [set(cut_dims(b, parallel)) if parallel > 1 and b.depth else set() for b in tiling.bands]

    def halved(c: Optional[tuple[PolyProgram, Tiling]]) -> bool:
        return c is not None and instance_count(c[0]) <= whole // 2

    def corner(tile_cap: int, span_cap: int) -> Optional[tuple[PolyProgram, Tiling]]:
        """The corner at these caps, None when there is none or it is not half the program or less."""
        c = _corner(program, tiling, tile_cap, span_cap, kept)
        return c if halved(c) else None

    max_cut = max((sum(1 for d in range(b.depth) if d not in k and b.sizes[d] < b.extents[d])
                   for b, k in zip(tiling.bands, kept)), default=0)
    tile_cap, span_cap = TILE_CAP, SPAN_CAP
    first = _corner(program, tiling, tile_cap, span_cap, kept)
    out = first if halved(first) else None
    while first is not None and out is None and whole > SHORT_SPANS_ABOVE and span_cap > MIN_SPAN_CAP:
        # not half the program: its bands are one tile each, or short (lenet's convolution: one tile
        # of 16x10x10x6, 241,600 instances, every candidate modelled at full size).  Shorter spans
        # and loops, down to `MIN_SPAN_CAP`, until the corner is half the program or less
        tile_cap, span_cap = max(MIN_TILE_CAP, 3 * tile_cap // 4), max(MIN_SPAN_CAP, 3 * span_cap // 4)
        first = _corner(program, tiling, tile_cap, span_cap, kept)
        out = first if halved(first) else None
        if out is not None and instance_count(out[0]) < MIN_CORNER:
            return None
    while (out is not None and instance_count(out[0]) > MAX_CORNER
           and (tile_cap > MIN_TILE_CAP or span_cap > MIN_SPAN_CAP)):
        tile_cap, span_cap = max(MIN_TILE_CAP, 3 * tile_cap // 4), max(MIN_SPAN_CAP, 3 * span_cap // 4)
        smaller = corner(tile_cap, span_cap)
        if smaller is None or instance_count(smaller[0]) < MIN_CORNER:
            break
        out = smaller
    single = 0
    while out is not None and instance_count(out[0]) > MAX_CORNER and single < max_cut - 1:
        # the caps at their least and still too large (lenet's convolution: four cut hyperplanes of
        # 2.5 tiles of 4 and a 5x5 window below, 201,000 instances, every candidate and merge modelled
        # there): the outermost cut hyperplanes keep one tile each, the inner ones still show how
        # one tile follows another
        single += 1
        smaller = _corner(program, tiling, tile_cap, span_cap, kept, single)
        if not halved(smaller) or instance_count(smaller[0]) < MIN_CORNER:
            break
        out = smaller
    while out is not None and instance_count(out[0]) < MIN_CORNER:
        tile_cap, span_cap = 2 * tile_cap, 2 * span_cap
        if all(min(b.sizes[d], b.extents[d]) <= min(tile_cap, span_cap) // 2 for b, k in zip(tiling.bands, kept)
               for d in range(b.depth) if d not in k):
            break  # the caps no longer cut anything
        larger = corner(tile_cap, span_cap)
        if larger is None:
            break
        out = larger
    return out


def _corner(program: PolyProgram, tiling: Tiling, tile_cap: int, span_cap: int,
            kept: list[set[int]], single: int = 0) -> Optional[tuple[PolyProgram, Tiling]]:
    """The corner at these caps; `kept`: per band, the hyperplanes whose tile size is not capped;
    `single`: per band, how many of the outermost cut hyperplanes keep one tile only."""
    domains: dict[str, isl.Set] = {}
    hyperplanes: dict[str, isl.Map] = {}
    shapes = []
    for b, whole in zip(tiling.bands, kept):
        sizes, spans, spanned = [], [], []
        cut = 0
        for d in range(b.depth):
            size, extent = b.sizes[d], b.extents[d]
            spanned.append(size >= extent)
            if spanned[-1]:  # one tile spans the hyperplane
                sizes.append(extent if d in whole else min(extent, span_cap))
                spans.append(sizes[-1])
            else:
                t = size if d in whole else min(size, tile_cap)
                sizes.append(t)
                # a whole slab hyperplane: one tile along it (its parts run side by side; the tiles
                # that follow one another are those of the other hyperplanes)
                one = d in whole or cut < single
                cut += d not in whole
                spans.append(t if one else min(extent, 2 * t + (t + 1) // 2))
        reach = [lo + r for lo, r in zip(b.lows, spans)]
        for st in b.statements:
            if not b.depth:  # an untiled group runs in source order: its loops are cut like those below a band
                dom = program.statement(st).domain
                domains[st] = loops_capped(dom, span_cap, list(range(dom.dim(isl.dim_type.set))))
                if domains[st].is_empty():
                    return None
                continue
            placed = _placed_in(b.hyperplanes[st], b.lows, spans, spanned)
            if placed is None:
                return None
            hyperplanes[st], windows = placed
            # Loops below the band (no hyperplane involves them: Floyd-Warshall's i and j under its
            # one-dimensional band on k) are cut too, or the corner would grow with the problem (147,456
            # of 884,736 instances at n = 96): like a spanned hyperplane's, their length decides nothing
            # once it covers the operators' latencies.  A loop a hyperplane involves is left to the
            # windows: cutting jacobi-2d's skewed i and j too made the corner choose another point order
            # (54% more channel words).
            domains[st] = loops_capped(iu.coalesced(hyperplanes[st].intersect_range(_window_box(windows)).domain()),
                                        span_cap, _free_loops(b.hyperplanes[st]))
            if domains[st].is_empty():
                return None
            reach = [max(r, end) for r, (_first, end) in zip(reach, windows)]
        for d in range(b.depth):  # a spanned hyperplane stays one tile over every statement's window
            if spanned[d] and reach[d] - b.lows[d] > spans[d]:
                sizes[d] = spans[d] = reach[d] - b.lows[d]
        shapes.append((tuple(sizes), tuple(spans)))
    small = restricted(program, domains)
    if small is None and _closed_under_locals(program, domains):
        small = restricted(program, domains)
    if small is None:
        return None
    bands = []
    for b, (sizes, spans), k in zip(tiling.bands, shapes, kept):
        hyper = {st: iu.reread(hyperplanes[st].intersect_domain(domains[st])) for st in b.hyperplanes}
        inner, mixed = ({st: iu.reread(m.intersect_domain(domains[st])) for st, m in maps.items()}
                        if maps is not None else None for maps in (b.inner, b.interleaved))
        full = b if b.depth and any(sizes[d] == b.sizes[d] and d in k for d in range(b.depth)) else None
        bands.append(replace(b, hyperplanes=hyper, inner=inner, interleaved=mixed, sizes=sizes, extents=spans, full=full))
    small_tiling = with_bands(small, tiling, bands)
    return None if small_tiling is None else (small, small_tiling)


def _closed_under_locals(program: PolyProgram, domains: dict[str, isl.Set]) -> bool:
    """Drop from the corner's `domains`, in place, the instances that read a local value no instance of
    the corner writes before them, until none does (a reader dropped may have written a local another
    one reads); False when a statement is left without instances.  Asked only of a corner where a
    local is read before any write (`restricted` refuses it): a local's writer and readers may sit in
    groups cut differently (ludcmp's `w`, once split into live ranges and expanded per (i, j), is
    written by an untiled group whose loops the corner cuts and read in a band that keeps whole rows),
    and without a corner every candidate network was modelled at full size (ludcmp at N = 168: 1.65 M
    instances, minutes and gigabytes).  The writers are those of the corner, not of the whole
    program: a reduction's final value (`best` after its loop) is read from the corner's last update,
    and dropping its reader because the whole program's last update lies outside emptied the
    statement (a layer network's returned maximum, every candidate then modelled at full size).  A
    corner whose reads all find some writer is kept as it is: dropping the readers whose full-size
    writer lies outside emptied row-normalize's."""
    reads = [(st, r) for st in program.statements for r in st.reads if not program.arrays[r.array].is_arg]
    changed = True
    while changed:
        changed = False
        writes = iu.union((isl.UnionMap.from_map(st.write.relation.intersect_domain(domains[st.name]))
                           for st in program.statements if not program.arrays[st.write.array].is_arg),
                          isl.UnionMap.empty(program.schedule.get_space().params()))
        union = iu.union((isl.UnionSet.from_set(d) for d in domains.values()),
                         isl.UnionSet.empty(program.schedule.get_space().params()))
        schedule = program.schedule.intersect_domain(union)
        for st, r in reads:
            sink = isl.UnionMap.from_map(r.relation.intersect_domain(domains[st.name]))
            if sink.is_empty():
                continue
            _deps, orphans = iu.last_writer(sink, writes, schedule)
            orphaned = orphans.domain()
            if not orphaned.is_empty():
                for piece in iu.union_set_pieces(orphaned):
                    domains[st.name] = iu.coalesced(domains[st.name].subtract(piece))
                if domains[st.name].is_empty():
                    return False
                changed = True
                break  # the writes changed: recompute them
    return True