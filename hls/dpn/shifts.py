"""A band's constant terms, fitted at full size to the linear parts found on a sample of the program.

The isl scheduler's cost grows with the domains' constants once its proximity spans statements
(2mm's aligned band: 0.4 s at 6k instances, 10 s at 28k, over 30 s at 400k).  What it finds does
not depend on them but for the constant terms of the hyperplanes: a fused band puts 2mm's second
product after the first (`S1 -> (i, j, 23 + k)` when NJ = 24), by a shift that grows with the sizes.
So `tiling.schedule_bands` runs the scheduler on a sample (`restrict.sampled`) and keeps its linear
parts, and this module gives each hyperplane the smallest constant terms that keep every dependence
between the band's statements at a nonnegative distance along it (the band stays permutable): one
system of difference constraints c_T - c_S >= w_ST per hyperplane, w_ST the largest decrease of the
linear parts along a dependence from S to T (an isl minimum over the dependence), solved by longest
paths.  A positive cycle (no shift makes the linear parts legal) or a linear part the sample gave
piecewise leaves no refit: the caller then schedules the whole program.  The scheduler's dimensions
below the band hold sizes too (a statement placed after another's loop, at that loop's last value):
`refit_inner` refits them the same way, lexicographically, on the dependences the band leaves tied.
"""

from __future__ import annotations

from typing import Mapping, Optional

import islpy as isl

from ..poly import isl_utils as iu

__all__ = ["extended", "linear_text", "refit_inner", "refit_shifts"]


def _one_piece(pw):
    """The one function of a piecewise (multi-)affine function whose pieces are all alike (a domain
    isl split in parts), else None."""
    pieces: list = []
    pw.foreach_piece(lambda _s, f: pieces.append(f))
    return pieces[0] if len({str(p) for p in pieces}) == 1 else None


def _affs(m: isl.Map) -> Optional[list[isl.Aff]]:
    """Each output of the function `m` as one affine function, or None when one is piecewise."""
    pma = isl.PwMultiAff.from_map(m)
    out = []
    for d in range(m.dim(isl.dim_type.out)):
        aff = _one_piece(pma.get_pw_aff(d))
        if aff is None:
            return None
        out.append(aff)
    return out


def _linear_parts(hyper: isl.Map) -> Optional[list[isl.Aff]]:
    """Each hyperplane of `hyper` as one affine function with constant term 0, or None when one is
    piecewise."""
    affs = _affs(hyper)
    return None if affs is None else [a.set_constant_val(0) for a in affs]


def linear_text(hyper: isl.Map) -> str:
    """The linear parts of `hyper`'s hyperplanes as text (the whole map's when one is piecewise): two
    bands whose hyperplanes differ only in constant terms order their tiles' points alike."""
    parts = _linear_parts(hyper)
    return str(hyper) if parts is None else "; ".join(str(a) for a in parts)


def extended(m: isl.Map, domain: isl.Set) -> Optional[isl.Map]:
    """The function `m` (found on a sample of `domain`) on all of `domain`, or None when it is
    piecewise there."""
    if m.dim(isl.dim_type.out) == 0:
        return iu.reread(isl.Map.from_domain_and_range(domain, isl.Set.universe(m.get_space().range())))
    ma = _one_piece(isl.PwMultiAff.from_map(m))
    return None if ma is None else iu.reread(isl.Map.from_multi_aff(ma).intersect_domain(domain))


def _longest_paths(nodes: list[str], edges: list[tuple[str, str, int]],
                   start: Optional[Mapping[str, int]] = None) -> Optional[dict[str, int]]:
    """The smallest c at or above `start` (default 0) with c[t] - c[s] >= w for every edge (s, t, w),
    or None when the edges hold a positive cycle."""
    c = {n: (start or {}).get(n, 0) for n in nodes}
    for _round in range(len(nodes) + 1):
        changed = False
        for s, t, w in edges:
            if c[s] + w > c[t]:
                c[t] = c[s] + w
                changed = True
        if not changed:
            return c
    return None


def refit_shifts(hyperplanes: Mapping[str, isl.Map], domains: Mapping[str, isl.Set],
                 deps: isl.UnionMap) -> Optional[dict[str, isl.Map]]:
    """Hyperplanes with the linear parts of `hyperplanes` (statement -> S[x] -> [f_1..f_K], found on
    a sample) and the smallest constant terms that keep every dependence of `deps` between these
    statements at a nonnegative distance along each, on the full `domains`; None when there are no
    such terms (module docstring)."""
    linear: dict[str, list[isl.Aff]] = {}
    for st, h in hyperplanes.items():
        parts = _linear_parts(h)
        if parts is None:
            return None
        linear[st] = parts
    depth = len(next(iter(linear.values()), []))
    pieces = [m for m in iu.union_map_pieces(deps)
              if m.get_tuple_name(isl.dim_type.in_) in linear and m.get_tuple_name(isl.dim_type.out) in linear]
    pairs = [(m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out), m) for m in pieces]
    shifts: dict[str, list[int]] = {st: [] for st in linear}
    for d in range(depth):
        c = _constants_along(linear, d, pairs)
        if c is None:
            return None
        for st in linear:
            shifts[st].append(c[st])
    return {st: _with_constants(hyperplanes[st], parts, shifts[st], domains[st]) for st, parts in linear.items()}


