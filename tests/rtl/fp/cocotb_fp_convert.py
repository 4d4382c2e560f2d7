"""cocotb side of tests/rtl/fp/test_fp_convert.py (run by the simulator, not by pytest).

The Verilog harness (`harness_convert.v.j2`) does all the work at simulator speed: it reads the
operands with $readmemh, streams them through the operator chosen by plusarg with random enable
gaps, and writes the results with $writememh.  This test only runs the clock (cocotb's C++ clock,
no Python per cycle) and waits for the harness to raise `done`; pytest compares the results.
"""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge


@cocotb.test()
async def stream_vectors(dut) -> None:
    Clock(dut.clk, 2, unit="ns", impl="gpi").start(start_high=False)
    await RisingEdge(dut.done)
    assert int(dut.done.value) == 1
