"""Channel compilation: typing (section 5.5.1) and exact sizing.

Typing uses the channel relation and the two process schedules:
  in-order  <=> no x -> x', y -> y' with x' before y' in the consumer but x after y in the producer;
  unicity   <=> every produced value is read by one consumer iteration (isl).
In-order is decided with isl relations (`is_in_order`), so typing costs the same at every problem
size; below `TYPE_REPLAY_BELOW` iterations the enumerated pairs decide instead, their time stamps
enumerated into arrays and compared in numpy (`event_in_order`: the same answer, at a fraction of the
40 ms that isl takes per channel and of the per-pair tables' `in_order_pairs`).  isl's lexicographic maps over the whole tiled
time stamps (15 dimensions and more) cost seconds per channel, so the time dimensions constant over both processes
are projected out first (`compact_schedules`: they never decide an order): tens of milliseconds.
`in_order_pairs` is the enumerated oracle the tests compare it with.  Below `BOUND_ABOVE` iterations
isl gets `ORDER_SECONDS` (in a forked child), then the pairs' time stamps, enumerated into an array,
decide in numpy (`event_in_order`): a skewed 3-d stencil's load schedule makes isl's test take
minutes there.
FIFO = in-order and unicity; FIFO with multiplicity = in-order only; otherwise an addressable buffer.

Sizing follows the global sequential order defined by the process schedules.  A FIFO needs the
largest number of values written and not yet (first) read at any time; a buffer gets a modular
allocation (successive moduli over the producer iteration vector) such that no two values alive at
the same time share a slot.  docs/channel-sizing.md explains why these sizes can never deadlock.
Both are computed on relations, at a cost that does not grow with the problem (`symbolic_size`):
the buffer's moduli are the largest distances (`deltas`) between values alive together, first
differing dimension by dimension (isl alone); a FIFO's depth is the maximum over write events of
the count of values alive then, a barvinok count bounded over the events (islpy-barvinok).  Where
barvinok is absent, its bound is not exact or it runs too long, the FIFO gets the product of the
moduli a buffer of the same values would have: no two values alive together share a slot of that
allocation, so no more values than slots are ever alive together, and the FIFO holds every value
the sequential order keeps alive (the argument of docs/channel-sizing.md holds for any depth at
least the exact one).  `max_live` stays None there.  Those counts and that bound are taken from
`BOUND_ABOVE` iterations on.  Below, a buffer is sized by replaying its values' enumerated
lifetimes (`event_replayed_moduli`) and a FIFO by replaying its write and first-read times, which
are enumerated into arrays and sorted in numpy (`event_replayed_depth`; `hls/dpn/stamps.py`): exact,
a fraction of a second at 400k values, where barvinok often gives up after its time limit and isl's
moduli over a skewed 3-d stencil's load schedule take seconds per buffer.  Replaying the global order
on the enumerated instances (`replayed_size`) is the tests' oracle for both.
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import islpy as isl
import numpy as np

from ..bounded import text_within
from ..poly import isl_utils as iu
from ..poly.lexorder import first_differs, shared_prefix
from ..poly.rows import lex_order
from .network import Channel, ChannelKind, ProcessNetwork, Stage
from .stamps import pair_stamps
from .tables import NetworkTables
from .timestamps import compact_schedules


def is_in_order(rel: isl.Map, prod_sched: isl.Map, cons_sched: isl.Map) -> bool:
    """No two pairs cross: read in a later consumer time, a value never has an earlier producer time.

    Posed on the time stamps of the pairs (consumer time -> producer time), in the plain lexicographic
    orders of the time space, one disjunct at a time: consumer times that first differ at dimension
    i, producer times that first differ at j, each an emptiness test with i or j equalities that isl
    solves in milliseconds, where the whole union of disjuncts composed with schedules of dozens of
    pieces (a skewed stencil's loads) took seconds to minutes.  Pairs whose time stamps share their
    first k dimensions (`shared_prefix`) can only cross when their consumer times agree there too (a
    difference there orders the producer times the same way), so i and j start at k."""
    times = rel.reverse().apply_domain(cons_sched).apply_range(prod_sched)  # t_y -> t_x of every pair
    k = shared_prefix(times)
    ys, xs = times.get_space().domain(), times.get_space().range()
    back = times.reverse()
    reads = times.domain()
    for i in range(k, ys.dim(isl.dim_type.set)):
        # two reads that first differ at i exist or not whatever they read: asked of the reads alone
        # before the pairs are composed (heat-3d's memory-order tokens at T=100, N=40: 1.6 s of a test)
        later = first_differs(ys, i, 1)
        if later.intersect_domain(reads).intersect_range(reads).is_empty():
            continue
        pairs = back.apply_range(later).apply_range(times)  # t_x -> t_x' read later: not empty
        for j in range(k, xs.dim(isl.dim_type.set)):
            if not pairs.intersect(first_differs(xs, j, -1)).is_empty():
                return False
    return True


def channel_in_order(c: Channel, net: ProcessNetwork) -> bool:
    """`is_in_order` of a channel on its processes' compacted schedules."""
    prod, cons = compact_schedules(net.process(c.producer).schedule, net.process(c.consumer).schedule)
    return is_in_order(c.relation, prod, cons)


def is_unique(rel: isl.Map) -> bool:
    """Whether each value is read once.  A relation of many pieces is asked by its text: the
    candidates of one tiling (its point orders, merges, slabs) share their channels' relations, and a
    memory order's of dozens of pieces took isl a second (heat-3d's corner at T=10, N=26); reading a
    few pieces back costs more than asking again (cubic-upsample at N=2048: 0.3 s of 2.5)."""
    if rel.n_basic_map() <= UNIQUE_ASKED_UP_TO:
        return rel.is_single_valued()
    return _single_valued(str(rel))


UNIQUE_ASKED_UP_TO = 8  # basic maps of a relation whose unicity is asked directly, not by its text


@functools.lru_cache(maxsize=1024)
def _single_valued(text: str) -> bool:
    return isl.Map(text).is_single_valued()


def in_order_pairs(c: Channel, tables: NetworkTables) -> bool:
    """In-order on the enumerated pairs: sorted by consumer time, producer times never decrease (the
    test oracle of `channel_in_order`)."""
    prod = tables.process(c.producer).time
    pairs = tables.channel(c).pairs
    times = [prod[x] for x, _y in pairs]
    return all(a <= b for a, b in zip(times, times[1:]))


def is_small(c: Channel, net: ProcessNetwork, limit: Optional[int] = None) -> bool:
    """Whether the channel's two processes run fewer than `limit` (`REPLAY_BELOW`) iterations together."""
    limit = REPLAY_BELOW if limit is None else limit
    prod, cons = net.process(c.producer).domain, net.process(c.consumer).domain
    return iu.fewer_points_than(prod, limit) and iu.fewer_points_than(cons, limit) and \
        iu.card(prod) + iu.card(cons) < limit  # counts are memoised: no second count


def classify(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None) -> Channel:
    tables = tables or NetworkTables(net)  # lazy: what is enumerated is kept for the other channels
    if is_small(c, net, TYPE_REPLAY_BELOW):
        in_order = event_in_order(c, net, tables)
        if in_order is None:
            in_order = in_order_pairs(c, tables)
    elif is_small(c, net, BOUND_ABOVE):
        in_order = _bounded_in_order(c, net, tables)
    else:
        in_order = channel_in_order(c, net)
    unicity = is_unique(c.relation)
    if in_order and unicity:
        kind = ChannelKind.FIFO
    elif in_order:
        kind = ChannelKind.FIFO_MULT
    else:
        kind = ChannelKind.BUFFER
    return replace(c, kind=kind, in_order=in_order, unicity=unicity)


#: producer + consumer iterations below which typing replays the pairs' time stamps in numpy rather
#: than asking isl: on heat-3d's corner at level 2 (T=7, N=18; channels of 20k-60k iterations) isl
#: answered 220 tests in 0.2-1 s each, in forked children that cost 15 s of CPU, where the replay of
#: the same channels is a fraction of that and gives the same answer (the same RTL)
TYPE_REPLAY_BELOW = 100_000
ORDER_SECONDS = 1.0  # isl's limit on an in-order test below `BOUND_ABOVE` iterations, then the enumerated one


def _bounded_in_order(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables]) -> bool:
    """`channel_in_order` within `ORDER_SECONDS`, else the same answer on the enumerated time stamps
    of the pairs (`event_in_order`, or `in_order_pairs` where isl cannot enumerate them into arrays).
    A skewed 3-d stencil's load schedule (a lexmin over seven reads, 38 pieces) made isl's test take
    12-116 s on heat-3d's corner (a memory-order channel between a load and a store unit; a load
    channel split by `fifoize`), where the enumeration takes well under a second.  Where both
    processes' stamps are enumerated already (an earlier channel of theirs was replayed), the replay
    comes first: it costs no more than isl's answer then, and isl would likely run out of time again
    (heat-3d at T=10, N=26: 193 -> 178 s, ten tests of a second each not asked)."""
    replayed = None
    if tables is not None and tables.has_stamps(c.producer) and tables.has_stamps(c.consumer):
        replayed = event_in_order(c, net, tables)
    if replayed is None:
        text = text_within(lambda: str(int(channel_in_order(c, net))), ORDER_SECONDS)
        if text is not None:
            return text == "1"
        replayed = event_in_order(c, net, tables)
    return replayed if replayed is not None else in_order_pairs(c, tables or NetworkTables(net))


