"""Operands read at the pipeline stage that needs them (`datapath.late_reads`): the stage chosen, the
cycle model's view of it, and the segmented pipeline in Verilator under back-pressure."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.network import ChannelKind
from hls.dpn.tables import NetworkTables
from hls.dpn.timing import simulate_timing
from hls.pipeline import Options, run
from hls.poly import expr as E
from hls.poly.types import DOUBLE, INT32
from hls.rtl import datapath
from hls.rtl.generate import generate, operator_library, process_latencies, read_stages
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT, example_params


def _read(name: str, t=DOUBLE) -> E.ArrayRead:
    return E.ArrayRead(name, t)


def _bin(op: str, lhs: E.Expr, rhs: E.Expr, t=DOUBLE) -> E.Binary:
    return E.Binary(op, lhs, rhs, t)


def _stages(e: E.Expr, ports: dict[str, str]) -> tuple[datapath.Datapath, dict[str, int]]:
    dp, res = datapath.build(e, ports, {}, lambda v: "0", None, operator_library())
    dp.use(res, dp.depth)
    return dp, datapath.late_reads(dp, list(ports.values()))


def test_accumulator_is_read_after_the_multiplier():
    lib = operator_library()
    acc, a, b = _read("acc"), _read("a"), _read("b")
    e = _bin("+", acc, _bin("*", a, b))
    dp, stage = _stages(e, {"acc": "pv_p0", "a": "pv_p1", "b": "pv_p2"})
    # a pipelined operator takes a read port through a register (`delay.PORT` does not fit its first
    # stage): the multiplier starts at stage 1, the accumulator is read when the product is ready and
    # registered in front of the adder
    assert stage == {"pv_p0": 1 + lib["fmul.f64"].latency, "pv_p1": 0, "pv_p2": 0}
    assert dp.depth == 2 + lib["fmul.f64"].latency + lib["fadd.f64"].latency


def test_late_read_never_splits_an_operator():
    """`(a * b) + ((c + d) * e)`: `e` is first needed after the adder, while the multiplier `a * b`
    is still working; the stages on either side of a cut stall separately, so `e` moves back to
    the latest stage no operator straddles."""
    lib = operator_library()
    a, b, c, d, e_ = (_read(n) for n in "abcde")
    inner = _bin("*", _bin("+", c, d), e_)
    expr = _bin("+", _bin("*", a, b), inner)
    ports = {n: f"pv_p{k}" for k, n in enumerate("abcde")}
    dp, stage = _stages(expr, ports)
    inside = {k for s, f in dp.spans for k in range(s + 1, f)}
    first = lib["fadd.f64"].latency
    for sig, s in stage.items():
        assert s not in inside and s <= dp.first_use.get(sig, 0), (sig, s)
    # operators take read ports through a register, so both multipliers' chains start at stage 1
    expected = 1 + (first if first >= lib["fmul.f64"].latency else 0)
    assert stage[ports["e"]] == expected
    assert stage[ports["a"]] == stage[ports["c"]] == 0


def test_integer_operands_feeding_combinational_logic_are_read_at_issue():
    x, y = _read("x", INT32), _read("y", INT32)
    _dp, stage = _stages(E.Binary("+", x, y, INT32), {"x": "pv_p0", "y": "pv_p1"})
    assert stage == {"pv_p0": 0, "pv_p1": 0}


def test_late_reads_shorten_recurrences_in_the_model_and_in_rtl(tmp_path, rtl_cache):
    """atax: a reduction through a floating-point adder, fed by a multiplier.  The cycle model with
    every operand read at issue needs far more cycles than with late reads, the RTL runs at what the
    model with late reads predicts, and it stays bit-exact under back-pressure."""
    path = ROOT / "examples" / "atax.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    net = res.network
    stages = read_stages(net)
    assert any(s > 0 for per in stages.values() for s in per.values()), stages
    tables = NetworkTables(net)
    lat = process_latencies(net)
    deep = {c.name: 1 << 30 for c in net.channels if c.kind != ChannelKind.BUFFER}
    at_issue = simulate_timing(net, tables, lat, deep).cycles
    late = simulate_timing(net, tables, lat, deep, read_stage=stages).cycles
    assert late < 0.85 * at_issue, (late, at_issue)
    design = generate(net)
    assert any("read at stage" in text for text in design.rtl.values())
    for seed, stall in ((0, 0.0), (1, 0.3)):
        inputs = random_inputs(res.program, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        out = run_rtl(design, inputs, tmp_path / f"s{seed}", stall=stall, seed=seed, cache_root=rtl_cache)
        assert out.completed, out.problem or out.log[-2000:]
        assert not compare(expected, out.outputs)
        if stall == 0.0:
            est = res.timing["estimated_cycles"]
            assert abs(est - out.cycles) <= 0.15 * out.cycles, (est, out.cycles)
            assert out.cycles < 0.85 * at_issue, (out.cycles, at_issue)


def test_reading_everything_at_issue_is_a_network_property_that_round_trips():
    """`ProcessNetwork.late_reads` off: every port at stage 0, the RTL reads nothing late, and
    `dpn.json` keeps the choice (the Verilog of a reloaded network must match the modelled one)."""
    import json

    from hls.dpn.serialize import network_from_json, network_to_json

    path = ROOT / "examples" / "atax.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    net = res.network.with_channels(list(res.network.channels), res.network.stage)
    net.late_reads = False
    assert all(s == 0 for per in read_stages(net).values() for s in per.values())
    assert not any("read at stage" in text for text in generate(net).rtl.values())
    back = network_from_json(json.loads(json.dumps(network_to_json(net))), res.program)
    assert back.late_reads is False
    assert read_stages(back) == read_stages(net)


@pytest.mark.slow  # 50 s; late reads in RTL are covered by the test above
def test_a_recurrence_waits_only_for_its_adder_and_the_channel(tmp_path, rtl_cache):
    """An untiled dot product is one chain through the adder: each iteration reads the sum after the
    multiplier and hands its own sum to the next one.  The last pipeline stage drives the channel,
    so the RTL's cycles grow by exactly the adder's latency, the channel's two registers (its input
    register, then its queue: the consumer's operand flag is a register computed a cycle ahead) and
    the register that takes the read port in front of the adder (`delay.PORT` does not fit the
    adder's first stage) per iteration, and the cycle model says the same."""
    lib = operator_library()
    src = tmp_path / "dot.c"
    src.write_text("void dot(int n, double a[n], double b[n], double s[1])\n{\n  int i;\n#pragma scop\n"
                   "  for (i = 0; i < n; i++)\n    s[0] += a[i] * b[i];\n#pragma endscop\n}\n")
    cycles, model = {}, {}
    for n in (16, 32):
        res = run(Options(str(src), params={"n": n}, tile="none"))
        design = generate(res.network)
        inputs = random_inputs(res.program, 0)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        out = run_rtl(design, inputs, tmp_path / f"n{n}", cache_root=rtl_cache)
        assert out.completed and not compare(expected, out.outputs)
        cycles[n], model[n] = out.cycles, res.timing["estimated_cycles"]
    per_iteration = lib["fadd.f64"].latency + 3
    assert cycles[32] - cycles[16] == 16 * per_iteration, cycles
    assert model[32] - model[16] == 16 * per_iteration, model
