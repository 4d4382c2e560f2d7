"""Monoparametric tiling (habilitation, section 2.2): tiles of size b*ratios with b a symbolic parameter.

A point i of a polyhedron is written i = b.D.i_b + i_l with 0 <= i_l < b.D (D = diag(ratios)), and every
structure parameter p is tiled the same way, p = b.p_b + p_l with 0 <= p_l < b.  The inverse tiling is
quadratic in (b, i_b), so it is not an isl object; the point of Theorems 2.8-2.10 is that the *image*
of a polyhedron, and the composition T' o f o T^-1 of an affine function, are nevertheless unions of
polyhedra / piecewise quasi-affine functions in (i_b, i_l) with b kept as an ordinary parameter.
That gives closed forms in b (tile shapes, per-tile volumes) instead of one answer per tile size.

Naming, so results compose and can be instantiated:
  * set dimension `i` becomes block index `i_b` and local index `i_l` (all block indices first);
  * parameter `N` becomes the parameters `N_b` and `N_l` (with 0 <= N_l < b in the result);
  * the tile size parameter is `b` (a parameter of that name in the input is rejected).
`instantiate(S, v)` fixes b = v and turns (N_b, N_l) back into N = v.N_b + N_l, after which the result
is comparable (`is_equal`) with the fixed-size tiling `fixed_tile_domain(D, v*ratios)` built with isl
floor divisions.

Closed forms: this islpy build has no barvinok (`HAVE_BARVINOK` checks for `isl.Set.card`), so counts
are turned into polynomials of b by exact interpolation over Fractions, then verified on more values
(`closed_form`, `card_in_b`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping, Optional, Sequence, Union

import islpy as isl

from ..poly import isl_utils as iu

CTX = isl.DEFAULT_CONTEXT
B = "b"
#: whether isl.Set.card (barvinok) exists in this islpy build; closed forms use interpolation either way
HAVE_BARVINOK = hasattr(isl.Set, "card")

_SET = isl.dim_type.set
_PAR = isl.dim_type.param
_DIV = isl.dim_type.div
_IN = isl.dim_type.in_
_OUT = isl.dim_type.out

Lin = dict  # linear form: variable name -> int coefficient, "" -> constant


# ----------------------------------------------------------------------------------------------
# small helpers


def _k_range(a_lo: int, c_lo: int, a_hi: int, c_hi: int, s: int) -> tuple[int, int]:
    """Bounds, valid for every b >= 1, of k = floor(L / (b.s)) when b.a_lo + c_lo <= L <= b.a_hi + c_hi.

    (b.a + c) / (b.s) = a/s + c/(b.s): for c >= 0 it lies in [a/s, (a + c)/s], for c < 0 in
    [(a + c)/s, a/s).  Loose bounds are harmless: the extra pieces are empty."""
    lo = a_lo // s if c_lo >= 0 else (a_lo + c_lo) // s
    hi = (a_hi + c_hi) // s if c_hi >= 0 else (a_hi - 1) // s
    return lo, hi


def _local_range(coefs: Mapping[str, int], sizes: Mapping[str, int], const: int) -> tuple[int, int, int, int]:
    """(A_lo, C_lo, A_hi, C_hi) with b.A_lo + C_lo <= sum coefs[v].v + const <= b.A_hi + C_hi
    when every local variable v ranges over [0, b.sizes[v] - 1]."""
    a_lo = a_hi = 0
    c_lo = c_hi = const
    for v, a in coefs.items():
        if a < 0:
            a_lo += a * sizes[v]
            c_lo -= a
        elif a > 0:
            a_hi += a * sizes[v]
            c_hi -= a
    return a_lo, c_lo, a_hi, c_hi


def _dim_names(obj, dt, prefix: str) -> list[str]:
    sp = obj.get_space()
    n = sp.dim(dt)
    names = [sp.get_dim_name(dt, j) for j in range(n)]
    if any(not x for x in names) or len(set(names)) != n:
        names = [f"{prefix}{j}" for j in range(n)]
    return names


def _check_ratios(ratios: Sequence[int], n: int, what: str) -> tuple[int, ...]:
    r = tuple(int(x) for x in ratios)
    if len(r) != n:
        raise ValueError(f"{what}: {len(r)} ratios for {n} dimensions")
    if any(x < 1 for x in r):
        raise ValueError(f"{what}: ratios must be positive integers, got {list(r)}")
    return r


def _param_names(obj) -> list[str]:
    sp = obj.get_space()
    names = [sp.get_dim_name(_PAR, j) for j in range(sp.dim(_PAR))]
    if B in names:
        raise ValueError("the input already has a parameter named `b`, the tile size parameter")
    return names


def _tiled_param_names(params: Sequence[str]) -> list[str]:
    return [f"{p}_b" for p in params] + [f"{p}_l" for p in params] + [B]


class _Builder:
    """Affine constraints over named set dimensions and parameters, built with the isl Constraint API."""

    def __init__(self, set_names: Sequence[str], param_names: Sequence[str]):
        self.space = isl.Space.create_from_names(CTX, set=list(set_names), params=list(param_names))
        self.ls = isl.LocalSpace.from_space(self.space)
        self.pos = {n: (_SET, j) for j, n in enumerate(set_names)}
        self.pos.update({n: (_PAR, j) for j, n in enumerate(param_names)})

    def _constraint(self, lin: Lin, eq: bool) -> isl.Constraint:
        c = isl.Constraint.equality_alloc(self.ls) if eq else isl.Constraint.inequality_alloc(self.ls)
        for v, a in lin.items():
            if not a:
                continue
            if v == "":
                c = c.set_constant_val(int(a))
            else:
                dt, p = self.pos[v]
                c = c.set_coefficient_val(dt, p, int(a))
        return c

    def basic_set(self, eqs: Sequence[Lin] = (), ineqs: Sequence[Lin] = ()) -> isl.BasicSet:
        bs = isl.BasicSet.universe(self.space)
        for e in eqs:
            bs = bs.add_constraint(self._constraint(e, True))
        for e in ineqs:
            bs = bs.add_constraint(self._constraint(e, False))
        return bs

    def union(self, parts: Sequence[isl.BasicSet]) -> isl.Set:
        acc = isl.Set.empty(self.space)
        for p in parts:
            acc = acc.union(isl.Set.from_basic_set(p))
        return acc


def _add(*forms: Lin, scale: Sequence[int] = ()) -> Lin:
    out: Lin = {}
    for j, f in enumerate(forms):
        s = scale[j] if j < len(scale) else 1
        for v, a in f.items():
            out[v] = out.get(v, 0) + s * a
    return {v: a for v, a in out.items() if a}


def _box(names_l: Sequence[str], sizes: Sequence[int]) -> list[Lin]:
    """0 <= v <= b.size - 1 for every local variable."""
    out: list[Lin] = []
    for v, s in zip(names_l, sizes):
        out.append({v: 1})
        out.append({B: s, v: -1, "": -1})
    return out


def _split_rows(bs: isl.BasicSet) -> tuple[list[tuple[list[int], list[int], list[int], int, bool]], int]:
    """Constraints of a basic set as (set coefs, div coefs, param coefs, constant, is_equality).

    Known divisions also contribute their defining inequalities d.e <= expr <= d.e + d - 1, so that
    treating every div as a plain existential variable describes the same set."""
    n, m, d = bs.dim(_SET), bs.dim(_PAR), bs.dim(_DIV)
    rows = []

    def ival(v: isl.Val) -> int:
        if not v.is_int():
            raise ValueError(f"non-integral coefficient {v} in {bs}")
        return int(v.to_python())

    for c in bs.get_constraints():
        rows.append(([ival(c.get_coefficient_val(_SET, j)) for j in range(n)],
                     [ival(c.get_coefficient_val(_DIV, j)) for j in range(d)],
                     [ival(c.get_coefficient_val(_PAR, j)) for j in range(m)],
                     ival(c.get_constant_val()), c.is_equality()))
    ls = bs.get_local_space()
    for k in range(d):
        aff = ls.get_div(k)
        if aff.is_nan():
            continue
        den = aff.get_denominator_val()
        dn = int(den.to_python())

        def scaled(v: isl.Val) -> int:
            return ival(v.mul(den))

        xs = [scaled(aff.get_coefficient_val(_IN, j)) for j in range(n)]
        ds = [scaled(aff.get_coefficient_val(_DIV, j)) for j in range(d)]
        ps = [scaled(aff.get_coefficient_val(_PAR, j)) for j in range(m)]
        c0 = scaled(aff.get_constant_val())
        lo = list(ds)
        lo[k] -= dn  # expr - d.e >= 0
        rows.append((xs, lo, ps, c0, False))
        hi = [-x for x in ds]
        hi[k] += dn  # d.e + d - 1 - expr >= 0
        rows.append(([-x for x in xs], hi, [-x for x in ps], dn - 1 - c0, False))
    return rows, d


def _tile_rows(rows, ratios: Sequence[int], n_params: int) -> isl.Set:
    """Theorem 2.8 on one convex polyhedron given by constraint rows over variables x (ratios) and
    parameters p (ratio 1).  Result over set dims [x0b.., x0l..], params [p0b.., p0l.., b]."""
    nv = len(ratios)
    xb = [f"x{j}b" for j in range(nv)]
    xl = [f"x{j}l" for j in range(nv)]
    pb = [f"p{j}b" for j in range(n_params)]
    pl = [f"p{j}l" for j in range(n_params)]
    bld = _Builder(xb + xl, pb + pl + [B])
    sizes = dict(zip(xl, ratios))
    sizes.update({v: 1 for v in pl})
    box = _box(xl, ratios) + _box(pl, [1] * n_params)
    acc = isl.Set.from_basic_set(bld.basic_set(ineqs=box))
    unions = []
    for xs, ps, q, eq in rows:
        # Q.i + Q^p.p + q = b.(Q.D.i_b + Q^p.p_b) + (Q.i_l + Q^p.p_l + q) = b.E + L
        e_form = _add({xb[j]: xs[j] * ratios[j] for j in range(nv)}, {pb[j]: ps[j] for j in range(n_params)})
        l_coefs = {xl[j]: xs[j] for j in range(nv) if xs[j]}
        l_coefs.update({pl[j]: ps[j] for j in range(n_params) if ps[j]})
        l_form = _add(l_coefs, {"": q})
        kmin, kmax = _k_range(*_local_range(l_coefs, sizes, q), 1)
        pieces = []
        if eq:  # b.E + L = 0  <=>  L = b.k and E + k = 0 for the one k = L / b
            for k in range(kmin, kmax + 1):
                pieces.append(bld.basic_set(eqs=[_add(e_form, {"": k}), _add(l_form, {B: -k})], ineqs=box))
        else:  # b.E + L >= 0  <=>  E + floor(L/b) >= 0: a ">= 0" piece for kmin, "= 0" pieces above it
            pieces.append(bld.basic_set(ineqs=box + [_add(e_form, {"": kmin})]))
            for k in range(kmin + 1, kmax + 1):
                pieces.append(bld.basic_set(eqs=[_add(e_form, {"": k})], ineqs=box + [_add(l_form, {B: -k})]))
        unions.append(bld.union(pieces))
    for u in sorted(unions, key=lambda s: s.n_basic_set()):
        acc = acc.intersect(u)
        if acc.is_empty():
            break
    return acc


def _finish_set(s: isl.Set, tuple_name: Optional[str], set_names: Sequence[str], params: Sequence[str]) -> isl.Set:
    n = len(set_names)
    for j, v in enumerate([f"{x}_b" for x in set_names] + [f"{x}_l" for x in set_names]):
        s = s.set_dim_name(_SET, j, v)
    for j, v in enumerate(_tiled_param_names(params)):
        s = s.set_dim_name(_PAR, j, v)
    if tuple_name:
        s = s.set_tuple_name(tuple_name)
    assert s.dim(_SET) == 2 * n
    return s


# ----------------------------------------------------------------------------------------------
# Theorem 2.8: tiled domains


def tile_domain(D: isl.Set, ratios: Sequence[int], *, coalesce: bool = True) -> isl.Set:
    """The monoparametric tiling {[i_b, i_l] : b.D.i_b + i_l in D, 0 <= i_l < b.D} with b a parameter.

    Built by Theorem 2.8, one convex part of D at a time: every constraint Q.i + Q^p.p + q >= 0 is
    rewritten E + floor(L/b) >= 0 with E = Q.D.i_b + Q^p.p_b and L = Q.i_l + Q^p.p_l + q; the floor
    takes finitely many values k in [kmin, kmax] (L is bounded by the local box), hence the disjoint
    union {E + kmin >= 0} U {E + k = 0, b.k <= L : kmin < k <= kmax}; the constraints are intersected.
    Existential variables (isl divs) are tiled like set dimensions (ratio 1) and projected out, so
    any Presburger set without parameter `b` is accepted.  All constraints of the result are affine
    in (i_b, i_l, p_b, p_l, b): no quasi-affine division by b appears.

    `coalesce` merges the disjoint pieces (one per combination of k's) into fewer polyhedra; it is
    most of the cost, so callers that only test or count can turn it off."""
    n = D.dim(_SET)
    ratios = _check_ratios(ratios, n, "tile_domain")
    params = _param_names(D)
    set_names = _dim_names(D, _SET, "i")
    tuple_name = D.get_tuple_name() if D.has_tuple_name() else None
    m = len(params)
    result = None
    for bs in D.get_basic_sets():
        rows, d = _split_rows(bs)
        flat = [(xs + ds, ps, q, eq) for xs, ds, ps, q, eq in rows]
        part = _tile_rows(flat, list(ratios) + [1] * d, m)
        if d:
            part = part.project_out(_SET, n + d + n, d).project_out(_SET, n, d)
        result = part if result is None else result.union(part)
    if result is None:
        bld = _Builder([f"x{j}b" for j in range(n)] + [f"x{j}l" for j in range(n)],
                       [f"p{j}b" for j in range(m)] + [f"p{j}l" for j in range(m)] + [B])
        result = isl.Set.empty(bld.space)
    return _finish_set(iu.coalesced(result) if coalesce else result, tuple_name, set_names, params)


# ----------------------------------------------------------------------------------------------
# Theorems 2.9 / 2.10: tiled affine functions


def _flat_to_map(s: isl.Set, n_in: int) -> isl.Map:
    """A set over [in dims, out dims] as the map in -> out."""
    return isl.Map.from_range(s).move_dims(_IN, 0, _OUT, 0, n_in)


def _aff_rows(ma: isl.MultiAff) -> Optional[list[tuple[list[int], list[int], int]]]:
    """(input coefs, param coefs, constant) of each output of an integral affine function, or None
    if some output is quasi-affine (division or rational coefficient)."""
    rows = []
    n, m = ma.dim(_IN), ma.dim(_PAR)
    for o in range(ma.dim(_OUT)):
        aff = ma.get_at(o)
        if aff.dim(_DIV) or not aff.get_denominator_val().is_one():
            return None
        rows.append(([int(aff.get_coefficient_val(_IN, j).to_python()) for j in range(n)],
                     [int(aff.get_coefficient_val(_PAR, j).to_python()) for j in range(m)],
                     int(aff.get_constant_val().to_python())))
    return rows


def _tile_multi_aff(rows, n: int, ratios_in: Sequence[int], ratios_out: Sequence[int], n_params: int) -> isl.Set:
    """Theorem 2.9 (integral D'^-1.Q.D, D'^-1.Q^p) and 2.10 (otherwise) for an integral affine function.

    Output j: y = b.E + L with E = Q.D.i_b + Q^p.p_b and L = Q.i_l + Q^p.p_l + q.  With s = D'_jj,
    write E = s.e + m (0 <= m < s; m = 0 only when s divides every coefficient of E, the integral case
    of Theorem 2.9, where e = E/s needs no division) and k = floor((b.m + L)/(b.s)), bounded; the
    branch for (m, k) is  y_b = e + k,  y_l = L + b.m - b.s.k  if  b.s.k <= b.m + L < b.s.(k+1).
    Result over [x_b, x_l, y_b, y_l] (existential e's projected out)."""
    p = len(rows)
    xb = [f"x{j}b" for j in range(n)]
    xl = [f"x{j}l" for j in range(n)]
    yb = [f"y{j}b" for j in range(p)]
    yl = [f"y{j}l" for j in range(p)]
    ex = [f"e{j}" for j in range(p)]
    pb = [f"p{j}b" for j in range(n_params)]
    pl = [f"p{j}l" for j in range(n_params)]
    bld = _Builder(xb + xl + yb + yl + ex, pb + pl + [B])
    sizes = dict(zip(xl, ratios_in))
    sizes.update({v: 1 for v in pl})
    box = _box(xl, ratios_in) + _box(pl, [1] * n_params)
    acc = isl.Set.from_basic_set(bld.basic_set(ineqs=box))
    for j, (xs, ps, q) in enumerate(rows):
        s = ratios_out[j]
        e_form = _add({xb[i]: xs[i] * ratios_in[i] for i in range(n)}, {pb[i]: ps[i] for i in range(n_params)})
        l_coefs = {xl[i]: xs[i] for i in range(n) if xs[i]}
        l_coefs.update({pl[i]: ps[i] for i in range(n_params) if ps[i]})
        l_form = _add(l_coefs, {"": q})
        a_lo, c_lo, a_hi, c_hi = _local_range(l_coefs, sizes, q)
        integral = all(a % s == 0 for a in e_form.values())
        pieces = []
        for m in ([0] if integral else range(s)):
            kmin, kmax = _k_range(a_lo + m, c_lo, a_hi + m, c_hi, s)
            if integral:  # e = E / s, exactly
                base = [{ex[j]: -1, **{v: a // s for v, a in e_form.items()}}]
            else:  # E = s.e + m: the modulo condition of Theorem 2.10
                base = [_add(e_form, {ex[j]: -s, "": -m})]
            num = _add(l_form, {B: m})  # b.m + L
            for k in range(kmin, kmax + 1):
                eqs = base + [{yb[j]: 1, ex[j]: -1, "": -k}, _add({yl[j]: 1}, num, {B: s * k}, scale=[1, -1, 1])]
                ineqs = box + [_add(num, {B: -s * k}), _add({B: s * k + s, "": -1}, num, scale=[1, -1])]
                pieces.append(bld.basic_set(eqs=eqs, ineqs=ineqs))
        acc = acc.intersect(bld.union(pieces))
    return acc.project_out(_SET, 2 * n + 2 * p, p)


def _finish_map(s: Union[isl.Set, isl.Map], n: int, p: int, in_names, out_names, in_tuple, out_tuple,
                params) -> isl.Map:
    """Flat tiled set over [x_b, x_l, y_b, y_l] (or a map already split so) -> named map
    (x_b, x_l) -> (y_b, y_l)."""
    mp = _flat_to_map(s, 2 * n) if isinstance(s, isl.Set) else s
    for j, v in enumerate([f"{x}_b" for x in in_names] + [f"{x}_l" for x in in_names]):
        mp = mp.set_dim_name(_IN, j, v)
    for j, v in enumerate([f"{x}_b" for x in out_names] + [f"{x}_l" for x in out_names]):
        mp = mp.set_dim_name(_OUT, j, v)
    for j, v in enumerate(_tiled_param_names(params)):
        mp = mp.set_dim_name(_PAR, j, v)
    if in_tuple:
        mp = mp.set_tuple_name(_IN, in_tuple)
    if out_tuple:
        mp = mp.set_tuple_name(_OUT, out_tuple)
    return mp


def _map_names(space_obj) -> tuple[list[str], list[str], Optional[str], Optional[str]]:
    in_names = _dim_names(space_obj, _IN, "i")
    out_names = _dim_names(space_obj, _OUT, "o")
    if set(in_names) & set(out_names):
        in_names = [f"i{j}" for j in range(len(in_names))]
        out_names = [f"o{j}" for j in range(len(out_names))]
    sp = space_obj.get_space()
    it = sp.get_tuple_name(_IN) if sp.has_tuple_name(_IN) else None
    ot = sp.get_tuple_name(_OUT) if sp.has_tuple_name(_OUT) else None
    return in_names, out_names, it, ot


def tile_relation(R: isl.Map, ratios_in: Sequence[int], ratios_out: Sequence[int], *,
                  coalesce: bool = False) -> isl.Map:
    """Any relation tiled on both sides: {(x_b, x_l) -> (y_b, y_l) : (b.D.x_b + x_l, b.D'.y_b + y_l) in R}.

    This is Theorem 2.8 applied to the graph of R (a Presburger set), rearranged as a map: it needs no
    functional or integrality assumption, so it serves for access relations and as an independent
    construction to cross-check `tile_affine_function`.  The branches of a function rarely merge,
    so `coalesce` is off by default (it costs seconds on hundreds of branches)."""
    n, p = R.dim(_IN), R.dim(_OUT)
    ratios_in = _check_ratios(ratios_in, n, "tile_relation (input)")
    ratios_out = _check_ratios(ratios_out, p, "tile_relation (output)")
    params = _param_names(R)
    in_names, out_names, it, ot = _map_names(R)
    graph = R.wrap().flatten()
    for j in range(n + p):
        graph = graph.set_dim_name(_SET, j, f"v{j}")
    t = tile_domain(graph.reset_tuple_id() if graph.has_tuple_name() else graph, list(ratios_in) + list(ratios_out),
                    coalesce=coalesce)
    # t over [x_b (n), y_b (p), x_l (n), y_l (p)]: x_b, then x_l, to the input side
    mp = isl.Map.from_range(t).move_dims(_IN, 0, _OUT, 0, n).move_dims(_IN, n, _OUT, p, n)
    return _finish_map(mp, n, p, in_names, out_names, it, ot, params)


def tile_affine_function(f: Union[isl.MultiAff, isl.PwMultiAff, isl.Map], ratios_in: Sequence[int],
                         ratios_out: Sequence[int], *, coalesce: bool = False) -> isl.Map:
    """T'_{b,D'} o f o T_{b,D}^-1 as a map (i_b, i_l) -> (j_b, j_l) with b a parameter.

    Integral affine pieces follow the constructive proof of Theorem 2.9 (piecewise affine when
    D'^-1.Q.D and D'^-1.Q^p are integral) or 2.10 (modulo conditions in the branches otherwise);
    each piece is restricted to the tiled piece domain (Theorem 2.8).  Quasi-affine pieces and
    non-functional maps go through `tile_relation`.  `isl.PwMultiAff.from_map(result)` lists the
    branches explicitly.  The branches are disjoint already; `coalesce` merges what it can (slow
    when there are hundreds of branches)."""
    if isinstance(f, isl.MultiAff):
        f = isl.PwMultiAff.from_multi_aff(f)
    if isinstance(f, isl.Map):
        if not f.is_single_valued():
            return tile_relation(f, ratios_in, ratios_out, coalesce=coalesce)
        f = isl.PwMultiAff.from_map(f)
    n, p = f.dim(_IN), f.dim(_OUT)
    ratios_in = _check_ratios(ratios_in, n, "tile_affine_function (input)")
    ratios_out = _check_ratios(ratios_out, p, "tile_affine_function (output)")
    params = _param_names(f)
    in_names, out_names, it, ot = _map_names(f)
    pieces: list[tuple[isl.Set, isl.MultiAff]] = []
    f.foreach_piece(lambda dom, ma: pieces.append((dom, ma)))
    result = None
    for dom, ma in pieces:
        rows = _aff_rows(ma)
        if rows is None:
            part = tile_relation(isl.Map.from_multi_aff(ma).intersect_domain(dom), ratios_in, ratios_out,
                                 coalesce=coalesce)
        else:
            flat = _tile_multi_aff(rows, n, ratios_in, ratios_out, len(params))
            part = _finish_map(flat, n, p, in_names, out_names, it, ot, params)
            tdom = tile_domain(dom.reset_tuple_id() if dom.has_tuple_name() else dom, ratios_in)
            part = part.intersect_domain(_rename(tdom, [f"{x}_b" for x in in_names] + [f"{x}_l" for x in in_names], it))
        result = part if result is None else result.union(part)
    if result is None:
        return tile_relation(isl.Map.empty(f.get_space()), ratios_in, ratios_out)
    return iu.coalesced(result) if coalesce else result


def _rename(s: isl.Set, names: Sequence[str], tuple_name: Optional[str]) -> isl.Set:
    """`s` with the given set dimension names and tuple name (so it lines up with a map's domain)."""
    for j, v in enumerate(names):
        s = s.set_dim_name(_SET, j, v)
    return s.set_tuple_name(tuple_name) if tuple_name else s


def is_piecewise_affine_tiling(f: isl.MultiAff, ratios_in: Sequence[int], ratios_out: Sequence[int]) -> bool:
    """The condition of Theorem 2.9: D'^-1.Q.D and D'^-1.Q^p integral (no modulo conditions)."""
    rows = _aff_rows(f)
    if rows is None:
        return False
    return all(all(a * ratios_in[i] % ratios_out[j] == 0 for i, a in enumerate(xs))
               and all(a % ratios_out[j] == 0 for a in ps) for j, (xs, ps, _q) in enumerate(rows))


# ----------------------------------------------------------------------------------------------
# instantiation and fixed-size tiling


def fix_b(obj, value: int):
    """`obj` (isl Set or Map with parameter b) with b = value, the parameter b removed."""
    if value < 1:
        raise ValueError("b must be >= 1")
    pos = obj.find_dim_by_name(_PAR, B)
    if pos < 0:
        raise ValueError("no parameter named b")
    ctx = isl.Set.read_from_str(CTX, f"[{B}] -> {{ : {B} = {int(value)} }}")
    obj = obj.intersect_params(ctx)
    return obj.project_out(_PAR, obj.find_dim_by_name(_PAR, B), 1)


def tiled_params(obj) -> list[str]:
    """Original parameter names N whose tiled pair N_b, N_l is a parameter of `obj`."""
    names = [obj.get_dim_name(_PAR, j) for j in range(obj.dim(_PAR))]
    return [n[:-2] for n in names if n.endswith("_b") and n[:-2] + "_l" in names]


def instantiate(obj, value: int, params: Optional[Mapping[str, int]] = None,
                tiled: Optional[Sequence[str]] = None):
    """The monoparametric result `obj` at b = value, in terms of the original parameters.

    Every tiled pair (N_b, N_l) becomes N = value.N_b + N_l (unique since 0 <= N_l < b is part of
    the tiled objects), so the result lives in the same space as the fixed-size tiling and can be
    compared with `is_equal`.  `params` then fixes original parameters; `tiled` overrides the pair
    detection by name."""
    obj = fix_b(obj, value)
    for p in (tiled_params(obj) if tiled is None else tiled):
        obj = obj.add_dims(_PAR, 1)
        obj = obj.set_dim_name(_PAR, obj.dim(_PAR) - 1, p)
        obj = obj.intersect_params(isl.Set.read_from_str(CTX, f"[{p}, {p}_b, {p}_l] -> {{ : {p} = {int(value)}*{p}_b + {p}_l }}"))
        for q in (f"{p}_b", f"{p}_l"):
            obj = obj.project_out(_PAR, obj.find_dim_by_name(_PAR, q), 1)
    if params:
        text = ", ".join(params)
        obj = obj.intersect_params(isl.Set.read_from_str(
            CTX, f"[{text}] -> {{ : " + " and ".join(f"{k} = {int(v)}" for k, v in params.items()) + " }"))
    return iu.coalesced(obj)


def _tiling_map(names: Sequence[str], sizes: Sequence[int], tuple_name: Optional[str]) -> isl.Map:
    """{[i] -> [i_b, i_l] : i_b = floor(i / size), i_l = i - size.i_b} with isl floor divisions."""
    xs = [f"x{j}" for j in range(len(sizes))]
    outs = [f"x{j}b" for j in range(len(sizes))] + [f"x{j}l" for j in range(len(sizes))]
    cons = [f"x{j}b = floor(x{j} / {s}) and x{j}l = x{j} - {s}*x{j}b" for j, s in enumerate(sizes)]
    m = isl.Map.read_from_str(CTX, f"{{ [{', '.join(xs)}] -> [{', '.join(outs)}] : {' and '.join(cons) or 'true'} }}")
    for j, v in enumerate(names):
        m = m.set_dim_name(_IN, j, v)
    for j, v in enumerate([f"{x}_b" for x in names] + [f"{x}_l" for x in names]):
        m = m.set_dim_name(_OUT, j, v)
    if tuple_name:
        m = m.set_tuple_name(_IN, tuple_name).set_tuple_name(_OUT, tuple_name)
    return m


def _check_sizes(sizes: Sequence[int], n: int) -> list[int]:
    s = [int(x) for x in sizes]
    if len(s) != n or any(x < 1 for x in s):
        raise ValueError(f"need {n} positive tile sizes, got {list(sizes)}")
    return s


def fixed_tile_domain(D: isl.Set, sizes: Sequence[int]) -> isl.Set:
    """Fixed-size tiling {[i_b, i_l] : exists i in D : i_b = floor(i/size), i_l = i - size.i_b}.

    The ordinary isl construction (sizes are constants), used as the reference the monoparametric
    result must equal once b is fixed."""
    sizes = _check_sizes(sizes, D.dim(_SET))
    names = _dim_names(D, _SET, "i")
    tn = D.get_tuple_name() if D.has_tuple_name() else None
    return iu.coalesced(D.apply(_tiling_map(names, sizes, tn)))


def fixed_tile_map(f: Union[isl.MultiAff, isl.PwMultiAff, isl.Map], sizes_in: Sequence[int],
                   sizes_out: Sequence[int]) -> isl.Map:
    """T'_{D'} o f o T_D^-1 for constant tile sizes, with isl floor divisions (the reference)."""
    if isinstance(f, isl.MultiAff):
        f = isl.Map.from_multi_aff(f)
    elif isinstance(f, isl.PwMultiAff):
        f = isl.Map.from_pw_multi_aff(f)
    in_names, out_names, it, ot = _map_names(f)
    t_in = _tiling_map(in_names, _check_sizes(sizes_in, f.dim(_IN)), it)
    t_out = _tiling_map(out_names, _check_sizes(sizes_out, f.dim(_OUT)), ot)
    return iu.coalesced(t_in.reverse().apply_range(f).apply_range(t_out))


# ----------------------------------------------------------------------------------------------
# per-tile sets and closed forms in b


def per_tile(S: Union[isl.Set, isl.Map], tile: Sequence[int]) -> Union[isl.Set, isl.Map]:
    """The part of a tiled set (or the domain side of a tiled map) in tile `tile` (block indices fixed)."""
    dt = _SET if isinstance(S, isl.Set) else _IN
    n = S.dim(dt) // 2
    if len(tile) != n:
        raise ValueError(f"tile has {len(tile)} coordinates, the tiled space {n} block indices")
    for j, v in enumerate(tile):
        S = S.fix_val(dt, j, int(v))
    return S


def tile_footprint(D: isl.Set, access: Union[isl.MultiAff, isl.Map], ratios: Sequence[int],
                   ratios_array: Sequence[int], tile: Sequence[int]) -> isl.Set:
    """Array elements (tiled coordinates) touched by tile `tile` of D through `access`: the
    LOAD(T)/STORE(T) set of a tile band, parametric in b."""
    tmap = tile_affine_function(access, ratios, ratios_array)
    tdom = tile_domain(D, ratios)
    return per_tile(tdom, tile).apply(_align_dom(tmap, tdom))


def _align_dom(m: isl.Map, dom: isl.Set) -> isl.Map:
    for j in range(dom.dim(_SET)):
        m = m.set_dim_name(_IN, j, dom.get_dim_name(_SET, j))
    return m.set_tuple_name(_IN, dom.get_tuple_name()) if dom.has_tuple_name() else m.reset_tuple_id(_IN)


@dataclass(frozen=True)
class Polynomial:
    """An exact polynomial in one variable (coefficients lowest degree first, as Fractions)."""

    coeffs: tuple[Fraction, ...]
    var: str = B

    def __post_init__(self) -> None:
        c = [Fraction(x) for x in self.coeffs]
        while c and c[-1] == 0:
            c.pop()
        object.__setattr__(self, "coeffs", tuple(c))

    @property
    def degree(self) -> int:
        return len(self.coeffs) - 1  # -1 for the zero polynomial

    def __call__(self, x: Union[int, Fraction]) -> Fraction:
        acc = Fraction(0)
        for c in reversed(self.coeffs):
            acc = acc * x + c
        return acc

    def __str__(self) -> str:
        if not self.coeffs:
            return "0"
        terms = []
        for d in range(len(self.coeffs) - 1, -1, -1):
            c = self.coeffs[d]
            if c == 0:
                continue
            mono = "" if d == 0 else (self.var if d == 1 else f"{self.var}^{d}")
            mag = abs(c)
            if not mono:
                body = str(mag)
            elif mag == 1:
                body = mono
            elif mag.denominator == 1:
                body = f"{mag}*{mono}"
            else:
                body = f"{mag.numerator}*{mono}/{mag.denominator}" if mag.numerator != 1 else f"{mono}/{mag.denominator}"
            sign = "-" if c < 0 else "+"
            terms.append((sign, body))
        first_sign, first = terms[0]
        out = ("-" if first_sign == "-" else "") + first
        for sign, body in terms[1:]:
            out += f" {sign} {body}"
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Polynomial):
            return self.coeffs == other.coeffs
        if isinstance(other, (int, Fraction)):
            return self.coeffs == Polynomial((Fraction(other),)).coeffs
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.coeffs)


def _interpolate(xs: Sequence[int], ys: Sequence[int]) -> Polynomial:
    """Lagrange interpolation with exact Fractions (coefficients in the monomial basis)."""
    n = len(xs)
    total = [Fraction(0)] * n
    for i in range(n):
        basis = [Fraction(1)]
        denom = Fraction(1)
        for j in range(n):
            if j == i:
                continue
            basis = [Fraction(0)] + basis  # multiply by (x - xs[j])
            for d in range(len(basis) - 1):
                basis[d] -= xs[j] * basis[d + 1]
            denom *= xs[i] - xs[j]
        for d in range(len(basis)):
            total[d] += ys[i] * basis[d] / denom
    return Polynomial(tuple(total))


class NotPolynomialError(ValueError):
    """The sampled function does not agree with any polynomial of the given degree."""


def closed_form(fn: Callable[[int], int], max_degree: int, *, b_min: int = 1, checks: int = 3) -> Polynomial:
    """The polynomial P of degree <= max_degree with P(b) = fn(b), by exact interpolation on
    b = b_min .. b_min + max_degree, then verified on `checks` further values.

    Counts of tiled sets are polynomials in b only from some b on (small tiles may be cut by the
    domain), hence `b_min`; a failed verification raises NotPolynomialError with the mismatch."""
    if max_degree < 0 or b_min < 1 or checks < 0:
        raise ValueError("need max_degree >= 0, b_min >= 1, checks >= 0")
    xs = list(range(b_min, b_min + max_degree + 1))
    ys = [int(fn(x)) for x in xs]
    poly = _interpolate(xs, ys)
    for x in range(xs[-1] + 1, xs[-1] + 1 + checks):
        got = int(fn(x))
        if poly(x) != got:
            raise NotPolynomialError(f"{poly} interpolated on b in [{xs[0]}, {xs[-1]}] gives {poly(x)} at b = {x}, "
                                     f"the function {got}: not a polynomial of degree <= {max_degree} there")
    return poly


def count(S: Union[isl.Set, isl.Map]) -> int:
    """Number of points of a bounded parameter-free set (pairs of a map)."""
    s = S.wrap() if isinstance(S, isl.Map) else S
    if s.dim(_PAR):
        raise ValueError(f"parameters left unfixed: {[s.get_dim_name(_PAR, j) for j in range(s.dim(_PAR))]}")
    v = s.count_val()
    if not v.is_int():
        raise ValueError(f"unbounded set: {s}")
    return int(v.to_python())


def card_in_b(S: Union[isl.Set, isl.Map], params: Optional[Mapping[str, int]] = None, *,
              max_degree: Optional[int] = None, b_min: int = 1, checks: int = 3) -> Polynomial:
    """The number of points of S as a polynomial in b (str() gives e.g. "2*b^2").

    S is a monoparametric object (parameter b); every other parameter is fixed by `params` (for
    tiled parameters give N_b / N_l, e.g. N = 4b is {"N_b": 4, "N_l": 0}).  isl's own card needs
    barvinok, absent from this islpy (HAVE_BARVINOK), so the count is fitted by `closed_form`;
    max_degree defaults to the number of dimensions, which bounds the degree of any count of
    points whose coordinates are at most linear in b."""
    if params:
        text = ", ".join(params)
        S = S.intersect_params(isl.Set.read_from_str(
            CTX, f"[{text}] -> {{ : " + " and ".join(f"{k} = {int(v)}" for k, v in params.items()) + " }"))
        for k in params:
            S = S.project_out(_PAR, S.find_dim_by_name(_PAR, k), 1)
    if max_degree is None:
        max_degree = S.dim(_SET) if isinstance(S, isl.Set) else S.dim(_IN) + S.dim(_OUT)
    return closed_form(lambda v: count(fix_b(S, v)), max_degree, b_min=b_min, checks=checks)


# ----------------------------------------------------------------------------------------------
# families of problems that scale with b (the compiler's measured figures as closed forms)


def split_value(value: int, b: int) -> tuple[int, int]:
    """(v_b, v_l) with value = b.v_b + v_l and 0 <= v_l < b: the tiled form of a structure size."""
    if b < 1:
        raise ValueError("b must be >= 1")
    return divmod(int(value), int(b))


def scaled(value: int, b0: int) -> Polynomial:
    """The size that equals `value` at b = b0 and keeps its number of whole tiles as b varies:
    v_b.b + v_l.  Counts over a tiled set are polynomials in b only along such a family (Theorem
    2.8 needs every bound in tiled form), which is why a fixed-size kernel is scaled this way."""
    vb, vl = split_value(value, b0)
    return Polynomial((Fraction(vl), Fraction(vb)))


def fit_from(fn: Callable[[int], int], max_degree: int, b_first: int, b_last: int, *,
             checks: int = 2) -> tuple[Polynomial, int]:
    """`closed_form` from the smallest b_min in [b_first, b_last] where it verifies, and that b_min.

    Small b are where tiles are cut by the domain or halos reach over several tiles, so a count is
    usually a polynomial only from some b on; moving b_min up finds where it starts.  `fn` should be
    memoized by the caller, the windows overlap."""
    last: Optional[NotPolynomialError] = None
    for b_min in range(max(1, b_first), max(1, b_last) + 1):
        try:
            return closed_form(fn, max_degree, b_min=b_min, checks=checks), b_min
        except NotPolynomialError as e:
            last = e
    raise last if last is not None else NotPolynomialError(f"no b in [{b_first}, {b_last}]")
