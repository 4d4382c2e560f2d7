"""cocotb testbench for hw_templates/fifo_mult.v.j2 (run by tests/rtl/test_channels.py, not by pytest).

The FIFO with multiplicity is checked cycle by cycle against a Python model (a deque for the FIFO
plus the value register):

* ``in_ready`` is low only when the FIFO holds at least DEPTH words (the register is extra capacity, and a
  non-first read never frees a word);
* with ``out_first`` = 1, ``out_valid`` is high exactly when the FIFO is not empty and ``out_data``
  is its head; a transfer pops it into the register;
* with ``out_first`` = 0, ``out_valid`` is high exactly when a value has been popped since reset and
  ``out_data`` is that value; a transfer changes nothing;
* ``out_held`` = a value has been popped since reset; ``out_vk`` / ``out_vt`` = the FIFO's head valid
  in the next cycle if nothing is popped now / if a value is popped now.

The consumer mostly follows the protocol of a reading process (the first read of each value with
``out_first`` = 1, then a random number of re-reads with ``out_first`` = 0); one phase drives
``out_first`` at random, which the module must handle the same way.

Configuration (environment, set by the test launcher): ``FM_DEPTH`` and ``FM_WIDTH`` (required),
``FM_CYCLES`` (default 4000), ``FM_VALID_PROB`` and ``FM_READY_PROB`` (default 0.5).
"""

from __future__ import annotations

import os
import random
from collections import deque
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly


@dataclass
class Coverage:
    pushes: int = 0
    first_reads: int = 0
    repeat_reads: int = 0  # transfers with out_first = 0
    cycles_full: int = 0
    cycles_empty_but_held: int = 0  # FIFO empty, register valid
    repeat_while_full: int = 0  # a re-read while the FIFO is full (must not free a slot)
    push_and_pop: int = 0


class FifoMultChecker:
    """Drives one cycle at a time (inputs after the falling edge, checks in ReadOnly)."""

    def __init__(self, dut, depth: int, width: int, rng: random.Random) -> None:
        self.dut = dut
        self.depth = depth
        self.width = width
        self.rng = rng
        self.fifo: deque[int] = deque()
        self.held: int | None = None  # the register, None until the first pop
        self.cov = Coverage()
        self.cycle = 0
        self.fresh = 0  # words pushed on the last edge: in the FIFO's input register, not visible yet

    async def reset(self) -> None:
        dut = self.dut
        dut.rst.value = 1
        dut.in_valid.value = 0
        dut.in_data.value = 0
        dut.out_ready.value = 0
        dut.out_first.value = 1
        for _ in range(3):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        self.fifo.clear()
        self.held = None
        self.fresh = 0

    async def step(self, in_valid: bool, out_ready: bool, out_first: bool) -> tuple[bool, bool]:
        """One cycle: drive, check against the model, update it.  Returns (pushed, read)."""
        dut = self.dut
        await FallingEdge(dut.clk)
        data = self.rng.getrandbits(self.width)
        dut.in_valid.value = int(in_valid)
        dut.in_data.value = data
        dut.out_ready.value = int(out_ready)
        dut.out_first.value = int(out_first)
        await ReadOnly()
        self.cycle += 1
        where = f"cycle {self.cycle} (first={int(out_first)}, fifo={len(self.fifo)})"

        in_ready = bool(int(dut.in_ready.value))
        out_valid = bool(int(dut.out_valid.value))
        out_vk = bool(int(dut.out_vk.value))
        out_vt = bool(int(dut.out_vt.value))
        assert bool(int(dut.out_held.value)) == (self.held is not None), f"{where}: out_held"
        full = not in_ready  # the FIFO refuses pushes (it holds DEPTH words or more)
        # at least DEPTH words fit, and at most the input register's and the two of the consumer side more
        assert in_ready or len(self.fifo) >= self.depth, f"{where}: in_ready={in_ready}"
        assert not in_ready or len(self.fifo) < self.depth + 3, f"{where}: in_ready={in_ready}"
        if out_first:
            assert out_valid == (len(self.fifo) > self.fresh), f"{where}: first read, out_valid={out_valid}"
            expected = self.fifo[0] if self.fifo else None
        else:
            assert out_valid == (self.held is not None), f"{where}: re-read, out_valid={out_valid}"
            expected = self.held
        if out_valid:
            got = int(dut.out_data.value)
            assert got == expected, f"{where}: out_data {got:#x}, expected {expected:#x}"

        pushed = in_valid and in_ready
        read = out_valid and out_ready
        if read and out_first:
            self.held = self.fifo.popleft()
            self.cov.first_reads += 1
        elif read:
            self.cov.repeat_reads += 1
            if full:
                self.cov.repeat_while_full += 1
        self.fresh = int(pushed)
        if pushed:
            self.fifo.append(data)
            self.cov.pushes += 1
            if read and out_first:
                self.cov.push_and_pop += 1
        # the registered look-ahead: the FIFO's head valid in the next cycle, popped now or not
        ahead = len(self.fifo) > self.fresh
        popped = read and out_first
        assert (out_vt if popped else out_vk) == ahead, (
            f"{where}: out_vk={out_vk} out_vt={out_vt} popped={popped}, next cycle head valid={ahead}")
        self.cov.cycles_full += full
        if not self.fifo and self.held is not None:
            self.cov.cycles_empty_but_held += 1
        return pushed, read


