"""`--read-ports`: which arrays get a read channel per parallel slab, and that the network still
computes what gcc does (the DPN simulator; `tests/rtl/test_throughput.py` runs the RTL)."""

from __future__ import annotations

import json

import pytest

from hls.dpn.network import ProcessKind
from hls.pipeline import Options, run
from tests.kernels import STORED_READS, run_cli

# A and x_1 are only read; y is read and written, but its loads read only its initial values, each
# element in one slab's rows: it gets a channel per slab too; x is only read, but its second
# channel's unit would be named LOAD_x_1, the name of x_1's first one: x keeps one channel.
KERNEL = """
#define N 16
void mixed_reads(float A[N][N], float x[N], float x_1[N], float y[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      y[i] = y[i] + A[i][j] * x[j] + x_1[j];
#pragma endscop
}
"""


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "mixed_reads.c"
    path.write_text(KERNEL)
    return path


def _loads(res) -> list[tuple[str, str, int]]:
    return sorted((p.array, p.name, p.port) for p in res.network.processes if p.kind == ProcessKind.LOAD)


def test_only_read_arrays_get_a_channel_per_slab(kernel):
    per_part = run(Options(str(kernel), tile="auto", parallel=2))
    assert _loads(per_part) == [("A", "LOAD_A", 0), ("A", "LOAD_A_1", 1), ("x", "LOAD_x", 0),
                                ("x_1", "LOAD_x_1", 0), ("x_1", "LOAD_x_1_1", 1), ("y", "LOAD_y", 0),
                                ("y", "LOAD_y_1", 1)]
    # each slab's unit feeds only that slab's processes
    for c in per_part.network.channels:
        if c.producer in ("LOAD_A", "LOAD_A_1"):
            assert c.consumer.endswith("_0" if c.producer == "LOAD_A" else "_1"), (c.producer, c.consumer)
    shared = run(Options(str(kernel), tile="auto", parallel=2, read_ports="shared"))
    assert [(a, p) for a, _, p in _loads(shared)] == [("A", 0), ("x", 0), ("x_1", 0), ("y", 0)]
    assert per_part.network.partition[2] == "per-part" and shared.network.partition[2] == "shared"
    # at --parallel 1 there is nothing to split
    assert [(a, p) for a, _, p in _loads(run(Options(str(kernel), tile="auto")))] == [
        ("A", 0), ("x", 0), ("x_1", 0), ("y", 0)]


@pytest.mark.parametrize("ports", ["per-part", "shared"])
def test_network_with_channels_per_slab_matches_gcc(kernel, ports, capsys):
    code, out, _ = run_cli(["sim", str(kernel), "--parallel", "2", "--read-ports", ports, "--dpn-only", "--json"],
                           capsys)
    assert code == 0, out
    res = json.loads(out)
    assert res["ok"] and res["mismatches"] == 0
    # x_1 is read by both slabs: with a channel each, both units load it
    assert res["words_loaded"] == 16 * 16 + 16 + 16 * (2 if ports == "per-part" else 1) + 16


def test_a_stored_array_gets_a_channel_per_slab_only_where_no_order_spans_them(tmp_path, capsys):
    """A stored array keeps one read channel where a load waits for a store or an element is loaded for
    two slabs: every row of the first nest reads all of `w`, which the second then overwrites (each
    store must wait for every slab's load of its element), and `v`, when it goes through memory from
    the first nest to the second, is read back after its store.  `u` is loaded, each element in one
    slab, and stored: a channel per slab, each unit owing its slab's store unit (tests/dpn/test_write_ports.py)
    its elements' write-after-read tokens."""
    path = tmp_path / "stored_reads.c"
    path.write_text(STORED_READS.format(n=16))
    res = run(Options(str(path), tile="auto", parallel=2))
    units = {}
    for array, _name, port in _loads(res):
        units.setdefault(array, []).append(port)
    stored = {p.array for p in res.network.processes if p.kind == ProcessKind.STORE}
    assert {"u", "v", "w"} <= stored
    assert units["A"] == [0, 1] and units["u"] == [0, 1] and units["w"] == [0]
    assert "v" not in units  # carried on chip from the first nest to the second
    orders = {(c.producer, c.consumer) for c in res.network.channels if c.role == "order"}
    assert {("LOAD_u", "STORE_u"), ("LOAD_u_1", "STORE_u_1"), ("LOAD_w", "STORE_w")} <= orders
    # with less on-chip memory, v goes through memory between the nests: its load waits for its store
    small = run(Options(str(path), tile="auto", parallel=2, local_words=32))
    assert [p.port for p in small.network.processes if p.kind == ProcessKind.LOAD and p.array == "v"] == [0]
    assert ("STORE_v", "LOAD_v") in {(c.producer, c.consumer) for c in small.network.channels if c.role == "order"}
    for extra in ([], ["--local-words", "32"]):
        code, out, _ = run_cli(["sim", str(path), "--parallel", "2", "--dpn-only", "--json", *extra], capsys)
        assert code == 0, out
        assert json.loads(out)["ok"]


def test_an_unknown_read_ports_value_is_a_usage_error(kernel, capsys):
    code, _, err = run_cli(["sim", str(kernel), "--parallel", "2", "--read-ports", "many", "--dpn-only"], capsys)
    assert code == 2 and "--read-ports" in err
