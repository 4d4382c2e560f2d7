"""The untiled partition (PPN, section 5.1 of the reference): one process per statement.

Compute process `S<k>` runs statement S<k> in its original order.  `LOAD_<A>` brings every live-in
element of argument array A from memory once, just before its first read; `STORE_<A>` writes every
live-out element right after its last write.  There is one channel per (producer statement, read
access) pair of direct dependences, plus LOAD -> reader and last writer -> STORE channels.

Global time: the original 2d+1 schedule followed by two dimensions that place a load just before
the reading instance (0, read index), the instance itself (1, 0) and a store just after (2, 0).
"""

from __future__ import annotations

import islpy as isl

from ..poly import isl_utils as iu
from ..poly.program import PolyProgram
from .network import Channel, Process, ProcessKind, ProcessNetwork, renamed

LOAD_SLOT, COMPUTE_SLOT, STORE_SLOT = 0, 1, 2


def _extend(m: isl.Map, slot: int, sub: int) -> isl.Map:
    n = m.dim(isl.dim_type.out)
    m = m.add_dims(isl.dim_type.out, 2)
    return m.fix_val(isl.dim_type.out, n, slot).fix_val(isl.dim_type.out, n + 1, sub)


def load_name(array: str) -> str:
    return f"LOAD_{array}"


def store_name(array: str) -> str:
    return f"STORE_{array}"


def build_ppn(program: PolyProgram) -> ProcessNetwork:
    """Partition a bound, analyzed program into the untiled process network."""
    assert program.is_bound and program.flow is not None
    flow = program.flow
    first = program.statements[0]
    time_dims = program.statement_schedule(first.name).dim(isl.dim_type.out) + 2
    net = ProcessNetwork(program, time_dims)
    sched = {s.name: program.statement_schedule(s.name) for s in program.statements}

    # Load processes: one per argument array with live-in reads, elements ordered by first read.
    read_index = {r.id: k for k, r in enumerate(r for s in program.statements for r in s.reads)}
    firsts: dict[str, isl.Map] = {}
    for rid, m in flow.live_in.items():
        acc = program.access(rid)
        t = m.reverse().apply_range(_extend(sched[acc.statement], LOAD_SLOT, read_index[rid]))
        firsts[acc.array] = t if acc.array not in firsts else firsts[acc.array].union(t)
    for array in sorted(firsts, key=list(program.arrays).index):
        s = firsts[array].lexmin().coalesce()
        name = load_name(array)
        s = renamed(s, {array: name})
        net.add_process(Process(name, ProcessKind.LOAD, s.domain().coalesce(), s, program.arrays[array].loc,
                                array=array))
    # Compute processes.
    for st in program.statements:
        net.add_process(Process(st.name, ProcessKind.COMPUTE, st.domain, _extend(sched[st.name], COMPUTE_SLOT, 0),
                                st.loc, statement=st.name, instance=isl.Map.identity(
                                    isl.Space.map_from_set(st.domain.get_space())).intersect_domain(st.domain)))
    # Store processes: live-out elements, ordered by last write.
    lasts: dict[str, isl.Map] = {}
    for wid, m in flow.live_out.items():
        acc = program.access(wid)
        t = m.reverse().apply_range(_extend(sched[acc.statement], STORE_SLOT, 0))
        lasts[acc.array] = t if acc.array not in lasts else lasts[acc.array].union(t)
    for array in sorted(lasts, key=list(program.arrays).index):
        name = store_name(array)
        s = renamed(lasts[array].coalesce(), {array: name})
        net.add_process(Process(name, ProcessKind.STORE, s.domain().coalesce(), s, program.arrays[array].loc,
                                array=array))

    channels: list[Channel] = []

    def add(producer: str, consumer: str, rel: isl.Map, array: str, src: str, snk: str, role: str) -> None:
        name = f"c{len(channels)}"
        channels.append(Channel(name, producer, consumer, rel.coalesce(), array, program.arrays[array].type, src, snk,
                                name, role))

    for st in program.statements:
        for r in st.reads:
            if r.id in flow.live_in:
                add(load_name(r.array), st.name, renamed(flow.live_in[r.id].reverse(), {r.array: load_name(r.array)}),
                    r.array, "mem", r.id, "io")
            for d in flow.into(r.id):
                add(d.source, st.name, d.relation, r.array, f"{d.source}.w", r.id, "local")
    for wid, m in flow.live_out.items():
        acc = program.access(wid)
        add(acc.statement, store_name(acc.array), renamed(m, {acc.array: store_name(acc.array)}), acc.array, wid,
            "mem", "io")
    # Memory order: an element both loaded and stored must be loaded before the store overwrites it
    # (a write-after-read through off-chip memory).  A token channel LOAD_A -> STORE_A enforces it.
    for array in firsts:
        if array not in lasts:
            continue
        both = renamed(net.process(load_name(array)).domain, {load_name(array): array}).intersect(
            renamed(net.process(store_name(array)).domain, {store_name(array): array}))
        if both.is_empty():
            continue
        ident = isl.Map.identity(isl.Space.map_from_set(both.get_space())).intersect_domain(both)
        add(load_name(array), store_name(array), renamed(ident, {array: load_name(array)}).set_tuple_name(
            isl.dim_type.out, store_name(array)), array, "mem", "order", "order")
    for c in channels:
        net.add_channel(c)
    net.verify()
    return net
