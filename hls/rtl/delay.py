"""A delay model of FPGA logic, for scheduling datapath operators against the clock target.

The numbers are those nextpnr-ecp5 reports for a Lattice ECP5 (speed grade 6, the default of
`hls/pnr.py`), read off post-route critical paths of our designs, with a typical routing delay per
net: a register's clock-to-output, a LUT4, a carry chain (CCU2C: an entry, a small delay per bit, an
exit), a MULT18X18D used combinationally (Yosys infers no DSP registers on ECP5, so a multiplier's
registers are fabric flip-flops around it).  The xc7 and iCE40 flows are faster per level or
similar, so a schedule that fits an ECP5 clock fits theirs.

The datapath (`datapath.py`) gives every signal an *arrival*: nanoseconds after the clock edge of
its pipeline stage at which it is valid.  A register output arrives at `REG`; an operator's result
arrives at the latest operand's arrival plus the operator's delay (`add`, `compare`, ...), which
includes the routing of its inputs.  An operation whose result would arrive later than `budget()`
is moved to the next stage, its operands registered.
"""

from __future__ import annotations

import math

from .clock import period_ns

__all__ = ["REG", "PORT", "buffer_port", "BRAM", "LUTRAM_BITS", "bram_port", "LOOP_MHZ", "loop_budget", "ROUTE", "LUT", "MULT18", "SETUP", "MARGIN", "budget", "add", "compare", "equal", "logic",
           "select", "shift", "mult18", "DSP_ROUTE", "DSP_REG", "mult18_registered_inputs", "lut_levels", "max_chunk",
           "DSP_CHUNK"]

REG = 0.55  # clock to output of a flip-flop
ROUTE = 0.95  # a typical net
LUT = 0.45  # a LUT4, input to output
CARRY_IN = 0.45  # into a CCU2C chain
CARRY_BIT = 0.035  # per bit along the chain (0.07 per CCU2C of two bits)
CARRY_OUT = 0.42  # the sum output of the last CCU2C
MULT18 = 3.95  # MULT18X18D, inputs to product, unregistered
SETUP = 0.1
# a read port: a FIFO's output queue register, its head multiplexer, then the channel multiplexer
# (post-route: 3.8 ns from the queue's pointer register to the logic behind a single-channel port)
PORT = REG + 2 * (ROUTE + LUT)
LUTRAM_WORDS = 16  # words of one distributed RAM block (TRELLIS_DPR16X4)
MARGIN = 0.6  # placement variance: a path modelled at the budget still meets the clock
DSP_CHUNK = 18  # unsigned operand bits of one MULT18X18D


def buffer_port(size: int) -> float:
    """A buffer channel's read port: its slot address (a register) into distributed RAM, the read,
    the multiplexer over the RAM blocks (two inputs per LUT4 level, counting the slice muxes), then
    the channel multiplexer: slower than a FIFO's, whose word waits in a register."""
    blocks = max(1, math.ceil(size / LUTRAM_WORDS))
    return PORT + lut_levels(1 + math.ceil(math.log2(blocks) / 2))


BRAM = 5.85  # DP16KD clock to output, without its output register (which Yosys does not use)
LUTRAM_BITS = 8192  # buffer_sync.v.j2 keeps a buffer of up to this many bits in distributed RAM


def bram_port() -> float:
    """A buffer channel's read port when the buffer is a block RAM (above `LUTRAM_BITS`): the RAM's
    read register (read a cycle ahead at the announced address), the forwarding multiplexer of a
    word written on the edge it is read, then the channel multiplexer.  Beyond any stage's budget,
    so the datapath registers it before any logic."""
    return BRAM + lut_levels(2)


def budget() -> float:
    """Nanoseconds of logic (routing included) a signal may take after its stage's clock edge, up to
    the register that takes it, with the routing into that register and its setup time."""
    return period_ns() - ROUTE - SETUP - MARGIN


LOOP_MHZ = 115.0  # the clock a recurrence's logic is allowed to limit (see `loop_budget`)


def loop_budget() -> float:
    """The budget of logic on a recurrence (a value computed from the process's own previous result):
    registers there lengthen every trip around the loop, so it may take up to the period of
    `LOOP_MHZ` (when the clock target is faster) instead."""
    return max(budget(), 1000.0 / LOOP_MHZ - ROUTE - SETUP - MARGIN)


def lut_levels(n: int) -> float:
    return n * (ROUTE + LUT)


def add(width: int) -> float:
    """A two-input adder or subtractor of `width` bits on a carry chain."""
    return ROUTE + CARRY_IN + CARRY_BIT * width + CARRY_OUT


def compare(width: int) -> float:
    """An ordering comparison: a subtraction's carry out, plus a LUT for the C int result."""
    return add(width) + LUT


def equal(width: int) -> float:
    """Equality of two `width`-bit values: two bit pairs per LUT4, then an AND tree of LUT4s."""
    leaves = max(1, math.ceil(width / 2))
    return lut_levels(1 + max(0, math.ceil(math.log(leaves, 4))))


def logic() -> float:
    """Bitwise and logical operators, negation of a flag: one LUT level."""
    return lut_levels(1)


def select() -> float:
    """A two-way multiplexer (C `?:`)."""
    return lut_levels(1)


def shift(width: int) -> float:
    """A shift by a variable amount: log2(width) multiplexer levels, two per LUT4 level."""
    return lut_levels(max(1, math.ceil(math.log2(max(2, width)) / 2)))


def mult18() -> float:
    """A MULT18X18D between registers: routing in, the multiplier, to its register."""
    return ROUTE + MULT18


# A net between the datapath's logic and a DSP block: the DSPs sit in columns of their own, away from
# the registers of the process around them (gemm-int: 3.45 ns from an operand register into a
# MULT18X18D, then 1.59 ns from it to the product register)
DSP_ROUTE = 3.4
# A product leaving a MULT18X18D's output register (clock to output 0.74 ns, nextpnr-ecp5) on the
# longer route out of the DSP column (1.33 ns against a typical net's ROUTE, which `add` includes)
DSP_REG = 0.74 + (1.33 - ROUTE)


def mult18_registered_inputs() -> bool:
    """Whether each DSP multiplier gets its operands from registers of its own (placed beside it) at
    the current clock target: when an operand register of the datapath, the route to the DSP column
    and the multiplier do not fit one stage."""
    return REG + DSP_ROUTE + MULT18 > budget()


def max_chunk() -> int:
    return DSP_CHUNK
