"""The compiler driver: the passes in order, with `--dump-after PASS` between them.

Each pass is a pure function from one IR to the next; the runner only sequences them, times them
and calls the dump callback.  `docs/architecture.md` lists the passes and their IRs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Optional, Sequence

from .diagnostics import UsageError
from .dpn.channels import fifo_recovery_stats, fifoize, size_channels, type_channels, with_live_counts
from .dpn.network import MEMORY_LATENCY, ProcessNetwork
from .dpn.merge import SLACK as MERGE_SLACK
from .dpn.merge import balance_groups, describe, merge_processes
from .dpn.memports import check_mem_latency, check_mem_width
from .dpn.partition import LOAD_ORDERS, MEMORY_ORDERS, READ_PORTS, WRITE_PORTS, build_network, slab_groups
from .dpn.timing import Timing, deepen, model, simulate_timing
from .rtl.generate import process_latencies, read_stages
from .autoparallel import AUTO, GAIN, first_tried, parallel_bound
from .dpn import reduced as reduction
from .dpn.reduced import reduced_instance
from .dpn.restrict import instance_count
from .dpn.tiling import (DEFAULT_LOCAL_WORDS, Tiling, auto_tiling, no_tiling, parse_tile_option, point_order_variants,
                          slabs_independent, tile_program, two_level_cuts, with_fission, with_one_level,
                          with_point_order, source_nests, streamed)
from .dpn.serialize import network_to_json
from .dpn.shifts import linear_text
from .dpn.tables import NetworkTables
from .frontend import ParsedKernel, analyze_dataflow, bind_params, check_bounds, extract, parse_kernel
from .frontend.callsite import call_site_params
from .frontend.privatize import privatize
from .frontend.params import restrict_params
from .poly import isl_utils as iu
from .poly.dump import program_to_text
from .poly.program import PolyProgram

PASSES = ("parse", "extract", "bounds", "bind", "dataflow", "privatize", "tile", "partition", "merge", "type-channels",
          "size-channels", "deepen")


@dataclass(frozen=True)
class Options:
    path: str
    include_dirs: Sequence[str] = ()
    defines: Sequence[str] = ()
    function: Optional[str] = None
    params: Mapping[str, int] = field(default_factory=dict)
    tile: str = "none"
    parallel: int | str = 1  # parts per tile band, or "auto" (`autoparallel.py`)
    local_words: int = DEFAULT_LOCAL_WORDS
    point_order: str = "latency"  # inside a tile: "latency" (section 5.3) or "original" (Theorem 5.3)
    merge: str = "auto"  # "auto": merge light compute processes when the cycle model allows (hls/dpn/merge.py)
    read_ports: str = "per-part"  # at --parallel P > 1, arrays only read: a read channel per slab (READ_PORTS)
    mem_width: int = 0  # bits of a wide read port's line (hls/dpn/memports.py); 0: one word per beat
    mem_latency: int = MEMORY_LATENCY  # cycles from a memory request to its response, for the model and the tags
    dsp_budget: Optional[int] = None  # with --parallel auto: the most multiplier blocks of the compute processes
    write_ports: str = "per-part"  # at --parallel P > 1, arrays stored per slab: a write channel per slab (WRITE_PORTS)
    load_order: str = "auto"  # when a tiled band's load unit reads each element (LOAD_ORDERS)
    memory_order: str = "auto"  # how load and store units of an array wait across tile bands (MEMORY_ORDERS)


@dataclass
class Compiled:
    kernel: ParsedKernel
    program: PolyProgram
    network: Optional[ProcessNetwork]
    tables: Optional[NetworkTables]
    seconds: float
    fifo_stats: Optional[dict] = None
    timing: Optional[dict] = None  # the cycle model before and after `deepen` (hls/dpn/timing.py)
    # the reduced instance the network was chosen on (`timing["reduced_instance"]`) and its tables: what
    # was modelled when the full-size network is too large to model (`hls/schedule.py` draws it)
    reduced: Optional[tuple[ProcessNetwork, NetworkTables]] = None


def _dump(name: str, ir: object) -> str:
    if isinstance(ir, PolyProgram):
        return program_to_text(ir)
    if isinstance(ir, ProcessNetwork):
        return json.dumps(network_to_json(ir), indent=2) + "\n"
    if isinstance(ir, Tiling):
        return f"tiling: {ir.describe()} ({ir.reason})\nband dims: {ir.band_dims}\nschedule: {ir.schedule}\n"
    if isinstance(ir, ParsedKernel):
        from pycparser import c_generator

        return c_generator.CGenerator().visit(ir.func) + "\n"
    return repr(ir) + "\n"


def _with_call_site_defaults(kernel: ParsedKernel, program: PolyProgram,
                             given: Mapping[str, int]) -> tuple[dict[str, int], Optional[str]]:
    """`--param` values, completed by the values the program's own call site passes, and a note."""
    missing = [p.name for p in program.params if p.name not in given]
    found, where = call_site_params(kernel, missing)
    if not found:
        return dict(given), None
    note = (f"parameters {', '.join(f'{k}={v}' for k, v in found.items())} taken from the call to "
            f"{program.name} at {where} (override with --param)")
    return {**found, **given}, note


@dataclass
class _Built:
    network: ProcessNetwork
    typed: ProcessNetwork
    tables: NetworkTables
    timing: dict
    stages: list
    config: dict = field(default_factory=dict)  # what was chosen, to build the same at full size (`_realized`)
    issued: dict = field(default_factory=dict)  # process -> its issue cycles at checkpoints (`Timing.issued`)

    @property
    def cycles(self) -> Optional[int]:
        return self.timing["estimated_cycles"]