def event_in_order(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None) -> Optional[bool]:
    """`in_order_pairs` on the pairs' (consumer time, producer time) stamps, enumerated into arrays
    (`stamps.pair_stamps`) and checked in numpy: no per-pair objects.  Pairs read at one consumer
    time may come in any order (as in `is_in_order`).  None when they cannot be enumerated that way."""
    pairs = _pair_stamps(c, net, tables)
    if pairs is None:
        return None
    _xs, written, read = pairs
    written = written[lex_order(read, written)]
    step = written[1:] - written[:-1]
    moved = step != 0
    first = np.argmax(moved, axis=1)  # the first dimension where consecutive producer times differ
    return bool(np.all(step[np.arange(step.shape[0]), first][moved.any(axis=1)] > 0))


def _pair_stamps(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables]):
    """`stamps.pair_stamps` of the channel, on its processes' stamps kept by `tables`."""
    tables = tables or NetworkTables(net)
    prod, cons = tables.stamps(c.producer), tables.stamps(c.consumer)
    if prod is None or cons is None:
        return None
    return pair_stamps(c, prod, cons, net.program.param_values())


def type_channels(net: ProcessNetwork, tables: Optional[NetworkTables] = None,
                  typed_as: Optional[ProcessNetwork] = None) -> ProcessNetwork:
    """Every channel classified.  `typed_as`: the typed network this one was merged from
    (`merge.merge_processes`), whose channels' types are taken rather than decided again: a type
    depends only on the time stamps of the channel's pairs (in-order) and on its relation being
    one-to-one (unicity), and a merged process runs its members' iterations at their time stamps,
    under the channel names they had (a merge candidate's typing was a sixth of its cost on 3mm)."""
    tables = tables or NetworkTables(net)  # lazy: enumerated only for small channels
    known = {c.name: c for c in typed_as.channels} if typed_as is not None else {}
    out = []
    for c in net.channels:
        k = known.get(c.name)
        if k is not None and (k.ppn_channel, k.source_port, k.sink_port, k.role) == \
                (c.ppn_channel, c.source_port, c.sink_port, c.role):
            out.append(replace(c, kind=k.kind, in_order=k.in_order, unicity=k.unicity))
        else:
            out.append(classify(c, net, tables))
    return net.with_channels(out, Stage.TYPED)


