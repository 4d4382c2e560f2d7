"""Enumerated time stamps as numpy arrays: a process's iterations and their stamps, and a channel's
pairs with the stamps of both ends.

Below `channels.BOUND_ABOVE` iterations the channel passes fall back on enumerated events where isl's
relational problems run long.  Posing those events in isl (the channel relation composed with both
schedules, then enumerated) costs as much as the problem it replaces when a schedule has dozens of
pieces: a skewed 3-d stencil's load schedule, a lexmin over seven reads, made that composition take
25 s for one channel.  Here each schedule is enumerated once per process (`process_stamps`), each
channel relation once (its pairs have few pieces), and the stamps of the pairs are looked up in
numpy (`pair_stamps`): no composition, and no per-instance Python objects.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Optional

import islpy as isl
import numpy as np

from ..poly import isl_utils as iu
from ..poly.rows import key_radix, mixed_radix_keys
from .network import Channel, Process


@dataclass(frozen=True)
class ProcessStamps:
    """A process's iterations, sorted lexicographically, and the time stamp of each (same rows)."""
    points: np.ndarray  # (n, d)
    times: np.ndarray  # (n, t)
    low: np.ndarray  # per dimension: the smallest coordinate
    radix: np.ndarray  # per dimension: its span (the mixed radix of `keys`)
    keys: np.ndarray  # (n,) increasing: the rows' mixed-radix numbers

    def times_of(self, rows: np.ndarray, columns: np.ndarray) -> Optional[np.ndarray]:
        """The stamps of the given iterations (rows of `points`), restricted to `columns` (a mask);
        None if one is not an iteration."""
        if rows.shape[0] == 0:
            return self.times[:0, columns]
        at = find_rows(self.points, self.keys, self.low, self.radix, rows)
        if at is None:
            return None
        return self.times[np.ix_(at, np.flatnonzero(columns))]  # only the rows and columns asked for

    @functools.cached_property
    def constant_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """(mask of the time dimensions that hold one value over every iteration, that value)."""
        if self.times.shape[0] == 0:
            return np.ones(self.times.shape[1], dtype=bool), np.zeros(self.times.shape[1], dtype=self.times.dtype)
        return self.times.min(axis=0) == self.times.max(axis=0), self.times[0]


def find_rows(points: np.ndarray, keys: np.ndarray, low: np.ndarray, radix: np.ndarray,
              rows: np.ndarray) -> Optional[np.ndarray]:
    """Where each of `rows` is in `points` (sorted rows with their increasing `keys`), or None when
    one of them is not there."""
    offset = rows - low
    if (offset < 0).any() or (offset >= radix).any():
        return None
    at = np.searchsorted(keys, mixed_radix_keys(offset, radix))
    if (at >= keys.shape[0]).any() or (points[np.minimum(at, keys.shape[0] - 1)] != rows).any():
        return None
    return at


def process_stamps(p: Process, params: Mapping[str, int]) -> Optional[ProcessStamps]:
    """The process's iterations and stamps from its schedule, enumerated once into arrays; None when
    isl cannot enumerate it that way or its iterations do not fit mixed-radix int64 keys."""
    n = p.domain.dim(isl.dim_type.set)
    rows = iu.fast_points(iu.fix_params(p.schedule.wrap().flatten(), params))
    if rows is None:
        return None
    points, times = rows[:, :n], rows[:, n:]
    if times.size and -(1 << 31) <= times.min() and times.max() < (1 << 31):
        times = times.astype(np.int32)  # half the memory: a channel's pairs gather their stamps
    if points.shape[0] == 0:
        zero = np.zeros(n, dtype=np.int64)
        return ProcessStamps(points, times, zero, zero + 1, np.zeros(0, dtype=np.int64))
    keyed = key_radix(points)
    if keyed is None:
        return None
    low, radix = keyed
    keys = mixed_radix_keys(points - low, radix)  # rows come sorted, and so do their keys
    if (np.diff(keys) <= 0).any():
        return None  # not a function of the iteration: not a schedule the passes build
    return ProcessStamps(points, times, low, radix, keys)


def relation_rows(c: Channel, params: Mapping[str, int], visit: bool = False) -> Optional[np.ndarray]:
    """A channel's pairs (x, y) as rows, the producer's columns first, in no set order.  None where
    the vectorized enumeration does not apply, unless `visit` (then isl's point visitor).

    A memory order is enumerated consumer first: it is the latest access before each consumer
    iteration, a function of it, so the producer's dimensions then take one value per row, where
    producer first they were bounded loosely inside the relation's pieces (heat-3d at T=10, N=26:
    300 MB of partial rows for 60k pairs).  Other channels producer first: consumer first made every
    example's compile 5-10% slower."""
    rel = c.relation.reverse() if c.role == "order" else c.relation
    flat = iu.fix_params(rel.wrap().flatten(), params)
    rows = iu.points(flat) if visit else iu.fast_points(flat)
    if rows is None or c.role != "order":
        return rows
    m = c.relation.dim(isl.dim_type.out)
    return np.concatenate([rows[:, m:], rows[:, :m]], axis=1)


def pair_stamps(c: Channel, producer: ProcessStamps, consumer: ProcessStamps,
                params: Mapping[str, int]) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(producer iterations, producer stamps, consumer stamps) of every pair of the channel, in no set
    order (`relation_rows`); None when the pairs cannot be enumerated into an array.  The stamps keep
    only the time dimensions that are not one value over both processes (as
    `timestamps.compact_schedules` does): the others never decide an order, and a million pairs'
    full stamps cost a quarter of a gigabyte."""
    rows = relation_rows(c, params)
    if rows is None:
        return None
    n = c.relation.dim(isl.dim_type.in_)
    xs, ys = rows[:, :n], rows[:, n:]
    (fixed_p, value_p), (fixed_c, value_c) = producer.constant_columns, consumer.constant_columns
    columns = ~(fixed_p & fixed_c & (value_p == value_c))  # dimensions that never order two stamps
    written, read = producer.times_of(xs, columns), consumer.times_of(ys, columns)
    if written is None or read is None:
        return None
    return xs, written, read
