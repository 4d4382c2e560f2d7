"""Time stamps of two processes with the dimensions that never decide their order removed.

A tiled process's time stamp has 15 dimensions and more, most of them constants (the positions of
statements and bands in the global schedule); isl's lexicographic maps over all of them cost seconds
per pair of processes.  A dimension that holds one value over both processes' time stamps never
orders one instance before another, so projecting it out keeps the order and leaves isl a fraction
of the work.  Used by channel typing and sizing (`channels`) and by the memory order between load
and store units (`partition`).
"""

from __future__ import annotations

import islpy as isl

__all__ = ["compact_schedules"]


def _fixed_dims(sched: isl.Map) -> tuple:
    """Per time dimension, the value every time stamp of `sched` has there, or None (isl's plain
    check: a dimension it cannot see as fixed is kept, which never changes an order)."""
    rng = sched.range()
    out = []
    for d in range(rng.dim(isl.dim_type.set)):
        v = rng.plain_get_val_if_fixed(isl.dim_type.set, d)
        out.append(None if v.is_nan() else v.to_python())
    return tuple(out)


def compact_schedules(prod_sched: isl.Map, cons_sched: isl.Map) -> tuple[isl.Map, isl.Map]:
    """Both schedules without the time dimensions that hold one value over both ranges: the
    lexicographic order of what is left is the order of the full time stamps."""
    fp, fc = _fixed_dims(prod_sched), _fixed_dims(cons_sched)
    drop = [d for d, (a, b) in enumerate(zip(fp, fc)) if a is not None and a == b]
    for d in reversed(drop):
        prod_sched = prod_sched.project_out(isl.dim_type.out, d, 1)
        cons_sched = cons_sched.project_out(isl.dim_type.out, d, 1)
    return prod_sched, cons_sched
