"""The top's block-level control as registers (hw_templates/top.v.j2, docs/rtl-timing.md).

The top registers every process's `finished` (`fin_q`) before the AND that ends the run, and keeps
`idle` and each process's copy of it as registers loaded with the next cycle's value, so no path
runs from a process's counters through the finish tree to the soft reset, or from `clearing`
through `idle` into the processes' start logic.  This runs a generated top under its simulation
harness (Verilator, cocotb: `top_timeline` below, in the simulator) through two runs without a
reset and checks, cycle by cycle, what that costs and what it keeps: `done` (and `ready`) rise
exactly two cycles after the last process finishes (one for `fin_q`, one for `done`'s register),
`idle` is high before each start, low from the cycle after it until `ready`, high again after it,
and both runs take the same number of cycles.
"""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.triggers import FallingEdge

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.cocotb_top import reset_top
from sim.rtl_runner import build_verilator, run_cocotb
from sim.rtl_sim import write_design
from tests.kernels import ROOT, example_params



@cocotb.test()
async def top_timeline(dut):
    """Two runs, each from a one-cycle start pulse: per cycle from the start (cycle 0, start high)
    up to the cycle after `ready`, the top's `idle`, `done`, `ready` and whether every process has
    finished."""
    with open(os.environ["DPN_TOP_CONTROL_CONFIG"]) as f:
        cfg = json.load(f)
    await reset_top(dut)
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    nproc = cfg["processes"]
    runs = []
    for _ in range(2):
        trace = []
        dut.start.value = 1
        after_ready = None
        while len(trace) < cfg["max_cycles"]:
            trace.append({"idle": int(dut.ap_idle.value), "done": int(dut.done.value),
                          "ready": int(dut.ap_ready.value),
                          "all_finished": int(int(dut.proc_finished.value) == (1 << nproc) - 1)})
            await FallingEdge(dut.clk)
            dut.start.value = 0
            if after_ready is not None:
                break
            if trace[-1]["ready"]:
                after_ready = len(trace)
        runs.append(trace)
    with open(cfg["result_file"], "w") as f:
        json.dump(runs, f)


def _first(trace: list[dict], key: str) -> int:
    """The first cycle after the start's in which `key` is high (`done` of the run before is still
    high in the start's cycle)."""
    return next(k for k, c in enumerate(trace) if k and c[key])


def test_done_two_cycles_after_the_last_process_finishes(tmp_path, rtl_cache):
    path = ROOT / "examples" / "gemm-int.c"
    res = run(Options(str(path), params=example_params(path)))
    design = generate(res.network)
    rtl_files, tb_files = write_design(design, tmp_path)
    build = build_verilator([*rtl_files, *tb_files], design.tb_top, cache_root=rtl_cache)
    cfg = {"processes": len(design.interface["processes"]), "max_cycles": 100_000,
           "result_file": str(tmp_path / "result.json")}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    out = run_cocotb(build, "tests.rtl.test_top_control", test_dir=tmp_path / "run", testcase="top_timeline",
                     timeout_s=600, extra_env={"DPN_TOP_CONTROL_CONFIG": str(tmp_path / "config.json")})
    assert out.ok, out.summary()
    runs = json.loads((tmp_path / "result.json").read_text())
    assert len(runs) == 2
    for trace in runs:
        finished = _first(trace, "all_finished")
        done = _first(trace, "done")
        assert done == finished + 2, (finished, done)
        assert trace[done]["ready"] == 1 and sum(c["ready"] for c in trace) == 1
        # idle: high when the start is taken, low from the next cycle through the `ready` cycle,
        # high again in the cycle after it (done still high)
        assert trace[0]["idle"] == 1
        assert [c["idle"] for c in trace[1:done + 1]] == [0] * done
        assert trace[done + 1]["idle"] == 1 and trace[done + 1]["done"] == 1
        # every process stays finished from its first finished cycle to the end of the run
        assert all(c["all_finished"] for c in trace[finished:done + 1])
    assert len(runs[0]) == len(runs[1])
