"""Process merging: light compute processes share one process, so the processes are balanced.

The partition gives every statement (every parallel part of one) its own process.  A band's pace is
set by its heaviest process; a light statement beside it (gemm's `C *= beta` beside the k-reduction,
an initialization, a final scaling) idles most of the time in a process of its own.  Merging it into
another process costs almost no cycles and saves the hardware of a process (control, pipeline,
output stage).  This is also what the roofline asks for: it divides all statement instances by the
number of compute processes, so idle processes show up as a gap to the roofline.

A merged process iterates over the *time stamps* of its members' instances: its domain is the union
of their images under the global schedule (dimensions constant over all of them dropped), its schedule
the embedding back into global time.  It runs the members in their global order, one iteration per
cycle, each iteration computing the statement that owns the stamp (`Member.instance`).  Since the global
order is a sequential execution of the kernel, a merged network still has the schedule the channel
sizes are computed for, so sizing keeps it deadlock-free; a dependence between two members becomes a
channel from the process to itself, like a reduction's.

Which processes to merge (`balance_groups`) is a first-fit-decreasing bin packing on iteration counts
with bins as large as the heaviest process (plus a slack); the pipeline keeps a merge only when the
cycle model shows it does not cost more than the slack (`hls/pipeline.py`).
"""

from __future__ import annotations

from typing import Optional, Sequence

import islpy as isl

from ..poly import isl_utils as iu
from .network import Member, Process, ProcessKind, ProcessNetwork, replace

SLACK = 0.2  # merged bins may hold this much more than the heaviest process; merges may cost this much


def balance_groups(net: ProcessNetwork, *, per_band: bool, light_only: bool = False, independent: bool = False,
                   affinity: bool = False, slack: float = SLACK) -> list[list[str]]:
    """Groups of two or more compute processes to merge: first-fit decreasing by iteration count into
    bins of (1 + slack) x the heaviest process.  With `per_band`, only processes of one tile band share
    a bin (processes of different bands may run at the same time).  With `light_only`, processes of
    more than half the heaviest one's iterations stay alone: putting a light producer (an
    initialization) into the process of its heavy consumer makes the consumer wait for the producer's
    pipeline at every hand-over, while light processes merged among themselves still run ahead.  With
    `independent`, a bin never holds two processes with a dependence between their statements (a
    chain of light statements, like a rounding then a saturation, would wait on itself).  With
    `affinity`, every heavy process opens its own bin and a light one joins the bin of a heavy
    process it has a dependence with, when there is room (bicg: each zero initialization with the
    reduction it starts; with the statements one after another inside tiles, the initializations
    are done before the reduction needs them).  Parallel parts of one statement (`--parallel`) never
    share a bin: that would undo the parallelism asked for."""
    compute = list(net.iter_compute())
    if len(compute) < 2:
        return []
    weight = {p.name: iu.card(p.domain) for p in compute}
    order = {p.name: k for k, p in enumerate(compute)}
    heaviest = max(weight.values())
    cap = heaviest * (1 + slack)
    band = {p.name: _band_of(net, p) if per_band else 0 for p in compute}
    bins: list[tuple[list[int], list[str]]] = []
    items = [n for n in weight if not (light_only and 2 * weight[n] > heaviest)]
    linked = _linked(net) if independent or affinity else set()
    stmts = {p.name: set(p.statements) for p in compute}  # parallel parts of a statement stay parallel
    if affinity:
        heavy = [n for n in sorted(items, key=order.__getitem__) if 2 * weight[n] > heaviest]
        bins = [([weight[n]], [n]) for n in heavy]
        for name in sorted((n for n in items if n not in heavy), key=lambda n: (-weight[n], order[n])):
            for load, names in bins:
                if (band[names[0]] == band[name] and load[0] + weight[name] <= cap
                        and (names[0], name) in linked and not any(stmts[n] & stmts[name] for n in names)):
                    load[0] += weight[name]
                    names.append(name)
                    break
        return [sorted(names, key=order.__getitem__) for _, names in bins if len(names) > 1]
    for name in sorted(items, key=lambda n: (-weight[n], order[n])):
        for load, names in bins:
            if (band[names[0]] == band[name] and load[0] + weight[name] <= cap
                    and not any((name, n) in linked or stmts[n] & stmts[name] for n in names)):
                load[0] += weight[name]
                names.append(name)
                break
        else:
            bins.append(([weight[name]], [name]))
    return [sorted(names, key=order.__getitem__) for _, names in bins if len(names) > 1]


