"""Explicit enumeration of a bound network: ordered iterations and channel pairs.

Parameters are bound before any network is built, so every domain is a finite set.  Channel sizing
and the DPN simulator work on these tables; isl stays the source of truth for what is enumerated.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Optional

import islpy as isl
import numpy as np

from ..poly import isl_utils as iu
from ..poly.rows import key_radix, mixed_radix_keys
from .network import Channel, Process, ProcessNetwork
from .stamps import ProcessStamps, find_rows, process_stamps, relation_rows

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


@dataclass(frozen=True)
class RunOrder:
    """A process's iterations as arrays: `points` as isl enumerates them (sorted lexicographically)
    and `position`, each row's place in the run.  The cycle model indexes its per-iteration plan by
    that place; the dictionaries of `ProcessTable` cost a tuple and a hash per instance."""
    points: np.ndarray  # (n, d)
    position: np.ndarray  # (n,)

    @property
    def in_run_order(self) -> np.ndarray:
        return self.points[np.argsort(self.position, kind="stable")]

    @functools.cached_property
    def _radix(self) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(low, radix, keys) of the rows' mixed-radix numbers, or None when they do not fit an int64."""
        keyed = key_radix(self.points) if self.points.shape[0] else None
        if keyed is None:
            return None
        low, radix = keyed
        return low, radix, mixed_radix_keys(self.points - low, radix)

    def positions_of(self, rows: np.ndarray) -> np.ndarray:
        """The places in the run of the given iterations (each one of them)."""
        if rows.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        if self._radix is None:
            return self.position[_row_index(self.points, rows)]
        low, radix, keys = self._radix
        at = find_rows(self.points, keys, low, radix, rows)
        assert at is not None, "a row that is not an iteration of the process"
        return self.position[at]


def _row_index(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Where each of `rows` is in `table` (distinct rows, sorted lexicographically, holding them all),
    for rows too wide for mixed-radix keys."""
    unique, inverse = np.unique(np.concatenate([table, rows]), axis=0, return_inverse=True)
    assert unique.shape[0] == table.shape[0], "a row that is not an iteration of the process"
    return inverse.reshape(-1)[table.shape[0]:]


def run_order(p: Process, params: Mapping[str, int]) -> RunOrder:
    """Enumerated as `stamps.process_stamps` enumerates it: the same set, so typing's enumeration is
    found again (`isl_utils.fast_points` keeps them by text)."""
    n = p.domain.dim(isl.dim_type.set)
    rows = iu.points(iu.fix_params(p.schedule.wrap().flatten(), params))
    points, times = rows[:, :n], rows[:, n:]
    run = np.lexsort(times.T[::-1]) if times.shape[1] else np.arange(rows.shape[0])
    position = np.empty(rows.shape[0], dtype=np.int64)
    position[run] = np.arange(rows.shape[0])
    assert not (points[1:] == points[:-1]).all(axis=1).any(), f"schedule of {p.name} is not a function"
    return RunOrder(points, position)


@dataclass
class ChannelPairs:
    """A channel's pairs as run positions, sorted by the consumer's: what the cycle model plans on."""
    producer: np.ndarray  # (m,) the producer iteration's place in its run
    consumer: np.ndarray  # (m,) the consumer iteration's, increasing
    sources: np.ndarray  # (m, d) the producer iteration (the value's identity: its buffer slot)
    timing: Optional[tuple] = None  # the cycle model's reads and writes (timing.plan_of)


def channel_pairs(c: Channel, producer: RunOrder, consumer: RunOrder, params: Mapping[str, int]) -> ChannelPairs:
    """Enumerated as `stamps.pair_stamps` enumerates the relation (`run_order`)."""
    n = c.relation.dim(isl.dim_type.in_)
    rows = relation_rows(c, params, visit=True)
    xs, ys = rows[:, :n], rows[:, n:]
    into = consumer.positions_of(ys)
    order = np.argsort(into, kind="stable")
    return ChannelPairs(producer.positions_of(xs)[order], into[order], xs[order])


class NetworkTables:
    """Lazily enumerated tables for every process and channel of a network."""

    def __init__(self, net: ProcessNetwork) -> None:
        self.net = net
        self._p: dict[str, ProcessTable] = {}
        self._c: dict[str, ChannelTable] = {}
        self._s: dict[str, Optional[ProcessStamps]] = {}
        self._o: dict[str, RunOrder] = {}
        self._pairs: dict[str, ChannelPairs] = {}
        # the cycle model's per-iteration reads and writes of a process, by the channels and read
        # stages they come from (`timing.plan_of`): both operand read policies of a network share
        # those of every process they read alike, and every process's writes; `timing.deepen`, the
        # last run, drops them
        self.plans: dict[tuple, tuple] = {}

    def for_network(self, net: ProcessNetwork) -> "NetworkTables":
        """Tables of a network with the same processes (channels may differ): process tables are kept."""
        out = NetworkTables(net)
        out._p = self._p
        out._s = self._s
        out._o = self._o
        return out

    def process(self, name: str) -> ProcessTable:
        if name not in self._p:
            self._p[name] = process_table(self.net.process(name))
        return self._p[name]

    def order(self, name: str) -> RunOrder:
        if name not in self._o:
            self._o[name] = run_order(self.net.process(name), self.net.program.param_values())
        return self._o[name]

    def pairs(self, c: Channel) -> ChannelPairs:
        if c.name not in self._pairs:
            self._pairs[c.name] = channel_pairs(c, self.order(c.producer), self.order(c.consumer),
                                                self.net.program.param_values())
        return self._pairs[c.name]

    def stamps(self, name: str) -> Optional[ProcessStamps]:
        """The process's iterations and stamps as arrays (`stamps.process_stamps`), or None."""
        if name not in self._s:
            self._s[name] = process_stamps(self.net.process(name), self.net.program.param_values())
        return self._s[name]

    def has_stamps(self, name: str) -> bool:
        """Whether the process's stamps are enumerated already: asking for them costs nothing then."""
        return self._s.get(name) is not None

    def release_stamps(self) -> None:
        """Forget every process's stamps, in this and the tables sharing them (`for_network`): only
        channel typing and sizing read them, and a 400k-instance process's stamps hold tens of MB
        for the rest of the compile otherwise (2mm at level 3: 536 MB peak)."""
        self._s.clear()

    def channel(self, c: Channel) -> ChannelTable:
        if c.name not in self._c:
            self._c[c.name] = channel_table(c, self.process(c.consumer))
        return self._c[c.name]
