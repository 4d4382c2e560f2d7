"""A reduced instance of a tiled program, on which the pipeline chooses its network.

Choosing a network means building and modelling about twenty candidates (point orders, fused or
aligned bands, merges, slabs) and trying channel depths on each: the cycle model replays every
instance, so that choice grows with the problem.  What it decides depends on the tile structure (the
point order against the operators' latencies, which statements share a process, how slabs split a
tile), not on how many tiles there are or how long a tile's loops run once they cover the latencies.
So it is made on the corner of every band's hyperplane space: the same statements, bands,
hyperplanes and schedule, tiles of at most `TILE_CAP` along a cut hyperplane with two whole tiles
and a partial one, and at most `SPAN_CAP` along a hyperplane one tile spans.  The full-size network
is then built once, with the choice (`pipeline._realized`).  The corner is a program of its own: its
dataflow is recomputed, values from outside it are live-in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import islpy as isl

from ..diagnostics import CompileError
from ..frontend.dataflow import analyze_dataflow
from ..poly import isl_utils as iu
from ..poly.program import PolyProgram
from .tiling import Tiling, with_bands

__all__ = ["REDUCE_ABOVE", "TILE_CAP", "SPAN_CAP", "reduced_instance", "instance_count"]

REDUCE_ABOVE = 40_000  # statement instances above which the choice is made on a reduced instance
TILE_CAP = 8  # tile size of a cut hyperplane in the reduced instance
SPAN_CAP = 16  # extent of a hyperplane that one tile spans, in the reduced instance


def instance_count(program: PolyProgram) -> int:
    return sum(iu.card(s.domain) for s in program.statements)


def _box(lows: tuple[int, ...], spans: list[int]) -> isl.Set:
    f = [f"f{d}" for d in range(len(spans))]
    cons = " and ".join(f"{lo} <= {x} < {lo + r}" for x, lo, r in zip(f, lows, spans))
    return isl.Set(f"{{ [{', '.join(f)}] : {cons} }}")


def _placed_in(hyper: isl.Map, lows: tuple[int, ...], spans: list[int]) -> Optional[isl.Map]:
    """`hyper` with every coordinate that takes one value outside the corner moved to the corner's
    nearest edge (None when a coordinate takes several values, none of them in the corner).

    A statement after an inner loop sits at that loop's last hyperplane value (fir-int's rounding at
    `k = TAPS - 1`): cutting the loop to the corner would drop the statement, whereas at the corner's
    last value it keeps its place, after the loop's last instance in the corner."""
    n = hyper.dim(isl.dim_type.out)
    image = hyper.range()
    target = []
    for d, (lo, span) in enumerate(zip(lows, spans)):
        coord = image.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
        window = isl.Set(f"{{ [x] : {lo} <= x < {lo + span} }}")
        if not coord.intersect(window).is_empty():
            target.append(f"f{d}")
            continue
        if not coord.is_singleton():
            return None
        value = coord.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
        target.append(str(lo + span - 1 if value >= lo + span else lo))
    if all(t == f"f{d}" for d, t in enumerate(target)):
        return hyper
    f = ", ".join(f"f{d}" for d in range(n))
    return hyper.apply_range(isl.Map(f"{{ [{f}] -> [{', '.join(target)}] }}"))


def _restricted(program: PolyProgram, domains: dict[str, isl.Set]) -> Optional[PolyProgram]:
    """`program` on the given statement domains, with its dataflow recomputed (None when a local is
    then read before it is written: its producer lies outside the corner)."""
    stmts = []
    for s in program.statements:
        dom = domains[s.name]
        stmts.append(replace(s, domain=dom, write=replace(s.write, relation=s.write.relation.intersect_domain(dom)),
                             reads=tuple(replace(r, relation=r.relation.intersect_domain(dom)) for r in s.reads)))
    union = iu.union((isl.UnionSet.from_set(d) for d in domains.values()),
                     isl.UnionSet.empty(program.schedule.get_space().params()))
    small = replace(program, statements=tuple(stmts), schedule=program.schedule.intersect_domain(union), flow=None)
    try:
        return analyze_dataflow(small)
    except CompileError:
        return None


def reduced_instance(program: PolyProgram, tiling: Tiling) -> Optional[tuple[PolyProgram, Tiling]]:
    """The corner instance of a tiled program and its tiling (module docstring), or None when the
    program cannot be reduced (an untiled statement group, a statement outside the corner, a local
    whose producer lies outside it) or is not smaller."""
    if not tiling.is_tiled or any(not b.depth for b in tiling.bands):
        return None
    domains: dict[str, isl.Set] = {}
    hyperplanes: dict[str, isl.Map] = {}
    shapes = []
    for b in tiling.bands:
        sizes, spans = [], []
        for d in range(b.depth):
            size, extent = b.sizes[d], b.extents[d]
            if size >= extent:  # one tile spans the hyperplane
                sizes.append(min(extent, SPAN_CAP))
                spans.append(sizes[-1])
            else:
                t = min(size, TILE_CAP)
                sizes.append(t)
                spans.append(min(extent, 2 * t + (t + 1) // 2))
        box = _box(b.lows, spans)
        for st in b.statements:
            placed = _placed_in(b.hyperplanes[st], b.lows, spans)
            if placed is None:
                return None
            hyperplanes[st] = placed
            domains[st] = placed.intersect_range(box).domain().coalesce()
            if domains[st].is_empty():
                return None
        shapes.append((tuple(sizes), tuple(spans)))
    small = _restricted(program, domains)
    if small is None or instance_count(small) * 2 > instance_count(program):
        return None
    bands = []
    for b, (sizes, spans) in zip(tiling.bands, shapes):
        hyper = {st: iu.reread(hyperplanes[st].intersect_domain(domains[st])) for st in b.hyperplanes}
        inner = None if b.inner is None else {st: iu.reread(m.intersect_domain(domains[st]))
                                              for st, m in b.inner.items()}
        bands.append(replace(b, hyperplanes=hyper, inner=inner, sizes=sizes, extents=spans))
    small_tiling = with_bands(small, tiling, bands)
    return None if small_tiling is None else (small, small_tiling)