def _fifo_depth(events: list[tuple[tuple, int]]) -> int:
    """Max occupancy; at equal times reads (-1) come before writes (+1): a process reads, then writes."""
    events.sort()
    level = best = 0
    for _t, delta in events:
        level += -1 if delta == 0 else 1
        best = max(best, level)
    return best


def _write_and_reads(c: Channel, net: ProcessNetwork) -> tuple[isl.Map, isl.Map]:
    """(write time, read times) of the values of a channel, on the compacted time stamps of its two
    processes."""
    prod, cons = compact_schedules(net.process(c.producer).schedule, net.process(c.consumer).schedule)
    return prod.intersect_domain(c.relation.domain()), c.relation.apply_range(cons)


def _times(c: Channel, net: ProcessNetwork) -> tuple[isl.Map, isl.Map]:
    """(write time, last read time) of the values of a channel (`_write_and_reads`)."""
    write, reads = _write_and_reads(c, net)
    return write, reads.lexmax()


def _first_read_times(c: Channel, net: ProcessNetwork) -> isl.Map:
    """The first read time of each value of a channel: only a FIFO's count asks for it, and its lexmin
    was a sixth of the channel sizes' cost on heat-3d at T=100, N=40."""
    return _write_and_reads(c, net)[1].lexmin()


def _alive_at_writes(write: isl.Map, until: isl.Map) -> isl.Map:
    """{x' -> x : x is written at or before x' and read after}: the values alive once x' is written
    (a process reads before it writes in one time step, so a value read at that step is gone)."""
    return write.lex_le_map(write).reverse().intersect(write.lex_lt_map(until))


def _constant(fold) -> Optional[int]:
    """The value of a parameter-free bound (parameters are fixed by the context)."""
    pieces: list = []
    fold.foreach_piece(lambda dom, _f: pieces.append(dom))
    if not pieces:
        return 0
    val = fold.eval(pieces[0].sample_point())
    return int(val.to_python()) if val.is_int() else None


COUNT_SECONDS = 2.0  # barvinok runs on for minutes on a few skewed bands: the replay decides then


def _max_count(relation: Callable[[], isl.Map], seconds: float = COUNT_SECONDS) -> Optional[int]:
    """The largest image of `relation()` (barvinok, within `seconds`, which may include building the
    relation), or None when the bound is not exact or took longer."""

    def count() -> str:
        m = relation()
        if m.is_empty():
            return "0"
        bound, tight = m.card().bound(isl.fold.max)
        value = _constant(bound) if tight else None
        return "" if value is None else str(value)

    text = text_within(count, seconds)
    return int(text) if text else None


def _at_origin(m: isl.Map) -> Optional[isl.Map]:
    """{x' - o -> x - o}, o the lexicographic minimum of m's domain, with the tuples unnamed: the
    relation of values alive together, the same for two channels that are translates of one another."""
    low = iu.sample(m.domain().lexmin())
    if low is None:
        return None
    low = low[m.dim(isl.dim_type.param):]
    names = [f"x{d}" for d in range(len(low))]
    shift = isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join(f'{x} - ({v})' for x, v in zip(names, low))}] }}")
    plain = m.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    shift = shift.align_params(plain.get_space())
    return plain.apply_domain(shift).apply_range(shift)


def _shared_count(alive: isl.Map, seconds: float, counted: Optional[list]) -> Optional[int]:
    """`_max_count` of `alive`, or the exact count of an equal relation at the origin made before on the
    same network (`counted`: (relation at the origin, count) pairs, `IslFirst.counted`)."""
    key = _at_origin(alive) if counted is not None else None
    if key is None:
        return _max_count(lambda: alive, seconds)
    for other, value in counted:
        if other.get_space() == key.get_space() and other.is_equal(key):
            return value
    value = _max_count(lambda: alive, seconds)
    if value is not None:
        counted.append((key, value))
    return value


