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
stall the process.  The `interleaved` point order also moves the coincident members of the
scheduler's bands below the tiled one innermost in theirs: ADI's band is its time loop alone, and
below it each sweep's rows are independent while its columns carry a division's recurrence, so
interleaving the rows hides the divider.  The original time stamp breaks the remaining ties, which
is always legal.

Tiling is never applied where dependences forbid it: the tiled order must keep every pair of
conflicting accesses (flow, anti and output dependences) in its original order, which is checked
exactly with isl.
"""

from __future__ import annotations


import math
from dataclasses import dataclass, replace
from typing import Optional, Sequence

import islpy as isl

from ..bounded import text_within
from ..diagnostics import CompileError
from ..poly import isl_utils as iu
from ..poly.lexorder import ordered_pairs
from ..poly.program import PolyProgram
from .restrict import instance_count, sampled
from .shifts import extended, refit_inner, refit_shifts
from .slab_cuts import offset_in_tile, slab_grid

DEFAULT_LOCAL_WORDS = 8192
MIN_INNER_TRIP = 8  # the innermost point loop should cover a floating-point operator's pipeline


@dataclass(frozen=True, eq=False)
class TileBand:
    """The permutable band of one statement group: hyperplanes per statement, tile sizes, point order."""

    statements: tuple[str, ...]
    hyperplanes: dict  # statement -> isl.Map S[x] -> [f_1..f_K]
    coincident: tuple[bool, ...]
    extents: tuple[int, ...]
    lows: tuple[int, ...]  # smallest value of each hyperplane: tiles start there
    sizes: tuple[int, ...] = ()
    point_order: tuple[str, ...] = ()  # e.g. ("f1", "f3", "f2") or ("f1+f2+f3", "f1", "f2", "f3")
    inner: Optional[dict] = None  # statement -> isl.Map S[x] -> [the scheduler's dimensions below the band]
    # `inner` with the coincident members of each permutable band below innermost in it (`_interleaved`);
    # None where that is `inner`
    interleaved: Optional[dict] = None
    inner_at: int = -1  # inner dimensions go before point loop `inner_at` (-1: after all point loops)
    fission: bool = False  # inside a tile, all points of one statement before the next statement's
    levels: int = 2  # the most hyperplanes `parallel_parts` cuts the tiles along (`slab_cuts.slab_grid`)
    # On a reduced instance (`dpn.reduced`) whose corner keeps this band's slab hyperplane whole: the
    # full-size band.  The slabs' cut points and the statements' part counts are taken from its work,
    # so the corner's network has the full-size network's parts (a triangle's corner holds another
    # share of work per row and per statement than the whole triangle).
    full: Optional["TileBand"] = None

    @property
    def depth(self) -> int:
        return len(self.coincident)

    def describe(self) -> str:
        deepest = self._deepest()
        hyper = self._hyper_texts(deepest)
        n_in = self.hyperplanes[deepest].dim(isl.dim_type.in_) if self.depth else 0
        others = [f"{st}: ({self._hyper_texts(st)})" for st in self.statements
                  if self.depth and self.hyperplanes[st].dim(isl.dim_type.in_) == n_in
                  and self._hyper_texts(st) != hyper]
        return f"{{{', '.join(self.statements)}}}: hyperplanes ({hyper})" + \
               (f" ({'; '.join(others)})" if others else "") + f" tiles {'x'.join(map(str, self.sizes))}" + \
               (", one statement after another inside tiles" if self.fission else "") + \
               (f", point order ({', '.join(self.point_order)})" if self.point_order else ", source order inside tiles")

    def _deepest(self) -> str:
        return max(self.hyperplanes, key=lambda n: self.hyperplanes[n].dim(isl.dim_type.in_))

    def _hyper_texts(self, st: str) -> str:
        return ", ".join(self._hyper_text(st, d) for d in range(self.depth))

    def _hyper_text(self, st: str, d: int) -> str:
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
    fusion: str = "separate"  # how `schedule_bands` grouped the statements (FUSION_MODES)
    # the separate schedule ran past `SEPARATE_SCHEDULE_SECONDS` and came with an outer coincident
    # member: a program isl's scheduler finds hard, whose optional schedules are not asked for
    late: bool = False

    @property
    def is_tiled(self) -> bool:
        return bool(self.sizes)

    def band_index(self) -> dict[str, int]:
        """Statement -> index of its band (its statement group) in `bands`."""
        return {st: k for k, b in enumerate(self.bands) for st in b.statements}

    def describe(self) -> str:
        if not self.sizes:
            return "none"
        return "; ".join(b.describe() for b in self.bands if b.depth) + f" ({self.point_order} point order)"


def no_tiling(program: PolyProgram, reason: str = "tiling not requested") -> Tiling:
    return Tiling((), (), program.schedule, 0, reason)


def read_reuse(program: PolyProgram, *, across: bool = False) -> isl.UnionMap:
    """Pairs of instances reading one element, in original order (input dependences): reuse that no
    dataflow edge shows, e.g. two statements reading one matrix in bicg or mvt.  With `across`, only
    pairs of two different statements."""
    reads = isl.UnionMap.empty(program.schedule.get_space())
    for st in program.statements:
        for a in st.reads:
            reads = reads.union(isl.UnionMap.from_map(a.relation.intersect_domain(st.domain)))
    pairs = ordered_pairs(reads.apply_range(reads.reverse()), program.schedule, "lt")
    if across:
        pairs = iu.union((isl.UnionMap.from_map(m) for m in iu.union_map_pieces(pairs)
                          if m.get_tuple_name(isl.dim_type.in_) != m.get_tuple_name(isl.dim_type.out)),
                         isl.UnionMap.empty(pairs.get_space()))
    return pairs


def coincident_members(hyperplanes: dict, deps: isl.UnionMap, depth: int) -> tuple[bool, ...]:
    """Which hyperplanes of a band no dependence between its statements crosses (distance 0)."""
    h = iu.union((isl.UnionMap.from_map(m) for m in hyperplanes.values()), isl.UnionMap.empty(deps.get_space()))
    deltas = iu.union_set_pieces(deps.apply_domain(h).apply_range(h).deltas())
    flags = []
    for d in range(depth):
        zero = isl.Set(f"{{ [{', '.join(f'x{k}' for k in range(depth))}] : x{d} = 0 }}")
        flags.append(all(piece.is_subset(zero.align_params(piece.get_space())) for piece in deltas))
    return tuple(flags)


def _compute_schedule(sc: isl.ScheduleConstraints, whole_component: bool,
                      outer_coincidence: bool = False) -> isl.Schedule:
    ctx = isl.DEFAULT_CONTEXT
    saved = ctx.get_schedule_whole_component(), ctx.get_schedule_outer_coincidence()
    ctx.set_schedule_whole_component(1 if whole_component else 0)
    ctx.set_schedule_outer_coincidence(1 if outer_coincidence else 0)
    try:
        return sc.compute_schedule()
    finally:
        ctx.set_schedule_whole_component(saved[0])
        ctx.set_schedule_outer_coincidence(saved[1])


#: The limit of each optional schedule of `--tile auto`, the fused and the aligned one, in the
#: child's CPU seconds (`hls.bounded`).  isl's whole-component scheduling ran for hours on one fuzzed
#: program, and 20 s on ADI for a band that lost; the aligned schedule's proximity (reads of one
#: element by two statements) makes its cost grow with the domains' constants (2mm: 0.4 s at 6k
#: instances, 9.6 s at 100k, 29 s at 400k, `_sampled_bands`).  Every example's fused schedule takes
#: under 1.5 s at 64x its instances; an optional candidate is not worth more than this.
OPTIONAL_SCHEDULE_SECONDS = 5.0


#: The separate schedule's limit, then that of the same schedule with an outer coincident member
#: required (isl's `schedule_outer_coincidence`).  isl's search for a non-trivial solution over ADI's
#: 14 statements took 15-19 s at its own size (TS=N=20) and ran past 20 s from TS=N=48 on; ludcmp's,
#: once its `w` is split into live ranges, 14 s at N=106 and past 20 s at N=168; with the option,
#: 3-8 s and a few hundredths, for the same network at ADI's own size (73,594 modelled cycles).
#: Every example takes under 2.5 s without it at 64 times its instances (redblack-2d), and the option
#: would change the bands of two thirds of them.  A limit that a schedule runs close to makes the
#: outcome depend on the machine: 20 s was within the spread of ADI's own size.
SEPARATE_SCHEDULE_SECONDS = 6.0


_LATE = "the isl scheduler took more than"


def _separate_schedule(sc: isl.ScheduleConstraints, late: Optional[list[bool]] = None) -> isl.Schedule:
    """The scheduler's own bands, which every `--tile auto` needs: past the limit, the schedule that
    an outer coincident member bounds, rather than no tiling (and True appended to `late`)."""
    try:
        return _compute_schedule_bounded(sc, False, SEPARATE_SCHEDULE_SECONDS)
    except isl.Error as e:
        if not str(e).startswith(_LATE):
            raise
    if late is not None:
        late.append(True)
    return _compute_schedule_bounded(sc, False, SEPARATE_SCHEDULE_SECONDS, outer_coincidence=True)


def _compute_schedule_bounded(sc: isl.ScheduleConstraints, whole_component: bool, seconds: float,
                              outer_coincidence: bool = False) -> isl.Schedule:
    """`_compute_schedule` with a time limit (`hls.bounded`); raises isl.Error when it runs out.
    isl's operation quota does not stop its scheduler's ILP loop, and no schedule is worth an
    unbounded wait: an optional one (the fused candidate of `--tile auto`) is dropped, the separate
    one asked for again with an outer coincident member (`_separate_schedule`)."""
    def compute() -> str:
        try:
            return str(_compute_schedule(sc, whole_component, outer_coincidence))
        except isl.Error as e:
            return "!" + str(e)

    text = text_within(compute, seconds)
    if text is None:
        raise isl.Error(f"{_LATE} {seconds:g} s")
    if text.startswith("!"):
        raise isl.Error(text[1:])
    return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)


FUSION_MODES = ("separate", "fused", "aligned", "nests")


def schedule_bands(program: PolyProgram, deps: Optional[isl.UnionMap] = None, *,
                   fusion: str = "separate", late: Optional[list[bool]] = None,
                   sample_only: bool = False) -> list[TileBand]:
    """Statement groups and their outermost permutable band, from the isl scheduler.

    Validity is every conflicting access pair.  `separate`: coincidence too (the scheduler looks for
    hyperplanes no dependence crosses) and proximity is the dataflow, so the scheduler favours bands
    along which values are reused.  `fused`: proximity also holds the read reuse and the scheduler
    looks for one band over each whole component: statements that only share an array they read
    then land in one tile band, which loads it once (chapter 4: bands are the reuse units) instead
    of once per group.  `aligned`: as `fused`, but without coincidence constraints and with only the
    read reuse between different statements as extra proximity, so that statements reading one
    element get the same time stamp when that is legal (mvt's `A[i][j]` and `A[j][i]`): coincidence
    would rather keep each statement's parallel loop outermost and read the matrix in transposed
    orders.  Coincident members are then computed from the dependences.  `nests`: as `separate`, each
    loop nest of the source (statements under one outermost loop, or one statement outside loops)
    scheduled on its own and the nests kept in source order, which is legal since the source order
    is: nests that share only an outer loop (the stages of a network of layers, each over channels)
    keep their whole bands instead of one band along that loop, and the statements of a nest (an
    accumulator's initialization, its updates and its store) stay in one band; an optional
    candidate, like `fused`.  `late` gets True appended
    when the schedule ran past its limit (`_separate_schedule`, `OPTIONAL_SCHEDULE_SECONDS`); with
    `sample_only`, the aligned schedule is not asked of the whole program when a sample gives none."""
    if fusion not in FUSION_MODES:
        raise ValueError(f"unknown fusion mode {fusion!r}")
    deps = conflicts(program) if deps is None else deps
    if fusion == "aligned" and instance_count(program) > SAMPLE_ABOVE:
        bands = _sampled_bands(program, deps, fusion)
        if bands is not None:
            return bands
    if sample_only and fusion == "aligned":
        return [TileBand(tuple(s.name for s in program.statements), {}, (), (), ())]
    return _scheduled_bands(program, deps, fusion, late)


#: Statement instances above which the aligned bands are scheduled on a sample (`_sampled_bands`).
#: Below, isl answers in under a second, and on the whole program: a sample may find other bands
#: (band-mv's skew along its band width shows only once the sample is wider than the band).
SAMPLE_ABOVE = 8_000
#: Loops are cut to this many values in the sample.
SAMPLE_CAP = 12


def _sampled_bands(program: PolyProgram, deps: isl.UnionMap, fusion: str) -> Optional[list[TileBand]]:
    """The bands the scheduler finds on a sample of the program (`restrict.sampled`), their constant
    terms refit to the whole program (`shifts`); None when the sample is not smaller, or the refit
    fails, or the bands are not a legal schedule of the whole program.  The aligned schedule's
    proximity spans statements, and isl's cost then grows with the domains' constants (2mm's aligned
    band: 0.4 s at 6k instances, 10 s at 28k, over 30 s at 400k, where the limit gave it up;
    horner-u64 and int-divmod 4-6 s at 64x their instances); on the sample it does not.  The fused
    schedule stays on the whole program: under 1.5 s on every example at 64x, and a sample narrower
    than band-mv's band loses its skew."""
    small = sampled(program, SAMPLE_CAP)
    if small is None:
        return None
    out = []
    for b in _scheduled_bands(small, conflicts(small), fusion):
        if not b.depth:
            out.append(TileBand(b.statements, {}, (), (), ()))
            continue
        domains = {st: program.statement(st).domain for st in b.statements}
        hyper = refit_shifts(b.hyperplanes, domains, deps)
        inner = {st: extended(m, domains[st]) for st, m in (b.inner or {}).items()}
        mixed = {st: extended(m, domains[st]) for st, m in (b.interleaved or {}).items()}
        if hyper is None or any(m is None for m in [*inner.values(), *mixed.values()]):
            return None
        inner, mixed = (refit_inner(hyper, m, deps) if m else m for m in (inner, mixed))
        if inner is None or mixed is None:
            return None
        coinc = tuple(a and c for a, c in zip(b.coincident, coincident_members(hyper, deps, b.depth)))
        lows, extents = _ranges(hyper, b.depth)
        out.append(TileBand(b.statements, hyper, coinc, extents, lows, inner=inner, interleaved=mixed or None))
    whole = [replace(b, sizes=b.extents, point_order=tuple(f"f{d + 1}" for d in range(b.depth))) if b.depth else b
             for b in out]
    return out if is_legal(program, tiled_schedule(program, whole), deps) else None


def source_nests(program: PolyProgram) -> list[list[str]]:
    """The statements of each outermost loop nest (or lone statement) of the source, in source order."""
    first = {iu.tuple_name(m): m.plain_get_val_if_fixed(isl.dim_type.out, 0).to_python()
             for m in iu.union_map_pieces(program.schedule)}
    nests: dict[int, list[str]] = {}
    for st in program.statements:
        nests.setdefault(first[st.name], []).append(st.name)
    return [nests[k] for k in sorted(nests)]


def _scheduled_bands(program: PolyProgram, deps: isl.UnionMap, fusion: str,
                     late: Optional[list[bool]] = None) -> list[TileBand]:
    """`schedule_bands` by the isl scheduler on the whole program (`nests`: on each source nest)."""
    if fusion == "nests":
        return [b for names in source_nests(program) for b in _group_bands(program, deps, fusion, names)]
    return _group_bands(program, deps, fusion, [s.name for s in program.statements], late)


def _group_bands(program: PolyProgram, deps: isl.UnionMap, fusion: str, names: Sequence[str],
                 late: Optional[list[bool]] = None) -> list[TileBand]:
    """The bands of the statements `names` by the isl scheduler, under the dependences among them."""
    stmts = [program.statement(n) for n in names]
    dom = iu.union((isl.UnionSet.from_set(s.domain) for s in stmts),
                   isl.UnionSet.empty(program.schedule.get_space().params()))
    flow = iu.union((isl.UnionMap.from_map(d.relation) for d in program.flow.dependences),
                    isl.UnionMap.empty(dom.get_space())) if program.flow is not None else deps
    if len(stmts) < len(program.statements):
        deps = deps.intersect_domain(dom).intersect_range(dom)
        flow = flow.intersect_domain(dom).intersect_range(dom)
    if fusion in ("fused", "aligned"):
        flow = flow.union(read_reuse(program, across=fusion == "aligned"))
    sc = (isl.ScheduleConstraints.on_domain(iu.reread(dom)).set_validity(iu.reread(deps))
          .set_proximity(iu.reread(flow)))
    if fusion != "aligned":
        sc = sc.set_coincidence(iu.reread(deps))
    order = list(names)
    try:
        sched = (_separate_schedule(sc, late) if fusion == "separate"
                 else _compute_schedule_bounded(sc, False, OPTIONAL_SCHEDULE_SECONDS) if fusion == "nests"
                 else _compute_schedule_bounded(sc, True, OPTIONAL_SCHEDULE_SECONDS))
        root = sched.get_root()
    except isl.Error as e:  # e.g. "unable to carry dependences": no band to tile, the program stays untiled
        if str(e).startswith(_LATE) and late is not None:
            late.append(True)
        return [TileBand(tuple(order), {}, (), (), ())]
    node = root.child(0) if root.n_children() else root
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
    # keep the scheduler's sequence order: it may put a later statement first (write after read)
    out = []
    for names, band in groups:
        if band is None:
            out.append(TileBand(tuple(names), {}, (), (), ()))
            continue
        n = band.band_n_member() if band.band_get_permutable() else 1
        umap = band.band_get_partial_schedule_union_map()
        hyper = {}
        for m in iu.union_map_pieces(umap):
            st = iu.tuple_name(m)
            keep = m.project_out(isl.dim_type.out, n, m.dim(isl.dim_type.out) - n)
            hyper[st] = iu.reread(keep.intersect_domain(program.statement(st).domain))
        if fusion == "aligned":
            coinc = coincident_members(hyper, deps, n)
        else:
            coinc = tuple(bool(band.band_member_get_coincident(d)) for d in range(n))
        lows, extents = _ranges(hyper, n)
        below = _below(band, n, program)
        mixed = _below(_interleaved(band), n, program)
        same = below.keys() == mixed.keys() and all(mixed[st].is_equal(m) for st, m in below.items())
        out.append(TileBand(tuple(names), hyper, coinc, extents, lows, inner=below,
                            interleaved=None if same else mixed))
    return out


def _below(band: isl.ScheduleNode, n: int, program: PolyProgram) -> dict[str, isl.Map]:
    """Statement -> its time stamp in the schedule tree below the first `n` members of `band`."""
    out = {}
    for m in iu.union_map_pieces(band.get_subtree_schedule_union_map()):
        st = iu.tuple_name(m)
        out[st] = iu.reread(m.project_out(isl.dim_type.out, 0, n).intersect_domain(program.statement(st).domain))
    return out


def _interleaved(band: isl.ScheduleNode) -> isl.ScheduleNode:
    """`band`'s subtree with every permutable band below it reordered: its members that no dependence
    crosses (coincident) innermost in it, so that a member carrying a recurrence is outer and the
    iterations next to each other are independent.  Reordering a permutable band is legal."""
    def reorder(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node.get_type() != isl.schedule_node_type.band or not node.band_get_permutable():
            return node
        k = node.band_n_member()
        coincident = [bool(node.band_member_get_coincident(d)) for d in range(k)]
        if all(coincident) or not any(coincident):
            return node
        order = [d for d in range(k) if not coincident[d]] + [d for d in range(k) if coincident[d]]
        mupa = node.band_get_partial_schedule()
        new = mupa
        for pos, d in enumerate(order):
            new = new.set_at(pos, mupa.get_at(d))
        node = node.delete().insert_partial_schedule(new).band_set_permutable(1)
        for pos, d in enumerate(order):
            node = node.band_member_set_coincident(pos, int(coincident[d]))
        return node

    if not band.n_children():
        return band
    return band.child(0).map_descendant_bottom_up(reorder).parent()


def _ranges(hyper: dict, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(smallest value, extent) of each hyperplane over the group."""
    lows, extents = [], []
    for d in range(n):
        lo = min(iu.constant_value(m.range().dim_min(d)) for m in hyper.values())
        hi = max(iu.constant_value(m.range().dim_max(d)) for m in hyper.values())
        lows.append(lo)
        extents.append(hi - lo + 1)
    return tuple(lows), tuple(extents)


def _point_order(band: TileBand, mode: str) -> tuple[tuple[str, ...], int]:
    """The point loops of a tile, outermost first, as expressions of the hyperplanes f1..fK, and where
    the scheduler's inner dimensions (loops below the band) go among them.

    `original`: the source order.  `inner`: the coincident hyperplanes (no dependence crosses them)
    innermost, after the inner dimensions too, so dependent iterations are a whole slice of the tile
    apart.  `wavefront`: f1 + ... + fK outermost; the points of one front are independent.
    `interleaved`: as `inner`, over the inner dimensions with their own coincident loops innermost
    (`TileBand.interleaved`)."""
    names = [f"f{d + 1}" for d in range(band.depth)]
    if mode == "original":
        return (), -1  # the original time stamp orders the points (Theorem 5.3 needs exactly that)
    if mode in ("inner", "interleaved") and any(band.coincident) and not all(band.coincident):
        outer = [x for d, x in enumerate(names) if not band.coincident[d]]
        return tuple(outer + [x for d, x in enumerate(names) if band.coincident[d]]), len(outer)
    if mode == "wavefront" and band.depth >= 2:
        return tuple([" + ".join(names)] + names), -1
    return tuple(names), -1


def slabs_independent(band: TileBand) -> bool:
    """Whether `parallel_parts` cuts the band along a coincident hyperplane (slabs run side by side)
    rather than a carried one (slabs form a pipeline)."""
    return any(band.coincident[k] for k in range(max(1, band.depth - 1)))


def slab_dim(band: TileBand) -> int:
    """The hyperplane along which `parallel_parts` cuts a tiled band's tiles into slabs first: the
    first coincident one among the outer ones, else the first."""
    return next((k for k in range(max(1, band.depth - 1)) if band.coincident[k]), 0)


def slab_dims(band: TileBand) -> tuple[int, ...]:
    """The hyperplanes `parallel_parts` may cut a band's tiles along: `slab_dim`, and the next
    coincident outer one when there is one (two-level cuts, `slab_cuts.slab_grid`; slabs along a
    carried hyperplane form a pipeline and are cut along it alone)."""
    d = slab_dim(band)
    if not band.coincident[d]:
        return (d,)
    return (d,) + tuple(k for k in range(d + 1, max(1, band.depth - 1)) if band.coincident[k])[:1]


def cut_dims(band: TileBand, parallel: int) -> tuple[int, ...]:
    """The hyperplanes `parallel_parts` cuts the band's tiles along into `parallel` parts: a reduced
    instance keeps their whole tile (`reduced.reduced_instance`), where the other ones are cut."""
    grid = _grid_of(band, parallel)
    return tuple(sorted({d for part in grid for d, _a, _b in part}))


def _grid_of(band: TileBand, parallel: int):
    work = band.full or band
    return slab_grid(work.hyperplanes, slab_dims(band)[:band.levels], band.lows, band.sizes, parallel)


def two_level_cuts(tiling: Tiling, parallel: int) -> bool:
    """Whether `parallel_parts` cuts some band of `tiling` along two hyperplanes into `parallel` parts."""
    return parallel > 1 and any(b.depth and len(cut_dims(b, parallel)) > 1 for b in tiling.bands)


def with_one_level(tiling: Tiling) -> Tiling:
    """The same tiling with its tiles cut along one hyperplane only: two levels share a band's work
    more evenly but cost processes, loads and channels, so the pipeline models both at full size."""
    return replace(tiling, bands=tuple(replace(b, levels=1) for b in tiling.bands))


def max_parts(band: TileBand) -> int:
    """The most non-empty parts a band's tiles can be cut into: its tiles' extent over the hyperplanes
    it may be cut along (`slab_dims`, up to its `levels`)."""
    return math.prod(band.sizes[d] for d in slab_dims(band)[:band.levels])


def parallel_parts(band: TileBand, statement: str, domain: isl.Set, parallel: int) -> list[tuple[int, isl.Set]]:
    """Sub-bands of a statement (section 5.2, "adding parallelism"): each tile is cut into `parallel`
    parts along the first coincident outer hyperplane (no dependence between slabs, they run fully
    in parallel), else the first one (slabs form a pipeline), at offsets that share the band's
    counted work evenly; or in two levels, along a second coincident one too, where a tile is too
    thin for one level to share its work (`slab_cuts.slab_grid`).  Returns the non-empty parts with
    their slab index: statements of one band share the slabs."""
    if parallel <= 1 or not band.depth:
        return [(0, domain)]
    grid = _grid_of(band, parallel)
    f = [f"f{k}" for k in range(band.depth)]
    out = []
    for part, ranges in enumerate(grid):
        cond = " and ".join(f"{a} <= {offset_in_tile(f, d, band.lows[d], band.sizes[d])} < {b}"
                            for d, a, b in ranges)
        slab = isl.Set(f"{{ [{', '.join(f)}] : {cond} }}")
        dom = band.hyperplanes[statement].intersect_range(slab).domain().intersect(domain)
        if not dom.is_empty():
            out.append((part, iu.reread(iu.coalesced(dom))))
    return out


def tiled_schedule(program: PolyProgram, bands: Sequence[TileBand]) -> isl.UnionMap:
    """The tiled time stamp of every statement (module docstring)."""
    kmax = max((b.depth for b in bands), default=0)
    pmax = max((len(b.point_order) for b in bands), default=0)
    imax = max((m.dim(isl.dim_type.out) for b in bands if b.point_order and b.inner for m in b.inner.values()),
               default=0)
    fis = any(b.fission for b in bands)
    out = isl.UnionMap.empty(program.schedule.get_space())
    for g, band in enumerate(bands):
        for pos, st in enumerate(band.statements):
            orig = program.statement_schedule(st)
            t = [f"t{d}" for d in range(orig.dim(isl.dim_type.out))]
            f = [f"f{d + 1}" for d in range(band.depth)]
            src = band.hyperplanes[st].flat_range_product(orig) if band.depth else orig
            inner: list[str] = []
            if band.point_order and band.inner and st in band.inner:
                inner = [f"u{d}" for d in range(band.inner[st].dim(isl.dim_type.out))]
                src = band.hyperplanes[st].flat_range_product(band.inner[st]).flat_range_product(orig)
            tiles = [f"floor(({f[d]} - ({band.lows[d]})) / {band.sizes[d]})" for d in range(band.depth)] + \
                ["0"] * (kmax - band.depth)
            points = [f"({e})" for e in band.point_order]
            at = len(points) if band.inner_at < 0 else band.inner_at
            body = points[:at] + inner + ["0"] * (imax - len(inner)) + points[at:]
            body += ["0"] * (pmax + imax - len(body))
            if fis:
                body = [str(pos) if band.fission else "0"] + body
            text = f"{{ [{', '.join(f + inner + t)}] -> [{', '.join([str(g)] + tiles + body + t)}] }}"
            out = out.union(isl.UnionMap.from_map(src.apply_range(isl.Map(text))))
    return iu.coalesced(out)


def conflicts(program: PolyProgram) -> isl.UnionMap:
    """Pairs of instances touching one element, at least one writing, in original order: the direct
    ones, of which every other such pair is a chain.  A read's last writer before it, a write's last
    writer before it, and a read's first writer after it: a read and a later write of one element
    are linked through the first write after the read, a write and a later access through the
    writes between them.  A schedule that orders these pairs orders all of them (the order is
    transitive), and a hyperplane along which none of them moves moves none, so the scheduler,
    the legality test and the shifts' refit give the answers of all pairs.  All pairs repeat each
    value's history at every later access: ADI's 170 pieces made isl's scheduler take 50 s, on 78
    it takes 10 s, and finds the same schedule.  The reads' last writers are the program's dataflow
    where it has one; the result is kept by the program (the tiling passes ask for it several times)."""
    return _CONFLICTS.answer(program, "conflicts", lambda: _direct_conflicts(program))


_CONFLICTS = iu.AnswersByObject(32)


def _direct_conflicts(program: PolyProgram) -> isl.UnionMap:
    sched = program.schedule
    writes = iu.union((isl.UnionMap.from_map(st.write.relation) for st in program.statements),
                      isl.UnionMap.empty(sched.get_space()))
    out, _ = iu.last_writer(writes, writes, sched, unsourced=False)
    if program.flow is not None:
        out = iu.union((isl.UnionMap.from_map(d.relation) for d in program.flow.dependences), out)
    for st in program.statements:
        for a in st.reads:  # per access: a lexmin over a statement's reads would keep one array's writer
            read = isl.UnionMap.from_map(a.relation)
            if program.flow is None:
                out = out.union(iu.last_writer(read, writes, sched, unsourced=False)[0])
            later = ordered_pairs(read.apply_range(writes.reverse()), sched, "lt")
            out = out.union(later.apply_range(sched).lexmin().apply_range(sched.reverse()))
    return out


def is_legal(program: PolyProgram, schedule: isl.UnionMap, deps: Optional[isl.UnionMap] = None) -> bool:
    deps = conflicts(program) if deps is None else deps
    return ordered_pairs(deps, schedule, "ge").is_empty()


POINT_MODES = ("original", "inner", "wavefront", "interleaved")


def _with_order(bands: Sequence[TileBand], mode: str) -> list[TileBand]:
    out = []
    for b in bands:
        if b.depth:
            order, at = _point_order(b, mode)
            b = replace(b, point_order=order, inner_at=at)
            if mode == "interleaved" and b.interleaved:
                b = replace(b, inner=b.interleaved)
        out.append(b)
    return out


def with_point_order(program: PolyProgram, tiling: Tiling, mode: str,
                     deps: Optional[isl.UnionMap] = None) -> Optional[Tiling]:
    """The same tiles with another point order, or None when it is not legal (never for a valid band)."""
    bands = _with_order(tiling.bands, mode)
    sched = tiled_schedule(program, bands)
    if not is_legal(program, sched, deps):
        return None
    return replace(tiling, bands=tuple(bands), schedule=sched, point_order=mode)


def with_fission(program: PolyProgram, tiling: Tiling, deps: Optional[isl.UnionMap] = None) -> Optional[Tiling]:
    """The same tiles and point order with the statements of each band one after another inside a tile
    (loop distribution inside the tile), or None when a dependence forbids it.  A process that runs
    several statements of a band (`partition.slab_groups`) then meets a value a whole tile slice after
    it was made, not one iteration after: mixed-width's saturation right after its convolution."""
    if not tiling.is_tiled or not any(len(b.statements) > 1 and b.depth for b in tiling.bands):
        return None
    bands = [replace(b, fission=True) if b.depth and len(b.statements) > 1 else b for b in tiling.bands]
    sched = tiled_schedule(program, bands)
    if not is_legal(program, sched, deps):
        return None
    return replace(tiling, bands=tuple(bands), schedule=sched)


def with_bands(program: PolyProgram, tiling: Tiling, bands: Sequence[TileBand],
               deps: Optional[isl.UnionMap] = None) -> Optional[Tiling]:
    """The tiling of `program` with other bands of the same statements and point order (other tile
    sizes, or hyperplanes restricted to a smaller domain), or None when it is not legal."""
    sched = tiled_schedule(program, bands)
    if not is_legal(program, sched, deps):
        return None
    first = next((b for b in bands if b.depth), None)
    return replace(tiling, sizes=first.sizes if first is not None else (), bands=tuple(bands), schedule=sched)


def point_order_variants(program: PolyProgram, tiling: Tiling) -> list[Tiling]:
    """Every legal, distinct point order of a tiling (original first): the pipeline keeps the one
    the cycle model of the finished network finds fastest (`hls/dpn/timing.py`)."""
    if not tiling.is_tiled:
        return [tiling]
    deps = conflicts(program)
    out, seen = [], set()
    for mode in POINT_MODES:
        t = tiling if mode == tiling.point_order else with_point_order(program, tiling, mode, deps)
        if t is not None and str(t.schedule) not in seen:
            seen.add(str(t.schedule))
            out.append(t)
    return out


def _finish(program: PolyProgram, bands: list[TileBand], point_order: str, reason: str,
            deps: isl.UnionMap, fusion: str = "separate", late: bool = False) -> Tiling:
    mode = "original" if point_order == "latency" else point_order
    bands = _levels_set(program, bands)
    kmax = max(b.depth for b in bands)
    first = next(b for b in bands if b.depth)
    base = Tiling(first.sizes, tuple(bands), isl.UnionMap.empty(program.schedule.get_space()), kmax, reason, mode,
                  fusion, late)
    out = with_point_order(program, base, mode, deps)
    return out if out is not None else no_tiling(program, "the scheduler's band did not give a legal tiling")


def _levels_set(program: PolyProgram, bands: list[TileBand]) -> list[TileBand]:
    """One level of parallel cuts for a band that exchanges values with another band: cut in rows
    only, each part of the reader takes whole rows from one part of the writer (2mm at P = 64, its two
    products in two bands: 6,687 modelled cycles so, 8,740 with two levels, on a corner that kept both
    hyperplanes whole and chose another tiling)."""
    linked = {k for pair in _band_flows(program, bands) for k in pair}
    return [replace(b, levels=1) if k in linked else b for k, b in enumerate(bands)]


def _band_flows(program: PolyProgram, bands: Sequence[TileBand]) -> set[tuple[Optional[int], Optional[int]]]:
    """(writer's band, reader's band) of every flow dependence between two bands (None: a statement
    in no band)."""
    band_of = {st: k for k, b in enumerate(bands) for st in b.statements}
    flow = program.flow.dependences if program.flow is not None else ()
    return {(band_of.get(d.source), band_of.get(d.sink)) for d in flow
            if band_of.get(d.source) != band_of.get(d.sink)}


def tile_program(program: PolyProgram, sizes: Sequence[int], *, point_order: str = "latency",
                 deps: Optional[isl.UnionMap] = None, fusion: str = "separate") -> Tiling:
    """Tile the outer `len(sizes)` hyperplanes of every group's band by the given sizes (the other
    hyperplanes of a band are not cut: one tile spans them); `fusion` as in `schedule_bands`."""
    if any(t < 1 for t in sizes):
        raise CompileError(program.loc, f"--tile: tile sizes must be positive, got {list(sizes)}")
    deps = conflicts(program) if deps is None else deps
    bands = schedule_bands(program, deps, fusion=fusion)
    depth = max((b.depth for b in bands), default=0)
    if len(sizes) > depth:
        raise CompileError(program.loc, f"--tile gives {len(sizes)} sizes but the deepest permutable band the "
                                        f"scheduler found has {depth} hyperplane(s); give at most {depth}")
    out = []
    for b in bands:
        k = min(len(sizes), b.depth)
        sz = tuple(sizes[:k]) + tuple(b.extents[k:])
        out.append(replace(b, sizes=sz))
    return _finish(program, out, point_order, "explicit tile sizes on the scheduler's permutable bands", deps, fusion)


def _footprint(program: PolyProgram, statements: Sequence[str]) -> int:
    """Distinct array elements the statements touch (what one band holding everything would keep)."""
    elems = 0
    for name, arr in program.arrays.items():
        acc = [a for s in statements for a in program.statement(s).accesses if a.array == name]
        if not acc:
            continue
        img = iu.union((isl.UnionSet.from_set(a.relation.intersect_domain(program.statement(a.statement).domain)
                                              .range()) for a in acc), isl.UnionSet.empty(arr.extent.get_space().params()))
        elems += sum(iu.card(x) for x in iu.union_set_pieces(iu.coalesced(img)))
    return elems


def auto_tiling(program: PolyProgram, *, local_words: int = DEFAULT_LOCAL_WORDS,
                point_order: str = "latency", fusion: str = "separate", sample_only: bool = False) -> Tiling:
    """Tile every group's permutable band with sizes whose band footprint fits `local_words`.

    A band is all tiles along the last hyperplane for fixed outer tile coordinates, so only the outer
    hyperplanes are cut to fit the budget (halving the widest first, not below `MIN_INNER_TRIP`); the
    last one keeps the whole extent.  When everything fits, one band holds the whole group: off-chip
    traffic is then compulsory, and the point order still covers operator latencies.  `late` of the
    result: isl's schedule ran past its limit (`schedule_bands`); `sample_only` as there."""
    deps = conflicts(program)
    late: list[bool] = []
    bands = schedule_bands(program, deps, fusion=fusion, late=late, sample_only=sample_only)
    if not any(b.depth for b in bands):
        return replace(no_tiling(program, "--tile auto: the scheduler found no permutable band"), late=bool(late))
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
        sizes = _balanced(b.extents, sizes)
        out.append(replace(b, sizes=tuple(sizes)))
        notes.append(f"footprint {total} words" + ("" if sizes == list(b.extents) else
                                                    f", {round(total * cut)} per band"))
    reason = (f"--tile auto: isl permutable bands{_FUSION_TEXT[fusion]}; bands fit {local_words} local words ({'; '.join(notes)}); "
              f"{point_order} point order")
    return _finish(program, out, point_order, reason, deps, fusion, bool(late))


#: how many tiles `streamed` cuts a feeding band's outer hyperplanes other than its rows into
STREAM_TILES = 10
#: how far past `local_words` a reading band's footprint may go before `streamed` cuts its rows: the
#: footprint counts every value the band reads as held, where a streamed reader holds the ones in
#: flight (2mm's second product: 9,200 words whole; in halves its parts, 14, became 10, 17,501 cycles)
STREAM_BUDGET = 2


def streamed(program: PolyProgram, tiling: Tiling, local_words: int = DEFAULT_LOCAL_WORDS,
             parallel: int = 1) -> Optional[Tiling]:
    """The tiling with its bands' tiles cut so that a band reading another band's values overlaps it.

    A value another band reads is final only once the writer's reduction along its last hyperplane is
    done, at the end of a tile; and a reader whose tiles are cut along its columns goes through the
    values it reads once per tile.  So, in the writer's tiles finish in a burst each, and the reader
    waits for the last one before its first tile ends: 2mm at `--parallel 16` (NI=40 NJ=50 NK=70 NL=80)
    ran its two products one after the other, 19,913 modelled cycles, 8.1x its one part.  Here a
    reading band's tiles are whole but along its rows (its slab hyperplane, halved while its footprint
    passes `STREAM_BUDGET` times `local_words`), and a band that only writes for others has the same
    rows and its other outer hyperplanes cut into `STREAM_TILES` tiles: its values become final a few
    columns at a time, in the order the reader takes them (13,232 cycles, 12.2x).  A column tile with the rows of one of
    `parallel` parts still holds `MIN_INNER_TRIP` points, so that a part's reduction does not wait on
    its adder (at P = 64, one row a part: columns of 5 modelled 6,863 cycles, of 8 4,736, against
    6,687 for the tiles `auto_tiling` gave).  None where no band reads another's values or nothing
    changes."""
    bands = list(tiling.bands)
    pairs = {(p, c) for p, c in _band_flows(program, bands) if p is not None and c is not None}
    readers = {c for _p, c in pairs if bands[c].depth}
    out = list(bands)
    rows: dict[int, int] = {}
    for c in sorted(readers):
        b = bands[c]
        d = slab_dim(b)
        sizes = list(b.extents)
        total = _footprint(program, b.statements)
        while total * sizes[d] > STREAM_BUDGET * local_words * b.extents[d] and sizes[d] > 1:
            sizes[d] = -(-sizes[d] // 2)
        out[c] = replace(b, sizes=tuple(_balanced(b.extents, sizes)))
        rows[c] = out[c].sizes[d]
    for k in sorted({p for p, _c in pairs} - readers):
        b = bands[k]
        if b.depth < 2:
            continue
        d = slab_dim(b)
        sizes = list(b.sizes)
        row = min((rows[c] for p, c in pairs if p == k and c in rows), default=sizes[d])
        sizes[d] = min(b.extents[d], row)
        trip = -(-MIN_INNER_TRIP // -(-sizes[d] // max(1, parallel)))  # columns a part's rows need
        for h in range(b.depth - 1):
            if h != d:
                sizes[h] = min(sizes[h], max(trip, -(-b.extents[h] // STREAM_TILES)))
        out[k] = replace(b, sizes=tuple(_balanced(b.extents, sizes)))
    if all(o.sizes == b.sizes for o, b in zip(out, bands)):
        return None
    first = next(b for b in out if b.depth)
    return with_point_order(program, replace(tiling, bands=tuple(out), sizes=first.sizes), tiling.point_order)


def _balanced(extents: Sequence[int], sizes: Sequence[int]) -> list[int]:
    """Tiles of each hyperplane made even (18 = 9 + 9 rather than 16 + 2)."""
    return [-(-e // -(-e // s)) for e, s in zip(extents, sizes)]


_FUSION_TEXT = {"separate": "", "fused": " fused over shared arrays",
                "aligned": " fused and aligned on shared reads", "nests": " one source loop nest after another"}


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