def _network(program: PolyProgram, tiling: Tiling, opts: Options, groups: Sequence[Sequence[str]] = (), *,
             parallel: Optional[int] = None, uniform: bool = False, cutoff: Optional[int] = None,
             config: Optional[dict] = None, chosen: Optional[_Built] = None,
             partitioned: Optional[ProcessNetwork] = None,
             typed_as: Optional[ProcessNetwork] = None) -> _Built:
    """partition .. deepen for one tiling, merging each of `groups` (compute processes) into one.  A
    candidate the cycle model finds slower than `cutoff` cycles before `deepen` is not deepened; its
    estimate is None (it cannot be the one kept).  With `chosen` (the network chosen on a reduced
    instance, `_realized`), the cycle model does not run: the channels get the words `deepen` gave
    the chosen network's channels of the same names, and the estimate is extrapolated from its own.
    `typed_as`: the typed network of the same partition that `groups` merge (`type_channels`)."""
    stages = []
    net = partitioned or build_network(program, tiling, opts.parallel if parallel is None else parallel, uniform,
                                       onchip_words=opts.local_words // 4, read_ports=_read_ports(opts),
                                       write_ports=_write_ports(opts), load_order=opts.load_order,
                                       memory_order_mode=opts.memory_order)
    net.mem_width, net.mem_latency = opts.mem_width, opts.mem_latency
    stages.append(("partition", net))
    net = merge_processes(net, groups)
    stages.append(("merge", net))
    tables = NetworkTables(net)  # lazy; the processes keep their names and schedules from here on
    net = type_channels(net, tables, typed_as)
    typed = net
    net = fifoize(net, tables)
    stages.append(("type-channels", net))
    tables = tables.for_network(net)
    net = size_channels(net, tables)
    tables.release_stamps()
    stages.append(("size-channels", net))
    words = sum(c.words for c in net.channels)
    sequential = {c.name: c.depth for c in net.channels}
    issued: dict = {}
    if chosen is not None:
        net, timing = _transferred(net, chosen)
        if _modelled_at_full_size(net, opts):
            full = simulate_timing(net, tables, process_latencies(net),
                                   read_stage=read_stages(net) if net.late_reads else None)
            timing.update(extrapolated_cycles=timing["estimated_cycles"], estimated_cycles=full.cycles)
    else:
        net, model0, model1 = _deepened(net, tables, opts, cutoff)
        timing = {"cycles_sequential_sizes": model0.cycles, "estimated_cycles": model1.cycles}
        issued = model1.issued
        if model0.cycles is None and cutoff is not None:
            timing["cut_off"] = cutoff
    timing["deepen_words"] = sum(c.words for c in net.channels) - words
    stages.append(("deepen", net))
    extra: dict[tuple, int] = {}
    for c in net.channels:
        if c.depth != sequential[c.name]:
            extra[_link(c)] = max(extra.get(_link(c), 0), c.depth - sequential[c.name])
    return _Built(net, typed, tables, timing, stages, dict(config or {}, extra=extra), issued)


def _read_ports(opts: Options) -> str:
    """Read channels per part only where the user asked for parallel parts: the slabs the compiler
    tries by itself at `--parallel 1` share their arrays' ports, as the interface promised there."""
    return opts.read_ports if opts.parallel > 1 else "shared"


def _write_ports(opts: Options) -> str:
    """Write channels per part only where the user asked for parallel parts (as `_read_ports`)."""
    return opts.write_ports if opts.parallel > 1 else "shared"


def _link(c) -> tuple:
    """What a channel connects: the same in the reduced and the full-size network, whose channel
    numbers may differ (a dependence may fall into other pieces)."""
    return c.producer, c.consumer, c.source_port, c.sink_port, c.role, c.kind

def _work(net: ProcessNetwork) -> int:
    """Iterations of the busiest compute process: what the cycles of a balanced network follow."""
    return max((iu.card(p.domain) for p in net.iter_compute()), default=1)


def _transferred(net: ProcessNetwork, chosen: _Built) -> tuple[ProcessNetwork, dict]:
    """The chosen network's `deepen` words and operand read policy on the full-size network, and its
    estimate extrapolated from the reduced instance's model (`extrapolated_cycles`)."""
    extra = chosen.config.get("extra", {})
    net = net.with_channels([replace(c, depth=c.depth + extra[_link(c)]) if _link(c) in extra else c
                             for c in net.channels], net.stage)
    net.late_reads = chosen.network.late_reads
    growth = _growth(chosen, net)
    timing = {k: extrapolated_cycles(chosen.timing.get(k), growth)
              for k in ("cycles_sequential_sizes", "estimated_cycles")}
    timing["reduced_instance"] = _reduced_summary(chosen, net)
    return net, timing


def _growth(chosen: _Built, net: ProcessNetwork) -> list[tuple[int, int, Optional[tuple[int, ...]]]]:
    """Per full-size process: its iterations on the corner and at full size, and its issue checkpoints
    on the corner.  A compute process the corner does not have by name (the merge strategy, re-applied
    at full size, packs other statements together: decimate-f32's S0_S4 where the corner had S0_S2) is
    counted by its statements, each at the corner's share of that statement's instances, with no
    checkpoints (one iteration per cycle); leaving it out extrapolated decimate-f32 at N=600 to 8,623
    cycles where the full-size model and Verilator give 29,464 and 31,309."""
    small = {p.name: p for p in chosen.network.processes}
    corner = {s.name: iu.card(s.domain) for s in chosen.network.program.statements}
    whole = {s.name: iu.card(s.domain) for s in net.program.statements}
    out = []
    for p in net.processes:
        full = iu.card(p.domain)
        if p.name in small:
            out.append((iu.card(small[p.name].domain), full, chosen.issued.get(p.name)))
        elif p.members:
            share = sum(iu.card(m.instance.range()) * corner.get(m.statement, 0) / max(1, whole[m.statement])
                        for m in p.members)
            out.append((min(full, round(share)), full, None))
    return out