def _moduli(write: isl.Map, last: isl.Map) -> tuple[int, ...]:
    """Successive moduli: along the first dimension where two values alive together differ, one
    more than the largest distance between them there (the replay's `_modular_allocation`).

    A value is alive from its write to its last read; where those two time stamps always share their
    first k dimensions (`shared_prefix`: a tile band's loads and their readers), two values alive
    together share them too, so "written before" is taken from dimension k on, one disjunct of the
    lexicographic order at a time (heat-3d's corner: 5.9 s -> 1.0 s on a load channel)."""
    k = shared_prefix(write.reverse().apply_range(last))
    times = write.get_space().range()
    earlier = None  # x -> y: y written before x
    for i in range(k, times.dim(isl.dim_type.set)):
        e = write.apply_range(first_differs(times, i, -1)).apply_range(write.reverse())
        earlier = e if earlier is None else earlier.union(e)
    if earlier is None:
        return tuple(1 for _ in range(write.dim(isl.dim_type.in_)))
    # y still alive at x's write: write(x) before last(y), decided from dimension k on too (both share
    # write(y)'s first k), so only those disjuncts of the order are intersected (heat-3d at T=10,
    # N=26: 21 s -> 14 s on a load buffer)
    alive = None
    for i in range(k, times.dim(isl.dim_type.set)):
        a = earlier.intersect(write.apply_range(first_differs(times, i, 1)).apply_range(last.reverse()))
        alive = a if alive is None else alive.union(a)
    deltas = alive.deltas().reset_tuple_id()
    n = deltas.dim(isl.dim_type.set)
    names = ", ".join(f"d{k}" for k in range(n))
    spans = []
    for k in range(n):
        at = deltas.intersect(isl.Set(f"{{ [{names}] : {' and '.join([f'd{j} = 0' for j in range(k)] + [f'd{k} != 0'])} }}"))
        spans.append(max((_largest_distance(isl.Set.from_basic_set(b), k) for b in at.get_basic_sets()), default=0))
    return tuple(s + 1 for s in spans)


def _moduli_within(times: Callable[[], tuple[isl.Map, isl.Map]]) -> Optional[tuple[int, ...]]:
    """`_moduli` of the (write, last read) times that `times()` builds, both within `MODULI_SECONDS`; None
    when they take longer.  Past that, `band_box_moduli` bounds them: over a skewed stencil's load
    buffer at a size beyond the replay (jacobi-2d at T=100, N=1000) isl's moduli ran for five minutes,
    where the bound takes a tenth of a second."""
    text = text_within(lambda: " ".join(map(str, _moduli(*times()))), MODULI_SECONDS)
    return None if text is None else tuple(int(b) for b in text.split())


def band_box_moduli(write: isl.Map, last: isl.Map) -> Optional[tuple[int, ...]]:
    """Moduli no smaller than `_moduli`'s, from the box of the values written in one tile band: along
    each producer dimension, one more than its largest extent among the values whose write times share
    the first k dimensions (`shared_prefix` of write and last read, as in `_moduli`).

    Why they are safe: a value y alive when x is written has write(y) <= write(x) < last(y), and
    write(y) and last(y) share their first k dimensions, so write(x) shares them too: values alive
    together lie in one such group.  Two distinct values of a group first differ at some dimension d,
    by less than the group's extent along d, so their residues modulo that extent differ there, and
    the modular slots (`Σ stride_d · (x_d mod b_d)`) of values alive together are distinct.  The
    extent is a parametric lexmax minus lexmin over the group's k coordinates, maximized by isl:
    nothing is enumerated and its cost does not grow with the problem.  It equals the exact moduli
    where a band's values along a dimension are all alive together (a tile row read by the next), and
    exceeds them where only a window is (a stencil's three rows): `Channel.sized_by` says "bound".

    None where the write and last-read times share no dimension (k = 0: a memory-order token, alive
    from a store in one band to a load in a later one): the box would be the whole domain (jacobi-2d
    at T=40, N=200: 550k words for a channel whose exact moduli hold a few thousand), and isl is
    waited for."""
    k = shared_prefix(write.reverse().apply_range(last))
    if k == 0:
        return None
    group = write.project_out(isl.dim_type.out, k, write.dim(isl.dim_type.out) - k).reverse()  # g -> x
    n = write.dim(isl.dim_type.in_)
    out = []
    for d in range(n):
        along = group.project_out(isl.dim_type.out, d + 1, n - d - 1).project_out(isl.dim_type.out, 0, d)
        extent = along.lexmax_pw_multi_aff().get_pw_aff(0).sub(along.lexmin_pw_multi_aff().get_pw_aff(0))
        out.append(int(extent.max_val().floor().to_python()) + 1)
    return tuple(out)


def bounded_moduli(c: Channel, net: ProcessNetwork) -> Optional[tuple[int, ...]]:
    """`band_box_moduli` of a channel's write and last-read times (None where they share no dimension):
    what `size_channel` takes beyond the replay, for the tests to check against it."""
    return band_box_moduli(*_times(c, net))


def _largest_distance(at: isl.Set, k: int) -> int:
    """The largest |d_k| over `at`, asked of isl one basic set at a time: its dim_max over the union
    of a skewed 3-d stencil's load deltas (866 basic sets) ran for minutes, one by one 1.6 s."""
    return max(int(at.dim_max_val(k).to_python()), -int(at.dim_min_val(k).to_python()))


