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
from .dpn.channels import fifo_recovery_stats, fifoize, size_channels, type_channels
from .dpn.network import ProcessNetwork
from .dpn.merge import SLACK as MERGE_SLACK
from .dpn.merge import balance_groups, describe, merge_processes
from .dpn.partition import build_network, slab_groups
from .dpn.timing import Timing, deepen, model
from .rtl.generate import process_latencies, read_stages
from .dpn.tiling import (DEFAULT_LOCAL_WORDS, Tiling, auto_tiling, no_tiling, parse_tile_option, point_order_variants,
                          slabs_independent, tile_program, with_fission)
from .dpn.serialize import network_to_json
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
    parallel: int = 1
    local_words: int = DEFAULT_LOCAL_WORDS
    point_order: str = "latency"  # inside a tile: "latency" (section 5.3) or "original" (Theorem 5.3)
    merge: str = "auto"  # "auto": merge light compute processes when the cycle model allows (hls/dpn/merge.py)


@dataclass
class Compiled:
    kernel: ParsedKernel
    program: PolyProgram
    network: Optional[ProcessNetwork]
    tables: Optional[NetworkTables]
    seconds: float
    fifo_stats: Optional[dict] = None
    timing: Optional[dict] = None  # the cycle model before and after `deepen` (hls/dpn/timing.py)


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

    @property
    def cycles(self) -> Optional[int]:
        return self.timing["estimated_cycles"]


