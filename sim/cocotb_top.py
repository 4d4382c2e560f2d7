"""cocotb test for a generated design: reset, start, wait for done, dump memories.

Memories are preloaded and dumped by the Verilog memory models, and the wait is one trigger per
chunk of simulated time, so the simulation runs at Verilator speed.  The outcome (cycles, or the
deadlock with every unfinished process) is written to a JSON file for the Python side.  When the
watchdog stops a deadlocked run, the design's debug status vector and the optional probes named in
the configuration (paths below the testbench top) are read once and saved raw as bit strings;
`sim.rtl_sim.deadlock_report` decodes them.  A normal run never touches them.
"""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, First, RisingEdge, Timer

PERIOD_NS = 10


def _lookup(dut, path: str):
    """The handle at a dotted path below `dut`, or None when the simulator does not expose it."""
    handle = dut
    for name in path.split("."):
        try:
            handle = handle._get(name)
        except Exception:  # noqa: BLE001 - a probe the simulator cannot resolve is just unknown
            return None
        if handle is None:
            return None
    return handle


def _bits(dut, path: str):
    """The value at `path` as a binary string, most significant bit first (x/z kept), or None."""
    handle = _lookup(dut, path)
    if handle is None:
        return None
    try:
        return str(handle.value)
    except Exception:  # noqa: BLE001
        return None


def _debug_state(dut, cfg: dict) -> dict:
    """Read the debug status and probes (in the middle of a clock cycle, when everything is settled)."""
    return {"status": _bits(dut, cfg["debug_signal"]),
            "probes": {p: _bits(dut, p) for p in cfg.get("debug_probes", [])}}


async def reset_top(dut) -> None:
    """Start the clock and hold the testbench top in reset for three cycles, `start` and `dump` low."""
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    dut.rst.value = 1
    dut.start.value = 0
    dut.dump.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0


@cocotb.test()
async def run_kernel(dut):
    with open(os.environ["DPN_TB_CONFIG"]) as f:
        cfg = json.load(f)
    for port, bits in cfg["scalars"].items():
        getattr(dut, port).value = int(bits)
    await reset_top(dut)
    await RisingEdge(dut.clk)
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    result = {"done": False, "deadlock": False, "timeout": False}
    # Check the watchdog at least every quiet_limit cycles, so a deadlock stops within 2 * quiet_limit.
    chunk = max(1, min(int(cfg.get("chunk_cycles", 20000)), int(cfg["quiet_limit"])))
    while True:
        if int(dut.done.value):
            result["done"] = True
            break
        await First(RisingEdge(dut.done), Timer(chunk * PERIOD_NS, unit="ns"))
        # Sample in the middle of the cycle: at the edge itself, simulators differ in which of the
        # registers updated by that edge a callback sees (Icarus may show `cycles` before its update).
        await FallingEdge(dut.clk)
        if int(dut.done.value):
            result["done"] = True
            break
        if int(dut.quiet_cycles.value) >= cfg["quiet_limit"]:
            result["deadlock"] = True
            break
        if int(dut.cycles.value) >= cfg["max_cycles"]:
            result["timeout"] = True
            break
    result["cycles"] = int(dut.cycles.value)
    result["quiet_cycles"] = int(dut.quiet_cycles.value)
    finished = int(dut.proc_finished.value)
    result["unfinished"] = [p for k, p in enumerate(cfg["processes"]) if not (finished >> k) & 1]
    if (result["deadlock"] or result["timeout"]) and cfg.get("debug_signal"):
        result["debug"] = _debug_state(dut, cfg)
    dut.dump.value = 1
    await RisingEdge(dut.clk)
    dut.dump.value = 0
    await ClockCycles(dut.clk, 2)
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f)
