"""Privatization of local arrays and scalars: expand them by the loops whose iterations own their values.

A local declared outside the loops (`double buf[N];` or `double nrm;` at the top of the function) is
one object for the whole kernel, so every iteration of the outer loop overwrites the previous one's
values: the write-after-read and write-after-write conflicts serialize iterations that share no value,
and the tiler and the DPN must respect them.  When exact dataflow shows that every value of the local
is read only in the iteration (of the loops enclosing all its uses) that wrote it, giving each
iteration its own copy changes no value read: the local is indexed by those loop counters in front of
its own subscripts (array expansion, as for scalars declared inside a loop body in `extract.py`).

Locals are never live-in (`dataflow.py` rejects reading a local before writing it) nor live-out, so
the copies cost no off-chip traffic; in the network they are channels like any on-chip value.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from ..poly import isl_utils as iu
from ..poly.program import Access, PolyProgram, Statement
from .dataflow import analyze_dataflow


def privatize(program: PolyProgram) -> PolyProgram:
    """`program` (bound, with its dataflow) with each local split into its live ranges
    (`split_live_ranges`) and each expanded as far as the dataflow allows, and its dataflow
    recomputed; unchanged when no local can be split or expanded."""
    assert program.flow is not None and program.is_bound
    program = split_live_ranges(program)
    expand: dict[str, int] = {}
    users_of = {name: [s for s in program.statements if any(a.array == name for a in s.accesses)]
                for name, arr in program.arrays.items() if not arr.is_arg}
    for name, users in users_of.items():
        if not users:
            continue
        deps = [d.relation for d in program.flow.dependences if program.access(d.sink_access).array == name]
        k = _common_loops(program, users)
        while k > 0 and not all(_same_outer(r, k) for r in deps):
            k -= 1
        if k > 0 and _carried_conflict(users, name, k):
            expand[name] = k
    if not expand:
        return program
    arrays = dict(program.arrays)
    notes = []
    lows_of: dict[str, list[int]] = {}
    for name, k in expand.items():
        users = users_of[name]
        lows, sizes = _loop_ranges(users, k, program.param_values())
        lows_of[name] = lows
        arr = arrays[name]
        box = isl.Set(f"{{ [{', '.join(f'e{j}' for j in range(k))}] : "
                      + " and ".join(f"0 <= e{j} < {sizes[j]}" for j in range(k)) + " }")
        extent = box.flat_product(arr.extent.reset_tuple_id() if arr.ndim else arr.extent).set_tuple_name(name)
        arrays[name] = replace(arr, shape=tuple(str(n) for n in sizes) + arr.shape, extent=extent)
        loops = ", ".join(f"`{users[0].iterators[j]}`" for j in range(k))
        notes.append(f"local `{name}` privatized: one copy per iteration of {loops} (every value is read in the "
                     f"iteration that writes it), so iterations do not wait on each other's reuse of it")
    statements = []
    for s in program.statements:
        def fix(a: Access) -> Access:
            if a.array not in expand:
                return a
            return replace(a, relation=_expanded(a.relation, s, expand[a.array], lows_of[a.array]))

        statements.append(replace(s, write=fix(s.write), reads=tuple(fix(r) for r in s.reads)))
    out = replace(program, arrays=arrays, statements=tuple(statements), notes=(*program.notes, *notes))
    return analyze_dataflow(out)


def split_live_ranges(program: PolyProgram) -> PolyProgram:
    """Each local renamed per live range: the groups of its accesses between which no value flows
    (connected by the exact dataflow, a read with the writes of the values it reads), the first
    keeping the name.  C reuses a scalar across loop nests (a recursive filter's `ym1`, carried
    along the rows of one nest and the columns of another): as one object, its accesses enclose no
    common loop, so no copy per row or column could be given, and the rows' chains ran one after
    another.  Each range lives in its own nest and is expanded there.  Reading another range's
    storage is never needed (no value flows), so only false conflicts go.  A statement whose writes
    are never read stays with the first range.  Dataflow recomputed when a local is split."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    locals_ = {name for name, arr in program.arrays.items() if not arr.is_arg}
    for d in program.flow.dependences:
        name = program.access(d.sink_access).array
        if name in locals_:
            parent[find(("w", d.source))] = find(("r", d.sink_access))
    order = {s.name: k for k, s in enumerate(program.statements)}
    renamed: dict[str, str] = {}  # access id -> the local it now names
    arrays = dict(program.arrays)
    notes = []
    for name in sorted(locals_):
        keys = [(("w", s.name) if a.is_write else ("r", a.id), a) for s in program.statements for a in s.accesses
                if a.array == name]
        groups: dict[tuple[str, str], list] = {}
        for key, a in keys:
            if key[0] == "r" or key in parent:  # a write some read reads from
                groups.setdefault(find(key), []).append(a)
        ranges = sorted(groups.values(), key=lambda accs: min(order[a.statement] for a in accs))
        if len(ranges) < 2:
            continue
        names = [name]
        for accs in ranges[1:]:
            k = len(names)
            while f"{name}_{k}" in arrays:
                k += 1
            fresh = f"{name}_{k}"
            names.append(fresh)
            arr = arrays[name]
            arrays[fresh] = replace(arr, name=fresh, extent=arr.extent.set_tuple_name(fresh))
            renamed.update({a.id: fresh for a in accs})
        where = "; ".join(f"`{n}` in {', '.join(sorted({a.statement for a in accs}, key=order.get))}"
                          for n, accs in zip(names, ranges))
        notes.append(f"local `{name}` split into {len(ranges)} live ranges, between which no value flows: {where}")
    if not renamed:
        return program

    def fix(a: Access) -> Access:
        fresh = renamed.get(a.id)
        if fresh is None:
            return a
        return replace(a, array=fresh, relation=a.relation.set_tuple_name(isl.dim_type.out, fresh))

    statements = tuple(replace(s, write=fix(s.write), reads=tuple(fix(r) for r in s.reads)) for s in program.statements)
    return analyze_dataflow(replace(program, arrays=arrays, statements=statements, notes=(*program.notes, *notes)))