def _reduced_summary(chosen: _Built, net: ProcessNetwork) -> dict:
    return {"instances": sum(iu.card(s.domain) for s in chosen.network.program.statements),
            "estimated_cycles": chosen.timing.get("estimated_cycles"),
            "busiest_iterations": [_work(chosen.network), _work(net)]}


#: statement instances up to which a network of parallel parts chosen on a reduced instance gets its
#: estimate from one run of the cycle model at full size, not extrapolated from the corner's.  The
#: corner cuts a hyperplane one tile spans to 16 or fewer, and with parts that moves the delays between
#: them: 2mm at `--parallel 16` (NI=40 NJ=50 NK=70 NL=80, 305k instances) was estimated at 12.7k cycles
#: and runs 21.2k in the model at full size (its second product's slabs wait on the first's 70-step
#: reductions); the network chosen on the whole problem runs 22.2k, so the choice stands, its estimate
#: did not.  That run costs about 4 s at 305k instances.
MODEL_FULL_BELOW = 400_000
#: the same with one part.  The corner's extrapolation was within a few percent at the sizes of
#: `bench/results/extrapolation.md`, and at 64 times the examples' own sizes off by up to 3.6x
#: (decimate-f32, fwd-bwd-smooth, band-trsv-minmax: stalls that grow with the rows, Verilator
#: 31,309, 133,097 and 185,828 cycles against 8,623, 60,347 and 101,785); the full-size model gives
#: Verilator's cycles within 2%, and the choice checked there (`_settled_at_full_size`) runs
#: faster in Verilator: hash-mix-u32 at R=132, L=200, 40,907 -> 26,489 cycles, relu-norm at M=128,
#: N=192 45,251 -> 29,272, trisolv at n=208 29,324 -> 24,720.  Lower than with parts: the model's
#: run positions took 1.1 GB on heat-3d's 276k instances, and the settling realizes up to three
#: more networks at full size.
SEQUENTIAL_MODEL_FULL_BELOW = 200_000


def _modelled_at_full_size(net: ProcessNetwork, opts: Options) -> bool:
    limit = MODEL_FULL_BELOW if opts.parallel > 1 else SEQUENTIAL_MODEL_FULL_BELOW
    return instance_count(net.program) <= limit


def extrapolated_cycles(small_cycles: Optional[int],
                        growth: Sequence[tuple[int, int, Optional[tuple[int, ...]]]]) -> Optional[int]:
    """The full-size network's cycles from the reduced instance's: its model, plus the iterations
    each process runs beyond the reduced instance's at its fastest issue rate there (`_fastest_rate`),
    for the process that needs longest.  `growth`: per process, its iterations in the reduced and the full-size
    network, and its issue cycles at `timing.ISSUE_WINDOWS` + 1 checkpoints in the reduced model
    (`Timing.issued`).

    The corner holds the same processes, tile shapes and point order, so its model carries what does
    not grow with the problem: pipeline fill and drain, and the stalls of its first tiles and of its
    tiles cut short.  The tiles it lacks are interior ones, issued at the rate of the corner's
    fastest stretch: one iteration per cycle in a balanced network, every third cycle behind
    q15-fir-i64's 64-bit multiply-add recurrence (one cycle per iteration there was half of the
    full-size model).  A rate over the whole corner, or over its second half, counts the stalls of
    short tiles again (lu: 69% over).  Scaling the corner's cycles by the work ratio counted fill
    and drain once per corner's worth of work, 23-53% over on symm, seidel-2d and lu
    (bench/results/extrapolation-session18.md compares them)."""
    if small_cycles is None:
        return None
    extra = 0.0
    for small, full, issued in growth:
        extra = max(extra, (full - small) * _fastest_rate(small, issued))
    return small_cycles + round(extra)


def _fastest_rate(iterations: int, issued: Optional[tuple[int, ...]]) -> float:
    """Cycles per iteration over the fastest stretch between two issue checkpoints, the first and
    the last stretch left out (q15-fir-i64's last one drains faster than its recurrence allows), at
    least 1."""
    if issued is None or iterations < 2 * (len(issued) - 1):
        return 1.0
    windows = len(issued) - 1
    rates = []
    for j in range(1, windows - 1) if windows > 2 else range(windows):
        a, b = j * (iterations - 1) // windows, (j + 1) * (iterations - 1) // windows
        if b > a:
            rates.append((issued[j + 1] - issued[j]) / (b - a))
    return max(1.0, min(rates, default=1.0))


