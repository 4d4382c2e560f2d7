"""Explicit enumeration of a bound network: ordered iterations and channel pairs.

Parameters are bound before any network is built, so every domain is a finite set.  Channel sizing
and the DPN simulator work on these tables; isl stays the source of truth for what is enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import islpy as isl

from ..poly import isl_utils as iu
from .network import Channel, Process, ProcessNetwork
from .stamps import ProcessStamps, process_stamps

Point = tuple[int, ...]


@dataclass
class ProcessTable:
    iterations: list[Point]  # in execution order
    time: dict[Point, Point]  # iteration -> global time stamp


@dataclass
class ChannelTable:
    pairs: list[tuple[Point, Point]]  # (producer iteration, consumer iteration), sorted by consumer time
    source: dict[Point, Point]  # consumer iteration -> producer iteration
    readers: dict[Point, list[Point]]  # producer iteration -> consumer iterations in consumer order
    timing: Optional[tuple] = None  # the cycle model's per-iteration reads and writes (timing.plan_of)


def process_table(p: Process) -> ProcessTable:
    n = p.domain.dim(isl.dim_type.set)
    rows = iu.map_pairs(p.schedule).tolist()
    time = {tuple(r[:n]): tuple(r[n:]) for r in rows}
    iters = sorted(time, key=time.__getitem__)
    assert len(set(time[i] for i in iters)) == len(iters), f"schedule of {p.name} is not injective"
    return ProcessTable(iters, time)


def channel_table(c: Channel, consumer: ProcessTable) -> ChannelTable:
    n = c.relation.dim(isl.dim_type.in_)
    pairs = [(tuple(r[:n]), tuple(r[n:])) for r in iu.map_pairs(c.relation).tolist()]
    pairs.sort(key=lambda xy: consumer.time[xy[1]])
    source = {y: x for x, y in pairs}
    readers: dict[Point, list[Point]] = {}
    for x, y in pairs:
        readers.setdefault(x, []).append(y)
    return ChannelTable(pairs, source, readers)


class NetworkTables:
    """Lazily enumerated tables for every process and channel of a network."""

    def __init__(self, net: ProcessNetwork) -> None:
        self.net = net
        self._p: dict[str, ProcessTable] = {}
        self._c: dict[str, ChannelTable] = {}
        self._s: dict[str, Optional[ProcessStamps]] = {}

    def for_network(self, net: ProcessNetwork) -> "NetworkTables":
        """Tables of a network with the same processes (channels may differ): process tables are kept."""
        out = NetworkTables(net)
        out._p = self._p
        out._s = self._s
        return out

    def process(self, name: str) -> ProcessTable:
        if name not in self._p:
            self._p[name] = process_table(self.net.process(name))
        return self._p[name]

    def stamps(self, name: str) -> Optional[ProcessStamps]:
        """The process's iterations and stamps as arrays (`stamps.process_stamps`), or None."""
        if name not in self._s:
            self._s[name] = process_stamps(self.net.process(name), self.net.program.param_values())
        return self._s[name]

    def release_stamps(self) -> None:
        """Forget every process's stamps, in this and the tables sharing them (`for_network`): only
        channel typing and sizing read them, and a 400k-instance process's stamps hold tens of MB
        for the rest of the compile otherwise (2mm at level 3: 536 MB peak)."""
        self._s.clear()

    def channel(self, c: Channel) -> ChannelTable:
        if c.name not in self._c:
            self._c[c.name] = channel_table(c, self.process(c.consumer))
        return self._c[c.name]
