"""The DPN partition (section 5.2 of the reference), of which the untiled PPN is the one-band case.

Compute process `S<k>` runs statement S<k> in the tiled order.  Tile bands are reuse units: a
dependence whose source and sink lie in one band flows through an on-chip channel; one that crosses
bands goes through off-chip memory: the source's value goes to `STORE_<A>`, which writes the last
value of each element per band (LASTWRITE), and `LOAD_<A>` reads it back for the later band, once
per band and element, just before its first read there (FIRSTREAD, communication coalescing of
Theorems 4.1/4.2), or before the band's first instance (`LOAD_ORDERS`).  Values from before the
kernel are loaded the same way.  Untiled, there is a single band: every element is loaded once
before its first read and stored once after its last write.
Locals (arrays and scalars declared in the kernel) have no off-chip copy: their dependences are on-chip
channels even between bands.

Memory order is explicit: token channels make a load wait for the store it must see (read after
write through memory) and a store wait for the last load that must not see it (write after read).

Global time: the tiled schedule followed by two dimensions that place a load just before the reading
instance (0, read index), the instance itself (1, 0) and a store just after (2, 0); a band-start load
at (band, one below every instance's next dimension, element, 0, .., 0, unit).
"""

from __future__ import annotations

from typing import Optional

import islpy as isl

from ..poly import isl_utils as iu
from ..poly.lexorder import equal_before
from ..poly.program import PolyProgram
from .network import Channel, Member, Process, ProcessKind, ProcessNetwork
from .timestamps import compact_schedules
from .tiling import DEFAULT_LOCAL_WORDS, Tiling, no_tiling, parallel_parts

DEFAULT_ONCHIP_WORDS = DEFAULT_LOCAL_WORDS // 4  # argument words carried between tile bands on chip

LOAD_SLOT, COMPUTE_SLOT, STORE_SLOT = 0, 1, 2


def _extend(m: isl.Map, slot: int, sub: int) -> isl.Map:
    n = m.dim(isl.dim_type.out)
    m = m.add_dims(isl.dim_type.out, 2)
    return m.fix_val(isl.dim_type.out, n, slot).fix_val(isl.dim_type.out, n + 1, sub)


#: `--read-ports`: one read channel per array (`shared`), or, for an array the kernel only reads, one
#: per parallel slab (`per-part`, with `--parallel` above 1): each slab's compute processes then get
#: their own load unit, so P processes are fed P words per cycle rather than sharing one.
READ_PORTS = ("per-part", "shared")
#: `--write-ports`: one write channel per array (`shared`), or, for an array stored by the processes
#: of several slabs, each element by one slab, one per slab (`per-part`): P processes then store P
#: results per cycle rather than queueing at one store unit in the array's order.
WRITE_PORTS = READ_PORTS

#: `--load-order`: when a load unit of a tiled band reads each element.  `first-read`: just before its
#: first read in the band (FIRSTREAD), in the readers' order, so its channels are FIFOs where the
#: readers' order allows and a buffer holds a value from its first read on.  `band-start`: before the
#: band's first instance, in the elements' row-major order, over their hull (`_band_hull`): a buffer
#: then holds every value the band reads from its start, but the unit's control walks one
#: polyhedron's lexicographic order (a skewed 3-d stencil's load unit at T=10, N=26: 29 successor
#: pieces instead of 1,038, whose next-state logic was half of its compile).  `auto`: `band-start`
#: for a unit whose first reads make a schedule of more than `BAND_START_ABOVE` basic maps
#: (`_band_start_pays`), `first-read` otherwise.
LOAD_ORDERS = ("auto", "first-read", "band-start")
#: the most basic maps of a first-read load schedule that `auto` keeps.  They grow with the tile
#: classes: at their own sizes the examples have at most 10 (red-black's); at 64 times their instances
#: jacobi-2d's has 17 (its control 0.8 s; band-start: 25% more buffer words for 0.3 s), red-black's 27
#: (2.4 s; band-start saves 4 s of 15 and doubles the words), heat-3d's 46 and 30 (74 s of control;
#: band-start: 183 -> 84 s, 46% more words); heat-3d's at 16 times, 21 (19 -> 13.5 s, 48% more words)
BAND_START_ABOVE = 24
#: how the load and store units of an array wait for one another across tile bands (`memory_order`):
#: `element`, each access for the last access of its element before it; `band`, the first access of a
#: band for the last of the latest earlier band it depends on (`_band_wait`: a token per band rather
#: than one per element alive across bands); `auto`, `band` for a unit of more than `BAND_ORDER_ABOVE`
#: iterations
MEMORY_ORDERS = ("auto", "element", "band")


def load_name(array: str, port: int = 0) -> str:
    """The load unit driving read channel `port` of `array` (the first keeps the plain name)."""
    return f"LOAD_{array}" if port == 0 else f"LOAD_{array}_{port}"


def store_name(array: str, port: int = 0) -> str:
    """The store unit driving write channel `port` of `array` (the first keeps the plain name)."""
    return f"STORE_{array}" if port == 0 else f"STORE_{array}_{port}"