def _constants_along(linear: Mapping[str, list[isl.Aff]], d: int, pairs: list[tuple[str, str, isl.Map]],
                     start: Optional[Mapping[str, int]] = None) -> Optional[dict[str, int]]:
    """The smallest constant terms, at or above `start`, that keep every pair of the dependences
    `pairs` (source statement, target statement, relation) at a nonnegative distance along the linear
    parts' dimension `d` (`_longest_paths` on the largest decrease along each); None when none do."""
    edges = []
    for s, t, m in pairs:
        along = m.apply_domain(isl.Map.from_aff(linear[s][d])).apply_range(isl.Map.from_aff(linear[t][d]))
        least = iu.constant_value(along.deltas().dim_min(0).coalesce())
        if least is None:
            return None
        edges.append((s, t, -least))
    return _longest_paths(sorted(linear), edges, start)


def _with_constants(like: isl.Map, parts: list[isl.Aff], constants: list[int], domain: isl.Set) -> isl.Map:
    """The function with the linear `parts` and these constant terms, in the space of `like`, on `domain`."""
    affs = isl.AffList.alloc(like.get_ctx(), max(1, len(parts)))
    for aff, k in zip(parts, constants):
        affs = affs.add(aff.set_constant_val(k))
    m = isl.Map.from_multi_aff(isl.MultiAff.from_aff_list(like.get_space(), affs))
    return iu.reread(m.intersect_domain(domain))


def refit_inner(hyperplanes: Mapping[str, isl.Map], inner: Mapping[str, isl.Map],
                deps: isl.UnionMap) -> Optional[dict[str, isl.Map]]:
    """The schedule below a band (`inner`, statement -> S[x] -> [u_1..u_m], found on a sample and
    `extended` to the full domains) with constant terms that keep, at full size, every dependence of
    `deps` the band's `hyperplanes` (refit already) leave at distance zero lexicographically forward;
    None when a dimension has no such terms.  Pairs left at one stamp are ordered by the original
    schedule, which `tiling.tiled_schedule` appends.  The sample's constants hold the sizes where
    one statement runs after another's loop (band-trsv-minmax: `S5 -> [0, 12, 1, 1]` after `S4`'s
    `j` up to 12 at N = 12 is `[0, 287, 1, 1]` at N = 288), so dimension by dimension, outermost
    first, the dependences not yet ordered ask for the smallest constants at or above the sample's
    (which keep the order the scheduler chose between statements no dependence ties), as
    `refit_shifts` asks along a hyperplane; those then at a positive distance are ordered."""
    linear: dict[str, list[isl.Aff]] = {}
    start: list[dict[str, int]] = []
    for st, m in inner.items():
        parts = _linear_parts(m)
        constants = _constants(m)
        if parts is None or constants is None:
            return None
        linear[st] = parts
        for d, k in enumerate(constants):
            if d == len(start):
                start.append({})
            start[d][st] = k
    depth = {len(p) for p in linear.values()}
    if len(depth) > 1:
        return None
    depth_in = next(iter(depth), 0)
    open_pairs = []
    for m in iu.union_map_pieces(deps):
        s, t = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
        if s not in linear or t not in linear:
            continue
        tied = m.intersect(hyperplanes[s].apply_range(hyperplanes[t].reverse())) if s in hyperplanes else m
        if not tied.is_empty():
            open_pairs.append((s, t, tied))
    shifts: dict[str, list[int]] = {st: [] for st in linear}
    for d in range(depth_in):
        c = _constants_along(linear, d, open_pairs, start[d])
        if c is None:
            return None
        for st in linear:
            shifts[st].append(c[st])
        still = []
        for s, t, m in open_pairs:
            at_s = isl.Map.from_aff(linear[s][d].set_constant_val(c[s]))
            at_t = isl.Map.from_aff(linear[t][d].set_constant_val(c[t]))
            tied = m.intersect(at_s.apply_range(at_t.reverse()))
            if not tied.is_empty():
                still.append((s, t, tied))
        open_pairs = still
    return {st: _with_constants(inner[st], parts, shifts[st], inner[st].domain()) for st, parts in linear.items()}


def _constants(m: isl.Map) -> Optional[list[int]]:
    """The constant term of each output of the function `m`, or None when one is piecewise."""
    affs = _affs(m)
    return None if affs is None else [a.get_constant_val().to_python() for a in affs]
