"""Figures of a compiled network that the CLI, `explore` and the benchmarks all report.

Everything is counted with isl (`isl_utils.card`), never by enumerating instances, so a report costs
the same at every problem size.  The roofline is the larger of two bounds: every compute process
doing one iteration per cycle, and every array's memory channels moving its compulsory words at one
word per cycle and channel (a wide read port: a line per cycle between its load units).
"""

from __future__ import annotations

from typing import Optional

import islpy as isl

from .dpn.memports import words_per_beat
from .dpn.network import ChannelKind, ProcessKind, ProcessNetwork
from .poly import isl_utils as iu
from .poly.program import PolyProgram

__all__ = ["network_stats", "traffic", "traffic_words", "compulsory_by_array", "compulsory_by_channel",
           "memory_words_per_cycle", "efficiency"]


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
    out: dict[str, int] = {}
    for (array, _kind), words in compulsory_by_channel(program).items():
        out[array] = out.get(array, 0) + words
    return out


def compulsory_by_channel(program: PolyProgram) -> dict[tuple[str, str], int]:
    """(array, "in" | "out") -> its live-in elements (read through its read channels) or live-out
    ones (written through its write channel)."""
    sets: dict[tuple[str, str], isl.Set] = {}
    for kind, flows in (("in", program.flow.live_in), ("out", program.flow.live_out)):
        for access, m in flows.items():
            key = (program.access(access).array, kind)
            rng = m.range()
            sets[key] = sets[key].union(rng) if key in sets else rng
    return {key: iu.card(iu.coalesced(s)) for key, s in sorted(sets.items())}


def memory_words_per_cycle(net: ProcessNetwork) -> dict[tuple[str, str], int]:
    """(array, "in" | "out") -> words its memory channels move per cycle: a store unit one, each load
    unit one, and the load units behind a wide read port (`memports`) at most a line between them."""
    wide = words_per_beat(net)
    out: dict[tuple[str, str], int] = {}
    for p in net.processes:
        if p.kind in (ProcessKind.LOAD, ProcessKind.STORE):
            key = (p.array, "in" if p.kind == ProcessKind.LOAD else "out")
            out[key] = out.get(key, 0) + 1
    return {k: min(v, wide[k[0]]) if k[1] == "in" and k[0] in wide else v for k, v in out.items()}


def traffic(program: PolyProgram, net: ProcessNetwork) -> dict:
    """Statement instances, the compulsory off-chip traffic and the roofline: the larger of the
    compute roof (instances / compute processes) and the memory roof, the most cycles any array's
    channels need for its compulsory words at their words per cycle (`memory_words_per_cycle`)."""
    instances = sum(iu.card(s.domain) for s in program.statements)
    by_channel = compulsory_by_channel(program)
    n_compute = sum(1 for p in net.processes if p.kind == ProcessKind.COMPUTE)
    rate = memory_words_per_cycle(net)
    memory_roof = max((-(-words // max(1, rate.get(key, 1))) for key, words in by_channel.items()), default=0)
    return {
        "statement_instances": instances,
        "compulsory_words": sum(by_channel.values()),
        "memory_words_per_cycle": max(1, sum(rate.values())),
        "roofline_cycles": max(-(-instances // max(1, n_compute)), memory_roof),
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
