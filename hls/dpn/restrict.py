"""A program on smaller statement domains, its dataflow recomputed: the corner instance on which the
pipeline chooses its network (`dpn.reduced`) and the sample on which the isl scheduler's
aligned bands are found for a large program (`dpn.tiling`) are both such restrictions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

import islpy as isl

from ..diagnostics import CompileError
from ..frontend.dataflow import analyze_dataflow
from ..poly import isl_utils as iu
from ..poly.program import PolyProgram

__all__ = ["instance_count", "loops_capped", "restricted", "sampled"]


def instance_count(program: PolyProgram) -> int:
    return sum(iu.card(s.domain) for s in program.statements)


def loops_capped(dom: isl.Set, cap: int, loops: Sequence[int]) -> isl.Set:
    """`dom` with each of `loops` longer than `cap` cut to its first `cap` values."""
    for d in loops:
        lo, hi = iu.constant_value(dom.dim_min(d).coalesce()), iu.constant_value(dom.dim_max(d).coalesce())
        if lo is None or hi is None or hi - lo < cap:
            continue
        ls = isl.LocalSpace.from_space(dom.get_space())
        dom = dom.add_constraint(isl.Constraint.inequality_alloc(ls).set_coefficient_val(isl.dim_type.set, d, -1)
                                 .set_constant_val(lo + cap - 1))
    return dom


def restricted(program: PolyProgram, domains: dict[str, isl.Set]) -> Optional[PolyProgram]:
    """`program` on the given statement domains, with its dataflow recomputed (None when a local is
    then read before it is written: its producer lies outside the smaller domains)."""
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


def sampled(program: PolyProgram, cap: int) -> Optional[PolyProgram]:
    """`program` with every loop of every statement cut to its first `cap` values, or None when no
    loop is longer, or a statement would be left without instances or a local without its producer."""
    domains = {}
    for s in program.statements:
        dom = loops_capped(s.domain, cap, range(s.domain.dim(isl.dim_type.set)))
        if dom.is_empty():
            return None
        domains[s.name] = dom
    if all(domains[s.name].is_equal(s.domain) for s in program.statements):
        return None
    return restricted(program, domains)
