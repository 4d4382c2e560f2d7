"""All isl idioms of dpn-synth in one place.

Dimensions are addressed by name where isl allows it; positional arithmetic stays in this module.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import islpy as isl
import numpy as np

CTX = isl.DEFAULT_CONTEXT


def reread(obj):
    """`obj` read back from its printed form.

    isl can leave an object in an internal state (seen after `lexmin` with existential divisions)
    on which later operations give wrong answers (`lexmax` of its range) and whose form depends on
    allocation order, so two runs print different but equal sets.  The printed form is always right;
    re-reading it gives a clean object, and the network is built from such objects only."""
    return type(obj)(str(obj), obj.get_ctx())


def set_space(names: Sequence[str], params: Sequence[str]) -> isl.Space:
    return isl.Space.create_from_names(CTX, set=list(names), params=list(params))


def var(space: isl.Space, name: str) -> isl.PwAff:
    """The affine function returning dimension or parameter `name` of `space`."""
    ls = isl.LocalSpace.from_space(space)
    pos = space.find_dim_by_name(isl.dim_type.set, name)
    if pos >= 0:
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(ls, isl.dim_type.set, pos))
    pos = space.find_dim_by_name(isl.dim_type.param, name)
    if pos < 0:
        raise KeyError(name)
    return isl.PwAff.from_aff(isl.Aff.var_on_domain(ls, isl.dim_type.param, pos))


def const(space: isl.Space, value: int) -> isl.PwAff:
    ls = isl.LocalSpace.from_space(space)
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain(ls).set_constant_val(isl.Val.int_from_si(CTX, int(value))))


def constant_value(pa: isl.PwAff) -> int | None:
    """The integer value of a constant piecewise affine function with one piece, else None."""
    if not pa.is_cst():
        return None
    pieces: list[isl.Aff] = []
    pa.foreach_piece(lambda _s, aff: pieces.append(aff))
    if len(pieces) != 1:
        return None
    v = pieces[0].get_constant_val()
    return int(v.to_python()) if v.is_int() else None


def universe(space: isl.Space) -> isl.Set:
    return isl.Set.universe(space)


def constant_dim(s: isl.Set, d: int, values: Mapping[str, int]) -> int | None:
    """The value of dimension `d` when it is the same at every point of `s` (parameters fixed), else None."""
    s = fix_params(s, values)
    lo, hi = constant_value(s.dim_min(d)), constant_value(s.dim_max(d))
    return lo if lo is not None and lo == hi else None


def fix_params(obj, values: Mapping[str, int]):
    """Intersect the parameter domain of an isl set/map/union with the given parameter values."""
    if not values:
        return obj
    return obj.intersect_params(param_set(values, list(values)))


def param_set(values: Mapping[str, int], names: Sequence[str]) -> isl.Set:
    """The parameter set {names : name = value for the given ones}."""
    text = "[" + ", ".join(names) + "] -> { : " + (
        " and ".join(f"{k} = {int(v)}" for k, v in values.items() if k in names) or "true"
    ) + " }"
    return isl.Set.read_from_str(CTX, text)


def points(s: isl.Set) -> np.ndarray:
    """All integer points of a bounded set, sorted lexicographically, as an (n, dim) int64 array."""
    fast = _points_by_box(s)
    if fast is not None:
        return fast
    n = s.dim(isl.dim_type.set)
    out: list[tuple[int, ...]] = []

    def visit(p: isl.Point) -> None:
        out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(n)))

    s.foreach_point(visit)
    arr = np.array(sorted(out), dtype=np.int64).reshape(len(out), n)
    return arr


_BOX_LIMIT = 300_000


def _int(v: isl.Val) -> int:
    return int(v.to_python())


def _points_by_box(s: isl.Set) -> np.ndarray | None:
    """Points by testing every point of the bounding box against the constraints, vectorized.

    isl's point visitor costs a Python callback per point (seconds for 10^5 points); this evaluates
    each basic set's constraints, with its division variables, on a numpy grid.  None when the box is
    too large or a parameter or a division is not known (the caller then visits points)."""
    n = s.dim(isl.dim_type.set)
    if s.is_empty():
        return np.zeros((0, n), dtype=np.int64)
    npar = s.dim(isl.dim_type.param)
    pvals = []
    if npar:
        ps = s.params()
        lo, hi = ps.lexmin(), ps.lexmax()
        if not lo.is_equal(hi):
            return None
        pt = lo.sample_point()
        pvals = [_int(pt.get_coordinate_val(isl.dim_type.param, k)) for k in range(npar)]
    lows, highs = [], []
    for d in range(n):
        a, b = constant_value(s.dim_min(d)), constant_value(s.dim_max(d))
        if a is None or b is None:
            return None
        lows.append(a)
        highs.append(b)
    size = 1
    for a, b in zip(lows, highs):
        size *= b - a + 1
    if size > _BOX_LIMIT or n == 0:
        return None
    grid = np.indices([b - a + 1 for a, b in zip(lows, highs)], dtype=np.int64).reshape(n, -1)
    grid += np.array(lows, dtype=np.int64)[:, None]
    keep = np.zeros(grid.shape[1], dtype=bool)
    for bset in s.get_basic_sets():
        divs: list[np.ndarray] = []
        for k in range(bset.dim(isl.dim_type.div)):
            try:
                aff = bset.get_div(k)
            except isl.Error:  # an existential variable without an explicit floor expression
                return None
            den = _int(aff.get_denominator_val())
            num = np.full(grid.shape[1], _int(aff.get_constant_val() * den), dtype=np.int64)
            for d in range(n):
                c = _int(aff.get_coefficient_val(isl.dim_type.in_, d) * den)
                if c:
                    num += c * grid[d]
            for j in range(npar):
                c = _int(aff.get_coefficient_val(isl.dim_type.param, j) * den)
                num += c * pvals[j]
            for j in range(min(k, aff.dim(isl.dim_type.div))):
                c = _int(aff.get_coefficient_val(isl.dim_type.div, j) * den)
                if c:
                    num += c * divs[j]
            if any(not aff.get_coefficient_val(isl.dim_type.div, j).is_zero()
                   for j in range(k, aff.dim(isl.dim_type.div))):
                return None
            divs.append(np.floor_divide(num, den))
        ok = np.ones(grid.shape[1], dtype=bool)
        for c in bset.get_constraints():
            val = np.full(grid.shape[1], _int(c.get_constant_val()), dtype=np.int64)
            for j in range(npar):
                val += _int(c.get_coefficient_val(isl.dim_type.param, j)) * pvals[j]
            for d in range(n):
                k = _int(c.get_coefficient_val(isl.dim_type.set, d))
                if k:
                    val += k * grid[d]
            for j in range(len(divs)):
                k = _int(c.get_coefficient_val(isl.dim_type.div, j))
                if k:
                    val += k * divs[j]
            ok &= (val == 0) if c.is_equality() else (val >= 0)
        keep |= ok
    return np.ascontiguousarray(grid[:, keep].T)


def map_pairs(m: isl.Map) -> np.ndarray:
    """All (in, out) pairs of a bounded map as an (n, n_in + n_out) array, sorted."""
    return points(m.wrap())


def card(s: isl.Set) -> int:
    """Number of points of a bounded, parameter-free set."""
    total = 0

    def visit(_p: isl.Point) -> None:
        nonlocal total
        total += 1

    s.foreach_point(visit)
    return total


def sample(s: isl.Set) -> tuple[int, ...] | None:
    """One point of a (possibly parametric) set, with its parameters, or None if empty."""
    if s.is_empty():
        return None
    p = s.sample_point()
    np_ = s.dim(isl.dim_type.param)
    ns = s.dim(isl.dim_type.set)
    return tuple(int(p.get_coordinate_val(isl.dim_type.param, d).to_python()) for d in range(np_)) + tuple(
        int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(ns)
    )


def union_map_pieces(um: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    um.foreach_map(out.append)
    return out


def union_set_pieces(us: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    us.foreach_set(out.append)
    return out


def union(items: Iterable, empty):
    acc = empty
    for x in items:
        acc = acc.union(x)
    return acc


def tuple_name(m) -> str:
    return m.get_tuple_name(isl.dim_type.set) if isinstance(m, isl.Set) else m.get_tuple_name(isl.dim_type.in_)


def last_writer(sink: isl.UnionMap, writes: isl.UnionMap, schedule: isl.UnionMap) -> tuple[isl.UnionMap, isl.UnionMap]:
    """Exact source function: for every read instance, the last write of the same element before it.

    Returns (dependences source -> sink, sink accesses with no source).  This is the must-source
    dataflow problem of isl's compute_flow, solved directly as a lexicographic maximum in time:
    compute_flow returned wrong last writers on strided and decrementing nests found by our fuzzer
    (tests/regressions/fuzz_5e298b25.c, fuzz_82a2f273.c), so dpn-synth does not depend on it."""
    pairs = sink.apply_range(writes.reverse()).intersect(schedule.lex_gt_union_map(schedule))  # y -> x, x before y
    latest = pairs.apply_range(schedule).lexmax().apply_range(schedule.reverse())  # y -> the last such x
    deps = latest.reverse()
    no_source = sink.subtract_domain(latest.domain())
    return deps, no_source
