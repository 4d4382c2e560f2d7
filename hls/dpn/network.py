"""The process-network IR shared by the untiled PPN and the tiled DPN.

A `ProcessNetwork` is a networkx multigraph whose nodes carry `Process`es and whose edges carry
`Channel`s.  Every process has an iteration domain and a schedule into one *global time space*
shared by all processes: the execution order of a process is the lexicographic order of its time
stamps, and the merged order of all processes is a valid sequential execution of the kernel.  Channel
typing (in-order, unicity) and exact sizing are defined with respect to those schedules.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, replace
from typing import Iterator, Optional

import islpy as isl
import networkx as nx

from ..diagnostics import SourceLoc
from ..poly import isl_utils as iu
from ..poly.program import PolyProgram
from ..poly.types import ScalarType

# Cycles from a memory request to its response the network is built for, by default (`--mem-latency`):
# the simulation memory model's default (docs/rtl-interface.md)
MEMORY_LATENCY = 4


class ProcessKind(str, enum.Enum):
    COMPUTE = "compute"
    LOAD = "load"
    STORE = "store"


class ChannelKind(str, enum.Enum):
    FIFO = "fifo"  # in order, each value read once
    FIFO_MULT = "fifo_mult"  # in order, a value may be read several times in a row (FIFO + register)
    BUFFER = "buffer"  # out of order: addressable memory with a synchronization unit


class Stage(enum.IntEnum):
    """How far the network has been compiled; later passes assert what they need."""

    PARTITIONED = 1
    TYPED = 2
    SIZED = 3


@dataclass(frozen=True, eq=False)
class Member:
    """A statement a compute process runs: at the iterations in the domain of `instance`, the process
    executes `statement` on the instance `instance(x)`.  A process of one statement iterates over
    (a part of) the statement's own domain, so its `instance` is the identity; a merged process
    (`hls/dpn/merge.py`) iterates over time stamps and runs several statements in their global order."""

    statement: str
    instance: isl.Map  # process iteration -> statement instance (single-valued)

    def __post_init__(self) -> None:
        object.__setattr__(self, "instance", iu.reread(self.instance))

    @property
    def domain(self) -> isl.Set:
        return self.instance.domain()


@dataclass(frozen=True, eq=False)
class Process:
    """A sequential process iterating over `domain` in the order of `schedule`.

    A compute process runs its `members` (statements) on the instances they give; a load (store)
    process moves the elements of `array` from (to) off-chip memory; its domain points are the
    elements themselves."""

    name: str
    kind: ProcessKind
    domain: isl.Set
    schedule: isl.Map  # domain -> global time
    loc: SourceLoc
    members: tuple[Member, ...] = ()
    array: Optional[str] = None
    band_dims: int = 0  # load/store: leading domain dimensions naming the tile band (then the element)
    port: int = 0  # load/store: which of its array's read/write channels it drives (`partition.load_name`)
    slab: Optional[int] = None  # load/store on a channel of one parallel slab: that slab (None: every slab)

    def __post_init__(self) -> None:
        for f in ("domain", "schedule"):
            object.__setattr__(self, f, iu.reread(getattr(self, f)))

    @property
    def statements(self) -> tuple[str, ...]:
        return tuple(m.statement for m in self.members)

    @property
    def merged(self) -> bool:
        return len(self.members) > 1


@dataclass(frozen=True, eq=False)
class Channel:
    """Values flowing from `producer` iterations to `consumer` iterations along `relation`."""

    name: str
    producer: str
    consumer: str
    relation: isl.Map  # producer iteration -> consumer iteration
    array: str  # the array whose values flow
    type: ScalarType
    source_port: str  # write access id, or "mem" for a load process
    sink_port: str  # read access id, or "mem" for a store process
    ppn_channel: str  # mu: the channel of the untiled network this one comes from
    role: str = "local"  # "io" (load/store), "local", "sync" (between parallel processes), "order" (memory order)
    kind: Optional[ChannelKind] = None
    in_order: Optional[bool] = None
    unicity: Optional[bool] = None
    depth: Optional[int] = None  # words of storage (FIFO part for FIFO_MULT)
    moduli: tuple[int, ...] = ()  # buffer allocation: slot = (x_k mod moduli_k) over producer dims
    max_live: Optional[int] = None
    #: "exact", or "bound": the depth or moduli are an upper bound, never smaller than the exact ones
    #: (a FIFO barvinok could not count, a buffer isl's moduli did not come for in time at a size
    #: too large to replay: `channels.size_channel`)
    sized_by: str = "exact"

    def __post_init__(self) -> None:
        object.__setattr__(self, "relation", iu.reread(self.relation))

    @property
    def words(self) -> int:
        """Storage words including the multiplicity register."""
        assert self.depth is not None
        return self.depth + (1 if self.kind == ChannelKind.FIFO_MULT else 0)

    @property
    def width(self) -> int:
        """Data bits; a memory-order channel carries a token only."""
        return 1 if self.role == "order" else self.type.bits


class ProcessNetwork:
    """A process network over a bound `PolyProgram`."""

    def __init__(self, program: PolyProgram, time_dims: int, stage: Stage = Stage.PARTITIONED) -> None:
        self.program = program
        self.time_dims = time_dims
        self.stage = stage
        self.tiling = None  # the Tiling the network was partitioned with (hls.dpn.tiling)
        self.partition = (1, False, "shared", "shared", "auto", "auto")  # (parts, uniform, read ports, write ports, load order, memory order): `build_network`
        self.mem_width = 0  # bits of a wide read port's line (`memports`); 0: one word per beat
        self.mem_latency = MEMORY_LATENCY  # cycles from a memory request to its response (`memports`)
        # whether compute processes read operands first needed after issue at that stage
        # (hls.rtl.datapath.late_reads) or every operand at issue; the cycle model chooses
        self.late_reads = True
        self.graph = nx.MultiDiGraph()
        self.notes: list[str] = []

    # construction
    def add_process(self, p: Process) -> None:
        assert p.name not in self.graph, p.name
        self.graph.add_node(p.name, process=p)

    def add_channel(self, c: Channel) -> None:
        assert c.producer in self.graph and c.consumer in self.graph
        self.graph.add_edge(c.producer, c.consumer, key=c.name, channel=c)

    def replace_channel(self, c: Channel) -> None:
        self.graph.edges[c.producer, c.consumer, c.name]["channel"] = c

    def remove_channel(self, c: Channel) -> None:
        self.graph.remove_edge(c.producer, c.consumer, key=c.name)

    # queries (deterministic order: insertion order of processes, channels sorted by name)
    @property
    def processes(self) -> list[Process]:
        return [d["process"] for _, d in self.graph.nodes(data=True)]

    # A process's inputs and outputs come from the graph's adjacency, sorted like `channels`: asked
    # of every process, a filter over all the sorted channels made the queries quadratic in the
    # parts (2mm at `--parallel 16`: 7% of its compile).
    @property
    def channels(self) -> list[Channel]:
        return _by_name(d["channel"] for _, _, d in self.graph.edges(data=True))

    def process(self, name: str) -> Process:
        return self.graph.nodes[name]["process"]

    def channel(self, name: str) -> Channel:
        for _, _, key, d in self.graph.edges(keys=True, data=True):
            if key == name:
                return d["channel"]
        raise KeyError(name)

    def inputs(self, process: str) -> list[Channel]:
        return _by_name(d["channel"] for _, _, d in self.graph.in_edges(process, data=True))

    def outputs(self, process: str) -> list[Channel]:
        return _by_name(d["channel"] for _, _, d in self.graph.out_edges(process, data=True))

    def iter_compute(self) -> Iterator[Process]:
        return (p for p in self.processes if p.kind == ProcessKind.COMPUTE)

    def copy(self) -> "ProcessNetwork":
        n = ProcessNetwork(self.program, self.time_dims, self.stage)
        n.graph = self.graph.copy()
        n.notes = list(self.notes)
        n.tiling = self.tiling
        n.partition = self.partition
        n.mem_width = self.mem_width
        n.mem_latency = self.mem_latency
        n.late_reads = self.late_reads
        return n

    def with_channels(self, channels: list[Channel], stage: Stage) -> "ProcessNetwork":
        """A copy whose channel set is replaced (processes unchanged)."""
        n = ProcessNetwork(self.program, self.time_dims, stage)
        for p in self.processes:
            n.add_process(p)
        for c in channels:
            n.add_channel(c)
        n.notes = list(self.notes)
        n.tiling = self.tiling
        n.partition = self.partition
        n.mem_width = self.mem_width
        n.mem_latency = self.mem_latency
        n.late_reads = self.late_reads
        return n

    def verify(self) -> None:
        """Structural invariants: every read port of every compute instance is fed by exactly one channel.

        Asked by the tests of the passes that build networks (`tests/dpn/test_network_invariants.py`),
        not by the passes themselves: over a skewed stencil's load domains the subset and
        single-valuedness tests were a tenth of a compile (heat-3d at T=10, N=26: 14 s of 133)."""
        for c in self.channels:
            p, q = self.process(c.producer), self.process(c.consumer)
            assert c.relation.domain().is_subset(p.domain), c.name
            assert c.relation.range().is_subset(q.domain), c.name
            assert c.relation.reverse().is_single_valued(), f"{c.name}: a consumer iteration has two sources"


def _by_name(chans) -> list[Channel]:
    return sorted(chans, key=lambda c: _natural(c.name))


@functools.lru_cache(maxsize=1 << 14)
def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in _DIGITS.split(name))


_DIGITS = re.compile(r"(\d+)")


def renamed(m, old_new: dict[str, str]):
    """Rename tuple names of a map (in and out) per `old_new`."""
    if isinstance(m, isl.Set):
        n = m.get_tuple_name()
        return m.set_tuple_name(old_new.get(n, n))
    a, b = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
    if a in old_new:
        m = m.set_tuple_name(isl.dim_type.in_, old_new[a])
    if b in old_new:
        m = m.set_tuple_name(isl.dim_type.out, old_new[b])
    return m


__all__ = ["Channel", "ChannelKind", "Member", "Process", "ProcessKind", "ProcessNetwork", "Stage", "renamed", "replace"]
