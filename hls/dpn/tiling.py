"""Tiling: the tiled schedule that defines the tile bands of the DPN (chapter 4, sections 5.2 and 5.3).

The isl scheduler finds, for each group of statements (the children of an outer sequence), a band of
permutable hyperplanes `f_1..f_K` (skewed where stencils and in-place updates need it).  Each
hyperplane is cut into tiles; the tiled time stamp of an instance is

    (group, floor(f_1/T_1), ..., floor(f_K/T_K), point order..., original time)

A tile *band* is identified by the group and all tile coordinates but the last; bands are the reuse
units.  The *point order* inside a tile is either the original one (`f_1..f_K`: every FIFO that tiling
breaks is recoverable, Theorem 5.3) or latency-aware (section 5.3): a coincident hyperplane (one no
dependence crosses) innermost, or else a wavefront `f_1 + ... + f_K` outermost, so that consecutive
iterations of a process do not depend on each other and a pipelined operator on a recurrence does not
stall the process.  The original time stamp breaks the remaining ties, which is always legal.

Tiling is never applied where dependences forbid it: the tiled order must keep every pair of
conflicting accesses (flow, anti and output dependences) in its original order, which is checked
exactly with isl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import islpy as isl

from ..diagnostics import CompileError
from ..poly import isl_utils as iu
from ..poly.program import PolyProgram

DEFAULT_LOCAL_WORDS = 8192
POINT_ORDERS = ("latency", "original")
MIN_INNER_TRIP = 8  # the innermost point loop should cover a floating-point operator's pipeline


@dataclass(frozen=True, eq=False)
class TileBand:
    """The permutable band of one statement group: hyperplanes per statement, tile sizes, point order."""

    statements: tuple[str, ...]
    hyperplanes: dict  # statement -> isl.Map S[x] -> [f_1..f_K]
    coincident: tuple[bool, ...]
    extents: tuple[int, ...]
    sizes: tuple[int, ...] = ()
    point_order: tuple[str, ...] = ()  # e.g. ("f1", "f3", "f2") or ("f1+f2+f3", "f1", "f2", "f3")

    @property
    def depth(self) -> int:
        return len(self.coincident)

    def describe(self) -> str:
        hyper = ", ".join(self._hyper_text(d) for d in range(self.depth))
        return f"{{{', '.join(self.statements)}}}: hyperplanes ({hyper}) tiles {'x'.join(map(str, self.sizes))}" + \
               (f", point order ({', '.join(self.point_order)})" if self.point_order else ", source order inside tiles")

    def _hyper_text(self, d: int) -> str:
        st = max(self.hyperplanes, key=lambda n: self.hyperplanes[n].dim(isl.dim_type.in_))  # the deepest
        affs: list[str] = []
        isl.PwMultiAff.from_map(self.hyperplanes[st]).get_pw_aff(d).foreach_piece(
            lambda _s, aff: affs.append(str(aff).rsplit("->", 1)[1].strip(" }[]()")))
        return affs[0] if len(affs) == 1 else "piecewise"


@dataclass(frozen=True, eq=False)
class Tiling:
    """A tiled schedule: statement instance -> (group, tile coordinates, point order, original time)."""

    sizes: tuple[int, ...]  # tile sizes of the first tiled band (for reports)
    bands: tuple[TileBand, ...]
    schedule: isl.UnionMap
    band_dims: int  # leading time dimensions that identify a tile band
    reason: str
    point_order: str = "original"

    @property
    def is_tiled(self) -> bool:
        return bool(self.sizes)

    def describe(self) -> str:
        if not self.sizes:
            return "none"
        return "; ".join(b.describe() for b in self.bands if b.depth) + f" ({self.point_order} point order)"


def no_tiling(program: PolyProgram, reason: str = "tiling not requested") -> Tiling:
    return Tiling((), (), program.schedule, 0, reason)


def schedule_bands(program: PolyProgram, deps: Optional[isl.UnionMap] = None) -> list[TileBand]:
    """Statement groups and their outermost permutable band, from the isl scheduler.

    Validity and coincidence constraints are all conflicting access pairs; proximity is the
    dataflow, so the scheduler favours bands along which values are reused."""
    deps = conflicts(program) if deps is None else deps
    dom = iu.union((isl.UnionSet.from_set(s.domain) for s in program.statements),
                   isl.UnionSet.empty(program.schedule.get_space().params()))
    flow = iu.union((isl.UnionMap.from_map(d.relation) for d in program.flow.dependences),
                    isl.UnionMap.empty(dom.get_space())) if program.flow is not None else deps
    sc = (isl.ScheduleConstraints.on_domain(iu.reread(dom)).set_validity(iu.reread(deps))
          .set_coincidence(iu.reread(deps)).set_proximity(iu.reread(flow)))
    root = sc.compute_schedule().get_root()
    node = root.child(0) if root.n_children() else root
    order = [s.name for s in program.statements]
    groups: list[tuple[list[str], Optional[isl.ScheduleNode]]] = []
    if node.get_type() in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        for k in range(node.n_children()):
            f = node.child(k)
            names = sorted({x.get_tuple_name() for x in iu.union_set_pieces(f.filter_get_filter())}, key=order.index)
            inner = f.child(0) if f.n_children() else None
            groups.append((names, inner if inner is not None and inner.get_type() == isl.schedule_node_type.band
                           else None))
    else:
        groups.append((order, node if node.get_type() == isl.schedule_node_type.band else None))
    groups.sort(key=lambda g: min(order.index(n) for n in g[0]))  # sequence order = program order here
    out = []
    for names, band in groups:
        if band is None:
            out.append(TileBand(tuple(names), {}, (), ()))
            continue
        n = band.band_n_member() if band.band_get_permutable() else 1
        umap = band.band_get_partial_schedule_union_map()
        hyper = {}
        for m in iu.union_map_pieces(umap):
            st = iu.tuple_name(m)
            keep = m.project_out(isl.dim_type.out, n, m.dim(isl.dim_type.out) - n)
            hyper[st] = iu.reread(keep.intersect_domain(program.statement(st).domain))
        coinc = tuple(bool(band.band_member_get_coincident(d)) for d in range(n))
        out.append(TileBand(tuple(names), hyper, coinc, _extents(hyper, n)))
    return out


def _extents(hyper: dict, n: int) -> tuple[int, ...]:
    out = []
    for d in range(n):
        lo = min(iu.constant_value(m.range().dim_min(d)) for m in hyper.values())
        hi = max(iu.constant_value(m.range().dim_max(d)) for m in hyper.values())
        out.append(hi - lo + 1)
    return tuple(out)


def _point_order(band: TileBand, mode: str) -> list[str]:
    """The point loops of a tile, outermost first, as expressions of the hyperplanes f1..fK.

    `original`: the source order.  `inner`: the coincident hyperplanes (no dependence crosses them) innermost,
    so dependent iterations are a whole slice of the tile apart.  `wavefront`: f1 + ... + fK
    outermost; the points of one front are independent."""
    names = [f"f{d + 1}" for d in range(band.depth)]
    if mode == "original":
        return []  # the original time stamp orders the points (Theorem 5.3 needs exactly that)
    if mode == "inner" and any(band.coincident) and not all(band.coincident):
        return [x for d, x in enumerate(names) if not band.coincident[d]] + \
               [x for d, x in enumerate(names) if band.coincident[d]]
    if mode == "wavefront" and band.depth >= 2:
        return [" + ".join(names)] + names
    return names


def recurrence_stalls(program: PolyProgram, schedule: isl.UnionMap, latency: int) -> int:
    """Estimated stall cycles: over every dependence between two instances of one statement,
    `latency` minus their distance in iterations of that statement's process, when positive.

    A process starts an iteration per cycle only if a value it produced itself was produced more
    iterations ago than its pipeline is deep (a reduction through a floating-point adder).  Cycles
    through several statements are not counted: their distance is the sum over the cycle, which a
    short hop between two statements does not bound."""
    total = 0
    for d in program.flow.dependences:
        st = program.statement(d.source)
        if program.access(d.sink_access).statement != st.name:
            continue
        m = isl.Map.from_union_map(schedule.intersect_domain(isl.UnionSet.from_set(st.domain)))
        n = st.domain.dim(isl.dim_type.set)
        order = sorted((tuple(r[n:]), tuple(r[:n])) for r in iu.map_pairs(m).tolist())
        rank = {x: k for k, (_t, x) in enumerate(order)}
        for r in iu.map_pairs(d.relation).tolist():
            total += max(0, latency - (rank[tuple(r[n:])] - rank[tuple(r[:n])]))
    return total


def tiled_schedule(program: PolyProgram, bands: Sequence[TileBand]) -> isl.UnionMap:
    """The tiled time stamp of every statement (module docstring)."""
    kmax = max((b.depth for b in bands), default=0)
    pmax = max((len(b.point_order) for b in bands), default=0)
    out = isl.UnionMap.empty(program.schedule.get_space())
    for g, band in enumerate(bands):
        for st in band.statements:
            orig = program.statement_schedule(st)
            n_t = orig.dim(isl.dim_type.out)
            t = [f"t{d}" for d in range(n_t)]
            f = [f"f{d + 1}" for d in range(band.depth)]
            src = band.hyperplanes[st].flat_range_product(orig) if band.depth else orig
            tiles = [f"floor(({f[d]}) / {band.sizes[d]})" for d in range(band.depth)] + ["0"] * (kmax - band.depth)
            points = [f"({e})" for e in band.point_order] + ["0"] * (pmax - len(band.point_order))
            text = f"{{ [{', '.join(f + t)}] -> [{', '.join([str(g)] + tiles + points + t)}] }}"
            out = out.union(isl.UnionMap.from_map(src.apply_range(isl.Map(text))))
    return out.coalesce()


def conflicts(program: PolyProgram) -> isl.UnionMap:
    """Pairs of instances touching one element, at least one writing, in original order."""
    writes = isl.UnionMap.empty(program.schedule.get_space())
    accesses = isl.UnionMap.empty(program.schedule.get_space())
    for st in program.statements:
        writes = writes.union(isl.UnionMap.from_map(st.write.relation))
        for a in st.accesses:
            accesses = accesses.union(isl.UnionMap.from_map(a.relation))
    pairs = writes.apply_range(accesses.reverse()).union(accesses.apply_range(writes.reverse()))
    return pairs.intersect(program.schedule.lex_lt_union_map(program.schedule))


def is_legal(program: PolyProgram, schedule: isl.UnionMap, deps: Optional[isl.UnionMap] = None) -> bool:
    deps = conflicts(program) if deps is None else deps
    return deps.intersect(schedule.lex_ge_union_map(schedule)).is_empty()


RECURRENCE_LATENCY = 16  # cycles from reading an operand to writing the result: a binary64 multiply-add


def _with_order(bands: list[TileBand], mode: str) -> list[TileBand]:
    return [b if not b.depth else TileBand(b.statements, b.hyperplanes, b.coincident, b.extents, b.sizes,
                                           tuple(_point_order(b, mode))) for b in bands]


def _finish(program: PolyProgram, bands: list[TileBand], point_order: str, reason: str,
            deps: isl.UnionMap) -> Tiling:
    """Choose the point order (for `latency`: of original, inner and wavefront, the one with the fewest
    estimated recurrence stalls, the earlier on a tie) and check legality exactly."""
    modes = ["original"] if point_order == "original" else ["original", "inner", "wavefront"]
    best = None
    for mode in modes:
        cand = _with_order(bands, mode)
        sched = tiled_schedule(program, cand)
        if not is_legal(program, sched, deps):  # cannot happen for a valid isl band; never emit an illegal order
            continue
        stalls = recurrence_stalls(program, sched, RECURRENCE_LATENCY) if len(modes) > 1 else 0
        if best is None or stalls < best[0]:
            best = (stalls, mode, cand, sched)
        if stalls == 0:
            break
    if best is None:
        return no_tiling(program, "the scheduler's band did not give a legal tiling; not tiled")
    stalls, mode, cand, sched = best
    kmax = max(b.depth for b in cand)
    first = next(b for b in cand if b.depth)
    note = f"; about {stalls} recurrence stall cycles estimated" if len(modes) > 1 else ""
    return Tiling(first.sizes, tuple(cand), sched, kmax, reason + note, mode)


def tile_program(program: PolyProgram, sizes: Sequence[int], *, point_order: str = "latency",
                 deps: Optional[isl.UnionMap] = None) -> Tiling:
    """Tile the outer `len(sizes)` hyperplanes of every group's band by the given sizes (the other
    hyperplanes of a band are not cut: one tile spans them)."""
    if any(t < 1 for t in sizes):
        raise CompileError(program.loc, f"--tile: tile sizes must be positive, got {list(sizes)}")
    deps = conflicts(program) if deps is None else deps
    bands = schedule_bands(program, deps)
    depth = max((b.depth for b in bands), default=0)
    if len(sizes) > depth:
        raise CompileError(program.loc, f"--tile gives {len(sizes)} sizes but the deepest permutable band the "
                                        f"scheduler found has {depth} hyperplane(s); give at most {depth}")
    out = []
    for b in bands:
        k = min(len(sizes), b.depth)
        sz = tuple(sizes[:k]) + tuple(b.extents[k:])
        out.append(TileBand(b.statements, b.hyperplanes, b.coincident, b.extents, sz))
    return _finish(program, out, point_order, "explicit tile sizes on the scheduler's permutable bands", deps)


def _footprint(program: PolyProgram, statements: Sequence[str]) -> int:
    """Distinct array elements the statements touch (what one band holding everything would keep)."""
    elems = 0
    for name, arr in program.arrays.items():
        acc = [a for s in statements for a in program.statement(s).accesses if a.array == name]
        if not acc:
            continue
        img = iu.union((isl.UnionSet.from_set(a.relation.intersect_domain(program.statement(a.statement).domain)
                                              .range()) for a in acc), isl.UnionSet.empty(arr.extent.get_space().params()))
        elems += sum(iu.card(x) for x in iu.union_set_pieces(img.coalesce()))
    return elems


def auto_tiling(program: PolyProgram, *, local_words: int = DEFAULT_LOCAL_WORDS,
                point_order: str = "latency") -> Tiling:
    """Tile every group's permutable band with sizes whose band footprint fits `local_words`.

    A band is all tiles along the last hyperplane for fixed outer tile coordinates, so only the outer
    hyperplanes are cut to fit the budget (halving the widest first, not below `MIN_INNER_TRIP`); the
    last one keeps the whole extent.  When everything fits, one band holds the whole group: off-chip
    traffic is then compulsory, and the point order still covers operator latencies."""
    deps = conflicts(program)
    bands = schedule_bands(program, deps)
    if not any(b.depth for b in bands):
        return no_tiling(program, "--tile auto: the scheduler found no permutable band")
    out, notes = [], []
    for b in bands:
        if not b.depth:
            out.append(b)
            continue
        sizes = list(b.extents)
        total = _footprint(program, b.statements)
        cut = 1.0
        while b.depth > 1 and total * cut > local_words:
            d = max(range(b.depth - 1), key=lambda k: sizes[k])
            if sizes[d] // 2 < MIN_INNER_TRIP:
                break
            new = -(-sizes[d] // 2)
            cut *= new / sizes[d]
            sizes[d] = new
        # balance the tiles of each cut hyperplane (18 = 9 + 9 rather than 16 + 2)
        sizes = [-(-e // -(-e // s)) for e, s in zip(b.extents, sizes)]
        out.append(TileBand(b.statements, b.hyperplanes, b.coincident, b.extents, tuple(sizes)))
        notes.append(f"footprint {total} words" + ("" if sizes == list(b.extents) else
                                                    f", {round(total * cut)} per band"))
    reason = (f"--tile auto: isl permutable bands; bands fit {local_words} local words ({'; '.join(notes)}); "
              f"{point_order} point order")
    return _finish(program, out, point_order, reason, deps)


def parse_tile_option(text: str) -> Optional[list[int]]:
    """`none` -> None, `auto` -> [], `8,8,4` -> [8, 8, 4] (a usage error otherwise)."""
    from ..diagnostics import UsageError

    if text == "none":
        return None
    if text == "auto":
        return []
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--tile expects auto, none or sizes like 8,8,4; got `{text}`") from None
    if not sizes or any(s < 1 for s in sizes):
        raise UsageError(f"--tile sizes must be positive integers; got `{text}`")
    return sizes