def symbolic_size(c: Channel, net: ProcessNetwork, bound_large: bool = False, count: bool = True,
                  moduli: Optional[tuple[int, ...]] = None, seconds: float = COUNT_SECONDS,
                  counted: Optional[list] = None) -> Optional[Channel]:
    """The channel sized on its relations (module docstring).  When a FIFO's count needs barvinok and
    it is absent, inexact or late: None, or with `bound_large` the product of its buffer moduli
    (`max_live` None), an upper bound that can never deadlock (module docstring).  `count=False`
    takes the bound without trying barvinok (the tests compare it with the replay).  A buffer's
    `moduli`, when given, are its `_moduli` already computed; `seconds`, barvinok's limit on a FIFO's count;
    `counted`, the exact counts made on the network's other channels (`_shared_count`)."""
    if c.relation.is_empty():
        return None  # nothing to count: the replay is immediate
    write, last = _times(c, net)
    if c.kind in (ChannelKind.FIFO, ChannelKind.FIFO_MULT):
        # the relation is built only to be counted: without barvinok it was a sixth of heat-3d's compile
        # at T=100, N=40 (its lexicographic maps over a skewed band's time stamps)
        counting = count and iu.counting_available()
        live = (_shared_count(_alive_at_writes(write, _first_read_times(c, net)), seconds, counted)
                if counting else None)
        if live is not None:
            return replace(c, depth=max(1, live), max_live=max(1, live))
        if not bound_large:
            return None
        bound = _moduli_within(lambda: (write, last)) or band_box_moduli(write, last) or _moduli(write, last)
        return replace(c, depth=max(1, math.prod(bound)), max_live=None, sized_by="bound")
    moduli = moduli or _moduli(write, last)  # exact: `size_channel` bounds the ones that take too long
    # a buffer's live count is reported, never its size: counted once, on the network compiled
    # (`with_live_counts`), not on every candidate
    return replace(c, depth=max(1, math.prod(moduli)), moduli=moduli, max_live=None)


def with_live_counts(net: ProcessNetwork) -> ProcessNetwork:
    """The count of values alive together of each buffer sized on its relations, which only the report
    shows (a buffer's size is its moduli): barvinok takes up to `COUNT_SECONDS` a buffer, and counting
    them on every candidate network was a fifth of choosing lenet-c3's (11 s of 53).  The relation is
    built within the count's time limit too (over a skewed 3-d stencil's 38-piece load schedule it
    took minutes).  Without barvinok, or past the limit, `max_live` stays None; after the first count
    that gives no answer, the other buffers are not counted (nussinov at N=156: six of its 23 counts ran
    out of their 2 s, 12.5 s of a 38 s compile)."""
    if not iu.counting_available():
        return net
    out, counting = [], True
    for c in net.channels:
        if counting and c.kind == ChannelKind.BUFFER and c.max_live is None and not c.relation.is_empty():
            write, last = _times(c, net)
            c = replace(c, max_live=_max_count(lambda: _alive_at_writes(write, last)))
            counting = c.max_live is not None
        out.append(c)
    return net.with_channels(out, net.stage)


REPLAY_BELOW = 20_000  # producer + consumer iterations under which replaying is faster than counting
#: Iterations from which a FIFO that barvinok cannot count gets the bound rather than the replay (about
#: a second of replay): every example size stays exact, a large problem is never enumerated.
BOUND_ABOVE = 400_000


@dataclass
class IslFirst:
    """Whether `size_channel` still asks isl before the replay on a network's channels: once an answer
    did not come (barvinok past `FIRST_COUNT_SECONDS`, isl's moduli past `MODULI_SECONDS`), the other
    channels of the network, cut by the same tiles and schedules, are replayed at once.  Every FIFO
    count of jacobi-2d at T=22, N=76 ran out of time (0.6 s each, 6 s in all) before a replay of 0.2 s."""

    asking: bool = True
    #: whether barvinok is still asked over domains with integer divisions: a parallel slab's rows
    #: (`63*floor(i/63) >= i - 7`) count in a tenth of a second (gemm's memory-order FIFOs at
    #: 1000x1100x1200, `--parallel 8`: 0.16 s against a 1 s replay each), a parity such as
    #: redblack-2d's `(i + j) % 2` runs out of time; one that does not answer stops the others
    dividing: bool = True
    #: (producer, consumer) pairs one of whose FIFOs barvinok could not count exactly on the large path:
    #: the pair's other FIFOs, timed by the same two schedules, get the bound at once.  nussinov at
    #: N=156 has six FIFOs from its diagonal process to the other; each count ran out of its 2 s or
    #: came back inexact, 11 s of a 21 s compile, and each ended at the bound anyway
    uncounted: set = field(default_factory=set)
    #: the network's exact FIFO counts, by their relation of values alive together moved to the origin
    #: (`_at_origin`): a parallel network's slabs repeat one another's channels shifted along the slab
    #: hyperplane (gemm at 1000x1100x1200, `--parallel 8`: 48 counts of 18 relations, 29 ms each); a
    #: count depends on the relation alone, so an equal one (`is_equal`) takes it over
    counted: list = field(default_factory=list)


