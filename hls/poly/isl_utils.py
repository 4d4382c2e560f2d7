"""All isl idioms of dpn-synth in one place.

Dimensions are addressed by name where isl allows it; positional arithmetic stays in this module.
"""

from __future__ import annotations

import functools
from typing import Iterable, Mapping, Sequence

import islpy as isl
import numpy as np

from .lexorder import ordered_pairs
from .rows import sorted_unique_rows

CTX = isl.DEFAULT_CONTEXT


def reread(obj):
    """`obj` read back from its printed form.

    isl can leave an object in an internal state (seen after `lexmin` with existential divisions)
    on which later operations give wrong answers (`lexmax` of its range) and whose form depends on
    allocation order, so two runs print different but equal sets.  The printed form is always right;
    re-reading it gives a clean object, and the network is built from such objects only.  Objects this
    function made are remembered (and kept alive, so their ids stay theirs): re-reading one of them
    again, as every `dataclasses.replace` of a network element does, returns it as it is.  So does a
    text read before: isl objects are values, never changed in place, so equal texts share one
    (the candidate networks of a compile rebuild the same relations: gemm at --parallel 64 read
    back 10,600 objects of 6,300 texts, 5.5 s of its 42 s)."""
    global _by_text_chars
    if _CLEAN.get(id(obj)) is obj:
        return obj
    key = (type(obj), str(obj))
    out = _BY_TEXT.get(key)
    if out is None:
        out = type(obj)(key[1], obj.get_ctx())
        _BY_TEXT[key] = out
        _by_text_chars += len(key[1])
        while len(_BY_TEXT) > _CLEAN_MAX or _by_text_chars > REREAD_CHARS:
            oldest = next(iter(_BY_TEXT))
            del _BY_TEXT[oldest]
            _by_text_chars -= len(oldest[1])
    if len(_CLEAN) >= _CLEAN_MAX:
        _CLEAN.pop(next(iter(_CLEAN)))
    _CLEAN[id(out)] = out
    return out


_CLEAN: dict[int, object] = {}  # id -> an object `reread` returned (insertion order: oldest first)
_BY_TEXT: dict[tuple[type, str], object] = {}  # (type, text) -> the object read from it (oldest first)
REREAD_CHARS = 32 << 20  # the texts `_BY_TEXT` keeps, at most
_by_text_chars = 0
_CLEAN_MAX = 1 << 16


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
    value = int(value)
    # isl's small-integer constructor takes a C long: the range ends of 64-bit unsigned types go as text
    val = isl.Val.int_from_si(CTX, value) if -(1 << 63) <= value < (1 << 63) else isl.Val.read_from_str(CTX, str(value))
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain(ls).set_constant_val(val))


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
    """All integer points of a bounded set, sorted lexicographically, as an (n, dim) int64 array
    (read-only: it may be shared, `fast_points`)."""
    fast = fast_points(s)
    if fast is not None:
        return fast
    n = s.dim(isl.dim_type.set)
    out: list[tuple[int, ...]] = []

    def visit(p: isl.Point) -> None:
        out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(n)))

    s.foreach_point(visit)
    arr = np.array(sorted(out), dtype=np.int64).reshape(len(out), n)
    return arr


ENUMERATED_BYTES = 64 << 20  # the enumerations `fast_points` keeps, at most
_ENUMERATED: dict[str, np.ndarray | None] = {}  # set text -> its points (insertion order: oldest first)
_enumerated_bytes = 0


def fast_points(s: isl.Set) -> np.ndarray | None:
    """`points` when the vectorized enumeration applies, else None (never a Python visit per point).

    Kept by the set's text while they fit `ENUMERATED_BYTES`: the candidate networks of one compile
    enumerate the same channel relations and domains again (a point order changes the processes'
    schedules, not which iterations a channel pairs: int-divmod enumerated 1488 sets 3619 times, 40% of
    that time spent on sets seen before).  The arrays are read-only."""
    global _enumerated_bytes
    key = str(s)
    if key in _ENUMERATED:
        return _ENUMERATED[key]
    out = _points_by_levels(s)
    size = 0 if out is None else out.nbytes
    if out is not None:
        out.flags.writeable = False
    if size <= ENUMERATED_BYTES // 4:
        _ENUMERATED[key] = out
        _enumerated_bytes += size
        while _enumerated_bytes > ENUMERATED_BYTES:
            old = _ENUMERATED.pop(next(iter(_ENUMERATED)))
            _enumerated_bytes -= 0 if old is None else old.nbytes
    return out


