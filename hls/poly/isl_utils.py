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
    n = s.dim(isl.dim_type.set)
    out: list[tuple[int, ...]] = []

    def visit(p: isl.Point) -> None:
        out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(n)))

    s.foreach_point(visit)
    arr = np.array(sorted(out), dtype=np.int64).reshape(len(out), n)
    return arr


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
