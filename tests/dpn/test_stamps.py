"""Enumerated time stamps as arrays (`hls.dpn.stamps`): the same stamps as the tables' per-instance
dictionaries, the oracle they replace below `BOUND_ABOVE` iterations."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.channels import event_replayed_depth, replayed_size
from hls.dpn.network import ChannelKind
from hls.dpn.stamps import pair_stamps
from hls.poly.rows import lex_order
from hls.dpn.tables import NetworkTables, RunOrder
from hls.pipeline import Options, run
from tests.kernels import ROOT, example_params


@pytest.fixture(scope="module", params=["jacobi-2d", "cholesky"])
def network(request):
    path = ROOT / "examples" / f"{request.param}.c"
    return run(Options(str(path), params=example_params(path), tile="auto")).network


def test_process_stamps_are_the_tables_stamps(network):
    tables = NetworkTables(network)
    for p in network.processes:
        stamps, table = tables.stamps(p.name), tables.process(p.name)
        assert stamps is not None, p.name
        assert {tuple(x): tuple(t) for x, t in zip(stamps.points.tolist(), stamps.times.tolist())} == table.time
        outside = stamps.points[:1] + np.int64(10 ** 6)
        every = np.ones(stamps.times.shape[1], dtype=bool)
        assert stamps.times_of(outside, every) is None  # not an iteration: no stamp is made up


def test_pair_stamps_are_the_channel_tables_pairs(network):
    tables = NetworkTables(network)
    params = network.program.param_values()
    assert any(c.role == "order" for c in network.channels)  # enumerated consumer first (`relation_rows`)
    for c in network.channels:
        prod, cons = tables.stamps(c.producer), tables.stamps(c.consumer)
        xs, written, read = pair_stamps(c, prod, cons, params)
        (fp, vp), (fc, vc) = prod.constant_columns, cons.constant_columns
        kept = [k for k in range(len(vp)) if not (fp[k] and fc[k] and vp[k] == vc[k])]
        assert written.shape[1] == len(kept) < len(vp)  # the slot and band dimensions fixed on both sides go
        pt, ct = tables.process(c.producer).time, tables.process(c.consumer).time
        want = sorted((tuple(pt[x][k] for k in kept), tuple(ct[y][k] for k in kept)) for x, y in tables.channel(c).pairs)
        order = lex_order(written, read)
        assert [(tuple(w), tuple(r)) for w, r in zip(written[order].tolist(), read[order].tolist())] == want, c.name


def test_event_depth_equals_the_tables_replay(network):
    tables = NetworkTables(network)
    fifos = [c for c in network.channels if c.kind in (ChannelKind.FIFO, ChannelKind.FIFO_MULT)]
    assert fifos
    for c in fifos:
        assert max(1, event_replayed_depth(c, network, tables)) == replayed_size(c, tables).depth, c.name


def test_run_orders_and_channel_pairs_are_the_tables(network):
    """The cycle model's arrays (`tables.RunOrder`, `tables.ChannelPairs`) against the per-instance
    tables they replace: each iteration's place in its process's run, and each pair's places."""
    tables = NetworkTables(network)
    for p in network.processes:
        order = tables.order(p.name)
        assert [tuple(x) for x in order.in_run_order.tolist()] == tables.process(p.name).iterations
    for c in network.channels:
        pairs = tables.pairs(c)
        place = {name: {x: k for k, x in enumerate(tables.process(name).iterations)}
                 for name in (c.producer, c.consumer)}
        expected = [(place[c.producer][x], place[c.consumer][y]) for x, y in tables.channel(c).pairs]
        assert list(zip(pairs.producer.tolist(), pairs.consumer.tolist())) == expected
        assert [tuple(x) for x in pairs.sources.tolist()] == [x for x, _y in tables.channel(c).pairs]


def test_run_order_finds_rows_too_wide_for_mixed_radix_keys():
    """Coordinates whose spans need more than 62 bits together are looked up without keys."""
    points = np.array([[0, 0, 0], [0, 1 << 40, 5], [1 << 40, 0, 1], [1 << 40, 1 << 40, 1 << 30]], dtype=np.int64)
    order = RunOrder(points, np.array([2, 0, 3, 1]))
    rows = points[[3, 0, 2, 2, 1]]
    assert order.positions_of(rows).tolist() == [1, 2, 3, 3, 0]
    narrow = RunOrder(points % 7, np.array([2, 0, 3, 1]))
    assert narrow.positions_of((points % 7)[[3, 0, 2]]).tolist() == [1, 2, 3]