def _band_start(domain: isl.Set, band_dims: int, time_dims: int, before: int, unit: int) -> Optional[isl.Map]:
    """The `band-start` schedule of a load unit over `domain` (band coordinates, element): each band's
    elements at time (band, `before`, element, 0.., LOAD_SLOT, `unit`), `before` being below every
    instance's time dimension `band_dims` (`_band_floor`), so they precede the band's instances in
    the element's row-major order.  Still a valid global schedule: what a band loads was stored by
    an earlier band (a later band's value would be local), and its own stores come after its loads.
    None where the time stamps have no room for the element's dimensions."""
    elements = domain.dim(isl.dim_type.set) - band_dims
    if band_dims + 1 + elements + 2 > time_dims:
        return None
    m = isl.Map.identity(isl.Space.map_from_set(domain.get_space()))
    m = m.insert_dims(isl.dim_type.out, band_dims, 1).fix_val(isl.dim_type.out, band_dims, before)
    n = m.dim(isl.dim_type.out)
    m = m.add_dims(isl.dim_type.out, time_dims - n)
    for d in range(n, time_dims - 2):
        m = m.fix_val(isl.dim_type.out, d, 0)
    m = m.fix_val(isl.dim_type.out, time_dims - 2, LOAD_SLOT).fix_val(isl.dim_type.out, time_dims - 1, unit)
    return m.reset_tuple_id(isl.dim_type.out).intersect_domain(domain)


def _band_hull(domain: isl.Set) -> isl.Set:
    """A `band-start` unit's domain: the simple hull of the elements its bands read first, within
    their own bounds per dimension.  One polyhedron, where those elements of a skewed 3-d stencil's
    band are a union of about ten, whose row-major walk has a hundred successor pieces and whose
    memory order with the store unit dozens (heat-3d at T=10, N=26).  The unit loads a few
    elements more, whose values no channel takes."""
    hull = isl.Set.from_basic_set(domain.simple_hull())
    for d in range(domain.dim(isl.dim_type.set)):
        lo, hi = domain.dim_min_val(d), domain.dim_max_val(d)
        if lo.is_int():
            hull = hull.lower_bound_val(isl.dim_type.set, d, lo)
        if hi.is_int():
            hull = hull.upper_bound_val(isl.dim_type.set, d, hi)
    return hull


def _band_floor(sched: dict[str, isl.Map], band_dims: int) -> Optional[int]:
    """One less than the smallest value any statement's tiled time takes at dimension `band_dims`
    (the first after the band coordinates), or None where that has no lower bound."""
    low = None
    for m in sched.values():
        if m.is_empty():
            continue
        n = m.dim(isl.dim_type.out)
        at = m.range().project_out(isl.dim_type.set, band_dims + 1, n - band_dims - 1) \
            .project_out(isl.dim_type.set, 0, band_dims)
        v = at.dim_min_val(0)
        if not v.is_int():
            return None
        low = int(v.to_python()) if low is None else min(low, int(v.to_python()))
    return (low if low is not None else 0) - 1


def _band_start_pays(order: str, first_read: isl.Map, domain: isl.Set, band_dims: int) -> bool:
    """Whether a load unit runs in `band-start` order (`LOAD_ORDERS`): asked, or, with `auto`, where its
    first reads make a schedule of many pieces, on a tiled band (some band coordinate varies)."""
    if order != "auto":
        return order == "band-start"
    if first_read.n_basic_map() <= BAND_START_ABOVE:
        return False
    return any(domain.plain_get_val_if_fixed(isl.dim_type.set, d).is_nan() for d in range(band_dims))


def _band_of(sched: isl.Map, band_dims: int) -> isl.Map:
    """S[x] -> [band coordinates]: the leading `band_dims` tiled time dimensions."""
    n = sched.dim(isl.dim_type.out)
    return sched.project_out(isl.dim_type.out, band_dims, n - band_dims)


def _union_maps(maps: list[isl.Map]) -> Optional[isl.Map]:
    out = None
    for m in maps:
        out = m if out is None else out.union(m)
    return out


def build_ppn(program: PolyProgram) -> ProcessNetwork:
    """The untiled process network (one band)."""
    return build_network(program, no_tiling(program))


def part_name(statement: str, k: int, n: int) -> str:
    return statement if n == 1 else f"{statement}_{k}"


#: a light statement's parts each run at most this share of a part of its band's heaviest statement
LIGHT_SHARE = 0.05