def _linked(net: ProcessNetwork) -> set[tuple[str, str]]:
    """Pairs of compute processes (both orders) with a flow dependence between their statements."""
    flow = net.program.flow
    pairs = {(d.source, d.sink) for d in flow.dependences} if flow is not None else set()
    procs = list(net.iter_compute())
    out = set()
    for p in procs:
        for q in procs:
            if p is not q and any((a, b) in pairs or (b, a) in pairs for a in p.statements for b in q.statements):
                out.add((p.name, q.name))
    return out


def _band_of(net: ProcessNetwork, p: Process) -> int:
    bands = net.tiling.bands if net.tiling is not None else ()
    for k, b in enumerate(bands):
        if p.statements[0] in b.statements:
            return k
    return -1


def merged_name(names: Sequence[str]) -> str:
    """`S0_S1`: part names are `S<k>_<n>` (digits after the underscore), so this cannot collide."""
    return "_".join(names)


def merge_processes(net: ProcessNetwork, groups: Sequence[Sequence[str]]) -> ProcessNetwork:
    """The network with each group of compute processes replaced by one process over their time stamps."""
    if not groups:
        return net
    values = net.program.param_values()
    new_name: dict[str, str] = {}
    embed: dict[str, isl.Map] = {}  # old process iteration -> merged process iteration
    merged: dict[str, Process] = {}
    for group in groups:
        procs = [net.process(n) for n in group]
        assert all(p.kind == ProcessKind.COMPUTE for p in procs) and len(procs) > 1
        name = merged_name(group)
        stamps: Optional[isl.Set] = None
        for p in procs:
            img = p.schedule.range()
            stamps = img if stamps is None else stamps.union(img)
        assert stamps is not None
        stamps = iu.coalesced(stamps)
        proj = isl.Map.identity(isl.Space.map_from_set(stamps.get_space())).intersect_domain(stamps)
        for d in reversed(range(stamps.dim(isl.dim_type.set))):
            if iu.constant_dim(stamps, d, values) is not None:
                proj = proj.project_out(isl.dim_type.out, d, 1)
        proj = proj.set_tuple_name(isl.dim_type.out, name)  # global time -> merged iteration
        instances: dict[str, isl.Map] = {}  # per statement: parallel parts of one statement become one member
        for p in procs:
            phi = p.schedule.apply_range(proj)
            embed[p.name] = phi
            new_name[p.name] = name
            for m in p.members:
                inst = phi.reverse().apply_range(m.instance)
                instances[m.statement] = inst if m.statement not in instances else instances[m.statement].union(inst)
        members = [Member(st, iu.coalesced(inst)) for st, inst in instances.items()]
        domain = iu.coalesced(proj.range())
        merged[name] = Process(name, ProcessKind.COMPUTE, domain, iu.coalesced(proj.reverse().intersect_domain(domain)),
                               procs[0].loc, members=tuple(members))
    out = ProcessNetwork(net.program, net.time_dims, net.stage)
    out.tiling = net.tiling
    out.partition = net.partition
    out.mem_width = net.mem_width
    out.mem_latency = net.mem_latency
    out.notes = list(net.notes)
    for p in net.processes:
        if p.name not in new_name:
            out.add_process(p)
        elif merged[new_name[p.name]].name not in out.graph:
            out.add_process(merged[new_name[p.name]])
    for c in net.channels:
        rel, prod, cons = c.relation, c.producer, c.consumer
        if prod not in embed and cons not in embed:
            out.add_channel(c)  # its relation as it is: a new object would be read again (`isl_utils.reread`)
            continue
        if prod in embed:
            rel, prod = embed[prod].reverse().apply_range(rel), new_name[prod]
        if cons in embed:
            rel, cons = rel.apply_range(embed[cons]), new_name[cons]
        out.add_channel(replace(c, producer=prod, consumer=cons, relation=iu.coalesced(rel)))
    return out


def describe(groups: Sequence[Sequence[str]]) -> str:
    return ", ".join("{" + ", ".join(g) + "}" for g in groups)


__all__ = ["SLACK", "balance_groups", "describe", "merge_processes", "merged_name"]

