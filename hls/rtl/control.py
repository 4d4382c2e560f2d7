"""Process control: iteration registers, First/Next functions, and the guards of every port.

A process iterates over its domain in the order of its schedule.  `next(x)` is the lexicographic
successor in *time* (isl lexmin over {t -> t' : t < t'} pulled back to the domain), a piecewise
affine function: hardware evaluates every piece's guard in parallel from the registered iteration
vector and selects one, so a new iteration can start every cycle.  All port guards (which channel
feeds a read, first/last reads, which channels a write goes to, buffer slots) are isl sets or
functions over the same iteration vector, simplified (`gist`) against the process domain.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..dpn.network import Channel, Process
from ..poly import isl_utils as iu
from .affine import aff_expr, drop_params, pw_multi_aff_pieces, set_expr


@dataclass
class Control:
    dims: list[str]
    first: list[int]
    last: list[int]
    next_conds: list[str]  # guards of the next-function pieces, tried in order (the last may be "1'b1")
    next_values: list[list[str]]  # per piece, per dimension
    count: int


def dim_names(n: int) -> list[str]:
    return [f"x{k}" for k in range(n)]


def _point(s: isl.Set) -> list[int]:
    p = iu.sample(s)
    assert p is not None
    return list(p[s.dim(isl.dim_type.param):])


def control(proc: Process, values: dict[str, int]) -> Control:
    dom = drop_params(proc.domain, values)
    sched = drop_params(proc.schedule, values)
    names = dim_names(dom.dim(isl.dim_type.set))
    times = sched.range()
    first = _point(times.lexmin().apply(sched.reverse()))
    last = _point(times.lexmax().apply(sched.reverse()))
    succ = sched.apply_range(times.lex_lt_set(times).lexmin()).apply_range(sched.reverse())
    conds: list[str] = []
    vals: list[list[str]] = []
    pieces = pw_multi_aff_pieces(isl.PwMultiAff.from_map(succ)) if not succ.is_empty() else []
    for k, (s, ma) in enumerate(pieces):
        s = s.gist(dom)
        conds.append("1'b1" if k == len(pieces) - 1 else set_expr(s, names))
        vals.append([aff_expr(ma.get_aff(d), names) for d in range(ma.dim(isl.dim_type.out))])
    return Control(names, first, last, conds, vals, iu.card(dom))


def predicate(s: isl.Set, proc: Process, values: dict[str, int]) -> str:
    """Verilog test of `s` for the current iteration (valid within the process domain)."""
    dom = drop_params(proc.domain, values)
    s = drop_params(s, values)
    if dom.is_subset(s):
        return "1'b1"
    if s.intersect(dom).is_empty():
        return "1'b0"
    return set_expr(s.gist(dom), dim_names(dom.dim(isl.dim_type.set)))


def slot_expr(c: Channel, fn: isl.Map, proc: Process, values: dict[str, int]) -> str:
    """Buffer slot of the value `fn(x)` (a producer iteration) for the current iteration x."""
    dom = drop_params(proc.domain, values)
    fn = drop_params(fn, values).intersect_domain(dom)
    names = dim_names(dom.dim(isl.dim_type.set))
    terms = []
    stride = 1
    pieces = pw_multi_aff_pieces(isl.PwMultiAff.from_map(fn))
    for d in reversed(range(len(c.moduli))):
        b = c.moduli[d]
        if b > 1:
            comp = _pieced(pieces, d, names, dom)
            terms.append(f"((({comp}) % {b} + {b}) % {b}) * {stride}")
        stride *= b
    return " + ".join(reversed(terms)) if terms else "0"


def _pieced(pieces, d: int, names: list[str], dom: isl.Set) -> str:
    out = aff_expr(pieces[-1][1].get_aff(d), names)
    for s, ma in reversed(pieces[:-1]):
        out = f"(({set_expr(s.gist(dom), names)}) ? ({aff_expr(ma.get_aff(d), names)}) : ({out}))"
    return out


def first_reads(c: Channel, cons: Process) -> isl.Set:
    """Consumer iterations that read a value for the first time (FIFO with multiplicity: pop)."""
    src = c.relation.reverse()  # y -> x
    same = src.apply_range(src.reverse())  # y -> y' reading the same value
    earlier = same.intersect(cons.schedule.lex_gt_map(cons.schedule))  # y' before y
    return src.domain().subtract(earlier.domain())


def last_reads(c: Channel, cons: Process) -> isl.Set:
    """Consumer iterations that read a value for the last time (buffer: clear the slot)."""
    src = c.relation.reverse()
    same = src.apply_range(src.reverse())
    later = same.intersect(cons.schedule.lex_lt_map(cons.schedule))
    return src.domain().subtract(later.domain())


def linear_address(proc: Process, shape: list[int], values: dict[str, int]) -> str:
    """Row-major element address of a load/store iteration (its point is the element)."""
    names = dim_names(proc.domain.dim(isl.dim_type.set))[proc.band_dims:]  # (band, element)
    terms, stride = [], 1
    for k in reversed(range(len(shape))):
        terms.append(names[k] if stride == 1 else f"{stride} * {names[k]}")
        stride *= shape[k]
    return " + ".join(reversed(terms)) if terms else "0"