_ROW_LIMIT = 20_000_000  # int64 cells of a partial enumeration (160 MB) before falling back to isl


def _int(v: isl.Val) -> int:
    return int(v.to_python())


class _Affine:
    """c0 + sum c_d x_d + sum c_k div_k, with parameters folded into c0 (integer coefficients)."""

    def __init__(self, const: int, dims: list[int], divs: list[int]):
        self.const = const
        self.dims = [(d, c) for d, c in enumerate(dims) if c]
        self.divs = [(k, c) for k, c in enumerate(divs) if c]
        self.coef = dict(self.dims)

    def level(self, div_level: list[int], skip: int = -1) -> int:
        """The outermost dimension after which every term is known (-1: a constant); `skip` ignored."""
        return max([d for d, _ in self.dims if d != skip] + [div_level[k] for k, _ in self.divs], default=-1)

    def value(self, columns: list[np.ndarray], count: int, divs: list, skip: int = -1) -> np.ndarray:
        """The value at `count` rows, given as one array per dimension (`columns`)."""
        val = np.full(count, self.const, dtype=np.int64)
        for d, c in self.dims:
            if d != skip:
                val += c * columns[d]
        for k, c in self.divs:
            val += c * divs[k]
        return val


def _points_by_levels(s: isl.Set) -> np.ndarray | None:
    """Points dimension by dimension, vectorized: the rows of the outer dimensions are extended by the
    values of the next one that the constraints over known terms allow, then filtered by every
    constraint those terms decide.

    isl's point visitor costs a Python callback per point (seconds for 10^5 points), and the bounding
    box of a wrapped channel relation (tiled time stamps on both sides) has far more points than the
    relation; bounds by the outer dimensions keep the partial enumeration close to the result.  None
    when a parameter or a division is not known or the enumeration grows too large (the caller then
    visits points)."""
    n = s.dim(isl.dim_type.set)
    if s.is_empty():
        return np.zeros((0, n), dtype=np.int64)
    if n == 0:
        return None
    npar = s.dim(isl.dim_type.param)
    pvals: list[int] = []
    if npar:
        ps = s.params()
        lo, hi = ps.lexmin(), ps.lexmax()
        if not lo.is_equal(hi):
            return None
        pt = lo.sample_point()
        pvals = [_int(pt.get_coordinate_val(isl.dim_type.param, k)) for k in range(npar)]
    parts = []
    bsets = s.get_basic_sets()
    if not all(_divs_known(b) for b in bsets):  # isl rewrites them as floors of the variables (the same set)
        bsets = s.compute_divs().get_basic_sets()
    for bset in bsets:
        rows = _basic_points(bset, n, pvals)
        if rows is None:
            return None
        parts.append(rows)
    if len(parts) == 1:
        return np.ascontiguousarray(parts[0])
    return sorted_unique_rows(np.concatenate(parts))


def _divs_known(bset: isl.BasicSet) -> bool:
    """Whether every existential variable of `bset` has an explicit floor expression."""
    try:
        for k in range(bset.dim(isl.dim_type.div)):
            bset.get_div(k)
    except isl.Error:
        return False
    return True


def _box_bound(bset: isl.BasicSet, d: int, upper: bool) -> int | None:
    """The smallest or largest value of dimension d over `bset`, for a dimension its constraints over
    the outer dimensions leave open on that side: asked of isl only then, since isl's dim_min and
    dim_max over a wrapped channel relation (thirty dimensions and more) cost a parametric problem per
    dimension, a quarter of a stencil's compile when asked of every dimension."""
    whole = isl.Set.from_basic_set(bset)
    return constant_value((whole.dim_max(d) if upper else whole.dim_min(d)).coalesce())