def size_channel(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None,
                 isl_first: Optional[IslFirst] = None) -> Channel:
    """Up to `BOUND_ABOVE` iterations, the replay of the channel's events: a FIFO's write and
    first-read times (`event_replayed_depth`, numpy), a buffer's values' lifetimes
    (`event_replayed_moduli`) when it has under `LIFETIME_CELLS` values x dimensions, else isl's
    moduli within `MODULI_SECONDS` before that replay: exact, and cheaper than barvinok's count or
    isl's moduli over a schedule of dozens of pieces (a skewed 3-d stencil's loads: seconds per
    buffer, where the replay takes a fraction of one).  Where both processes' schedules have at most
    `FEW_PIECES` pieces and they run `ISL_FIRST_ABOVE` iterations or more, isl is asked first
    (barvinok's exact count for a FIFO without integer divisions, isl's moduli for a buffer), and
    the replay only when it gives no exact answer in time: the replay enumerates both processes,
    which at full size was most of realizing the chosen network
    (2mm at NI=49 NJ=57 NK=65 NL=74: 10 s of 38).  Beyond, `symbolic_size`: exact, or the upper
    bound for a FIFO barvinok cannot count; a buffer there too gets isl's moduli within
    `MODULI_SECONDS`, then the replay up to `REPLAY_CELLS`, and beyond that `band_box_moduli`, an
    upper bound (`Channel.sized_by` "bound") rather than a wait without end, where the values live
    inside a tile band (else isl's moduli however long they take).  The tables' replay where the
    events cannot be enumerated into arrays.
    So no large problem is enumerated.  `isl_first`: shared by the channels of one network (`IslFirst`)."""
    tables = tables or NetworkTables(net)  # lazy: what is enumerated is kept for the other channels
    isl_first = isl_first or IslFirst()
    large = not is_small(c, net, BOUND_ABOVE)
    few = isl_first.asking and not is_small(c, net, ISL_FIRST_ABOVE) and _few_pieces(c, net)
    if not large and c.kind in (ChannelKind.FIFO, ChannelKind.FIFO_MULT):
        divided = _has_divisions(c, net)
        ask = few and iu.counting_available() and (isl_first.dividing or not divided)
        sized = symbolic_size(c, net, seconds=FIRST_COUNT_SECONDS, counted=isl_first.counted) if ask else None
        if sized is not None:
            return sized
        if ask and divided:
            isl_first.dividing = False
        elif ask:
            isl_first.asking = False
        depth = event_replayed_depth(c, net, tables)
        if depth is not None:
            return replace(c, depth=max(1, depth), max_live=max(1, depth))
    moduli = None
    if c.kind == ChannelKind.BUFFER:
        replay_first = not large and not few and _cells_at_most(c, net, LIFETIME_CELLS)
        replayed = event_replayed_moduli(c, net, tables) if replay_first else None
        if replayed is None and not is_small(c, net):
            moduli = _moduli_within(lambda: _times(c, net))
            if moduli is None:
                isl_first.asking = isl_first.asking and not few
                if not replay_first and _cells_at_most(c, net, REPLAY_CELLS):  # one not enumerable is not tried twice
                    replayed = event_replayed_moduli(c, net, tables)
                if replayed is None:  # beyond the replay: the bound, not a wait without end
                    write, last = _times(c, net)
                    bound = band_box_moduli(write, last)
                    if bound is not None:
                        return replace(c, depth=max(1, math.prod(bound)), moduli=bound, max_live=None,
                                       sized_by="bound")
                    moduli = _moduli(write, last)
        if replayed is not None:
            moduli, live = replayed
            return replace(c, depth=max(1, math.prod(moduli)), moduli=moduli, max_live=live)
    if is_small(c, net):
        return replayed_size(c, tables)
    pair = (c.producer, c.consumer)
    sized = symbolic_size(c, net, bound_large=large, moduli=moduli, count=pair not in isl_first.uncounted,
                          counted=isl_first.counted)
    if sized is not None and sized.sized_by == "bound":
        isl_first.uncounted.add(pair)
    return sized or replayed_size(c, tables)


def _cells_at_most(c: Channel, net: ProcessNetwork, limit: int) -> bool:
    """Whether a buffer's values x dimensions are at most `limit`.  Its producer's iterations bound
    its values, and they are counted once per process; the values' own set, of dozens of pieces on a
    skewed stencil's corner, cost half a second a buffer to count (heat-3d at T=10, N=26: 4.7 s)."""
    dims = c.relation.dim(isl.dim_type.in_)
    return iu.card(net.process(c.producer).domain) * dims <= limit or \
        iu.card(c.relation.domain()) * dims <= limit


#: schedule pieces (basic maps) of a channel's producer and of its consumer up to which isl is asked
#: before the replay (`size_channel`): on such schedules isl's moduli take a few hundredths of a second
#: where the replay enumerates both processes (2mm at NI=49 NJ=57 NK=65 NL=74: 0.06 s against 0.2-2.2 s
#: a buffer); over a skewed 3-d stencil's 21-piece load schedule they take seconds
FEW_PIECES = 4
#: producer + consumer iterations from which isl is asked first on such schedules: below, the replay
#: takes under a second, less than a count that fails (lu at N=80: barvinok's 2 s limit, then the
#: replay, on a FIFO of its diagonal process)
ISL_FIRST_ABOVE = 100_000
#: barvinok's limit on a FIFO's count asked before its replay: the counts that answer take under half
#: a second (2mm at level 3), one that does not may run past `COUNT_SECONDS` (two of 2mm's load FIFOs
#: at NK=64, where NK=65 answered)
FIRST_COUNT_SECONDS = 0.6