def _common_loops(program: PolyProgram, users: list[Statement]) -> int:
    """How many outer loops enclose every user: the 2d+1 schedules agree on the leading constants and
    put the statement's own counter at each loop position."""
    scheds = [program.statement_schedule(s.name) for s in users]
    depth = min(s.domain.dim(isl.dim_type.set) for s in users)
    values = program.param_values()
    for level in range(depth):
        consts = set()
        for s, m in zip(users, scheds):
            c = iu.constant_dim(m.range(), 2 * level, values)
            if c is None or not _is_counter(m, 2 * level + 1, level, s.domain):
                return level
            consts.add(c)
        if len(consts) != 1:
            return level
    return depth


def _is_counter(m: isl.Map, out_dim: int, in_dim: int, domain: isl.Set) -> bool:
    """Time dimension `out_dim` equals the statement's loop counter `in_dim` on the whole domain."""
    if out_dim >= m.dim(isl.dim_type.out):
        return False
    m = m.intersect_domain(domain)
    return m.is_subset(m.equate(isl.dim_type.in_, in_dim, isl.dim_type.out, out_dim))


def _carried_conflict(users: list[Statement], name: str, k: int) -> bool:
    """Some write of `name` and another access of the same element lie in different iterations of the
    first `k` loops: only then does a copy per iteration remove a dependence (a scalar declared inside
    the loop body is already expanded by `extract`)."""
    space = users[0].domain.get_space().params()
    acc = iu.union((isl.UnionMap.from_map(a.relation) for s in users for a in s.accesses if a.array == name),
                   isl.UnionMap.empty(space))
    wr = iu.union((isl.UnionMap.from_map(s.write.relation) for s in users if s.write.array == name),
                  isl.UnionMap.empty(space))
    for m in iu.union_map_pieces(wr.apply_range(acc.reverse())):
        if not _same_outer(m, k):
            return True
    return False


def _same_outer(rel: isl.Map, k: int) -> bool:
    """Every pair of `rel` (source instance -> sink instance) shares its first `k` loop counters."""
    eq = rel
    for j in range(k):
        eq = eq.equate(isl.dim_type.in_, j, isl.dim_type.out, j)
    return rel.is_subset(eq)


def _loop_ranges(users: list[Statement], k: int, values: dict[str, int]) -> tuple[list[int], list[int]]:
    """Smallest value and number of values of each of the first `k` counters over all users."""
    lows, sizes = [], []
    for j in range(k):
        lo = hi = None
        for s in users:
            dom = iu.fix_params(s.domain, values)
            a, b = iu.constant_value(dom.dim_min(j)), iu.constant_value(dom.dim_max(j))
            assert a is not None and b is not None, "bound programs have constant loop ranges"
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
        lows.append(lo)
        sizes.append(hi - lo + 1)
    return lows, sizes


def _expanded(rel: isl.Map, s: Statement, k: int, lows: list[int]) -> isl.Map:
    """S[x] -> A[e] becomes S[x] -> A[x_0 - low_0, ..., x_{k-1} - low_{k-1}, e]."""
    n = s.domain.dim(isl.dim_type.set)
    xs = [f"x{j}" for j in range(n)]
    name = rel.get_tuple_name(isl.dim_type.out)
    lead = isl.Map(f"{{ {s.name}[{', '.join(xs)}] -> [{', '.join(f'x{j} - ({lows[j]})' for j in range(k))}] }}")
    lead = lead.align_params(rel.get_space()).intersect_domain(rel.domain())
    out = lead.flat_range_product(rel.reset_tuple_id(isl.dim_type.out))
    return out.set_tuple_name(isl.dim_type.out, name)
