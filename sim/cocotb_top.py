"""cocotb test for a generated design: reset, start, wait for done, dump memories.

Memories are preloaded and dumped by the Verilog memory models, and the wait is one trigger per
chunk of simulated time, so the simulation runs at Verilator speed.  The outcome (cycles, or the
deadlock with every unfinished process) is written to a JSON file for the Python side.
"""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer

PERIOD_NS = 10


@cocotb.test()
async def run_kernel(dut):
    cfg = json.loads(open(os.environ["DPN_TB_CONFIG"]).read())
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    dut.rst.value = 1
    dut.start.value = 0
    dut.dump.value = 0
    for port, bits in cfg["scalars"].items():
        getattr(dut, port).value = int(bits)
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    result = {"done": False, "deadlock": False, "timeout": False}
    chunk = int(cfg.get("chunk_cycles", 20000))
    while True:
        if int(dut.done.value):
            result["done"] = True
            break
        await First(RisingEdge(dut.done), Timer(chunk * PERIOD_NS, unit="ns"))
        if int(dut.done.value):
            result["done"] = True
            break
        if int(dut.idle.value) >= cfg["idle_limit"]:
            result["deadlock"] = True
            break
        if int(dut.cycles.value) >= cfg["max_cycles"]:
            result["timeout"] = True
            break
    result["cycles"] = int(dut.cycles.value)
    finished = int(dut.proc_finished.value)
    result["unfinished"] = [p for k, p in enumerate(cfg["processes"]) if not (finished >> k) & 1]
    dut.dump.value = 1
    await RisingEdge(dut.clk)
    dut.dump.value = 0
    await ClockCycles(dut.clk, 2)
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f)
