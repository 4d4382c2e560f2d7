"""cocotb driver for the divider harness (run by tests/rtl/int/test_int_div.py, not by pytest).

The harness (tests/rtl/fp/fp_harness.v.j2, shared with the floating-point tests) streams the
vectors through the operators at simulator speed, with ``en`` low on a random quarter of the
cycles, and writes the results with ``$writememh``.  This module only runs the clock, waits for
``done`` and checks the harness's bookkeeping: no output moved during a stall, every operator
delivered exactly one result per vector, and stalls really happened (else the stall test would be
vacuous).  Throughput is implied: the harness issues a new vector on every enabled cycle, so the
results can only be right if the operators accept one operation per enabled cycle.

Environment: ``DIV_N`` vectors, ``DIV_NOPS`` operators, ``DIV_MAX_CYCLES`` (give up after that).
"""

from __future__ import annotations

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, with_timeout

PERIOD_NS = 10


@cocotb.test()
async def stream_vectors(dut) -> None:
    n = int(os.environ["DIV_N"])
    nops = int(os.environ["DIV_NOPS"])
    max_cycles = int(os.environ["DIV_MAX_CYCLES"])
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    await with_timeout(RisingEdge(dut.done), max_cycles * PERIOD_NS, "ns")
    await ReadOnly()
    cycles = int(dut.cycles.value)
    dut._log.info("%d vectors x %d dividers in %d cycles", n, nops, cycles)
    assert int(dut.hold_errors.value) == 0, (
        f"{int(dut.hold_errors.value)} cycles with an output changing during a stall (see the log)"
    )
    assert int(dut.captures.value) == n * nops, f"captured {int(dut.captures.value)} results, expected {n} x {nops}"
    assert cycles > n + n // 8, f"only {cycles} cycles for {n} vectors: too few stall cycles to test stalling"
