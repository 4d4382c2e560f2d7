"""Figures of a compiled network that the CLI, `explore` and the benchmarks all report.

Everything is counted with isl (`isl_utils.card`), never by enumerating instances, so a report costs
the same at every problem size.  The roofline is the larger of two bounds: every compute process
doing one iteration per cycle, and every memory channel (an array's read channel, its write channel)
moving one word per cycle.
"""

from __future__ import annotations

from typing import Optional

import islpy as isl

from .dpn.network import ChannelKind, ProcessKind, ProcessNetwork
from .poly import isl_utils as iu
from .poly.program import PolyProgram

__all__ = ["network_stats", "traffic", "traffic_words", "compulsory_by_array", "efficiency"]


def network_stats(net: ProcessNetwork) -> dict:
    chans = net.channels
    return {
        "processes": len(net.processes),
        "compute_processes": sum(1 for p in net.processes if p.kind == ProcessKind.COMPUTE),
        "channels": len(chans),
        "fifos": sum(1 for c in chans if c.kind == ChannelKind.FIFO),
        "fifos_with_multiplicity": sum(1 for c in chans if c.kind == ChannelKind.FIFO_MULT),
        "buffers": sum(1 for c in chans if c.kind == ChannelKind.BUFFER),
        "channel_words": sum(c.words for c in chans),
    }


def compulsory_by_array(program: PolyProgram) -> dict[str, int]:
    """Per array: the elements read before any write (live-in) plus those left written (live-out)."""
    sets: dict[tuple[str, str], isl.Set] = {}
    for kind, flows in (("in", program.flow.live_in), ("out", program.flow.live_out)):
        for access, m in flows.items():
            key = (program.access(access).array, kind)
            rng = m.range()
            sets[key] = sets[key].union(rng) if key in sets else rng
    out: dict[str, int] = {}
    for (array, _kind), s in sorted(sets.items()):
        out[array] = out.get(array, 0) + iu.card(iu.coalesced(s))
    return out


def traffic(program: PolyProgram, net: ProcessNetwork) -> dict:
    """Statement instances, the compulsory off-chip traffic and the roofline."""
    instances = sum(iu.card(s.domain) for s in program.statements)
    compulsory = sum(compulsory_by_array(program).values())
    n_compute = sum(1 for p in net.processes if p.kind == ProcessKind.COMPUTE)
    # Memory bandwidth: one word per cycle on each memory channel (the simulation memory's default): an
    # array's read channel (its load unit's) and its write channel (its store unit's) move theirs in
    # the same cycle.
    channels = sum(1 for p in net.processes if p.kind in (ProcessKind.LOAD, ProcessKind.STORE))
    words_per_cycle = max(1, channels)
    return {
        "statement_instances": instances,
        "compulsory_words": compulsory,
        "memory_words_per_cycle": words_per_cycle,
        "roofline_cycles": max(-(-instances // max(1, n_compute)), -(-compulsory // words_per_cycle)),
    }


def traffic_words(net: ProcessNetwork) -> tuple[int, int]:
    """Words the load and store units move: one per iteration."""
    loaded = sum(iu.card(p.domain) for p in net.processes if p.kind == ProcessKind.LOAD)
    stored = sum(iu.card(p.domain) for p in net.processes if p.kind == ProcessKind.STORE)
    return loaded, stored


def efficiency(instances: int, cycles: Optional[int], compute_processes: int) -> Optional[float]:
    """Statement instances per cycle and compute process: 1.0 when every compute process runs an
    iteration every cycle (the compute roof), lower where the processes wait on memory, on each
    other or on an uneven share of the work.  None without a cycle count."""
    if not cycles or compute_processes < 1:
        return None
    return round(instances / (cycles * compute_processes), 4)