def _network(program: PolyProgram, tiling: Tiling, opts: Options, groups: Sequence[Sequence[str]] = (), *,
             parallel: Optional[int] = None, uniform: bool = False, cutoff: Optional[int] = None) -> _Built:
    """partition .. deepen for one tiling, merging each of `groups` (compute processes) into one.  A
    candidate the cycle model finds slower than `cutoff` cycles before `deepen` is not deepened; its
    estimate is None (it cannot be the one kept)."""
    stages = []
    net = build_network(program, tiling, opts.parallel if parallel is None else parallel, uniform,
                        onchip_words=opts.local_words // 4)
    stages.append(("partition", net))
    net = merge_processes(net, groups)
    stages.append(("merge", net))
    tables = NetworkTables(net)  # processes do not change from here on; channel tables are per name
    net = type_channels(net, tables)
    typed = net
    net = fifoize(net, tables)
    stages.append(("type-channels", net))
    tables = tables.for_network(net)
    net = size_channels(net, tables)
    stages.append(("size-channels", net))
    words = sum(c.words for c in net.channels)
    net, model0, model1 = _deepened(net, tables, opts, cutoff)
    timing = {"cycles_sequential_sizes": model0.cycles, "estimated_cycles": model1.cycles,
              "deepen_words": sum(c.words for c in net.channels) - words}
    if model0.cycles is None and cutoff is not None:
        timing["cut_off"] = cutoff
    stages.append(("deepen", net))
    return _Built(net, typed, tables, timing, stages)


def _deepened(net: ProcessNetwork, tables: NetworkTables, opts: Options,
              cutoff: Optional[int] = None) -> tuple[ProcessNetwork, Timing, Timing]:
    """`deepen`, with operands read at the stage that needs them (`net.late_reads`) or all at issue,
    whichever the cycle model finds faster at the sequential sizes (only that one is deepened).  A
    late read shortens a recurrence, but its value then waits in its channel instead of the pipeline:
    a buffer slot is freed later and may hold its producer back (heat-3d's load buffers)."""
    latency = process_latencies(net)
    stages = read_stages(net)
    best = model(net, tables, latency, stages, cutoff)
    if any(s for per in stages.values() for s in per.values()):
        issue = net.with_channels(list(net.channels), net.stage)
        issue.late_reads = False
        other = model(issue, tables, latency, read_stages(issue), cutoff)
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
        cand = _network(program, t, opts, groups, cutoff=CUTOFF * base)
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
        cand = _network(program, t, opts, groups, parallel=k, uniform=True, cutoff=CUTOFF * base_cycles)
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
    if not _fusion_may_help(program, plain):
        return [plain]
    out, seen = [plain], {_bands_key(plain)}
    for fusion in ("fused", "aligned"):
        t = auto_tiling(program, local_words=opts.local_words, point_order=opts.point_order, fusion=fusion)
        if t.is_tiled and _bands_key(t) not in seen:
            seen.add(_bands_key(t))
            out.append(t)
    return out


def _bands_key(t: Tiling) -> tuple:
    """Groups, hyperplanes and tile sizes: two tilings with one key differ in nothing the point order
    variants do not try (their source-order schedules may coincide while the hyperplanes differ)."""
    return tuple((b.statements, tuple(sorted((st, str(m)) for st, m in b.hyperplanes.items())), b.sizes)
                 for b in t.bands)


def _fusion_may_help(program: PolyProgram, plain: Tiling) -> bool:
    """Whether two statements that share an array sit in different bands of `plain`: only then can the
    fused schedule (isl's whole-component scheduling, seconds on stencils) group them differently."""
    band = plain.band_index()
    users: dict[str, set[int]] = {}
    for st in program.statements:
        for a in st.accesses:
            users.setdefault(a.array, set()).add(band.get(st.name, -1))
    return any(len(ks) > 1 for ks in users.values())


CUTOFF = 3  # a candidate slower than this x the best one so far, before `deepen`, is dropped unfinished


def _built_variants(program: PolyProgram, variants: Sequence[Tiling], opts: Options) -> list[_Built]:
    """The networks of all variants, source point orders last (with a reduction innermost they are
    often ten times slower, and modelling that is the costly part): each is modelled only up to
    `CUTOFF` x the best estimate so far."""
    built: dict[int, _Built] = {}
    best: Optional[int] = None
    for k in sorted(range(len(variants)), key=lambda k: (variants[k].point_order == "original", k)):
        b = built[k] = _network(program, variants[k], opts, cutoff=None if best is None else CUTOFF * best)
        if b.cycles is not None and (best is None or b.cycles < best):
            best = b.cycles
    return [built[k] for k in range(len(variants))]


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
    if opts.parallel < 1:
        raise UsageError(f"--parallel must be a positive integer, got {opts.parallel}")
    if opts.parallel > 1 and tile_sizes is None:
        raise UsageError("--parallel splits tile bands into parallel processes: add --tile auto (or tile sizes)")
    t0 = time.perf_counter()

    def after(name: str, ir: object) -> None:
        if dump_after == name:
            emit(f"// IR after pass `{name}`\n" + _dump(name, ir))

    kernel = parse_kernel(opts.path, include_dirs=opts.include_dirs, defines=opts.defines, function=opts.function)
    after("parse", kernel)
    program = extract(kernel.func, kernel.typedefs, kernel.path, kernel.scop)
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
    variants = []
    for base in bases:
        variants += point_order_variants(program, base) if opts.point_order == "latency" else [base]
    built = _built_variants(program, variants, opts)
    best = min(range(len(built)), key=lambda k: (built[k].cycles is None, built[k].cycles or 0, k))
    tiling, chosen = variants[best], built[best]
    if len(variants) > 1:
        tried = ", ".join(f"{_variant_name(t, len(bases))} {_cycles_text(b)}" for t, b in zip(variants, built))
        tiling = replace(tiling, reason=f"{tiling.reason}; {_variant_name(tiling, len(bases))} has the fewest "
                                        f"modelled cycles ({tried})")
        chosen.network.tiling = tiling
    if tiling.is_tiled and opts.merge == "auto":
        base_cycles = chosen.cycles
        chosen = _balanced(program, tiling, chosen, opts)
        chosen = _slabbed(program, tiling, chosen, base_cycles, opts)
        tiling = chosen.network.tiling
    after("tile", tiling)
    for name, ir in chosen.stages:
        after(name, ir)
    net, typed, tables = chosen.network, chosen.typed, chosen.tables
    timing = chosen.timing
    fifo_stats = None
    if tiling.is_tiled:
        fifo_stats = fifo_recovery_stats(type_channels(build_network(program, no_tiling(program))), typed, net)
    return Compiled(kernel, program, net, tables, time.perf_counter() - t0, fifo_stats, timing)
