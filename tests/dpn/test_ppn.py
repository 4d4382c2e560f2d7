"""The untiled process network: typing, exact sizing, the DPN simulator against gcc, outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hls.cli import main
from hls.dpn.network import ChannelKind
from hls.dpn.serialize import network_from_json, network_to_json
from hls.dpn.simulate import simulate
from hls.pipeline import Options, run
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import EXAMPLES, POLYBENCH_FLAGS, POLYBENCH_KERNELS, ROOT, example_params, ids


def compiled(path, **kw):
    return run(Options(str(path), params=example_params(path), **kw))


def reference(res, inputs):
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    return expected


@pytest.mark.parametrize("path", EXAMPLES, ids=ids(EXAMPLES))
def test_example_network_matches_gcc(path):
    res = compiled(path)
    for seed in (0, 1, 2):
        inputs = random_inputs(res.program, seed)
        expected = reference(res, inputs)
        out = simulate(res.network, inputs, seed=seed, tables=res.tables)
        assert out.deadlock is None, out.deadlock.format()
        assert not compare(expected, out.outputs)
    # In schedule order every channel reaches exactly its sequential size (sizes are tight); `deepen` may
    # only add words on top, for throughput.
    out = simulate(res.network, inputs, order="schedule", tables=res.tables)
    assert out.deadlock is None
    for c in res.network.channels:
        if c.kind != ChannelKind.BUFFER:
            assert out.max_fill[c.name] == c.max_live <= c.depth, c.name


@pytest.mark.parametrize("path", POLYBENCH_KERNELS, ids=ids(POLYBENCH_KERNELS))
def test_polybench_lookalike_network(path):
    defines = [POLYBENCH_FLAGS[2][2:], POLYBENCH_FLAGS[3][2:]] + (["N=20"] if path.stem == "floyd-warshall" else [])
    params = {"tsteps": 3} if path.parent.parent.name == "stencils" else {}
    res = run(Options(str(path), include_dirs=(POLYBENCH_FLAGS[1],), defines=tuple(defines), params=params))
    inputs = random_inputs(res.program, 7)
    expected = reference(res, inputs)
    out = simulate(res.network, inputs, seed=7, tables=res.tables)
    assert out.deadlock is None and not compare(expected, out.outputs)


SHRINK = [p for p in EXAMPLES if p.stem in {"gemm", "jacobi-1d", "cholesky", "seidel-2d", "trisolv", "conv2d"}]


@pytest.mark.parametrize("path", SHRINK, ids=ids(SHRINK))
def test_shrinking_any_channel_is_caught(path):
    """One word less than its sequential size in any channel and the schedule cannot proceed: the report
    names that channel."""
    res = compiled(path)
    inputs = random_inputs(res.program, 0)
    for c in res.network.channels:
        need = c.max_live if c.kind != ChannelKind.BUFFER else c.depth
        out = simulate(res.network, inputs, order="schedule", capacities={c.name: need - 1}, tables=res.tables)
        assert out.deadlock is not None, f"{c.name} ({c.kind}, depth {need}) can shrink"
        assert [b.channel for b in out.deadlock.blocked] == [c.name]
        text = out.deadlock.format()
        assert c.name in text and out.deadlock.blocked[0].process in text


def test_gemm_channel_kinds():
    res = compiled(ROOT / "examples" / "gemm.c")
    kinds = {(c.producer, c.sink_port): c.kind for c in res.network.channels}
    # C[i][j] flows along k: a FIFO; A[i][k] is reused across j in a row: FIFO + register;
    # B[k][j] is reused across i: out of order, an addressable buffer.
    assert kinds[("S1", "S1.r2")] == ChannelKind.FIFO
    reads = {r.text: r.id for r in res.program.statement("S1").reads}
    assert kinds[("LOAD_A", reads["A[i][k]"])] == ChannelKind.FIFO_MULT
    assert kinds[("LOAD_B", reads["B[k][j]"])] == ChannelKind.BUFFER
    nj = res.program.param_values().get("nj") or 18
    fifo = next(c for c in res.network.channels if c.producer == "S1" and c.consumer == "S1")
    assert fifo.max_live == res.program.arrays["C"].extent.dim_max(1).get_pieces()[0][1].get_constant_val().to_python() + 1
    del nj


def test_random_deadlock_is_reported_with_every_blocked_process():
    res = compiled(ROOT / "examples" / "gemm.c")
    inputs = random_inputs(res.program, 0)
    caps = {c.name: 1 for c in res.network.channels}
    out = simulate(res.network, inputs, seed=3, capacities=caps, tables=res.tables)
    assert out.deadlock is not None
    blocked = {b.process for b in out.deadlock.blocked}
    assert blocked and all(b.channel in caps for b in out.deadlock.blocked)
    assert "fill levels" in out.deadlock.format()


def test_dpn_json_round_trips():
    res = compiled(ROOT / "examples" / "jacobi-2d.c")
    data = network_to_json(res.network)
    back = network_from_json(json.loads(json.dumps(data)), res.program)
    again = network_to_json(back)
    isl_fields = {"domain", "schedule", "relation", "instance"}
    for key in ("processes", "channels"):
        assert len(again[key]) == len(data[key])
        for a, b in zip(again[key], data[key]):
            assert {k: v for k, v in a.items() if k not in isl_fields} == {k: v for k, v in b.items() if k not in isl_fields}
    for p in res.network.processes:
        q = back.process(p.name)
        assert q.domain.is_equal(p.domain) and q.schedule.is_equal(p.schedule)
    for c in res.network.channels:
        assert back.channel(c.name).relation.is_equal(c.relation)
    assert network_to_json(network_from_json(again, res.program)) == again  # a fixed point after one trip


def test_compile_writes_outputs(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["compile", str(ROOT / "examples" / "atax.c"), "--param", "m=12", "--param", "n=16", "-o", str(out),
                 "-q"]) == 0
    data = json.loads((out / "dpn.json").read_text())
    dot = (out / "dpn.dot").read_text()
    assert data["processes"] and data["channels"]
    for c in data["channels"]:
        assert f'"{c["producer"]}" -> "{c["consumer"]}"' in dot and f"d={c['depth']}" in dot
    rep = json.loads((out / "report.json").read_text())
    assert rep["summary"]["channel_words"] == sum(c["depth"] + (c["kind"] == "fifo_mult") for c in data["channels"])
    assert "## Channels" in (out / "report.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o.tmp")]


def test_compile_is_deterministic(tmp_path):
    for name in ("a", "b"):
        assert main(["compile", str(ROOT / "examples" / "cholesky.c"), "-o", str(tmp_path / name), "-q"]) == 0
    for f in ("dpn.json", "dpn.dot", "report.md", "report.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_sim_json_contract(capsys):
    assert main(["sim", str(ROOT / "examples" / "gemm.c"), "--dpn-only", "--seed", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("ok", "mismatches", "cycles", "words_loaded", "words_stored", "compulsory_words", "roofline_cycles",
                "processes", "channels", "fifos", "channel_words", "seconds_compile", "seconds_sim", "efficiency"):
        assert key in d, key
    assert d["ok"] is True and d["mismatches"] == 0
    assert d["words_loaded"] + d["words_stored"] == d["compulsory_words"]


def test_memory_order_channel_prevents_write_after_read():
    """A[i] is read by S0 and later overwritten by S1: STORE_A must wait for LOAD_A (token channel)."""
    path = ROOT / "tests" / "regressions" / "war_through_memory.c"
    res = run(Options(str(path)))
    order = [c for c in res.network.channels if c.role == "order"]
    assert [(c.producer, c.consumer) for c in order] == [("LOAD_A", "STORE_A")]
    without = res.network.with_channels([c for c in res.network.channels if c.role != "order"], res.network.stage)
    broken = 0
    for seed in range(20):
        inputs = random_inputs(res.program, seed)
        expected = reference(res, inputs)
        good = simulate(res.network, inputs, seed=seed, tables=res.tables)
        assert good.deadlock is None and not compare(expected, good.outputs)
        bad = simulate(without, inputs, seed=seed, tables=res.tables)
        broken += bool(compare(expected, bad.outputs))
    assert broken > 0, "the hazard never showed up: the test would not catch a missing order channel"
