"""FIFOIZE's split and the buffers' modular allocation against definitions written out here: the split
composed with the whole schedules, and the moduli as the largest distances between values alive
together, pair by pair."""

from __future__ import annotations

import random

import islpy as isl
import numpy as np
import pytest

from hls.dpn.channels import _allocation_of_lifetimes, split_by_depth
from hls.pipeline import Options, run
from tests.kernels import ROOT, example_params


def _whole_schedule_parts(c, net, tile_dims: int) -> list[isl.Map]:
    """The parts of Fig. 5.11 on the whole time stamps: the pairs whose times first differ at tile
    dimension k (k = 0 .. tile_dims - 1), then those whose times agree on every tile dimension."""
    p, q = net.process(c.producer), net.process(c.consumer)
    universe = isl.Map.universe(isl.Space.map_from_set(p.schedule.range().get_space()))
    orders = []
    for k in range(tile_dims + 1):
        order = universe
        for d in range(min(k, tile_dims)):
            order = order.equate(isl.dim_type.in_, d, isl.dim_type.out, d)
        if k < tile_dims:
            order = order.order_lt(isl.dim_type.in_, k, isl.dim_type.out, k)
        orders.append(order)
    parts = [c.relation.intersect(p.schedule.apply_range(o).apply_range(q.schedule.reverse())) for o in orders]
    return [m for m in parts if not m.is_empty()]


@pytest.mark.parametrize("stem", ["jacobi-2d", "lu"])
def test_split_equals_the_split_on_whole_schedules(stem):
    path = ROOT / "examples" / f"{stem}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    net = res.network
    tile_dims = net.tiling.band_dims + 1
    checked = 0
    for c in net.channels:
        if c.role == "order":
            continue
        got = split_by_depth(c, net, tile_dims)
        want = _whole_schedule_parts(c, net, tile_dims)
        assert len(got) == len(want), c.name
        assert all(a.is_equal(b) for a, b in zip(got, want)), c.name
        checked += 1
    assert checked >= 4


def _pairwise_allocation(lifetimes, dims):
    """Per dimension k: 1 + the largest |x_k - y_k| over values x, y alive together that share
    their first k coordinates (alive together: one is written before the other's last read, and
    the other way round); and the most values alive at once."""
    span = [0] * dims
    for a, (x, wx, dx) in enumerate(lifetimes):
        for y, wy, dy in lifetimes[a + 1:]:
            if wx < dy and wy < dx:
                k = next(k for k in range(dims) if x[k] != y[k])
                span[k] = max(span[k], abs(x[k] - y[k]))
    times = sorted({t for _x, w, d in lifetimes for t in (w, d)})
    live = max((sum(1 for _x, w, d in lifetimes if w <= t < d) for t in times), default=0)
    return tuple(s + 1 for s in span), live


@pytest.mark.parametrize("seed", range(40))
def test_modular_allocation_is_the_largest_live_distance(seed):
    rnd = random.Random(seed)
    dims, stamp = rnd.randint(1, 4), rnd.randint(1, 3)
    values = sorted({tuple(rnd.randint(-3, 3) for _ in range(dims)) for _ in range(rnd.randint(0, 60))})
    lifetimes = []
    for x in values:
        written = tuple(rnd.randint(0, 6) for _ in range(stamp))
        dead = written
        while dead <= written:
            dead = tuple(rnd.randint(0, 7) for _ in range(stamp))
        lifetimes.append((x, written, dead))
    n = len(lifetimes)
    xs = np.array([x for x, _w, _d in lifetimes], dtype=np.int64).reshape(n, dims)
    written = np.array([w for _x, w, _d in lifetimes], dtype=np.int64).reshape(n, stamp)
    dead = np.array([d for _x, _w, d in lifetimes], dtype=np.int64).reshape(n, stamp)
    assert _allocation_of_lifetimes(xs, written, dead) == _pairwise_allocation(lifetimes, dims)