def _env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        if default is None:
            raise RuntimeError(f"{name} must be set by the test launcher")
        return default
    return int(raw)


@cocotb.test()
async def fifo_mult_random_traffic(dut) -> None:
    """Directed corner cases, then protocol-following and free random traffic."""
    depth = _env_int("FM_DEPTH")
    width = _env_int("FM_WIDTH")
    cycles = _env_int("FM_CYCLES", 4000)
    p_valid = float(os.environ.get("FM_VALID_PROB", "0.5"))
    p_ready = float(os.environ.get("FM_READY_PROB", "0.5"))
    assert len(dut.in_data) == width and len(dut.out_data) == width
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("DEPTH=%d WIDTH=%d cycles=%d seed=%d", depth, width, cycles, cocotb.RANDOM_SEED)

    Clock(dut.clk, 10, unit="ns").start()
    chk = FifoMultChecker(dut, depth, width, rng)
    await chk.reset()

    # 1. Nothing popped yet: a re-read is not valid, even with words waiting in the FIFO.
    for _ in range(3):
        _, read = await chk.step(in_valid=False, out_ready=True, out_first=False)
        assert not read
    for _ in range(3 * depth + 8):  # a word enters the FIFO's count-free consumer side 2 cycles after its push
        await chk.step(in_valid=True, out_ready=True, out_first=False)
    assert len(chk.fifo) == depth + 3 and chk.held is None

    # 2. Full FIFO: re-reads never free a slot; a first read pops, the register adds no room for
    #    a push on the same edge, and afterwards re-reads return the popped value.
    pushed, read = await chk.step(in_valid=True, out_ready=True, out_first=True)
    assert read and not pushed, "a full FIFO accepted a push on the edge it was popped"
    pushed, read = await chk.step(in_valid=True, out_ready=True, out_first=False)
    assert read
    if not pushed:  # the room reaches the producer's side a cycle after the pop
        pushed, read = await chk.step(in_valid=True, out_ready=True, out_first=False)
    assert read and pushed
    for _ in range(4):
        pushed, read = await chk.step(in_valid=True, out_ready=True, out_first=False)
        assert read and not pushed, "a re-read freed a FIFO slot"
    assert len(chk.fifo) == depth + 3

    # 3. Drain with the first read of each value followed by 0..2 re-reads.
    while chk.fifo:
        await chk.step(in_valid=False, out_ready=True, out_first=True)
        for _ in range(rng.randrange(3)):
            _, read = await chk.step(in_valid=False, out_ready=True, out_first=False)
            assert read, "a re-read of a popped value was not valid"
    # Empty FIFO, register still valid.
    _, read = await chk.step(in_valid=False, out_ready=True, out_first=True)
    assert not read
    _, read = await chk.step(in_valid=False, out_ready=True, out_first=False)
    assert read

    # 4. Full rate, each value read once: with DEPTH >= 2, one push and one pop per cycle.
    moved = [await chk.step(in_valid=True, out_ready=True, out_first=True) for _ in range(40)]
    if depth >= 2:
        assert all(p for p, _ in moved) and all(r for _, r in moved[2:]), "stalled at full rate"

    # 5. Random traffic.  A protocol consumer: the first read of each value, then a random number
    #    of re-reads (it changes out_first only after a transfer); then free random out_first.
    remaining = 0  # re-reads still due for the current value
    phases = [(p_valid, p_ready, False), (0.9, 0.4, False), (0.4, 0.9, False), (p_valid, p_ready, True)]
    per_phase = max(1, cycles // len(phases))
    for pv, pr, free in phases:
        for _ in range(per_phase):
            if free:
                first = rng.random() < 0.5
            else:
                first = remaining == 0
            pushed, read = await chk.step(rng.random() < pv, rng.random() < pr, first)
            if read and not free:
                remaining = rng.choice((0, 0, 1, 2, 3)) if first else remaining - 1
            elif free:
                remaining = 0

    # Drain: every value pushed comes out once as a first read, in order.
    for _ in range(depth + 4):
        await chk.step(in_valid=False, out_ready=True, out_first=True)
    assert not chk.fifo, f"{len(chk.fifo)} words stuck"
    cov = chk.cov
    assert cov.pushes == cov.first_reads, cov
    dut._log.info("coverage: %s", cov)
    assert cov.repeat_reads > 200 and cov.cycles_full > 20, f"weak coverage: {cov}"
    assert cov.repeat_while_full > 5 and cov.cycles_empty_but_held > 20, f"weak coverage: {cov}"
    if depth >= 2:
        assert cov.push_and_pop > 50, f"weak coverage: {cov}"
