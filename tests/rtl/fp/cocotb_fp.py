"""cocotb driver for tests/rtl/fp/fp_harness.v.j2 (run by tests/rtl/fp/test_fp_arith.py, not by pytest).

The harness does all the work at simulator speed: it reads the vectors, feeds them to every
operator (with random stall cycles), and writes each operator's results with ``$writememh``.  This
module only starts the clock (cocotb's GPI clock: no Python runs per cycle), waits for ``done``,
and checks the harness's own bookkeeping; the values are compared in pytest afterwards.

Environment (the simulator, not pytest, imports this module):

* ``FP_N``: number of vectors; ``FP_NOPS``: number of operators in the harness;
* ``FP_MAX_CYCLES``: give up (fail) after this many clock cycles without ``done``.
"""

from __future__ import annotations

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, with_timeout

PERIOD_NS = 10


@cocotb.test()
async def stream_vectors(dut) -> None:
    n = int(os.environ["FP_N"])
    nops = int(os.environ["FP_NOPS"])
    max_cycles = int(os.environ["FP_MAX_CYCLES"])
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    await with_timeout(RisingEdge(dut.done), max_cycles * PERIOD_NS, "ns")
    await ReadOnly()
    cycles = int(dut.cycles.value)
    dut._log.info("%d vectors x %d operators in %d cycles", n, nops, cycles)
    assert int(dut.hold_errors.value) == 0, (
        f"{int(dut.hold_errors.value)} cycles with an output changing during a stall (see the log)"
    )
    assert int(dut.captures.value) == n * nops, (
        f"captured {int(dut.captures.value)} results, expected {n} x {nops}"
    )
    assert cycles > n, "no stall cycles happened: the stall test is vacuous"
