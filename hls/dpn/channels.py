"""Channel compilation: typing (section 5.5.1) and exact sizing.

Typing uses the channel relation and the two process schedules:
  in-order  <=> no x -> x', y -> y' with x' before y' in the consumer but x after y in the producer;
  unicity   <=> every produced value is read by one consumer iteration (isl).
Parameters are bound, so in-order is decided on the enumerated pairs (`tables.py`), sorted by consumer
time: the producer times must not decrease.  The isl formulation (`is_in_order`) is exact too but its
lexicographic maps over tiled time stamps (15 dimensions and more) cost seconds per channel.
FIFO = in-order and unicity; FIFO with multiplicity = in-order only; otherwise an addressable buffer.

Sizing replays the global sequential order defined by the process schedules.  A FIFO needs the
largest number of values written and not yet (first) read at any time; a buffer gets a modular
allocation (successive moduli over the producer iteration vector) such that no two values alive at
the same time share a slot.  docs/channel-sizing.md explains why these sizes can never deadlock.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from .network import Channel, ChannelKind, ProcessNetwork, Stage
from .tables import NetworkTables


def is_in_order(rel: isl.Map, prod_sched: isl.Map, cons_sched: isl.Map) -> bool:
    lt_c = cons_sched.lex_lt_map(cons_sched)  # y -> y' : y before y'
    gt_p = prod_sched.lex_gt_map(prod_sched)  # x -> x2 : x after x2
    bad = rel.apply_range(lt_c).apply_range(rel.reverse()).intersect(gt_p)
    return bad.is_empty()


def is_unique(rel: isl.Map) -> bool:
    return rel.is_single_valued()


def in_order_pairs(c: Channel, tables: NetworkTables) -> bool:
    """In-order on the enumerated pairs: sorted by consumer time, producer times never decrease."""
    prod = tables.process(c.producer).time
    pairs = tables.channel(c).pairs
    times = [prod[x] for x, _y in pairs]
    return all(a <= b for a, b in zip(times, times[1:]))


def classify(c: Channel, net: ProcessNetwork, tables: NetworkTables | None = None) -> Channel:
    in_order = in_order_pairs(c, tables or NetworkTables(net))
    unicity = is_unique(c.relation)
    if in_order and unicity:
        kind = ChannelKind.FIFO
    elif in_order:
        kind = ChannelKind.FIFO_MULT
    else:
        kind = ChannelKind.BUFFER
    return replace(c, kind=kind, in_order=in_order, unicity=unicity)


def type_channels(net: ProcessNetwork, tables: NetworkTables | None = None) -> ProcessNetwork:
    tables = tables or NetworkTables(net)
    return net.with_channels([classify(c, net, tables) for c in net.channels], Stage.TYPED)


def _fifo_depth(events: list[tuple[tuple, int]]) -> int:
    """Max occupancy; at equal times reads (-1) come before writes (+1): a process reads, then writes."""
    events.sort()
    level = best = 0
    for _t, delta in events:
        level += -1 if delta == 0 else 1
        best = max(best, level)
    return best


def size_channel(c: Channel, net: ProcessNetwork, tables: NetworkTables) -> Channel:
    ptime = tables.process(c.producer).time
    ctime = tables.process(c.consumer).time
    tab = tables.channel(c)
    if c.kind in (ChannelKind.FIFO, ChannelKind.FIFO_MULT):
        events: list[tuple[tuple, int]] = []
        for x, ys in tab.readers.items():
            events.append((ptime[x], 1))
            events.append((ctime[ys[0]], 0))
        depth = max(1, _fifo_depth(events))
        return replace(c, depth=depth, max_live=depth)
    moduli, live = _modular_allocation(tab.readers, ptime, ctime)
    size = 1
    for b in moduli:
        size *= b
    return replace(c, depth=max(1, size), moduli=moduli, max_live=live)


def _modular_allocation(readers, ptime, ctime) -> tuple[tuple[int, ...], int]:
    """Successive moduli b_k with x -> (x_k mod b_k) injective on values alive at the same time."""
    events = []
    for x, ys in readers.items():
        events.append((ptime[x], 1, x))
        events.append((ctime[ys[-1]], 0, x))  # dead after its last read
    events.sort()
    dims = len(next(iter(readers))) if readers else 0
    span = [0] * dims
    active: set = set()
    best = 0
    for _t, kind, x in events:
        if kind == 0:
            active.discard(x)
            continue
        for y in active:
            for k in range(dims):
                if x[k] != y[k]:
                    span[k] = max(span[k], abs(x[k] - y[k]))
                    break
        active.add(x)
        best = max(best, len(active))
    return tuple(s + 1 for s in span), best


def size_channels(net: ProcessNetwork, tables: NetworkTables | None = None) -> ProcessNetwork:
    assert net.stage >= Stage.TYPED
    tables = tables or NetworkTables(net)
    return net.with_channels([size_channel(c, net, tables) for c in net.channels], Stage.SIZED)


def _prefix_order(dims: int, k: int, strict_at: bool) -> isl.Map:
    """{t -> t' : t and t' agree on the first k-1 dims (k dims if not strict_at), t_k-1 < t'_k-1 if strict_at}."""
    a = [f"a{i}" for i in range(dims)]
    b = [f"b{i}" for i in range(dims)]
    eq = [f"a{i} = b{i}" for i in range(k - 1 if strict_at else k)]
    if strict_at:
        eq.append(f"a{k - 1} < b{k - 1}")
    return isl.Map(f"{{ [{', '.join(a)}] -> [{', '.join(b)}] : {' and '.join(eq) or 'true'} }}")


def split_by_depth(c: Channel, net: ProcessNetwork, tile_dims: int) -> list[isl.Map]:
    """SPLIT of Fig. 5.11: the dependences crossing each tiling hyperplane, and those inside a tile."""
    p, q = net.process(c.producer), net.process(c.consumer)
    dims = p.schedule.dim(isl.dim_type.out)
    parts = []
    for k in range(1, tile_dims + 1):
        order = p.schedule.apply_range(_prefix_order(dims, k, True)).apply_range(q.schedule.reverse())
        parts.append(c.relation.intersect(order))
    same = p.schedule.apply_range(_prefix_order(dims, tile_dims, False)).apply_range(q.schedule.reverse())
    parts.append(c.relation.intersect(same))
    return [m.coalesce() for m in parts if not m.is_empty()]


def fifoize(net: ProcessNetwork, tables: NetworkTables | None = None) -> ProcessNetwork:
    """Split every non-FIFO channel by depth; keep the split when all its parts are FIFOs (Theorem 5.3)."""
    tiling = getattr(net, "tiling", None)
    tile_dims = 0 if tiling is None or not tiling.is_tiled else tiling.band_dims + 1
    if tile_dims == 0:
        return net
    tables = tables or NetworkTables(net)
    out: list[Channel] = []
    for c in net.channels:
        if c.kind == ChannelKind.FIFO or c.role == "order":
            out.append(c)
            continue
        parts = split_by_depth(c, net, tile_dims)
        typed = [classify(replace(c, name=f"{c.name}_{k}", relation=m), net, tables) for k, m in enumerate(parts)]
        if len(typed) > 1 and all(t.kind == ChannelKind.FIFO for t in typed):
            out.extend(typed)
        else:
            out.append(c)
    return net.with_channels(out, Stage.TYPED)


def fifo_recovery_stats(ppn: ProcessNetwork, dpn_before: ProcessNetwork, dpn_after: ProcessNetwork) -> dict:
    """Table 5.4's columns: FIFOs of the untiled network, how many tiling broke, how many splitting restored.

    Only channels between compute processes count (Theorem 5.3 is about them): a load channel is not
    a broken PPN channel but a new one, whose order is the band's first-read order over all the
    array's read accesses."""
    ppn_fifos = {c.ppn_channel for c in ppn.channels if c.kind == ChannelKind.FIFO and c.role == "local"}
    def broken_in(net: ProcessNetwork) -> set[str]:
        return {c.ppn_channel for c in net.channels if c.ppn_channel in ppn_fifos and c.kind != ChannelKind.FIFO}
    broken = broken_in(dpn_before)
    still = broken_in(dpn_after)
    return {"ppn_fifos": len(ppn_fifos), "fifos_broken": len(broken), "fifos_restored": len(broken - still),
            "fifos_passed": len(ppn_fifos) - len(broken)}