def _few_pieces(c: Channel, net: ProcessNetwork) -> bool:
    return all(net.process(p).schedule.n_basic_map() <= FEW_PIECES for p in (c.producer, c.consumer))


def _has_divisions(c: Channel, net: ProcessNetwork) -> bool:
    """Whether the producer's or the consumer's domain has an integer division: barvinok's count over
    redblack-2d's parity (`(i + j) % 2`) ran past its 2 s limit on every FIFO at T=22, N=76, and the
    replay came after (82 s against 50), so the first such count that does not answer stops the
    others of its network (`IslFirst.dividing`).  The tile coordinates' divisions in schedules and relations
    do not slow it (2mm's load FIFOs: 0.05 s)."""
    return any(bs.dim(isl.dim_type.div) for p in (c.producer, c.consumer)
               for bs in net.process(p).domain.get_basic_sets())


#: values x dimensions of a buffer under which its lifetimes are replayed before isl is asked: the
#: replay keeps a Python entry per value and dimension (box-blur-clamp at level 3, 131k values of 10
#: dimensions: 670 MB where isl's moduli took under a second)
LIFETIME_CELLS = 300_000
MODULI_SECONDS = 2.0  # isl's limit on a larger buffer's moduli, then the replay of its lifetimes
#: values x dimensions up to which a buffer whose moduli isl does not give within `MODULI_SECONDS` is
#: replayed, large or not (about 500 bytes a cell): heat-3d's load buffers at T=10, N=26 (276k
#: instances) kept isl for minutes each; beyond, the buffer gets `band_box_moduli`
REPLAY_CELLS = 1_500_000


def replayed_size(c: Channel, tables: NetworkTables) -> Channel:
    """The size by replaying the global order on the enumerated instances."""
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
    return replace(c, depth=max(1, math.prod(moduli)), moduli=moduli, max_live=live)


