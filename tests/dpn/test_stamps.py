"""Enumerated time stamps as arrays (`hls.dpn.stamps`): the same stamps as the tables' per-instance
dictionaries, the oracle they replace below `BOUND_ABOVE` iterations."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.channels import event_replayed_depth, replayed_size
from hls.dpn.network import ChannelKind
from hls.dpn.stamps import lex_order, pair_stamps
from hls.dpn.tables import NetworkTables
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
