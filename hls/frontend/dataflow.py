"""Exact array dataflow analysis (the must-source problem of isl `compute_flow`) and its checks.

For every read access we ask isl for its source function: the last write executed before it, per
element.  Reads with no such write are live-in (their value comes from off-chip memory); the last
write of each element of an argument array is live-out (it must reach memory at the end).
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from ..diagnostics import CompileError
from ..poly import isl_utils as iu
from ..poly.program import DataFlow, Dependence, PolyProgram


def analyze_dataflow(program: PolyProgram) -> PolyProgram:
    """Return `program` with its `flow` computed."""
    sched = program.schedule.intersect_params(program.context)
    writes = isl.UnionMap.empty(sched.get_space())
    for s in program.statements:
        writes = writes.union(isl.UnionMap.from_map(s.write.relation))
    writes = writes.intersect_params(program.context)
    deps: list[Dependence] = []
    live_in: dict[str, isl.Map] = {}
    for s in program.statements:
        for r in s.reads:
            sink = isl.UnionMap.from_map(r.relation).intersect_params(program.context)
            found, no_src = iu.last_writer(sink, writes, sched)
            for m in iu.union_map_pieces(found):
                m = iu.coalesced(m)
                if not m.is_empty():
                    deps.append(Dependence(m.get_tuple_name(isl.dim_type.in_), s.name, r.id, m))
            pieces = [m for m in iu.union_map_pieces(no_src) if not m.is_empty()]
            if pieces:
                m = pieces[0]
                for p in pieces[1:]:
                    m = m.union(p)
                arr = program.arrays[r.array]
                if not arr.is_arg:
                    example = iu.sample(m.wrap())
                    raise CompileError(r.loc, f"`{r.text}` reads local `{r.array}` before it is written"
                                              + (f" (e.g. at {_point(m, example)})" if example else ""))
                live_in[r.id] = iu.coalesced(m)
    deps.sort(key=lambda d: (_stmt_index(d.sink_access), d.sink_access, _stmt_index(d.source)))
    return replace(program, flow=DataFlow(tuple(deps), live_in, _live_out(program, sched)))


def _live_out(program: PolyProgram, sched: isl.UnionMap) -> dict[str, isl.Map]:
    """The last write of every element of each argument array, per write access."""
    out: dict[str, isl.Map] = {}
    for name, arr in program.arrays.items():
        if not arr.is_arg:
            continue
        writes = [s.write.relation.intersect_params(program.context) for s in program.statements if s.write.array == name]
        if not writes:
            continue
        w = isl.UnionMap.empty(sched.get_space())
        for m in writes:
            w = w.union(isl.UnionMap.from_map(m))
        # element -> time of each write; keep the latest; back to the writing instance.
        elem_time = w.reverse().apply_range(sched)
        last = elem_time.lexmax().apply_range(sched.reverse())  # element -> instance
        for m in iu.union_map_pieces(last.reverse()):
            stmt = m.get_tuple_name(isl.dim_type.in_)
            out[f"{stmt}.w"] = iu.coalesced(m)
    return dict(sorted(out.items(), key=lambda kv: _stmt_index(kv[0])))


def _stmt_index(name: str) -> int:
    return int(name.split(".")[0][1:])


def _point(m: isl.Map, sample: tuple[int, ...]) -> str:
    np_ = m.dim(isl.dim_type.param)
    n_in = m.dim(isl.dim_type.in_)
    vals = sample[np_:]
    params = ", ".join(f"{m.get_dim_name(isl.dim_type.param, k)}={v}" for k, v in enumerate(sample[:np_]))
    s = f"{m.get_tuple_name(isl.dim_type.in_)}[{', '.join(map(str, vals[:n_in]))}]"
    return s + (f" with {params}" if params else "")