def _lifetimes(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None
               ) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per value of the channel: its producer iteration, write time, first and last read times, from
    the enumerated pairs and their stamps (`_pair_stamps`), sorted by value, then read time.  Not
    isl's lexmin and lexmax of the reads, which over a skewed 3-d stencil's load schedule ran for
    minutes.  None when the pairs cannot be enumerated that way."""
    pairs = _pair_stamps(c, net, tables)
    if pairs is None:
        return None
    xs, written, read = pairs
    order = lex_order(xs, read)
    xs, written, read = xs[order], written[order], read[order]
    starts = np.flatnonzero(np.r_[True, (xs[1:] != xs[:-1]).any(axis=1)]) if xs.shape[0] else np.zeros(0, int)
    ends = np.r_[starts[1:], xs.shape[0]] - 1
    return xs[starts], written[starts], read[starts], read[ends]


def event_replayed_depth(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None) -> Optional[int]:
    """The FIFO depth of `replayed_size` from the write and first-read times alone (`_lifetimes`),
    replayed in numpy: no per-instance Python objects, so a FIFO that barvinok cannot count is still
    sized exactly at a few hundred thousand values in well under a second (the tables' replay takes
    seconds there).  None when the times cannot be enumerated that way (the caller replays the
    tables)."""
    lives = _lifetimes(c, net, tables)
    if lives is None:
        return None
    _xs, written, first, _last = lives
    return _events_in_time(written, first)[1]


def _events_in_time(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, int]:
    """The lifetimes' ends (0 .. n-1) and starts (n .. 2n-1) in the order of their time stamps (rows),
    ends first at one time (a process reads, then writes), and the most lifetimes open at once."""
    n = starts.shape[0]
    times = np.concatenate([ends, starts])
    delta = np.r_[-np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64)]
    order = lex_order(times, delta[:, None])
    return order, int(np.cumsum(delta[order]).max(initial=0))


def _modular_allocation(readers, ptime, ctime) -> tuple[tuple[int, ...], int]:
    """Successive moduli b_k with x -> (x_k mod b_k) injective on values alive at the same time, and
    the most values alive at once (`_allocation_of_lifetimes`)."""
    if not readers:
        return (), 0
    xs = list(readers)
    return _allocation_of_lifetimes(np.array(xs, dtype=np.int64), np.array([ptime[x] for x in xs], dtype=np.int64),
                                    np.array([ctime[readers[x][-1]] for x in xs], dtype=np.int64))  # dead after its last read


def event_replayed_moduli(c: Channel, net: ProcessNetwork, tables: Optional[NetworkTables] = None
                          ) -> Optional[tuple[tuple[int, ...], int]]:
    """A buffer's `_modular_allocation` from its values' write and last-read times (`_lifetimes`),
    without the tables' per-pair objects: the exact answer where `_moduli`'s isl problems run long
    (a skewed 3-d stencil's loads, whose schedule is a lexmin over seven reads).  None when the times
    cannot be enumerated that way."""
    lives = _lifetimes(c, net, tables)
    if lives is None:
        return None
    xs, written, _first, last = lives
    return _allocation_of_lifetimes(xs.reshape(len(xs), c.relation.dim(isl.dim_type.in_)), written, last)


def _allocation_of_lifetimes(xs: np.ndarray, written: np.ndarray, dead: np.ndarray) -> tuple[tuple[int, ...], int]:
    """Successive moduli b_k with x -> (x_k mod b_k) injective on the values x (rows of `xs`) alive at
    the same time (from their `written` to their `dead` time stamps, rows), and the most values alive
    at once.

    Along dimension k, the pairs alive together that first differ there are the values sharing x's
    first k coordinates: the largest distance to x is to their smallest or largest k-th coordinate.
    So each prefix keeps a multiset of coordinates (two heaps with lazy deletion) instead of x being
    compared with every live value: n log n, where a buffer with thousands of live values cost
    seconds (memory-order tokens).  One sweep per dimension, on integer keys, and none along a
    dimension its prefix fixes (a load unit's constant band coordinates): the tuples of every prefix
    made this a tenth of choosing a skewed 3-d stencil's network."""
    n, dims = xs.shape
    if n == 0:
        return (1,) * dims, 0
    order, best = _events_in_time(written, dead)
    events = order.tolist()
    span = [0] * dims
    group = np.zeros(n, dtype=np.int64)  # the values' prefixes x[:k], numbered
    for k in range(dims):
        col = xs[:, k]
        lo = int(col.min())
        pairs = np.unique(group * (int(col.max()) - lo + 1) + (col - lo), return_inverse=True)[1].reshape(n)
        if pairs.max() > group.max():  # some prefix has two values here
            span[k] = _largest_live_distance(events, n, group.tolist(), col.tolist())
        group = pairs
    return tuple(s + 1 for s in span), best


def _largest_live_distance(events: list[int], n: int, group: list[int], value: list[int]) -> int:
    """The largest |value[i] - value[j]| over values i, j of one group alive together; `events`: the
    values' deaths (i) and births (n + i) in time order."""
    low: dict[int, list[int]] = {}
    high: dict[int, list[int]] = {}
    live: dict[tuple[int, int], int] = {}
    span = 0
    for e in events:
        if e < n:
            live[(group[e], value[e])] -= 1
            continue
        i = e - n
        g, v = group[i], value[i]
        lo, hi = low.get(g), high.get(g)
        if lo is None:
            lo, hi = low[g], high[g] = [], []
        while lo and not live[(g, lo[0])]:
            heapq.heappop(lo)
        while hi and not live[(g, -hi[0])]:
            heapq.heappop(hi)
        if lo:
            span = max(span, v - lo[0], -hi[0] - v)
        heapq.heappush(lo, v)
        heapq.heappush(hi, -v)
        live[(g, v)] = live.get((g, v), 0) + 1
    return span


def size_channels(net: ProcessNetwork, tables: NetworkTables | None = None) -> ProcessNetwork:
    assert net.stage >= Stage.TYPED
    tables = tables or NetworkTables(net)  # lazy: enumerated only for a channel that needs the replay
    isl_first = IslFirst()
    return net.with_channels([size_channel(c, net, tables, isl_first) for c in net.channels], Stage.SIZED)


def _prefix_order(dims: int, k: int, strict_at: bool) -> isl.Map:
    """{t -> t' : t and t' agree on the first k-1 dims (k dims if not strict_at), t_k-1 < t'_k-1 if strict_at}."""
    a = [f"a{i}" for i in range(dims)]
    b = [f"b{i}" for i in range(dims)]
    eq = [f"a{i} = b{i}" for i in range(k - 1 if strict_at else k)]
    if strict_at:
        eq.append(f"a{k - 1} < b{k - 1}")
    return isl.Map(f"{{ [{', '.join(a)}] -> [{', '.join(b)}] : {' and '.join(eq) or 'true'} }}")


def split_by_depth(c: Channel, net: ProcessNetwork, tile_dims: int) -> list[isl.Map]:
    """SPLIT of Fig. 5.11: the dependences crossing each tiling hyperplane, and those inside a tile.

    Only the first `tile_dims` time dimensions decide the parts, so the two schedules are cut to those
    before they are composed: the same parts, where composing whole schedules (a skewed 3-d
    stencil's load schedule of 21 pieces and 21 dimensions) was a sixth of choosing its network."""
    p, q = net.process(c.producer), net.process(c.consumer)
    head_p, head_q = _time_head(p.schedule, tile_dims), _time_head(q.schedule, tile_dims)
    parts = []
    for k in range(1, tile_dims + 1):
        order = head_p.apply_range(_prefix_order(tile_dims, k, True)).apply_range(head_q.reverse())
        parts.append(c.relation.intersect(order))
    same = head_p.apply_range(_prefix_order(tile_dims, tile_dims, False)).apply_range(head_q.reverse())
    parts.append(c.relation.intersect(same))
    return [iu.coalesced(m) for m in parts if not m.is_empty()]


def _time_head(schedule: isl.Map, n: int) -> isl.Map:
    """`schedule` cut to its first `n` time dimensions."""
    return schedule.project_out(isl.dim_type.out, n, schedule.dim(isl.dim_type.out) - n)


def fifoize(net: ProcessNetwork, tables: Optional[NetworkTables] = None) -> ProcessNetwork:
    """Split every non-FIFO channel by depth; keep the split when all its parts are FIFOs (Theorem 5.3)."""
    tiling = getattr(net, "tiling", None)
    tile_dims = 0 if tiling is None or not tiling.is_tiled else tiling.band_dims + 1
    if tile_dims == 0:
        return net
    out: list[Channel] = []
    tables = tables or NetworkTables(net)
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