def part_counts(program: PolyProgram, tiling: Tiling, parallel: int, uniform: bool = False) -> dict[str, int]:
    """How many parallel processes each statement gets: `parallel` for the heaviest statement of its
    band, fewer (at least one) for lighter ones, so that each part runs at most `LIGHT_SHARE` of a
    heavy part's work.  A light statement (gemm's `C *= beta` beside the k-reduction) split as often
    as the heavy one would add processes that idle most of the time; in one process, though, it runs
    its whole domain in slab order, and the last slabs of the heavy statement wait for it (syrk's
    `C *= beta` at P = 16: its one process reached the last slab's rows after 3,100 of 16,553
    modelled cycles; in 6 parts, the compile's choice, now merged into one process per slab, models
    14,556).  A statement of n < P parts is cut into n slabs of its own, not the heavy statement's:
    a slab index names the processes of one load or store unit (`build_network`), whichever rows they
    run.  With `uniform`, every statement of a tiled band gets `parallel` parts: the slabs are then
    merged, one process per slab (`slab_groups`).  A reduced instance's band counts the full-size
    band's work (`TileBand.full`), so the corner gets the full-size counts."""
    weight = {st.name: iu.card(st.domain) for st in program.statements}
    for b in tiling.bands:
        if b.full is not None:  # a reduced instance's band: the full-size band's work (`TileBand.full`)
            weight.update({s: iu.card(b.full.hyperplanes[s].domain()) for s in b.statements})
    out = {}
    for st in program.statements:
        band = next((b for b in tiling.bands if st.name in b.statements), None)
        heaviest = max((weight[s] for s in band.statements), default=1) if band is not None else 1
        share = parallel if uniform else -(-parallel * weight[st.name] // max(1, int(LIGHT_SHARE * heaviest)))
        out[st.name] = max(1, min(parallel, share))
    return out


def _parts(program: PolyProgram, tiling: Tiling, parallel: int,
           uniform: bool = False) -> dict[str, list[tuple[str, int, isl.Set]]]:
    """Compute processes of each statement: (process name, slab index, its slice of the statement domain)."""
    out = {}
    counts = part_counts(program, tiling, parallel, uniform)
    for st in program.statements:
        band = next((b for b in tiling.bands if st.name in b.statements), None)
        doms = [(0, st.domain)] if band is None else parallel_parts(band, st.name, st.domain, counts[st.name])
        out[st.name] = [(part_name(st.name, k, len(doms)), slab, d) for k, (slab, d) in enumerate(doms)]
    return out


def slab_groups(program: PolyProgram, tiling: Tiling, parallel: int) -> list[list[str]]:
    """The compute processes of `build_network(..., uniform=True)` grouped by tiled band and slab: merged,
    each group is one process running the whole band on its slab, so a heavy statement and the light
    ones around it (an initialization, a rounding after a reduction) share the work evenly, in the
    band's own order."""
    parts = _parts(program, tiling, parallel, uniform=True)
    out = []
    for band in tiling.bands:
        if not band.depth:
            continue
        for slab in range(parallel):
            names = [name for st in band.statements for name, k, _ in parts[st] if k == slab]
            if len(names) > 1:
                out.append(names)
    return out


def _onchip_arrays(program: PolyProgram, tiling: Tiling, budget: int) -> set[str]:
    """Argument arrays whose values flow from one statement group's tile band to another group's on
    chip rather than through memory (a local has no off-chip copy: its flows always stay on chip).

    An argument's flow between groups would be stored and loaded again (2mm's `tmp` between its two
    products): off-chip traffic above the compulsory words, and a consumer that waits for the
    producer's stores.  When the values carried (at most what the channels hold) fit the budget,
    arrays in declaration order, those flows become channels.  Flows between tiles of one group still
    go through memory (coalesced per band, chapter 4)."""
    group = tiling.band_index()
    carried: dict[str, int] = {}  # values (producing instances) of each array that cross groups
    for d in program.flow.dependences:
        array = program.access(d.sink_access).array
        if group.get(d.source) != group.get(d.sink) and program.arrays[array].is_arg:
            carried[array] = carried.get(array, 0) + iu.card(iu.coalesced(d.relation.domain()))
    out: set[str] = set()
    used = 0
    for name in program.arrays:
        if name in carried:
            n = carried[name]
            if used + n <= budget:
                out.add(name)
                used += n
    return out


def build_network(program: PolyProgram, tiling: Tiling, parallel: int = 1, uniform: bool = False,
                  onchip_words: int = DEFAULT_ONCHIP_WORDS, read_ports: str = "shared",
                  write_ports: str = "shared", load_order: str = "auto",
                  memory_order_mode: str = "auto") -> ProcessNetwork:
    """Partition a bound, analyzed program into the process network of `tiling`, with each statement
    split into up to `parallel` compute processes per band (`tiling.parallel_parts`, `part_counts`),
    argument values carried between statement groups on chip up to `onchip_words` (`_onchip_arrays`),
    and arrays read and written through one channel or one per slab (`read_ports`, `READ_PORTS`;
    `write_ports`, `WRITE_PORTS`), each load unit reading in `load_order` (`LOAD_ORDERS`), and the load
    and store units of an array waiting for one another as `memory_order_mode` says (`MEMORY_ORDERS`)."""
    assert read_ports in READ_PORTS and write_ports in WRITE_PORTS, (read_ports, write_ports)
    assert load_order in LOAD_ORDERS, load_order
    assert memory_order_mode in MEMORY_ORDERS, memory_order_mode
    assert program.is_bound and program.flow is not None
    flow = program.flow
    nb = tiling.band_dims
    sched = {s.name: isl.Map.from_union_map(tiling.schedule.intersect_domain(isl.UnionSet.from_set(s.domain)))
             for s in program.statements}
    time_dims = next(iter(sched.values())).dim(isl.dim_type.out) + 2
    net = ProcessNetwork(program, time_dims)
    net.tiling = tiling
    net.partition = (parallel, uniform, read_ports, write_ports, load_order, memory_order_mode)
    band = {s: _band_of(m, nb) for s, m in sched.items()}

    def split(rel: isl.Map, src: str, snk: str) -> tuple[isl.Map, isl.Map]:
        """(pairs inside one band, pairs crossing bands) of a dependence relation."""
        same = rel.intersect(band[src].apply_range(band[snk].reverse()))
        return same, rel.subtract(same)

    # Which reads go to memory (live-in, or produced in an earlier band) and which writes must reach it.
    read_index = {r.id: k for k, r in enumerate(r for s in program.statements for r in s.reads)}
    local: list[tuple[str, isl.Map, str]] = []  # (source statement, relation, read access)
    mem_reads: dict[str, isl.Map] = {}  # read access -> { S[y] -> LOAD_A[b, m] }
    mem_writes: dict[str, list[isl.Map]] = {}  # array -> [{ S[x] -> STORE_A[b, m] }]
    onchip = _onchip_arrays(program, tiling, onchip_words)
    read_back: set[str] = set()  # arrays some of whose reads go to memory for a value the kernel wrote
    group = tiling.band_index()
    for st in program.statements:
        for r in st.reads:
            from_memory = [flow.live_in[r.id].domain()] if r.id in flow.live_in else []
            for d in flow.into(r.id):
                same, cross = split(d.relation, d.source, st.name)
                if not program.arrays[r.array].is_arg or (r.array in onchip and group[d.source] != group[st.name]):
                    same, cross = d.relation, d.relation.subtract(d.relation)
                if not same.is_empty():
                    local.append((d.source, iu.coalesced(same), r.id))
                if not cross.is_empty():
                    read_back.add(r.array)
                    from_memory.append(cross.range())
                    src = program.statement(d.source)
                    w = band[d.source].flat_range_product(src.write.relation).intersect_domain(cross.domain())
                    mem_writes.setdefault(r.array, []).append(w.set_tuple_name(isl.dim_type.out, store_name(r.array)))
            if from_memory:
                ys = iu.coalesced(_union_maps(from_memory))
                m = band[st.name].flat_range_product(r.relation).intersect_domain(ys)
                mem_reads[r.id] = iu.coalesced(m.set_tuple_name(isl.dim_type.out, load_name(r.array)))
    for wid, m in flow.live_out.items():
        acc = program.access(wid)
        w = band[acc.statement].flat_range_product(acc.relation).intersect_domain(m.domain())
        mem_writes.setdefault(acc.array, []).append(w.set_tuple_name(isl.dim_type.out, store_name(acc.array)))

    parts = _parts(program, tiling, parallel, uniform)
    # Read channels: with `per-part` read ports, an array gets one per slab whose processes read it
    # from memory, if it is only read, or if it is also stored but its loads read only values the
    # kernel did not write, each element in one slab: the store then owes each element's
    # write-after-read token to one load unit, and no load waits for a store (`_own_elements`).
    slab_of = {q: slab for st in program.statements for q, slab, _ in parts[st.name]}
    reading: dict[str, set[int]] = {}
    for st in program.statements:
        for r in st.reads:
            if r.id in mem_reads:
                reading.setdefault(r.array, set()).update(slab for _, slab, _ in parts[st.name])

    loaded_by: dict[str, dict[int, isl.Set]] = {}  # array -> slab -> elements loaded for it, when asked

    def loaded(array: str) -> dict[int, isl.Set]:
        if array not in loaded_by:
            loaded_by[array] = _loaded_elements(program, array, mem_reads, parts, nb)
        return loaded_by[array]

    # array -> slab -> its read channel (one channel, too, where another array's load unit has the
    # name a further channel's would)
    channel_of = {array: {slab: k for k, slab in enumerate(sorted(slabs))} for array, slabs in reading.items()
                  if read_ports == "per-part" and len(slabs) > 1
                  and (array not in mem_writes
                       or (array not in read_back and _disjoint(loaded(array))))
                  and not any(f"{array}_{k}" in program.arrays for k in range(1, len(slabs)))}
    # Write channels: with `per-part` write ports, an array stored for the processes of several slabs,
    # each element for one slab, gets one per slab.  No two units then write one element, so the
    # writes need no order between units (each unit issues its own in order), and each element's
    # memory-order tokens involve one store unit.  A load unit orders against the store units whose
    # elements it may read (`_loaded_and_stored`): so the array has one load unit, or one per slab
    # whose loaded and stored elements are the slab's own, apart from every other slab's.
    write_channel_of: dict[str, dict[int, int]] = {}
    if write_ports == "per-part":
        for array in sorted(mem_writes, key=list(program.arrays).index):
            stored = _stored_elements(mem_writes[array], parts, nb)
            if (len(stored) < 2 or not _disjoint(stored)
                    or any(f"{array}_{k}" in program.arrays for k in range(1, len(stored)))):
                continue
            if array in channel_of:
                owned = {}  # slab -> the elements it loads or stores
                for slab in set(loaded(array)) | set(stored):
                    sets = [x[slab] for x in (loaded(array), stored) if slab in x]
                    owned[slab] = iu.union(sets[1:], sets[0])
                if not _disjoint(owned):
                    continue
            write_channel_of[array] = {slab: k for k, slab in enumerate(sorted(stored))}

    def store_of(array: str, part: str) -> str:
        """The store unit of `array` that takes the results of compute process `part`."""
        return store_name(array, write_channel_of[array][slab_of[part]] if array in write_channel_of else 0)

    def port_of(array: str, part: str) -> int:
        return channel_of[array][slab_of[part]] if array in channel_of else 0

    def read_relation(rid: str, port: int, dom: Optional[isl.Set] = None) -> isl.Map:
        """{ S[y] -> LOAD[b, m] } of read `rid` on read channel `port`, of the instances in `dom`."""
        m = mem_reads[rid] if dom is None else mem_reads[rid].intersect_domain(dom)
        return m.set_tuple_name(isl.dim_type.out, load_name(program.access(rid).array, port)) if port else m

    # Load processes: per band, each element once, just before its first read in the band.
    firsts: dict[tuple[str, int], isl.Map] = {}
    for st in program.statements:
        for r in st.reads:
            if r.id not in mem_reads:
                continue
            ports = {q: port_of(r.array, q) for q, _, _ in parts[st.name]}
            by_port = {k: [dq for q, _, dq in parts[st.name] if ports[q] == k] for k in sorted(set(ports.values()))}
            for k, doms in by_port.items():
                m = (read_relation(r.id, k) if len(by_port) == 1
                     else read_relation(r.id, k, iu.coalesced(iu.union(doms[1:], doms[0]))))
                t = m.reverse().apply_range(_extend(sched[st.name], LOAD_SLOT, read_index[r.id]))
                firsts[(r.array, k)] = t if (r.array, k) not in firsts else firsts[(r.array, k)].union(t)
    order = list(program.arrays)
    floor: Optional[int] = None  # `_band_floor`, once a load unit needs it
    for unit, (array, port) in enumerate(sorted(firsts, key=lambda k: (order.index(k[0]), k[1]))):
        t = firsts[(array, port)]
        s = iu.coalesced(t.lexmin())
        # the domain of the reads, not of their lexmin: the same set without the lexmin's pieces (a
        # skewed 3-d stencil's: 31 against 10), which every later relation on the loads would carry
        slab = next((sl for sl, k in channel_of[array].items() if k == port), None) if array in channel_of else None
        domain = iu.coalesced(t.domain())
        if _band_start_pays(load_order, s, domain, nb):
            if floor is None:
                floor = _band_floor(sched, nb)
            hull = _band_hull(domain)
            started = _band_start(hull, nb, time_dims, floor, unit) if floor is not None else None
            if started is not None:
                domain = hull
                if load_order == "auto":
                    net.notes.append(f"{load_name(array, port)} loads each band's elements when the band starts, in "
                                     f"row-major order: its first reads make a schedule of {s.n_basic_map()} "
                                     f"pieces (more than {BAND_START_ABOVE}); `--load-order first-read` loads each "
                                     f"just before that read, into smaller buffers, at a higher compile cost")
                s = started
        net.add_process(Process(load_name(array, port), ProcessKind.LOAD, domain, s,
                                program.arrays[array].loc, array=array, band_dims=nb, port=port, slab=slab))
    for st in program.statements:
        for pname, _slab, dom in parts[st.name]:
            net.add_process(Process(pname, ProcessKind.COMPUTE, dom,
                                    _extend(sched[st.name], COMPUTE_SLOT, 0).intersect_domain(dom), st.loc,
                                    members=(Member(st.name, isl.Map.identity(
                                        isl.Space.map_from_set(dom.get_space())).intersect_domain(dom)),)))
    # Store processes: per band, the last write of each element that is needed later.
    writers: dict[str, isl.UnionMap] = {}
    for array, ms in mem_writes.items():
        u = isl.UnionMap.empty(ms[0].get_space().params())
        for m in ms:
            u = u.union(isl.UnionMap.from_map(m))
        writers[array] = iu.coalesced(u)  # { S[x] -> STORE_A[b, m] } over several statements
    for array in sorted(writers, key=list(program.arrays).index):
        units = sorted((k, slab) for slab, k in write_channel_of[array].items()) if array in write_channel_of \
            else [(0, None)]
        for port, slab in units:
            t = None
            for piece in iu.union_map_pieces(writers[array]):
                stmt = piece.get_tuple_name(isl.dim_type.in_)
                if slab is not None:
                    doms = [dq for _, sl, dq in parts[stmt] if sl == slab]
                    if not doms:
                        continue
                    piece = piece.intersect_domain(iu.coalesced(iu.union(doms[1:], doms[0])))
                    if piece.is_empty():
                        continue
                    piece = piece.set_tuple_name(isl.dim_type.out, store_name(array, port))
                tp = iu.coalesced(piece.reverse().apply_range(_extend(sched[stmt], STORE_SLOT, 0)))
                t = tp if t is None else t.union(tp)
            t = iu.coalesced_function(t)
            net.add_process(Process(store_name(array, port), ProcessKind.STORE, iu.coalesced(t.domain()), t,
                                    program.arrays[array].loc, array=array, band_dims=nb, port=port, slab=slab))

    channels: list[Channel] = []

    def add(producer: tuple[str, str], consumer: tuple[str, str], rel: isl.Map, array: str, src: str, snk: str,
            role: str, coalesce: bool = True) -> None:
        """Producer and consumer are (process, statement or process): the second names the flow in the
        untiled network (mu), whatever the parallel part.  `coalesce`: False for a relation kept
        coalesced (the memory orders)."""
        if rel.is_empty():
            return
        name = f"c{len(channels)}"
        mu = f"{producer[1]}:{src}->{consumer[1]}:{snk}"
        rel = iu.coalesced(rel) if coalesce else rel
        channels.append(Channel(name, producer[0], consumer[0], rel, array, program.arrays[array].type,
                                src, snk, mu, role))

    for st in program.statements:
        for r in st.reads:
            for q, _, dq in parts[st.name]:
                if r.id in mem_reads:
                    k = port_of(r.array, q)
                    ld = load_name(r.array, k)
                    add((ld, ld), (q, st.name), read_relation(r.id, k, dq).reverse(), r.array, "mem", r.id, "io")
                for src, rel, rid in local:
                    if rid == r.id:
                        for p, _, dp in parts[src]:
                            add((p, src), (q, st.name), rel.intersect_domain(dp).intersect_range(dq), r.array,
                                f"{src}.w", r.id, "local")
    for array in sorted(writers, key=list(program.arrays).index):
        for piece in iu.union_map_pieces(writers[array]):
            stmt = piece.get_tuple_name(isl.dim_type.in_)
            for p, _, dp in parts[stmt]:
                sn = store_of(array, p)
                add((p, stmt), (sn, sn), piece.intersect_domain(dp).set_tuple_name(isl.dim_type.out, sn), array,
                    f"{stmt}.w", "mem", "io")
    for producer, consumer, rel, array in memory_order(net, program, memory_order_mode):
        add((producer, producer), (consumer, consumer), rel, array, "mem", "order", "order", coalesce=False)
    for c in channels:
        net.add_channel(c)
    return net


def _loaded_elements(program: PolyProgram, array: str, mem_reads: dict[str, isl.Map],
                     parts: dict[str, list[tuple[str, int, isl.Set]]], nb: int) -> dict[int, isl.Set]:
    """slab -> the elements of `array` loaded for its processes."""
    by_slab: dict[int, isl.Set] = {}
    for st in program.statements:
        for r in st.reads:
            if r.id in mem_reads and r.array == array:
                for _q, slab, dq in parts[st.name]:
                    loads = mem_reads[r.id].intersect_domain(dq).range()  # LOAD[b, m]
                    m = loads.project_out(isl.dim_type.set, 0, nb).reset_tuple_id()
                    by_slab[slab] = by_slab[slab].union(m) if slab in by_slab else m
    return by_slab


def _stored_elements(writes: list[isl.Map], parts: dict[str, list[tuple[str, int, isl.Set]]],
                     nb: int) -> dict[int, isl.Set]:
    """slab -> the elements its processes store (`writes`: { S[x] -> STORE[b, m] }, a map per
    statement); only slabs that store some."""
    by_slab: dict[int, isl.Set] = {}
    for w in writes:
        for _q, slab, dq in parts[w.get_tuple_name(isl.dim_type.in_)]:
            m = w.intersect_domain(dq).range().project_out(isl.dim_type.set, 0, nb).reset_tuple_id()
            if not m.is_empty():
                by_slab[slab] = by_slab[slab].union(m) if slab in by_slab else m
    return by_slab


def _disjoint(by_slab: dict[int, isl.Set]) -> bool:
    """Whether no element belongs to two slabs' sets."""
    seen: Optional[isl.Set] = None  # the elements of the slabs before: one test per slab, not per pair
    for k in sorted(by_slab):
        if seen is not None and not by_slab[k].intersect(seen).is_empty():
            return False
        seen = by_slab[k] if seen is None else iu.coalesced(seen.union(by_slab[k]))
    return True


def _loaded_and_stored(net: ProcessNetwork, program: PolyProgram):
    """(array, a load unit, a store unit) of every array that has both, for each pair of its units
    that may touch one element: all pairs, but units of two different slabs (`Process.slab`), whose
    elements `build_network` kept apart."""
    for array in program.arrays:
        loads = [p for p in net.processes if p.kind == ProcessKind.LOAD and p.array == array]
        stores = [p for p in net.processes if p.kind == ProcessKind.STORE and p.array == array]
        for ps in stores:
            for pl in loads:
                if pl.slab is None or ps.slab is None or pl.slab == ps.slab:
                    yield array, pl, ps


def memory_order(net: ProcessNetwork, program: PolyProgram, mode: str = "auto"
                 ) -> list[tuple[str, str, isl.Map, str]]:
    """Token channels between the load and store processes of each array.

    A load must wait for the last store of its element before it (read after write through memory);
    a store must wait for the last load of its element before it (write after read).  Each element
    of an array is stored by one unit (of several, one per slab, none shares an element), which issues
    its stores in order, so write-after-write needs nothing.

    Both processes run their tile bands in the order of the band coordinates `b` that lead their
    domains `(b, m)`, and inside one band a load comes first: it precedes the band's first read of
    `m` from memory, and a write of `m` in the band before that read would have been its source.  So
    "last before" is a lexicographic maximum over the band coordinates alone (a store of an earlier
    band; a load of the same or an earlier band), solved on the processes' domains.  The exact
    problem over their time stamps (`memory_order_exact`, the test oracle) took minutes on a skewed
    3-d stencil, whose schedules have dozens of pieces.

    The maximum is taken pointwise, so a store's is solved over the simple hull of the store domain
    and then restricted to it: the same relation, without isl splitting the problem on the store
    domain's pieces times the load domain's.  On heat-3d's corner that took 0.9 s where the problem
    on the exact domain took 7 s and gave 133 pieces against 41.  (For a load, the hull gives more
    pieces: the load domain's own pieces do not coalesce with the result's.)

    `mode` (`MEMORY_ORDERS`): whether the waits on earlier bands are coarsened to whole bands."""
    out = []
    pairs = list(_loaded_and_stored(net, program))
    for array, pl, ps in pairs:
        by_band = (_waits_by_band(mode, pl, sum(1 for a, q, _ in pairs if a == array and q.name == pl.name)),
                   _waits_by_band(mode, ps, sum(1 for a, _, q in pairs if a == array and q.name == ps.name)))
        for source, sink, text in _memory_order_of(pl, ps):
            rel = isl.Map(text)
            if by_band[sink != pl.name]:  # the waits on earlier bands, a token per band
                rel = _by_band(rel.reverse(), net.process(sink), net.process(source)).reverse()
            out.append((source, sink, rel, array))
    return out


#: iterations of a waiting load or store unit above which `auto` has it wait for its partner's earlier
#: tile bands as wholes (`_band_wait`) rather than element by element: a token per element lives from
#: one band to a band much later, so the token buffers held about as many slots as the array has
#: elements (jacobi-2d at T=50, N=500: 9.9 M of its 10.5 M channel words).  A reduced instance's units
#: (`dpn.reduced`) stay below it, and keep the exact waits
BAND_ORDER_ABOVE = 8192


def _waits_by_band(mode: str, sink: Process, partners: int) -> bool:
    """Whether `sink` waits for its partner's earlier bands as wholes: where asked, or (`auto`) where it
    runs more than `BAND_ORDER_ABOVE` iterations; and only where it has this one partner, since a
    wait has a single source (its token port)."""
    asked = mode == "band" or (mode == "auto" and iu.card(sink.domain) > BAND_ORDER_ABOVE)
    return asked and partners == 1


def _band_wait(exact: isl.Map, sink: Process, source: Process) -> isl.Map:
    """{ SINK[y] -> SOURCE[x] }: a memory order between tile bands, `exact` (an access -> the last
    access of its element in an earlier band), coarsened to bands.  The sink's first iteration of band
    `b` (in its schedule) waits for the source's last iteration of the latest band that any access of
    `b` waits for.  A unit completes its bands in order, so that one token stands for every access the
    band waits for; and the band it comes from runs wholly before `b` in the global order, so the wait
    can never close a cycle (docs/channel-sizing.md)."""
    nb = sink.band_dims

    def band_of(p: Process) -> isl.Map:  # P[b, m] -> [b]
        ident = isl.Map.identity(isl.Space.map_from_set(p.domain.get_space())).intersect_domain(p.domain)
        return _band_of(ident, nb).reset_tuple_id(isl.dim_type.out)

    def at_band(p: Process, last: bool) -> isl.Map:  # [b] -> the unit's first (last) iteration of band b
        # on the time dimensions that vary: the same order, and a third less time on heat-3d's corner
        schedule = compact_schedules(p.schedule, p.schedule)[0]
        times = band_of(p).reverse().apply_range(schedule)
        edge = iu.coalesced(times.lexmax() if last else times.lexmin())
        return edge.apply_range(schedule.reverse())

    bands = band_of(sink).reverse().apply_range(exact).apply_range(band_of(source))  # [b] -> [b''] waited for
    latest = iu.coalesced(bands.lexmax())
    return at_band(sink, last=False).reverse().apply_range(latest).apply_range(at_band(source, last=True))


def _by_band(exact: isl.Map, sink: Process, source: Process) -> isl.Map:
    """`exact` with its waits on earlier bands coarsened (`_band_wait`); a wait inside one band stays
    exact, and a band's first iteration that has one needs no other: its source, of that band, comes
    after every earlier band of the source unit."""
    inside = equal_before(exact, sink.band_dims)
    across = exact.subtract(inside)
    if across.is_empty():
        return exact
    return inside.union(_band_wait(across, sink, source).subtract_domain(inside.domain()))


def _memory_order_of(pl: Process, ps: Process) -> list[tuple[str, str, str]]:
    """`_array_memory_order` as text, from `_MEMORY_ORDERS` where two domains equal to these were
    solved before: equal sets, not only equal texts (two point orders of heat-3d's corner give its
    store unit one domain in two forms, each solved in 2-4 s)."""
    key = (pl.band_dims, pl.name, ps.name)
    load, store = str(pl.domain), str(ps.domain)
    known = _MEMORY_ORDERS.setdefault(key, [])
    for load_k, store_k, rels in known:
        if (load_k == load or isl.Set(load_k).is_equal(pl.domain)) and \
                (store_k == store or isl.Set(store_k).is_equal(ps.domain)):
            return rels
    if len(known) >= MEMORY_ORDERS_KEPT:
        known.pop(0)
    # coalesced once more as read back: the form every network takes, coalesced once per compile
    # (again by each network, it was a second of each heat-3d corner candidate at T=10, N=26)
    rels = [(source, sink, str(iu.coalesced(isl.Map(str(m))))) for source, sink, m in _array_memory_order(pl, ps)]
    known.append((load, store, rels))
    return rels


#: the memory-order relations of a load and a store unit, by (band dimensions, unit names), for each
#: pair of domains solved: they depend on nothing else, and the candidates of one compile that share
#: a tiling (its point orders, merges and slabs) share them (a skewed 3-d stencil's: a twelfth of
#: choosing among its point orders).  Kept as text, read again for each network: isl may change an
#: object's form in place, and a network's elements are its own (`isl_utils.reread`)
_MEMORY_ORDERS: dict[tuple, list[tuple[str, str, list[tuple[str, str, str]]]]] = {}
MEMORY_ORDERS_KEPT = 16  # domain pairs per pair of units


def _array_memory_order(pl: Process, ps: Process) -> list[tuple[str, str, isl.Map]]:
    out = []
    nb = pl.band_dims
    for sink, source, same_band in ((pl, ps, False), (ps, pl, True)):
        space = isl.Space.map_from_set(sink.domain.get_space())
        before = (isl.Map.lex_ge_first if same_band else isl.Map.lex_gt_first)(space, nb)
        for d in range(nb, sink.domain.dim(isl.dim_type.set)):
            before = before.equate(isl.dim_type.in_, d, isl.dim_type.out, d)
        before = before.set_tuple_name(isl.dim_type.out, source.name)
        # the maximum over disjoint pieces of the source: over overlapping ones isl compares every
        # piece's candidates with every other's (heat-3d's corner at T=10, N=26, a load waiting on
        # the store unit: 4.9 s and 99 pieces; over 6 disjoint pieces 0.4 s and 14)
        candidates = iu.coalesced(source.domain.make_disjoint())
        if same_band:  # a store waits: solved on its domain's hull, then restricted to the domain
            hull = isl.Set.from_basic_set(sink.domain.simple_hull())
            latest = iu.coalesced(before.intersect_domain(hull).intersect_range(candidates).lexmax())
            latest = latest.intersect_domain(sink.domain)
        else:
            latest = before.intersect_domain(sink.domain).intersect_range(candidates).lexmax()
        for m in iu.union_map_pieces(isl.UnionMap.from_map(latest.reverse())):
            if not m.is_empty():
                out.append((source.name, sink.name, iu.coalesced(m)))
    return out


def memory_order_exact(net: ProcessNetwork, program: PolyProgram) -> list[tuple[str, str, isl.Map, str]]:
    """`memory_order` solved on the processes' time stamps (isl's last-writer problem): the oracle
    its tests compare with."""
    out = []
    for array, pl, ps in _loaded_and_stored(net, program):
        nd = program.arrays[array].ndim

        def elements(p) -> isl.Map:
            """(band, m) -> the memory word m it accesses."""
            n = p.domain.dim(isl.dim_type.set)
            m = isl.Map.identity(isl.Space.map_from_set(p.domain.get_space())).intersect_domain(p.domain)
            return m.project_out(isl.dim_type.out, 0, n - nd).set_tuple_name(isl.dim_type.out, f"{array}_mem")

        loads, stores = elements(pl), elements(ps)
        sl, ss = compact_schedules(pl.schedule, ps.schedule)  # the same order on fewer time dimensions
        schedule = isl.UnionMap.from_map(sl).union(isl.UnionMap.from_map(ss))
        for sink, source, prod, cons in ((loads, stores, ps.name, pl.name), (stores, loads, pl.name, ps.name)):
            deps, _ = iu.last_writer(isl.UnionMap.from_map(sink), isl.UnionMap.from_map(source), schedule,
                                     unsourced=False)
            for m in iu.union_map_pieces(deps):
                if not m.is_empty():
                    out.append((prod, cons, iu.coalesced(m), array))
    return out
