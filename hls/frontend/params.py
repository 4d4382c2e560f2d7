"""Structure parameters: the in-bounds assumptions, and binding parameters to integers.

`analyze` may keep parameters symbolic.  The context then holds the parameter values for which
every access stays inside its array (like a polyhedral compiler's "assumed context"); an access
that is out of bounds whenever it executes is an error.  Hardware needs integers: `bind_params`
takes the user's `--param` values, infers a missing one as the largest value the assumptions allow
(PolyBench passes `n = N` where arrays are declared `[N]`), and re-checks every access.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import islpy as isl

from ..diagnostics import CompileError, UsageError
from ..poly import isl_utils as iu
from ..poly.program import Access, PolyProgram


def _violations(program: PolyProgram, acc: Access) -> isl.Map:
    arr = program.arrays[acc.array]
    touched = acc.relation.intersect_params(program.context)
    return touched.subtract_range(arr.extent)


def _describe(acc: Access, bad: isl.Map, program: PolyProgram) -> str:
    pt = iu.sample(bad.wrap())
    arr = program.arrays[acc.array]
    what = "writes" if acc.is_write else "reads"
    shape = "".join(f"[{s}]" for s in arr.shape)
    msg = f"`{acc.text}` {what} outside `{acc.array}{shape}`"
    if pt is not None:
        np_ = bad.dim(isl.dim_type.param)
        n_in = bad.dim(isl.dim_type.in_)
        params, rest = pt[:np_], pt[np_:]
        where = ", ".join(f"{d}={v}" for d, v in zip(program.statement(acc.statement).iterators, rest[:n_in]))
        elem = ", ".join(map(str, rest[n_in:]))
        ps = ", ".join(f"{bad.get_dim_name(isl.dim_type.param, k)}={v}" for k, v in enumerate(params))
        msg += f": at {where or 'the statement'} it accesses [{elem}]" if n_in else f": it accesses [{elem}]"
        if ps:
            msg += f" (with {ps})"
    return msg


def check_bounds(program: PolyProgram) -> PolyProgram:
    """Restrict the context to parameter values keeping every access in bounds; reject hopeless accesses."""
    ctx = program.context
    for s in program.statements:
        runs = s.domain.intersect_params(program.context).params()
        for acc in s.accesses:
            bad = _violations(program, acc)
            if bad.is_empty():
                continue
            ok_params = isl.Set.universe(ctx.get_space()).subtract(bad.params())
            if ok_params.intersect(runs).is_empty():
                raise CompileError(acc.loc, _describe(acc, bad, program))
            ctx = ctx.intersect(ok_params)
    return replace(program, context=iu.coalesced(ctx))


def bind_params(program: PolyProgram, values: Mapping[str, int]) -> PolyProgram:
    """Fix every structure parameter to an integer and restrict all isl objects accordingly."""
    names = [p.name for p in program.params]
    for k in values:
        if k not in names:
            known = ", ".join(names) or "none"
            raise UsageError(f"--param {k}: `{program.name}` has no integer parameter `{k}` (parameters: {known})")
    fixed: dict[str, int] = {}
    params = []
    notes = list(program.notes)
    given = iu.param_set(values, names)
    room = program.context.intersect(given)
    runs = [st.domain.intersect_params(room).params() for st in program.statements]
    all_run = room
    for r in runs:
        all_run = all_run.intersect(r)
    # Prefer parameter values for which every statement executes: that is what the kernel is for.
    room = all_run if not all_run.is_empty() else room
    for p in program.params:
        if p.name in values:
            fixed[p.name] = int(values[p.name])
            params.append(replace(p, value=fixed[p.name]))
            continue
        here = room.intersect(iu.param_set(fixed, names))
        as_set = here.move_dims(isl.dim_type.set, 0, isl.dim_type.param, names.index(p.name), 1)
        as_set = as_set.project_out(isl.dim_type.param, 0, as_set.dim(isl.dim_type.param))
        val = None
        if not as_set.is_empty():
            try:
                val = iu.constant_value(as_set.dim_max(0))
            except isl.Error:  # unbounded optimum
                val = None
        if val is None:
            raise CompileError(p.loc, f"parameter `{p.name}` needs a value: pass `--param {p.name}=V`")
        fixed[p.name] = val
        params.append(replace(p, value=val, inferred=True))
        notes.append(f"parameter {p.name} not given; using {p.name}={val}, the largest value keeping every "
                     "access in bounds (override with --param)")
    for p in params:
        if not p.type.wrap(p.value) == p.value:
            raise CompileError(p.loc, f"value {p.value} does not fit parameter `{p.name}` of type {p.type}")
    ctx = iu.param_set(fixed, names)
    for a in program.arrays.values():
        for k in range(a.extent.dim(isl.dim_type.set)):
            ext = a.extent.intersect_params(ctx)
            if ext.is_empty():
                blame = next((p for p in params if p.name in a.shape[k]), None) if a.shape else None
                raise CompileError(blame.loc if blame else a.loc,
                                   f"with {_values_text(fixed)}, array `{a.name}` has no elements "
                                   f"(size `{a.shape[k]}` is not positive)")
    bound = replace(program, params=tuple(params), context=ctx, notes=tuple(notes), flow=None)
    stmts = []
    for s in bound.statements:
        dom = s.domain.intersect_params(ctx)
        if dom.is_empty():
            notes.append(f"statement `{s.text}` ({s.loc}) never executes with {_values_text(fixed)}")
            continue
        if not dom.is_bounded():
            raise CompileError(s.loc, f"the loops around `{s.text}` are unbounded")
        stmts.append(replace(
            s, domain=dom,
            write=replace(s.write, relation=s.write.relation.intersect_params(ctx)),
            reads=tuple(replace(r, relation=r.relation.intersect_params(ctx)) for r in s.reads),
        ))
    if not stmts:
        raise CompileError(program.loc, f"with {_values_text(fixed)}, no statement of `{program.name}` executes")
    arrays = {k: replace(a, extent=a.extent.intersect_params(ctx)) for k, a in bound.arrays.items()}
    bound = replace(bound, statements=tuple(stmts), arrays=arrays, schedule=bound.schedule.intersect_params(ctx),
                    notes=tuple(notes))
    for s in bound.statements:
        for acc in s.accesses:
            bad = _violations(bound, acc)
            if not bad.is_empty():
                raise CompileError(acc.loc, _describe(acc, bad, bound))
    return bound


def restrict_params(program: PolyProgram, values: Mapping[str, int]) -> PolyProgram:
    """Fix some parameters in the context only, keeping the others symbolic (for `analyze`)."""
    names = [p.name for p in program.params]
    for k in values:
        if k not in names:
            raise UsageError(f"--param {k}: `{program.name}` has no integer parameter `{k}` (parameters: "
                             f"{', '.join(names) or 'none'})")
    given = iu.param_set(values, names)
    ctx = program.context.intersect(given)
    if ctx.is_empty():
        for s in program.statements:
            for acc in s.accesses:
                bad = acc.relation.intersect_params(given).subtract_range(program.arrays[acc.array].extent)
                if not bad.is_empty():
                    raise CompileError(acc.loc, _describe(acc, bad, program))
        raise CompileError(program.loc, "the given parameter values make some access go out of bounds")
    return replace(program, context=ctx, params=tuple(replace(p, value=values.get(p.name)) for p in program.params))


def _values_text(values: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "these parameters"
