"""Reference interpreter: run a bound `PolyProgram` in its original order on numpy arrays.

It exists to cross-check the frontend (domains, accesses, schedule, typing) against gcc on the
user's own C: if the model were wrong, the two would disagree.
"""

from __future__ import annotations

from typing import Mapping

import islpy as isl
import numpy as np

from . import isl_utils as iu
from .evaluate import compile_expr, scalar_values
from .program import PolyProgram


def access_table(relation: isl.Map) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Instance -> element for a (bound) access relation."""
    n_in = relation.dim(isl.dim_type.in_)
    return {tuple(p[:n_in]): tuple(p[n_in:]) for p in iu.map_pairs(relation).tolist()}


def instances_in_order(program: PolyProgram) -> list[tuple[tuple[int, ...], str, tuple[int, ...]]]:
    """Every statement instance as (time, statement, iteration), sorted by the original schedule."""
    out = []
    for s in program.statements:
        n = len(s.iterators)
        for p in iu.map_pairs(program.statement_schedule(s.name)).tolist():
            out.append((tuple(p[n:]), s.name, tuple(p[:n])))
    out.sort()
    return out


def interpret(program: PolyProgram, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Execute the kernel; returns the final contents of every argument array (inputs are not mutated)."""
    assert program.is_bound, "bind parameters first"
    params = program.param_values()
    mem: dict[str, np.ndarray] = {}
    for name, arr in program.arrays.items():
        if arr.is_arg:
            mem[name] = np.array(inputs[name], dtype=arr.type.dtype, copy=True)
        else:
            shape = tuple(_extent_sizes(arr.extent))
            mem[name] = np.zeros(shape, dtype=arr.type.dtype)
    scalars = scalar_values(program, inputs)
    plans = {}
    for s in program.statements:
        slots = {r.id: k for k, r in enumerate(s.reads)}
        plans[s.name] = (
            compile_expr(s.expr, slots, scalars, params),
            [(mem[r.array], access_table(r.relation), program.arrays[r.array].type.is_int) for r in s.reads],
            (mem[s.write.array], access_table(s.write.relation)),
        )
    with np.errstate(all="ignore"):
        for _t, name, it in instances_in_order(program):
            f, reads, (wmem, wtab) = plans[name]
            vals = [int(m[tab[it]]) if is_int else m[tab[it]] for m, tab, is_int in reads]
            wmem[wtab[it]] = f(it, vals)
    return {k: v for k, v in mem.items() if program.arrays[k].is_arg}


def _extent_sizes(extent: isl.Set) -> list[int]:
    n = extent.dim(isl.dim_type.set)
    sizes = []
    for d in range(n):
        mx = iu.constant_value(extent.dim_max(d))
        sizes.append((mx if mx is not None else -1) + 1)
    return sizes
