"""cocotb testbench for hw_templates/fifo.v.j2 (run by tests/rtl/test_fifo.py, not by pytest).

The FIFO's contract is checked cycle by cycle against a Python deque: every accepted word comes
out once, in order, unchanged; ``count`` is the occupancy but for the (up to) two words on the
consumer side and never exceeds DEPTH + 1 (one word in the input register); ``in_ready`` is low exactly when ``count`` is DEPTH + 1 (so a full FIFO accepts nothing, even while it is being popped,
which is what lets the compiler size FIFOs to their exact maximal occupancy); ``out_valid`` is high
exactly when it holds a word pushed before the last cycle (show-ahead, data valid with it: a pushed
word waits one cycle in the input register); ``out_vk`` / ``out_vt`` foretell ``out_valid`` in the next
cycle without / with a pop in this one.

Configuration comes from the environment because the simulator, not pytest, imports this module:

* ``FIFO_DEPTH`` / ``FIFO_WIDTH`` (required): the parameters the model was built with;
* ``FIFO_CYCLES`` (default 4000): length of the random phase;
* ``FIFO_VALID_PROB`` / ``FIFO_READY_PROB`` (default 0.5): probability that the producer offers a
  word / the consumer accepts one on a given cycle in the random phase.
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
    """What the stimulus actually exercised, so a lucky-but-weak run cannot pass silently."""

    pushes: int = 0
    pops: int = 0
    cycles_full: int = 0
    cycles_empty: int = 0
    push_refused_while_popped: int = 0  # full, in_valid and a pop on the same edge
    both_same_cycle: int = 0
    max_count: int = 0


class FifoChecker:
    """Drives the FIFO one clock cycle at a time and checks it against a deque model.

    Inputs are driven just after the falling edge and outputs sampled in the ReadOnly phase of the
    same half cycle; the transfer decided there happens at the following rising edge.
    """

    def __init__(self, dut, depth: int, width: int, rng: random.Random) -> None:
        self.dut = dut
        self.depth = depth
        self.width = width
        self.rng = rng
        self.model: deque[int] = deque()
        self.cov = Coverage()
        self.cycle = 0
        self.fresh = 0  # words pushed on the last edge: in the input register, not visible yet

    async def reset(self) -> None:
        dut = self.dut
        dut.rst.value = 1
        dut.in_valid.value = 0
        dut.in_data.value = 0
        dut.out_ready.value = 0
        for _ in range(3):
            await FallingEdge(dut.clk)
        dut.rst.value = 0

    async def step(self, in_valid: bool, out_ready: bool) -> tuple[bool, bool]:
        """One cycle: drive, check, update the model.  Returns (pushed, popped)."""
        dut = self.dut
        await FallingEdge(dut.clk)
        data = self.rng.getrandbits(self.width)
        dut.in_valid.value = int(in_valid)
        dut.in_data.value = data
        dut.out_ready.value = int(out_ready)
        await ReadOnly()
        self.cycle += 1

        count = int(dut.count.value)
        in_ready = bool(int(dut.in_ready.value))
        out_valid = bool(int(dut.out_valid.value))
        out_vk = bool(int(dut.out_vk.value))
        out_vt = bool(int(dut.out_vt.value))
        where = f"cycle {self.cycle}"
        assert count <= self.depth + 1, f"{where}: count {count} exceeds DEPTH + 1 = {self.depth + 1}"
        # count leaves out the (up to) two words waiting on the consumer side
        assert count <= len(self.model) <= count + 2, f"{where}: count {count}, model holds {len(self.model)}"
        assert in_ready == (count != self.depth + 1), f"{where}: in_ready={in_ready} with count={count}"
        visible = len(self.model) - self.fresh
        assert out_valid == (visible != 0), f"{where}: out_valid={out_valid}, model {len(self.model)} ({self.fresh} fresh)"

        popped = out_valid and out_ready
        pushed = in_valid and in_ready
        if out_valid:
            got = int(dut.out_data.value)
            assert got == self.model[0], (
                f"{where}: out_data {got:#x}, expected {self.model[0]:#x} (count={count})"
            )
        if popped:
            self.model.popleft()
            self.cov.pops += 1
        if pushed:
            self.model.append(data)
            self.cov.pushes += 1
        self.fresh = int(pushed)
        ahead = len(self.model) - self.fresh != 0  # out_valid in the next cycle
        assert (out_vt if popped else out_vk) == ahead, (
            f"{where}: out_vk={out_vk} out_vt={out_vt} popped={popped}, next cycle out_valid={ahead}")
        if count == self.depth + 1:
            self.cov.cycles_full += 1
            if in_valid and popped:
                self.cov.push_refused_while_popped += 1
        if count == 0:
            self.cov.cycles_empty += 1
        if pushed and popped:
            self.cov.both_same_cycle += 1
        self.cov.max_count = max(self.cov.max_count, count)
        return pushed, popped


def _env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        if default is None:
            raise RuntimeError(f"{name} must be set by the test launcher")
        return default
    return int(raw)


def _env_prob(name: str, default: float) -> float:
    value = float(os.environ.get(name, default))
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}={value} is not a probability")
    return value


@cocotb.test()
async def fifo_random_traffic(dut) -> None:
    """Directed full/empty corner cases, full-rate streaming, then random valid gaps and back-pressure."""
    depth = _env_int("FIFO_DEPTH")
    width = _env_int("FIFO_WIDTH")
    cycles = _env_int("FIFO_CYCLES", 4000)
    p_valid = _env_prob("FIFO_VALID_PROB", 0.5)
    p_ready = _env_prob("FIFO_READY_PROB", 0.5)
    assert len(dut.in_data) == width, f"in_data is {len(dut.in_data)} bits, expected {width}"
    assert len(dut.count) == (depth + 1).bit_length(), (
        f"count is {len(dut.count)} bits, expected clog2(DEPTH+2) = {(depth + 1).bit_length()}"
    )
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("DEPTH=%d WIDTH=%d cycles=%d p_valid=%.2f p_ready=%.2f seed=%d",
                  depth, width, cycles, p_valid, p_ready, cocotb.RANDOM_SEED)

    Clock(dut.clk, 10, unit="ns").start()
    chk = FifoChecker(dut, depth, width, rng)
    await chk.reset()

    # 1. Fill with the consumer stalled; the FIFO must take DEPTH words, the input register's and
    #    the two of the consumer side.
    accepted = 0
    for _ in range(3 * depth + 8):  # a word reaches the consumer side two cycles after its push
        pushed, _ = await chk.step(in_valid=True, out_ready=False)
        accepted += pushed
    assert accepted == depth + 3, f"stalled FIFO accepted {accepted} words, DEPTH is {depth}"

    # 2. Full, producer still pushing, consumer pops: the push must wait (the room reaches the
    #    producer's side a cycle after the consumer side has moved a word out).
    for _ in range(3):
        pushed, popped = await chk.step(in_valid=True, out_ready=True)
        assert popped and not pushed, "a full FIFO accepted a push on the edge it was popped"
        pushed, popped = await chk.step(in_valid=True, out_ready=False)
        assert not popped
        if not pushed:
            pushed, popped = await chk.step(in_valid=True, out_ready=False)
        assert pushed and not popped

    # 3. Drain completely.
    for _ in range(depth + 4):
        await chk.step(in_valid=False, out_ready=True)
    assert not chk.model

    # 4. Full rate: with DEPTH >= 2 one push and one pop on every cycle once primed.
    n = 50
    moved = [await chk.step(in_valid=True, out_ready=True) for _ in range(n)]
    if depth >= 2:
        assert all(p for p, _ in moved), "producer was stalled while streaming at full rate"
        assert all(q for _, q in moved[2:]), "consumer starved while streaming at full rate"
    else:  # a word stays counted two cycles (input register, queue) and DEPTH + 1 = 2: two words in three cycles
        assert sum(p for p, _ in moved) >= 2 * n // 3 - 1
    for _ in range(depth + 4):
        await chk.step(in_valid=False, out_ready=True)

    # 5. Random traffic: the configured mix, plus fill-biased and drain-biased stretches so both
    #    full and empty are visited many times whatever the configured probabilities are.
    phases = [(p_valid, p_ready), (0.9, 0.35), (0.35, 0.9), (p_valid, p_ready)]
    per_phase = max(1, cycles // len(phases))
    for pv, pr in phases:
        for _ in range(per_phase):
            await chk.step(in_valid=rng.random() < pv, out_ready=rng.random() < pr)

    # Drain and make sure nothing was lost or duplicated.
    for _ in range(depth + 4):
        await chk.step(in_valid=False, out_ready=True)
    assert not chk.model, f"{len(chk.model)} words stuck in the FIFO"
    assert chk.cov.pushes == chk.cov.pops

    cov = chk.cov
    dut._log.info("coverage: %s", cov)
    assert cov.cycles_full > 10 and cov.cycles_empty > 10, f"weak coverage: {cov}"
    assert cov.push_refused_while_popped >= 3, f"weak coverage: {cov}"
    if depth >= 2:
        assert cov.both_same_cycle > 50, f"weak coverage: {cov}"