def _basic_points(bset: isl.BasicSet, n: int, pvals: list[int]) -> np.ndarray | None:
    ndiv = bset.dim(isl.dim_type.div)
    divs: list[tuple[int, _Affine]] = []  # (denominator, numerator)
    for k in range(ndiv):
        try:
            aff = bset.get_div(k)
        except isl.Error:  # an existential variable without an explicit floor expression
            return None
        den = _int(aff.get_denominator_val())
        if any(not aff.get_coefficient_val(isl.dim_type.div, j).is_zero()
               for j in range(k, aff.dim(isl.dim_type.div))):
            return None
        c0 = _int(aff.get_constant_val() * den) + sum(
            _int(aff.get_coefficient_val(isl.dim_type.param, j) * den) * pvals[j] for j in range(len(pvals)))
        divs.append((den, _Affine(c0, [_int(aff.get_coefficient_val(isl.dim_type.in_, d) * den) for d in range(n)],
                                  [_int(aff.get_coefficient_val(isl.dim_type.div, j) * den) if j < k else 0
                                   for j in range(ndiv)])))
    div_level: list[int] = []
    for _den, num in divs:
        div_level.append(max(0, num.level(div_level)))
    bounds: list[list[tuple[bool, int, _Affine]]] = [[] for _ in range(n)]  # per dimension: constraints bounding it
    checks: list[list[tuple[bool, _Affine]]] = [[] for _ in range(n)]  # per dimension: constraints it decides
    divs_at: list[list[int]] = [[] for _ in range(n)]
    for k, lv in enumerate(div_level):
        divs_at[lv].append(k)
    for c in bset.get_constraints():
        c0 = _int(c.get_constant_val()) + sum(
            _int(c.get_coefficient_val(isl.dim_type.param, j)) * pvals[j] for j in range(len(pvals)))
        a = _Affine(c0, [_int(c.get_coefficient_val(isl.dim_type.set, d)) for d in range(n)],
                    [_int(c.get_coefficient_val(isl.dim_type.div, j)) for j in range(ndiv)])
        eq = c.is_equality()
        checks[max(0, a.level(div_level))].append((eq, a))
        for d, k in a.dims:
            if a.level(div_level, skip=d) < d:
                bounds[d].append((eq, k, a))
    # the rows as one array per enumerated dimension: a dimension that takes one value per row (a
    # time stamp's, fixed by the iteration) is appended without copying the others, where extending
    # a 2-d array copied every row at every level (rows x dimensions squared: a schedule's 20 time
    # dimensions were most of enumerating it)
    cols: list[np.ndarray] = []
    count = 1
    vals: list = [None] * ndiv  # division values at the rows, once their level is enumerated
    for d in range(n):
        has_lo = any(eq or k > 0 for eq, k, _a in bounds[d])
        has_hi = any(eq or k < 0 for eq, k, _a in bounds[d])
        low = 0 if has_lo else _box_bound(bset, d, upper=False)
        high = 0 if has_hi else _box_bound(bset, d, upper=True)
        if low is None or high is None:
            return np.zeros((0, n), dtype=np.int64) if bset.is_empty() else None
        lo = np.full(count, low if not has_lo else np.iinfo(np.int64).min // 4, dtype=np.int64)
        hi = np.full(count, high if not has_hi else np.iinfo(np.int64).max // 4, dtype=np.int64)
        for eq, k, a in bounds[d]:  # bounds on x_d from constraints whose other terms are known
            rest = a.value(cols, count, vals, skip=d)
            if k > 0:
                lo = np.maximum(lo, -(rest // k))  # x_d >= ceil(-rest / k)
                if eq:
                    hi = np.minimum(hi, (-rest) // k)
            else:
                hi = np.minimum(hi, rest // (-k))  # x_d <= floor(rest / -k)
                if eq:
                    lo = np.maximum(lo, -((-rest) // (-k)))
        counts = np.maximum(hi - lo + 1, 0)
        total = int(counts.sum())
        if total * (d + 1) > _ROW_LIMIT:
            return None
        if total == count and (counts == 1).all():  # one value per row: the rows stay as they are
            cols.append(lo)
        else:
            src = np.repeat(np.arange(count), counts)
            offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
            cols = [c[src] for c in cols] + [lo[src] + offset]
            vals = [None if v is None else v[src] for v in vals]
            count = total
        for k in divs_at[d]:
            den, num = divs[k]
            vals[k] = np.floor_divide(num.value(cols, count, vals), den)
        keep = np.ones(count, dtype=bool)
        for eq, a in checks[d]:
            v = a.value(cols, count, vals)
            keep &= (v == 0) if eq else (v >= 0)
        if not keep.all():
            cols = [c[keep] for c in cols]
            vals = [None if v is None else v[keep] for v in vals]
            count = int(keep.sum())
    out = np.empty((count, n), dtype=np.int64)
    for d, c in enumerate(cols):
        out[:, d] = c
    return out


def map_pairs(m: isl.Map) -> np.ndarray:
    """All (in, out) pairs of a bounded map as an (n, n_in + n_out) array, sorted."""
    return points(m.wrap())


def card(s: isl.Set) -> int:
    """Number of points of a bounded set whose parameters are fixed by its own constraints.

    isl's own `count_val`, which scans rows in C (600 M points in about a second), when the bounding
    box is small (`SCAN_CELLS`); else barvinok's symbolic count (constant time in the size), or
    without barvinok a product of scans over the groups of coupled dimensions (`count_by_factors`):
    never a Python loop over points.

    Kept by the object as well as by its text: the passes ask again about the very same domains (every
    channel's processes, at typing and at sizing), and printing one is most of a count from the text."""
    return _BY_OBJECT.answer(s, "card", lambda: _card_of(str(s)))


class AnswersByObject:
    """Answers about isl objects (or a program of them), kept by the object asked about (alive, so
    that its id stays its own): an isl object is a value, and printing it to key a text cache was
    most of the cost of asking again about the same process domain."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: dict[tuple[int, object], tuple[object, object]] = {}

    def answer(self, obj: object, question: object, compute):
        key = (id(obj), question)
        hit = self.kept.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = compute()
        if len(self.kept) >= self.size:
            self.kept.pop(next(iter(self.kept)))
        self.kept[key] = (obj, value)
        return value


_BY_OBJECT = AnswersByObject(1 << 14)


@functools.lru_cache(maxsize=4096)
def _card_of(text: str) -> int:
    """`card` by the set's text: the passes count the same domains again and again (process domains,
    parts, traffic, control), and without barvinok each count scans the set."""
    s = isl.Set(text)
    if _box_within(s, SCAN_CELLS):
        return _int(s.count_val())
    if counting_available():
        poly = s.card()
        params = s.params()
        if params.is_empty():
            return 0
        return _int(poly.eval(params.sample_point()))
    return count_by_factors(s)


def count_by_factors(s: isl.Set) -> int:
    """The number of points of a large set without barvinok: over disjoint basic sets, each the
    product of the counts of its groups of coupled dimensions (dimensions no constraint or division
    links are independent: a rectangular loop nest is a product of intervals, a tiled one a product of
    (tile, point) pairs), each group scanned by isl on its own.  A matrix product's 12e9 instances
    took isl's scan of the whole set 1.3 s per count, 25 s per compile at 2000x2300x2600."""
    total = 0
    for b in s.make_disjoint().get_basic_sets():
        groups = _coupled_dims(b)
        if groups is None or len(groups) == 1:
            total += _int(isl.Set.from_basic_set(b).count_val())
            continue
        n = b.dim(isl.dim_type.set)
        product = 1
        for g in groups:
            part = isl.Set.from_basic_set(b)
            for d in reversed(range(n)):
                if d not in g:
                    part = part.project_out(isl.dim_type.set, d, 1)
            product *= _int(part.count_val())
            if not product:
                break
        total += product
    return total


def _coupled_dims(b: isl.BasicSet) -> list[set[int]] | None:
    """The groups of dimensions of `b` that its constraints link (a division links the dimensions
    it is taken of), or None when a division has no explicit expression.  Parameters link nothing:
    the sets counted have them fixed."""
    n = b.dim(isl.dim_type.set)
    of_div: list[set[int]] = []
    for k in range(b.dim(isl.dim_type.div)):
        try:
            aff = b.get_div(k)
        except isl.Error:
            return None
        dims = {d for d in range(n) if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()}
        for j in range(k):
            if not aff.get_coefficient_val(isl.dim_type.div, j).is_zero():
                dims |= of_div[j]
        of_div.append(dims)
    root = list(range(n))

    def find(d: int) -> int:
        while root[d] != d:
            root[d] = root[root[d]]
            d = root[d]
        return d

    for c in b.get_constraints():
        dims = {d for d in range(n) if not c.get_coefficient_val(isl.dim_type.set, d).is_zero()}
        for k, divided in enumerate(of_div):
            if not c.get_coefficient_val(isl.dim_type.div, k).is_zero():
                dims |= divided
        first = min(dims, default=None)
        for d in dims:
            root[find(d)] = find(first)
    groups: dict[int, set[int]] = {}
    for d in range(n):
        groups.setdefault(find(d), set()).add(d)
    return list(groups.values())


SCAN_CELLS = 20_000_000  # a set whose bounding box is this small is counted by isl's scan, not barvinok


def _box_within(s: isl.Set, cells: int) -> bool:
    """Whether the bounding box of `s` (parameters fixed by its constraints) has at most `cells`
    cells.  Below that, isl's `count_val` scans the set in milliseconds, where barvinok's symbolic
    count of a set of many disjuncts with divisions can take minutes (heat-3d's store-unit domains at
    T=10, N=26: 4 s and 270 s, against 27 ms for the scan)."""
    return _BY_OBJECT.answer(s, ("box within", cells), lambda: _box_cells_within(s, cells))


def _box_cells_within(s: isl.Set, cells: int) -> bool:
    return _box_cells(s, cells) is not None


def fewer_points_than(s: isl.Set, limit: int) -> bool:
    """Whether `s` (bounded, parameters fixed by its constraints) has fewer than `limit` points, at a
    cost that does not grow with the set: a barvinok count, else a count only when a box bounds the
    points below 64 x `limit` (a larger box is answered False: the callers then take the route for
    large sets, which is right at every size, but slower)."""
    if counting_available():
        return card(s) < limit
    cells = 64 * limit - 1
    return (_box_within(s, cells) or _free_boxes_within(s, cells)) and card(s) < limit


def _free_boxes_within(s: isl.Set, cells: int) -> bool:
    """Whether the boxes of `s`'s basic sets, each over its dimensions that no equality fixes given the
    others, hold at most `cells` cells in all: a bound on the points where the whole box is no bound.
    A merged process iterates over time stamps, whose dimensions are mostly functions of a few
    loop counters: lifting-53's corner has processes of 720 iterations in a box of millions of
    cells, and without barvinok every channel of theirs took the large sets' route, a forked isl
    call each (578 of them, half of the compile at M=49, K=66)."""
    return _BY_OBJECT.answer(s, ("free boxes within", cells), lambda: _free_box_cells(s, cells))


def _free_box_cells(s: isl.Set, cells: int) -> bool:
    total = 0
    for b in s.get_basic_sets():
        for d in sorted(_determined_dims(b), reverse=True):
            b = b.project_out(isl.dim_type.set, d, 1)  # one point per point of the rest: no fewer
        box = _box_cells(isl.Set.from_basic_set(b), cells - total)
        if box is None:
            return False
        total += box
    return True


def _determined_dims(b: isl.BasicSet) -> list[int]:
    """Dimensions that `b`'s equalities without existentials fix as functions of the others, the
    innermost first (a pivot per equality, by integer elimination)."""
    n, ndiv = b.dim(isl.dim_type.set), b.dim(isl.dim_type.div)
    rows = []
    for c in b.get_constraints():
        if c.is_equality() and all(c.get_coefficient_val(isl.dim_type.div, k).is_zero() for k in range(ndiv)):
            row = [_int(c.get_coefficient_val(isl.dim_type.set, d)) for d in range(n)]
            if any(row):
                rows.append(row)
    pivots = []
    while rows:
        r = rows.pop()
        d = max(k for k in range(n) if r[k])
        pivots.append(d)
        rows = [row for row in ([x * r[d] - y * row[d] for x, y in zip(row, r)] for row in rows) if any(row)]
    return pivots


def _box_cells(s: isl.Set, cells: int) -> int | None:
    """The cells of `s`'s bounding box, or None above `cells`."""
    if s.is_empty():
        return 0
    box = 1
    for d in range(s.dim(isl.dim_type.set)):
        lo, hi = s.dim_min_val(d), s.dim_max_val(d)
        if not (lo.is_int() and hi.is_int()):
            return None
        box *= int(hi.to_python()) - int(lo.to_python()) + 1
        if box > cells:
            return None
    return box if box <= cells else None


def counting_available() -> bool:
    """Whether islpy is the barvinok build (`pip install islpy-barvinok`, which replaces islpy)."""
    return hasattr(isl.Set, "card")


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


def coalesced(obj):
    """`obj.coalesce()`, or *obj* itself where isl's coalescing fails: isl 0.27 can abort it with
    "total dimensionality changed unexpectedly" on some unions with existentials (heat-3d's memory
    order, tiled at 18^3).  Coalescing only simplifies the representation, so the set is the same."""
    try:
        return obj.coalesce()
    except isl.Error:
        return obj


def implicit_outputs(m: isl.Map) -> int:
    """The most output dimensions of one basic map that its equalities leave undetermined (output
    dimensions minus the rank of the equalities over them): 0 where every value is an affine
    function of the input, 1 for a floor division, more where a value is a min or a max."""
    worst = 0
    n_out = m.dim(isl.dim_type.out)
    for bm in m.detect_equalities().get_basic_maps():
        rows = [[int(c.get_coefficient_val(isl.dim_type.out, d).to_python()) for d in range(n_out)]
                for c in bm.get_constraints() if c.is_equality()]
        rank = int(np.linalg.matrix_rank(np.array(rows, dtype=float))) if rows else 0
        worst = max(worst, n_out - rank)
    return worst


def coalesced_function(m: isl.Map) -> isl.Map:
    """`m` (a function) coalesced, unless isl's coalescing leaves some output less determined by
    equalities than before (`implicit_outputs`): then the pieces as they are.  Coalescing covariance's
    two stores of `cov` (`cov[i][j]` and its mirror `cov[j][i]`) made one basic map whose time
    stamps hold min(i, j) and max(i, j) as unknowns bounded by inequalities; the store unit's
    successor took 7.6 s over it and had 82 pieces, against 0.04 s and 7 pieces over the two
    maps."""
    out = coalesced(m)
    if out.n_basic_map() < m.n_basic_map() and implicit_outputs(out) > implicit_outputs(m):
        return m
    return out


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


def last_writer(sink: isl.UnionMap, writes: isl.UnionMap, schedule: isl.UnionMap,
                unsourced: bool = True) -> tuple[isl.UnionMap, isl.UnionMap | None]:
    """Exact source function: for every read instance, the last write of the same element before it.

    Returns (dependences source -> sink, sink accesses with no source, or None without `unsourced`:
    that difference can cost minutes on a skewed corner, heat-3d's, where only the dependences
    matter).  This is the must-source
    dataflow problem of isl's compute_flow, solved directly as a lexicographic maximum in time:
    compute_flow returned wrong last writers on strided and decrementing nests found by our fuzzer
    (tests/regressions/fuzz_5e298b25.c, fuzz_82a2f273.c), so dpn-synth does not depend on it."""
    pairs = ordered_pairs(sink.apply_range(writes.reverse()), schedule, "gt")  # y -> x, x before y
    latest = pairs.apply_range(schedule).lexmax().apply_range(schedule.reverse())  # y -> the last such x
    deps = latest.reverse()
    return deps, sink.subtract_domain(latest.domain()) if unsourced else None
