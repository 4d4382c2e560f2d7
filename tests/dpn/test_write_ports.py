"""`--write-ports`: which arrays get a write channel (a store unit) per parallel slab, that each
element's memory-order tokens still come from the one unit that writes it (against the exact
last-writer problem), and that the network computes what gcc does (the DPN simulator;
`tests/rtl/test_throughput.py` runs the RTL)."""

from __future__ import annotations

import json

import pytest

from hls.dpn.network import ProcessKind
from hls.dpn.partition import memory_order, memory_order_exact
from hls.pipeline import Options, run
from tests.kernels import STORED_READS, run_cli


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "stored_reads.c"
    path.write_text(STORED_READS.format(n=16))
    return path


def _units(res, kind: ProcessKind) -> dict[str, list[tuple[str, int, object]]]:
    out: dict[str, list] = {}
    for p in res.network.processes:
        if p.kind == kind:
            out.setdefault(p.array, []).append((p.name, p.port, p.slab))
    return {a: sorted(u) for a, u in out.items()}


def _orders(res) -> set[tuple[str, str]]:
    return {(c.producer, c.consumer) for c in res.network.channels if c.role == "order"}


def test_each_slab_stores_its_own_elements_through_its_own_unit(kernel):
    """`u`, `v` and `w` are each stored by both row slabs, each element by one: a store unit per slab.
    `u` is also loaded per slab, so each load unit orders against its own slab's store unit alone;
    `w` has one load unit (every row reads all of it), which every store unit of `w` waits for."""
    res = run(Options(str(kernel), tile="auto", parallel=2))
    stores = _units(res, ProcessKind.STORE)
    for array in ("u", "v", "w"):
        assert stores[array] == [(f"STORE_{array}", 0, 0), (f"STORE_{array}_1", 1, 1)], stores
    assert _units(res, ProcessKind.LOAD)["w"] == [("LOAD_w", 0, None)]
    orders = _orders(res)
    assert {("LOAD_u", "STORE_u"), ("LOAD_u_1", "STORE_u_1"), ("LOAD_w", "STORE_w"), ("LOAD_w", "STORE_w_1")} <= orders
    assert ("LOAD_u", "STORE_u_1") not in orders and ("LOAD_u_1", "STORE_u") not in orders
    # each compute process sends its results to its own slab's unit
    for c in res.network.channels:
        if c.consumer.startswith("STORE_") and c.role != "order":
            assert c.consumer.endswith("_1") == c.producer.endswith("_1"), (c.producer, c.consumer)
    shared = run(Options(str(kernel), tile="auto", parallel=2, write_ports="shared"))
    assert all(len(u) == 1 and u[0][1:] == (0, None) for u in _units(shared, ProcessKind.STORE).values())
    assert res.network.partition[3] == "per-part" and shared.network.partition[3] == "shared"
    assert all(len(u) == 1 for u in _units(run(Options(str(kernel), tile="auto")), ProcessKind.STORE).values())


@pytest.mark.parametrize("local_words", [8192, 32])
def test_memory_order_of_units_per_slab_is_the_last_writer_problems(kernel, local_words):
    """With 32 local words `v` goes through memory between the nests: its one load unit waits for the
    store units of both slabs, each for the elements it wrote."""
    res = run(Options(str(kernel), tile="auto", parallel=2, local_words=local_words))

    def by_pair(rels):
        out: dict = {}
        for source, sink, rel, _array in rels:
            out[(source, sink)] = rel if (source, sink) not in out else out[(source, sink)].union(rel)
        return out

    fast, exact = by_pair(memory_order(res.network, res.program)), by_pair(memory_order_exact(res.network, res.program))
    assert set(fast) == set(exact)
    for pair in fast:
        assert fast[pair].is_equal(exact[pair]), pair
    if local_words == 32:
        assert {("STORE_v", "LOAD_v"), ("STORE_v_1", "LOAD_v")} <= set(fast)


@pytest.mark.parametrize("extra", [[], ["--local-words", "32"], ["--write-ports", "shared"]])
def test_network_with_write_channels_per_slab_matches_gcc(kernel, extra, capsys):
    code, out, _ = run_cli(["sim", str(kernel), "--parallel", "2", "--dpn-only", "--json", *extra], capsys)
    assert code == 0, out
    res = json.loads(out)
    assert res["ok"] and res["mismatches"] == 0


def test_an_unknown_write_ports_value_is_a_usage_error(kernel, capsys):
    code, _, err = run_cli(["sim", str(kernel), "--parallel", "2", "--write-ports", "many", "--dpn-only"], capsys)
    assert code == 2 and "--write-ports" in err
