"""Restartable block-level control (ap_ctrl_hs): back-to-back runs without a reset, bit-exact with gcc.

Native interface: the generated `<kernel>_top` under its simulation harness; after one reset, the
cocotb test below (`native_runs`, run in the simulator) loads new inputs into the memory models,
sets the scalar ports, pulses `start`, waits for `done`, reads the arrays back, and starts the next
run as soon as `idle` is high again.  It sees the top's `done`, `ready` and `idle` through the
harness's ports `done`, `ap_ready` and `ap_idle`, as a host would, and records them: `idle` high
before each start and low during the run, exactly one `ready` cycle per run, in the first cycle of
`done`, `done` low from the cycle after the start until the end.  Every run must equal gcc on its own inputs, and
the runs take the same number of cycles (the soft reset leaves no state behind).

AXI4-Lite: the `<kernel>_axi` wrapper driven by `sim/cocotb_axi.py` through two runs with new
arguments and base addresses and no reset between them (the wrapper no longer resets the core: it
only starts it, so this is the core's restart seen through AP_CTRL).
"""

from __future__ import annotations

import json
import os

import cocotb
import numpy as np
import pytest
from cocotb.triggers import FallingEdge

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.cocotb_top import reset_top
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_runner import build_verilator, run_cocotb
from sim.rtl_sim import scalar_bits, write_design
from tests.kernels import ROOT, example_params

EXAMPLES = ROOT / "examples"


# --------------------------------------------------------------------------------------------------
# cocotb side (runs inside the simulator; configuration in $DPN_RESTART_CONFIG)


@cocotb.test()
async def native_runs(dut):
    with open(os.environ["DPN_RESTART_CONFIG"]) as f:
        cfg = json.load(f)
    await reset_top(dut)
    await FallingEdge(dut.clk)
    result = {"runs": [], "idle_after_reset": int(dut.ap_idle.value), "done_after_reset": int(dut.done.value)}
    for spec in cfg["runs"]:
        rec: dict = {"done": False}
        for name, words in spec["arrays"].items():  # new inputs, straight into the memory models
            mem = getattr(dut, f"u_mem_{name}").mem
            for k, w in enumerate(words):
                mem[k].value = w
        for port, bits in spec["scalars"].items():
            getattr(dut, port).value = int(bits)
        await FallingEdge(dut.clk)
        rec["idle_before"] = int(dut.ap_idle.value)
        dut.start.value = 1
        await FallingEdge(dut.clk)
        dut.start.value = 0
        cycles, ready_cycles, ready_with_done, busy_idle = 1, 0, 0, 0
        while cycles < cfg["max_cycles"]:
            done, ready, idle = int(dut.done.value), int(dut.ap_ready.value), int(dut.ap_idle.value)
            ready_cycles += ready
            ready_with_done += ready and done
            if done:
                break
            busy_idle += idle  # idle must stay low until the run is over
            await FallingEdge(dut.clk)
            cycles += 1
        rec["done"] = bool(int(dut.done.value))
        rec["cycles"] = cycles
        await FallingEdge(dut.clk)  # the cycle after `ready`: idle again, done still high
        rec["idle_after"] = int(dut.ap_idle.value)
        rec["done_after"] = int(dut.done.value)
        ready_cycles += int(dut.ap_ready.value)
        rec.update(ready_cycles=ready_cycles, ready_with_done=ready_with_done, idle_while_running=busy_idle)
        rec["arrays"] = {name: [int(getattr(dut, f"u_mem_{name}").mem[k].value) for k in range(n)]
                         for name, n in cfg["words"].items()}
        result["runs"].append(rec)
        if not rec["done"]:
            break
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f)


# --------------------------------------------------------------------------------------------------
# pytest side


def _words(values: np.ndarray) -> list[int]:
    flat = np.ascontiguousarray(values).reshape(-1)
    return [int(w) for w in flat.view(np.dtype(f"u{flat.dtype.itemsize}"))]


@pytest.mark.parametrize("name", ["gemm-int", "jacobi-1d-int"])
def test_native_back_to_back_runs(name, tmp_path, rtl_cache):
    path = EXAMPLES / f"{name}.c"
    res = run(Options(str(path), params=example_params(path)))
    design = generate(res.network)
    rtl_files, tb_files = write_design(design, tmp_path)
    build = build_verilator([*rtl_files, *tb_files], design.tb_top, cache_root=rtl_cache)
    runs, expected = [], []
    for seed in (11, 12, 13):  # different arrays and scalars each time
        inputs = random_inputs(res.program, seed)
        exp = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **exp})
        runs.append({"arrays": {m["name"]: _words(np.asarray(inputs[m["name"]])) for m in design.interface["arrays"]},
                     "scalars": {s["port"]: scalar_bits(inputs[s["name"]], s["type"])
                                 for s in design.interface["scalars"]}})
        expected.append(exp)
    assert runs[0] != runs[1]
    cfg = {"runs": runs, "words": {m["name"]: m["words"] for m in design.interface["arrays"]},
           "max_cycles": 200_000, "result_file": str(tmp_path / "result.json")}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    out = run_cocotb(build, "tests.rtl.test_restart", test_dir=tmp_path / "run", testcase="native_runs",
                     timeout_s=600, extra_env={"DPN_RESTART_CONFIG": str(tmp_path / "config.json")})
    assert out.ok, out.summary()
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["idle_after_reset"] == 1 and result["done_after_reset"] == 0
    assert len(result["runs"]) == len(runs)
    for rec, exp in zip(result["runs"], expected):
        assert rec["done"], rec
        assert rec["idle_before"] == 1 and rec["idle_while_running"] == 0 and rec["idle_after"] == 1
        assert rec["ready_cycles"] == 1 and rec["ready_with_done"] == 1 and rec["done_after"] == 1
        got = {}
        for m in design.interface["arrays"]:
            dtype = exp[m["name"]].dtype
            raw = np.array(rec["arrays"][m["name"]], dtype=np.dtype(f"u{dtype.itemsize}"))
            got[m["name"]] = raw.view(dtype).reshape(exp[m["name"]].shape)
        mism = compare(exp, got)
        assert not mism, f"{len(mism)} mismatching elements, first {mism[0]}"
    # Nothing of a run is left for the next one: with the same memory latency, the same cycle count.
    assert len({rec["cycles"] for rec in result["runs"]}) == 1, [rec["cycles"] for rec in result["runs"]]


def test_axi_back_to_back_runs(tmp_path, rtl_cache):
    """Two runs through AP_CTRL with new arguments and buffers, no reset between them: polling, then
    the interrupt.  The wrapper goes S_IDLE -> S_START -> S_RUN and never resets the core."""
    pytest.importorskip("cocotbext.axi")
    from tests.rtl.test_axi import _check_outputs, _compile, _run_spec, _simulate

    src = EXAMPLES / "gemm-int.c"
    out = tmp_path / "out"
    axi = _compile(src, out)
    top_text = (out / "rtl" / f"{axi['top']}.v").read_text()
    assert "S_RESET" not in top_text and ".rst(rst), .start(core_start)" in top_text
    res = run(Options(str(src)))
    specs = [_run_spec(res, axi, seed, shift, irq) for seed, shift, irq in ((21, 0x40, False), (22, 0, True))]
    result = _simulate(out, axi["top"], axi, [s[0] for s in specs], rtl_cache, 0.2, seed=5)
    assert len(result["runs"]) == 2
    for (spec, _, exp), rec in zip(specs, result["runs"]):
        _check_outputs(rec, exp)
        assert rec["ctrl_done"] & 0x6 == 0x6, hex(rec["ctrl_done"])  # ap_done and ap_idle
