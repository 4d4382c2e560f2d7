"""cocotb testbench for tests/rtl/ecp5/test_mult18.py (run by the simulator, not by pytest).

The harness holds both implementations of the partial-product module on the same inputs: the
generic one (`p_generic`, hw_templates/int/mult18.v.j2) and the ECP5 one (`p_ecp5`,
hw_templates/ecp5/mult18.v.j2 over the MULT18X18D model).  Random operands and random clock
enables drive both; every cycle, once each register stage has been loaded, both outputs must equal
a Python model of the stages: operands into registers on `ce_in` (when IN_REGS), the product mod
2**PW into the output register on `ce_out`.

Configuration (environment): ``M18_AW``, ``M18_BW``, ``M18_PW``, ``M18_IN_REGS``, ``M18_CYCLES``.
"""

from __future__ import annotations

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge


@cocotb.test()
async def same_products(dut) -> None:
    aw, bw, pw = (int(os.environ[k]) for k in ("M18_AW", "M18_BW", "M18_PW"))
    in_regs = os.environ["M18_IN_REGS"] == "1"
    cycles = int(os.environ.get("M18_CYCLES", "3000"))
    rng = random.Random(aw * 1000 + bw * 10 + pw)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    a_q = b_q = p = None  # the model's registers (None: not loaded yet)
    checked = loads = 0
    for cycle in range(cycles):
        await FallingEdge(dut.clk)
        corner = rng.random() < 0.2
        a = ((1 << aw) - 1) if corner else rng.getrandbits(aw)
        b = ((1 << bw) - 1) if corner and rng.random() < 0.5 else rng.getrandbits(bw)
        ce_in, ce_out = rng.random() < 0.7, rng.random() < 0.7
        dut.a.value, dut.b.value = a, b
        dut.ce_in.value, dut.ce_out.value = int(ce_in), int(ce_out)
        await RisingEdge(dut.clk)
        # the edge: the output register takes the product of the operands before it
        x, y = (a_q, b_q) if in_regs else (a, b)
        if ce_out and x is not None:
            p, loads = (x * y) % (1 << pw), loads + 1
        if in_regs and ce_in:
            a_q, b_q = a, b
        await ReadOnly()
        if p is not None:
            got_g, got_e = int(dut.p_generic.value), int(dut.p_ecp5.value)
            assert got_g == p, f"cycle {cycle}: generic {got_g:#x}, expected {p:#x}"
            assert got_e == p, f"cycle {cycle}: ECP5 {got_e:#x}, expected {p:#x}"
            checked += 1
    assert loads > cycles // 3 and checked > cycles // 2, (loads, checked)