def _deepened(net: ProcessNetwork, tables: NetworkTables, opts: Options,
              cutoff: Optional[int] = None) -> tuple[ProcessNetwork, Timing, Timing]:
    """`deepen`, with operands read at the stage that needs them (`net.late_reads`) or all at issue,
    whichever the cycle model finds faster at the sequential sizes (only that one is deepened).  A
    late read shortens a recurrence, but its value then waits in its channel instead of the pipeline:
    a buffer slot is freed later and may hold its producer back (heat-3d's load buffers).  Decided
    per candidate: merges and slabs that kept their unmerged network's policy came out up to 13%
    larger in channel words (gemm-int: 174 against 154) for one model fewer each."""
    latency = process_latencies(net)
    stages = read_stages(net)
    best = model(net, tables, latency, stages, cutoff)
    if any(s for per in stages.values() for s in per.values()):
        issue = net.with_channels(list(net.channels), net.stage)
        issue.late_reads = False
        # only a faster run can be kept: it is cut off where it stops being one
        limit = cutoff
        if best.before.cycles is not None:
            limit = best.before.cycles if cutoff is None else min(cutoff, best.before.cycles)
        other = model(issue, tables, latency, read_stages(issue), limit)
        if other.before.cycles is not None and (best.before.cycles is None or other.before.cycles < best.before.cycles):
            best = other
    return deepen(best, tables, latency, budget_words=max(256, opts.local_words // 4))


# (per band, light processes only, no dependent pair in a process, light with the heavy ones they
# depend on): the bin packings tried, in order (`merge.balance_groups`)
MERGE_STRATEGIES = ((True, False, False, False), (False, False, False, False), (False, True, False, False),
                    (True, True, False, False), (False, False, True, False), (False, True, True, False),
                    (True, False, False, True))


def _compute_count(b: _Built) -> int:
    return sum(1 for _ in b.network.iter_compute())


def _balanced(program: PolyProgram, tiling: Tiling, built: _Built, opts: Options) -> _Built:
    """Merge light compute processes (`merge.balance_groups`: per band or across bands, with or without
    the heavy processes, with or without dependent pairs, or each with the heavy process it depends
    on) and keep the network with the smallest modelled cycles x compute processes, among those
    within `merge.SLACK` of the unmerged network's cycles: the same throughput from fewer processes.
    Affinity bins are built with the statements one after another inside tiles
    (`tiling.with_fission`) when that is legal: a value is then made a whole tile slice before it
    is read, not one iteration."""
    part = built.stages[0][1]
    best, base = built, built.cycles
    if base is None:
        return built
    kept = built.network.tiling
    fissioned: Optional[Tiling] = None
    seen: list = []
    for per_band, light_only, independent, affinity in MERGE_STRATEGIES:
        groups = balance_groups(part, per_band=per_band, light_only=light_only, independent=independent,
                                affinity=affinity)
        if not groups or groups in seen:
            continue
        seen.append(groups)
        t = tiling
        if affinity:  # the point of affinity bins: the light statements done before the heavy one reads them
            fissioned = fissioned or with_fission(program, tiling)
            t = fissioned or tiling
        same = t is tiling  # then the unmerged network's partition and channel types hold
        cand = _network(program, t, opts, groups, cutoff=CUTOFF * base,
                        config=dict(built.config, merge=(per_band, light_only, independent, affinity),
                                    fission=not same), typed_as=built.typed if same else None,
                        partitioned=part if same else None)
        if cand.cycles is None or cand.cycles > base * (1 + MERGE_SLACK):
            continue
        n = _compute_count(cand)
        if cand.cycles * n < best.cycles * _compute_count(best):
            cand.network.notes.append(
                f"merged compute processes {describe(groups)}: {n} compute process{'es' if n != 1 else ''} "
                f"instead of {_compute_count(built)}, {cand.cycles} modelled cycles (unmerged {base})"
                + (", statements one after another inside tiles" if t is not tiling else ""))
            best = cand
            kept = t if t is not tiling else built.network.tiling
    best.network.tiling = kept
    return best


MAX_SLABS = 4  # at --parallel 1, slab networks of up to this many processes per band are tried


def _slabbed(program: PolyProgram, tiling: Tiling, built: _Built, base_cycles: Optional[int],
             opts: Options) -> _Built:
    """Cut each tiled band into k slabs and run each slab's whole band in one process
    (`partition.slab_groups`): the processes share the band's work evenly, heavy statement and light
    ones alike, where merging whole statements cannot (fir-int: a k-reduction holds two thirds of the
    instances beside four per-sample statements).  At `--parallel 1`, k goes up to the number of
    compute processes already there (no more hardware); at `--parallel P`, k = P (P processes per
    band).  A slab network is kept under the merging rule: the fewest modelled cycles x compute
    processes, within `merge.SLACK` of the unmerged cycles."""
    if built.cycles is None or base_cycles is None:
        return built
    n0 = _compute_count(built)
    work = sum(iu.card(st.domain) for st in program.statements)
    ks = range(1, min(MAX_SLABS, n0) + 1) if opts.parallel == 1 else [opts.parallel]
    ks = [k for k in ks if work / k <= base_cycles * (1 + MERGE_SLACK)]  # k slabs need work / k cycles
    if opts.parallel == 1 and not all(slabs_independent(b) for b in tiling.bands if b.depth):
        ks = [k for k in ks if k == 1]  # slabs along a carried hyperplane form a pipeline: not tried unasked
    if opts.parallel == 1 and built.cycles * n0 <= 1.05 * work:  # balanced: slabs cannot do better
        ks = []
    best = built
    # with fission (when legal) a slab process finishes one statement's slice of a tile before the next
    # statement needs it, instead of waiting on its own pipeline at every point (2mm: 11978 -> 5256
    # cycles); without, the statements share the tile's loads point by point (mvt at --parallel 4)
    fissioned = with_fission(program, tiling) if ks else None
    for k, t in [(k, t) for k in ks for t in (fissioned, tiling) if t is not None]:
        groups = slab_groups(program, t, k)
        if not groups:
            continue
        cand = _network(program, t, opts, groups, parallel=k, uniform=True, cutoff=CUTOFF * base_cycles,
                        config=dict(built.config, slabs=k, fission=t is not tiling))
        if cand.cycles is None:
            continue
        n = _compute_count(cand)
        if cand.cycles <= base_cycles * (1 + MERGE_SLACK) and cand.cycles * n < best.cycles * _compute_count(best):
            cand.network.notes.append(
                f"each tile band cut into {k} slab{'s' if k > 1 else ''}, one compute process per slab running "
                f"all of the band's statements: {n} compute process{'es' if n != 1 else ''}, {cand.cycles} "
                f"modelled cycles (per-statement processes: {n0}, {built.cycles})")
            best = cand
    return best


def _auto_candidates(program: PolyProgram, opts: Options) -> list[Tiling]:
    """`--tile auto`: the scheduler's own groups and, when they split statements that share an array,
    one band per component with the read reuse as proximity, and one aligned on the reads two
    statements share (`tiling.schedule_bands`); the cycle model picks between them."""
    plain = auto_tiling(program, local_words=opts.local_words, point_order=opts.point_order)
    if plain.late:  # whole-component scheduling is harder still: ludcmp at N=168 ran 5 s into each limit
        return [replace(plain, reason=f"{plain.reason}; the fused and aligned bands not asked for: isl's own "
                                      "schedule ran past its limit")]
    out, seen = [plain], {_bands_key(plain)}
    if _fused_shallow(program, plain):
        # loop nests fused along an outer loop only: each nest's own bands first, the base of the reduced
        # instance (`_reduced`), since the shallow band is often one tile, which has no corner, and would
        # make every candidate be modelled at full size (a conv-relu-pool network at 508k instances: 93 s)
        t = auto_tiling(program, local_words=opts.local_words, point_order=opts.point_order, fusion="nests")
        if t.is_tiled and _bands_key(t) not in seen:
            seen.add(_bands_key(t))
            out.insert(0, t)
    if not _fusion_may_help(program, plain):
        return out
    late = False
    for fusion in ("fused", "aligned"):
        # the aligned schedule of the whole program is as hard as the fused one: after a fused one that
        # ran out of time, only its sample is asked (deriche-style filters: 5 s each, for nothing)
        t = auto_tiling(program, local_words=opts.local_words, point_order=opts.point_order, fusion=fusion,
                        sample_only=late)
        late = late or t.late
        if t.is_tiled and _bands_key(t) not in seen:
            seen.add(_bands_key(t))
            out.append(t)
    return out


def _bands_key(t: Tiling) -> tuple:
    """Groups, the hyperplanes' linear parts and tile sizes: two tilings with one key differ in
    nothing the point order variants do not try (their source-order schedules may coincide while the
    hyperplanes differ), or only in where a statement's instances start along a hyperplane (the
    aligned band scheduled on a sample, `tiling.schedule_bands`, shifts 2mm's `D[i][j] *= beta` to
    the tile's start where the fused band has it after the first product: the same cycles)."""
    return tuple((b.statements, tuple(sorted((st, linear_text(m)) for st, m in b.hyperplanes.items())), b.sizes)
                 for b in t.bands)


def _fused_shallow(program: PolyProgram, plain: Tiling) -> bool:
    """Whether a band of `plain` holds statements of several loop nests with fewer hyperplanes than the
    deepest of them has loops: the scheduler fused the nests along their common outer loops and left
    the rest (a reduction among them) in source order below the band (the stages of a CNN, fused along
    their channel loop: 42,118 modelled cycles against 7,257 with one band per nest)."""
    nest = {st: k for k, names in enumerate(source_nests(program)) for st in names}
    for b in plain.bands:
        if not b.depth or len({nest.get(st) for st in b.statements}) < 2:
            continue
        if b.depth < max(len(program.statement(st).iterators) for st in b.statements):
            return True
    return False


def _fusion_may_help(program: PolyProgram, plain: Tiling) -> bool:
    """Whether two statements that share an array sit in different bands of `plain`: only then can the
    fused schedule (isl's whole-component scheduling, seconds on stencils) group them differently."""
    band = plain.band_index()
    users: dict[str, set[int]] = {}
    for st in program.statements:
        for a in st.accesses:
            users.setdefault(a.array, set()).add(band.get(st.name, -1))
    return any(len(ks) > 1 for ks in users.values())


#: A candidate slower than this x the best one so far (a merge or slab network: x the unmerged one),
#: before `deepen`, is dropped unfinished.  `deepen` has cut a network's modelled cycles to 0.45 of
#: those at the sequential sizes (lifting-53 at M=12, K=16: 1937 -> 868, the network kept); with
#: 1.6 that network was dropped and the one kept was 29% slower.
CUTOFF = 3


def _built_variants(variants: Sequence[tuple[PolyProgram, Tiling, int]], opts: Options) -> list[_Built]:
    """The networks of all variants (program, tiling, index of its base tiling), source point orders
    last (with a reduction innermost they are often ten times slower, and modelling that is the
    costly part): each is modelled only up to `CUTOFF` x the best estimate so far.  A variant that
    loses keeps no tables (they hold every instance): only its estimate is kept."""
    built: dict[int, _Built] = {}
    best: Optional[int] = None  # the one `_chosen` keeps: fewest cycles, then the first variant
    for k in sorted(range(len(variants)), key=lambda k: (variants[k][1].point_order == "original", k)):
        program, tiling, base = variants[k]
        b = built[k] = _network(program, tiling, opts, cutoff=None if best is None else CUTOFF * built[best].cycles,
                                config={"base": base, "point_order": tiling.point_order})
        if b.cycles is not None and (best is None or (b.cycles, k) < (built[best].cycles, best)):
            if best is not None:
                _drop_tables(built[best])
            best = k
        elif best is not None:
            _drop_tables(b)
    return [built[k] for k in range(len(variants))]


def _drop_tables(b: _Built) -> None:
    b.tables = None
    b.stages = b.stages[:1]  # `_balanced` merges the partitioned network of the one kept


def _chosen(variants: Sequence[tuple[PolyProgram, Tiling, int]], n_bases: int, opts: Options,
            built: Optional[list[_Built]] = None) -> _Built:
    """The fastest variant by the cycle model, then merged or cut into slabs when that keeps its
    throughput with fewer processes.  `built`: the variants' networks when already built."""
    built = _built_variants(variants, opts) if built is None else built
    best = min(range(len(built)), key=lambda k: (built[k].cycles is None, built[k].cycles or 0, k))
    (program, tiling, _), chosen = variants[best], built[best]
    if len(variants) > 1:
        tried = ", ".join(f"{_variant_name(t, n_bases)} {_cycles_text(b)}" for (_p, t, _k), b in zip(variants, built))
        tiling = replace(tiling, reason=f"{tiling.reason}; {_variant_name(tiling, n_bases)} has the fewest "
                                        f"modelled cycles ({tried})")
        chosen.network.tiling = tiling
    if tiling.is_tiled and opts.merge == "auto":
        base_cycles = chosen.cycles
        chosen = _balanced(program, tiling, chosen, opts)
        chosen = _slabbed(program, tiling, chosen, base_cycles, opts)
    return chosen


def _variants(program: PolyProgram, base: Tiling, k: int, opts: Options) -> list[tuple[PolyProgram, Tiling, int]]:
    tilings = point_order_variants(program, base) if opts.point_order == "latency" else [base]
    return [(program, t, k) for t in tilings]


def _reduced(program: PolyProgram, bases: Sequence[Tiling],
             parallel: int = 1) -> tuple[list[Tiling], Optional[list[tuple[PolyProgram, Tiling]]]]:
    """The base tilings to choose among and their reduced instances (`dpn.reduced`): None when the
    program is small enough to choose at full size or its first base (the scheduler's own bands)
    cannot be reduced.  The other bases, the fused and aligned bands, are optional: one that cannot
    be reduced is left out rather than making every candidate be modelled at full size
    (covariance's fused band at M=44, N=56: 90 s where its corner takes seconds)."""
    if not all(b.is_tiled for b in bases) or instance_count(program) <= reduction.REDUCE_ABOVE:
        return list(bases), None
    out = [reduced_instance(program, b, parallel) for b in bases]
    if out[0] is None:
        return list(bases), None
    kept = [k for k, r in enumerate(out) if r is not None]
    return [bases[k] for k in kept], [out[k] for k in kept]


def _realized(program: PolyProgram, bases: Sequence[Tiling], small: _Built, opts: Options,
              one_level: bool = False) -> _Built:
    """The network chosen on a reduced instance (`small`), built once at full size: the same base
    tiling, point order, fission, merge strategy or slabs, operand read policy and `deepen` words;
    with `one_level`, its parallel parts cut along one hyperplane only (`tiling.with_one_level`)."""
    cfg = small.config
    base = bases[cfg["base"]]
    tiling = base
    if cfg["point_order"] != base.point_order:
        tiling = with_point_order(program, base, cfg["point_order"]) or base
    if cfg.get("fission"):
        tiling = with_fission(program, tiling) or tiling
    if one_level:
        tiling = with_one_level(tiling)
    groups: Sequence[Sequence[str]] = ()
    parallel, uniform = opts.parallel, False
    part = None  # the partition a merge is planned on, reused: it is the costliest pass at full size
    if "slabs" in cfg:
        parallel, uniform = cfg["slabs"], True
        groups = slab_groups(program, tiling, parallel)
    elif "merge" in cfg:
        per_band, light_only, independent, affinity = cfg["merge"]
        part = build_network(program, tiling, opts.parallel, onchip_words=opts.local_words // 4,
                             read_ports=_read_ports(opts), write_ports=_write_ports(opts),
                             load_order=opts.load_order,
                             memory_order_mode=opts.memory_order)
        groups = balance_groups(part, per_band=per_band, light_only=light_only, independent=independent,
                                affinity=affinity)
    out = _network(program, tiling, opts, groups, parallel=parallel, uniform=uniform, config=cfg, chosen=small,
                   partitioned=part)
    red = out.timing["reduced_instance"]
    corner = "; ".join("x".join(map(str, b.sizes)) for b in small.network.tiling.bands if b.depth)
    how = (f"cycles: its model, {red['estimated_cycles']}, plus the further iterations of each process at its "
           "fastest issue rate there, for the process that needs longest")
    if "extrapolated_cycles" in out.timing:
        how = (f"cycles: one run of the cycle model at full size (the reduced instance's {red['estimated_cycles']} "
               f"extrapolate to {out.timing['extrapolated_cycles']})")
    note = (f"network chosen on a reduced instance ({red['instances']} of {instance_count(program)} statement "
            f"instances: the corner of each tile band, tiles {corner}), built once at full size; {how}")
    # the corner's partition notes describe the corner's units; the full-size partition wrote its own
    corner_built = set(small.stages[0][1].notes)
    out.network.notes.extend([*(n for n in small.network.notes if n not in corner_built), note])
    out.network.tiling = replace(tiling, reason=small.network.tiling.reason)
    return out


#: how close (a fraction of the best) another variant's cycles on the reduced instance must come for
#: it to be built and modelled at full size too, when the chosen network is (`MODEL_FULL_BELOW`).
#: The corner cuts the hyperplanes one tile spans, so the point orders' delays there differ from the
#: whole problem's: syrk at `--parallel 16` (N=80, M=60) models wavefront 2,979 and inner 3,003
#: cycles on its corner, and 24,144 and 20,376 at full size (16,932 without the merge the corner chose).
NEAR_TIE = 0.05


def _settled_at_full_size(program: PolyProgram, bases: Sequence[Tiling],
                          variants: Sequence[tuple[PolyProgram, Tiling, int]], built: Sequence[_Built],
                          small: _Built, chosen: _Built, opts: Options) -> tuple[_Built, _Built]:
    """The reduced instance's choice, checked at full size where the corner may mislead.  Realized and
    modelled at full size beside it: its variant's plain partition when it is merged or cut into
    slabs, the same network with its parallel parts cut along one hyperplane when they are cut along
    two (`tiling.two_level_cuts`), and the variant nearest to it on the corner (within `NEAR_TIE`),
    plain.  The fastest is kept, or the chosen network under the merging rule (`_balanced`): within `MERGE_SLACK` of the
    fastest, with fewer cycles x compute processes.  (small, chosen) kept."""
    ranked = sorted((b.cycles, k) for k, b in enumerate(built) if b.cycles is not None)
    if not ranked or chosen.cycles is None:
        return small, chosen
    k = ranked[0][1]
    others: list[tuple[_Built, _Built, str, str]] = []  # (corner network, full-size one, its name, why tried)
    if "merge" in small.config or "slabs" in small.config:
        others.append((built[k], _realized(program, bases, built[k], opts), "its unmerged network", ""))
    if two_level_cuts(chosen.network.tiling, opts.parallel):
        others.append((small, _realized(program, bases, small, opts, one_level=True),
                       "its parts cut along one hyperplane", ""))
    if opts.parallel > 1 and _corner_misled(chosen):
        # the corner cuts a band's tiles to a few points, so a band that waits for another's values
        # there waits as long as at full size only in proportion: the overlap is asked at full size
        k0 = small.config["base"]
        moved = streamed(program, bases[k0], opts.local_words, opts.parallel)
        if moved is not None:
            others.append((small, _realized(program, [*bases[:k0], moved, *bases[k0 + 1:]], small, opts),
                           "its bands tiled to overlap (`tiling.streamed`)", ""))
    if len(ranked) > 1 and ranked[1][0] <= ranked[0][0] * (1 + NEAR_TIE):
        k2 = ranked[1][1]
        others.append((built[k2], _realized(program, bases, built[k2], opts),
                       _variant_name(variants[k2][1], len(bases)),
                       f", within {NEAR_TIE:.0%} of it on the reduced instance ({ranked[1][0]} against "
                       f"{ranked[0][0]} cycles)"))
    others = [o for o in others if o[1].cycles is not None]
    if not others:
        return small, chosen
    fastest = min(others, key=lambda o: o[1].cycles)
    told = "; ".join(f"{name}{why}: {full.cycles} cycles with {_compute_count(full)} compute processes"
                     for _s, full, name, why in others)
    n, nf = _compute_count(chosen), _compute_count(fastest[1])
    if chosen.cycles <= fastest[1].cycles or (chosen.cycles <= fastest[1].cycles * (1 + MERGE_SLACK)
                                              and chosen.cycles * n < fastest[1].cycles * nf):
        chosen.network.notes.append(f"checked at full size against {told}; the network chosen on the reduced "
                                    f"instance kept ({chosen.cycles} cycles with {n})")
        return small, chosen
    note = (f"checked at full size: the network chosen on the reduced instance models {chosen.cycles} cycles with "
            f"{n} compute processes, {told}; {fastest[2]} kept")
    out = fastest[1]
    out.network.tiling = replace(out.network.tiling, reason=f"{chosen.network.tiling.reason}; {note}")
    out.network.notes.append(note)
    return fastest[0], out


def _corner_misled(chosen: _Built) -> bool:
    """Whether the full-size model of the network chosen on the corner is more than `NEAR_TIE` away
    from the corner's extrapolation: then, with one part, the choice is checked at full size
    (`_settled_at_full_size`).  Where the corner foretold the full size, the check realized up to three
    networks more for the same choice (box-blur-clamp at H=W=42: 2.9 -> 7.5 s of compile); where it
    did not, it found faster ones (relu-norm at M=128, N=192: extrapolated 27,984 cycles, modelled
    45,281, settled 29,274)."""
    full, extrapolated = chosen.timing.get("estimated_cycles"), chosen.timing.get("extrapolated_cycles")
    return full is None or extrapolated is None or abs(full - extrapolated) > NEAR_TIE * full


def _cycles_text(b: _Built) -> str:
    return f"> {b.timing['cut_off']}" if b.cycles is None and "cut_off" in b.timing else str(b.cycles)


def _variant_name(t: Tiling, n_bases: int) -> str:
    bands = f"{t.fusion} bands, " if n_bases > 1 else ""
    return f"{bands}point order `{t.point_order}`"


def run(opts: Options, *, until: str = "size-channels", symbolic: bool = False,
        dump_after: Optional[str] = None, emit: Callable[[str], None] = print) -> Compiled:
    """Run the passes up to `until`.  With `symbolic`, parameters not given stay symbolic (analyze)."""
    if dump_after is not None and dump_after not in PASSES:
        raise UsageError(f"--dump-after: unknown pass `{dump_after}` (passes: {', '.join(PASSES)})")
    tile_sizes = parse_tile_option(opts.tile)
    if opts.dsp_budget is not None and opts.parallel != AUTO:
        raise UsageError("--dsp-budget bounds the parts --parallel auto chooses: it needs --parallel auto")
    if opts.dsp_budget is not None and opts.dsp_budget < 0:
        raise UsageError(f"--dsp-budget must be a number of DSP blocks, 0 or more, got {opts.dsp_budget}")
    if opts.parallel == AUTO and not symbolic:
        return _auto_parallel(opts, until, dump_after, emit)
    if not isinstance(opts.parallel, int) or opts.parallel < 1:
        raise UsageError(f"--parallel must be a positive integer or `auto`, got {opts.parallel}")
    if opts.read_ports not in READ_PORTS:
        raise UsageError(f"--read-ports must be one of {', '.join(READ_PORTS)}, got `{opts.read_ports}`")
    if opts.write_ports not in WRITE_PORTS:
        raise UsageError(f"--write-ports must be one of {', '.join(WRITE_PORTS)}, got `{opts.write_ports}`")
    if opts.load_order not in LOAD_ORDERS:
        raise UsageError(f"--load-order must be one of {', '.join(LOAD_ORDERS)}, got `{opts.load_order}`")
    if opts.memory_order not in MEMORY_ORDERS:
        raise UsageError(f"--memory-order must be one of {', '.join(MEMORY_ORDERS)}, got `{opts.memory_order}`")
    bad_width = check_mem_width(opts.mem_width) or check_mem_latency(opts.mem_latency)
    if bad_width:
        raise UsageError(bad_width)
    if opts.parallel > 1 and tile_sizes is None:
        raise UsageError("--parallel splits tile bands into parallel processes: it needs a tiling (--tile auto, the "
                         "default, or tile sizes), not --tile none")
    t0 = time.perf_counter()

    def after(name: str, ir: object) -> None:
        if dump_after == name:
            emit(f"// IR after pass `{name}`\n" + _dump(name, ir))

    kernel = parse_kernel(opts.path, include_dirs=opts.include_dirs, defines=opts.defines, function=opts.function)
    after("parse", kernel)
    program = extract(kernel.model, kernel.typedefs, kernel.path, kernel.scop, kernel.file_scope)
    after("extract", program)
    program = check_bounds(program)
    after("bounds", program)
    if symbolic:
        if opts.params:
            program = restrict_params(program, opts.params)
    else:
        values, note = _with_call_site_defaults(kernel, program, opts.params)
        program = bind_params(program, values)
        if note:
            program = replace(program, notes=(note, *program.notes))
    after("bind", program)
    program = analyze_dataflow(program)
    after("dataflow", program)
    if until == "dataflow" or symbolic:
        return Compiled(kernel, program, None, None, time.perf_counter() - t0)
    program = privatize(program)
    after("privatize", program)
    if tile_sizes is None:
        bases = [no_tiling(program)]
    elif not tile_sizes:
        bases = _auto_candidates(program, opts)
    else:
        bases = [tile_program(program, tile_sizes, point_order=opts.point_order)]
    bases, reduced = _reduced(program, bases, opts.parallel)
    chosen_on = None
    if reduced is None:
        chosen = _chosen([v for k, b in enumerate(bases) for v in _variants(program, b, k, opts)], len(bases), opts)
    else:
        variants = [v for k, (p, b) in enumerate(reduced) for v in _variants(p, b, k, opts)]
        built = _built_variants(variants, opts)
        small = _chosen(variants, len(bases), opts, built)
        chosen = _realized(program, bases, small, opts)
        if _modelled_at_full_size(chosen.network, opts) and (opts.parallel > 1 or _corner_misled(chosen)):
            small, chosen = _settled_at_full_size(program, bases, variants, built, small, chosen, opts)
        chosen_on = None if small.tables is None else (small.network, small.tables)
    tiling = chosen.network.tiling
    after("tile", tiling)
    for name, ir in chosen.stages:
        after(name, ir)
    net, typed, tables = with_live_counts(chosen.network), chosen.typed, chosen.tables
    timing = chosen.timing
    fifo_stats = None
    if tiling.is_tiled:
        fifo_stats = fifo_recovery_stats(type_channels(build_network(program, no_tiling(program))), typed, net)
    return Compiled(kernel, program, net, tables, time.perf_counter() - t0, fifo_stats, timing, chosen_on)


def _auto_parallel(opts: Options, until: str, dump_after: Optional[str], emit: Callable[[str], None]) -> Compiled:
    """`--parallel auto` (`autoparallel.py`): the network at one part bounds the parts, then the cycle
    model walks up to that bound, doubling while twice as many parts gain `GAIN` or more.  Only the
    network kept so far and the one tried are held (each holds its tables)."""
    def at(k: int) -> Compiled:
        return run(replace(opts, parallel=k, dsp_budget=None), until=until, emit=emit)

    best = at(1)
    cycles = {1: (best.timing or {}).get("estimated_cycles")}
    choice = parallel_bound(best.program, best.network, cycles[1],
                            _work(best.network) if best.network is not None else 0, opts.dsp_budget,
                            opts.read_ports == "per-part")
    p, q = 1, first_tried(choice.parts_at_one)
    while q <= choice.parallel and cycles[p] is not None:
        more = at(q)
        cycles[q] = (more.timing or {}).get("estimated_cycles")
        if cycles[q] is None or cycles[q] > GAIN * cycles[p]:
            break
        best, p, q = more, q, 2 * q
    choice = choice.settled(p, {k: c for k, c in cycles.items() if c is not None})
    if dump_after is not None:
        best = run(replace(opts, parallel=p, dsp_budget=None), until=until, dump_after=dump_after, emit=emit)
    if best.network is not None:
        best.network.notes.append(choice.note())
    best.timing = {**(best.timing or {}), "parallel_auto": choice.to_json()}
    return best
