"""cocotb testbench for hw_templates/buffer_sync.v.j2 (run by tests/rtl/test_channels.py, not by pytest).

The addressable buffer is checked cycle by cycle against a Python model (one full bit and one word
per slot, and the two-word input queue): ``in_ready`` = the queue has room; the queue's head is
written (setting its slot's full bit) on the first edge at which its slot is empty, so a word aimed
at a full slot waits, and the words behind it too; ``out_valid`` = full[out_addr] with ``out_data``
= the slot's word; a read with ``out_last`` clears the full bit and a read without it changes
nothing.  The clear reaches the producer's side one edge later: a slot cleared on an edge takes no
write on the next one, and ``count`` (the full bits of the producer's side) still counts it.  A
buffer of more than ``BS_INREG_SLOTS`` (default 64, the template's) slots takes each word through
two input registers first: the second takes the first's word when it is empty or the queue takes its
own, and the first takes the producer's when it is empty or the second takes its word.

Two kinds of stimulus:

* random: every input random on every cycle (addresses over all SIZE slots, so writes aimed at
  full slots and reads of empty slots are frequent and must be refused / not valid);
* token streams, the way the compiler uses the buffer: the producer writes tokens 0, 1, 2, ... with
  token t into slot t mod SIZE; the consumer reads each window of SIZE tokens in a random order,
  each token a random number of times, the last read with ``out_last``.  Both sides hold their
  address until the transfer.  Every read of a token must return that token's value, and a
  re-read (a read after a non-last read of the same token) must find ``out_valid`` high.

Configuration (environment): ``BS_SIZE``, ``BS_WIDTH``, ``BS_AW`` (required), ``BS_CYCLES``
(default 4000, the length of the random phase; the token phase adds as much again).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly


@dataclass
class Coverage:
    writes: int = 0
    write_refused: int = 0  # in_valid at a full slot
    reads: int = 0
    last_reads: int = 0
    rereads_valid: int = 0  # reads right after a non-last read of the same token
    read_not_valid: int = 0  # out_ready at an empty slot
    write_and_clear: int = 0  # a write and a clearing read on the same edge
    cycles_all_full: int = 0
    max_count: int = 0


class BufferChecker:
    def __init__(self, dut, size: int, width: int, rng: random.Random) -> None:
        self.dut = dut
        self.size = size
        self.width = width
        self.rng = rng
        self.full = [False] * size
        self.data = [0] * size
        self.queue: list[tuple[int, int]] = []  # the input queue: (slot, word), head first
        # a buffer of more than INREG_SLOTS slots: the two input registers in front of the queue
        self.inreg = size > _env_int("BS_INREG_SLOTS", 64)
        self.reg: tuple[int, int] | None = None
        self.reg2: tuple[int, int] | None = None
        self.pending: int | None = None  # the slot cleared on the last edge (still full to the producer)
        self.cov = Coverage()
        self.cycle = 0
        self.cur = 0  # the read address the DUT was told (out_addr_nx with out_step) to expect

    async def reset(self) -> None:
        dut = self.dut
        dut.rst.value = 1
        for sig in (dut.in_valid, dut.in_addr, dut.in_data, dut.out_addr, dut.out_last, dut.out_ready,
                    dut.out_addr_nx, dut.out_addr_nd, dut.out_step):
            sig.value = 0
        for _ in range(3):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        self.full = [False] * self.size
        self.queue = []
        self.reg = None
        self.reg2 = None
        self.pending = None

    async def drain(self) -> None:
        """Last reads over every slot until the buffer and its input queue are empty."""
        for _ in range(8):
            for a in range(self.size):
                await self.step(False, 0, 0, a, True, True)
            if not self.queue and self.reg is None and self.reg2 is None and not any(self.full):
                return

    async def step(
        self, in_valid: bool, in_addr: int, in_data: int, out_addr: int, out_ready: bool, out_last: bool
    ) -> tuple[bool, bool, int]:
        """One cycle at `out_addr`: drive, check, update.  Returns (written, read, out_data).  The
        buffer learns a new read address a cycle ahead (out_addr_nx, out_step), as from a process:
        a change of address first spends an idle cycle announcing it.  out_addr_nx's value in the next
        cycle (out_addr_nd) is known a cycle before that: the announcing cycle is preceded by an idle
        one that tells it."""
        if out_addr != self.cur:
            await self._cycle(False, 0, 0, self.cur, False, False, None, out_addr)
            await self._cycle(False, 0, 0, self.cur, False, False, out_addr, out_addr)
            self.cur = out_addr
        return await self._cycle(in_valid, in_addr, in_data, out_addr, out_ready, out_last, None, out_addr)

    async def _cycle(
        self, in_valid: bool, in_addr: int, in_data: int, out_addr: int, out_ready: bool, out_last: bool,
        announce: int | None, nd: int,
    ) -> tuple[bool, bool, int]:
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.in_valid.value = int(in_valid)
        dut.in_addr.value = in_addr
        dut.in_data.value = in_data
        dut.out_addr.value = out_addr
        dut.out_addr_nx.value = out_addr if announce is None else announce
        dut.out_addr_nd.value = nd
        dut.out_step.value = int(announce is not None)
        dut.out_ready.value = int(out_ready)
        dut.out_last.value = int(out_last)
        await ReadOnly()
        self.cycle += 1
        where = f"cycle {self.cycle} (in_addr={in_addr}, out_addr={out_addr})"

        count = int(dut.count.value)
        in_ready = bool(int(dut.in_ready.value))
        out_valid = bool(int(dut.out_valid.value))
        held = sum(self.full) + (self.pending is not None)
        assert count == held, f"{where}: count {count}, model {held}"
        room = len(self.queue) < 2  # the queue takes a word on this edge
        moves = room or self.reg2 is None  # the second input register takes the first's word
        expect_ready = (moves or self.reg is None) if self.inreg else room
        assert in_ready == expect_ready, (
            f"{where}: in_ready={in_ready}, queue {self.queue}, registers {self.reg} {self.reg2}"
        )
        assert out_valid == self.full[out_addr], f"{where}: out_valid={out_valid}"
        got = None
        if out_valid:
            got = int(dut.out_data.value)
            assert got == self.data[out_addr], (
                f"{where}: out_data {got:#x}, expected {self.data[out_addr]:#x}"
            )

        accepted = in_valid and in_ready
        lands = bool(self.queue) and not self.full[self.queue[0][0]] and self.pending != self.queue[0][0]
        read = out_valid and out_ready
        if in_valid and not in_ready:
            self.cov.write_refused += 1
        if out_ready and not out_valid:
            self.cov.read_not_valid += 1
        self.pending = None
        if read:
            self.cov.reads += 1
            if out_last:
                self.full[out_addr] = False
                self.pending = out_addr
                self.cov.last_reads += 1
        if lands:
            slot, word = self.queue.pop(0)
            assert not (read and out_last and out_addr == slot), f"{where}: same slot"
            self.full[slot] = True
            self.data[slot] = word
            self.cov.writes += 1
            if read and out_last:
                self.cov.write_and_clear += 1
        if self.inreg:
            if self.reg2 is not None and room:
                self.queue.append(self.reg2)
                self.reg2 = None
            if moves:
                self.reg2, self.reg = self.reg, None
            if in_ready:
                self.reg = (in_addr, in_data) if accepted else None
        elif accepted:
            self.queue.append((in_addr, in_data))
        written = accepted
        self.cov.cycles_all_full += count == self.size
        self.cov.max_count = max(self.cov.max_count, count)
        return written, read, got if got is not None else -1


def _env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        if default is None:
            raise RuntimeError(f"{name} must be set by the test launcher")
        return default
    return int(raw)


@cocotb.test()
async def buffer_sync_traffic(dut) -> None:
    size = _env_int("BS_SIZE")
    width = _env_int("BS_WIDTH")
    aw = _env_int("BS_AW")
    cycles = _env_int("BS_CYCLES", 4000)
    assert len(dut.in_data) == width and len(dut.out_data) == width
    assert len(dut.in_addr) == aw and len(dut.out_addr) == aw
    assert len(dut.count) == size.bit_length()
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("SIZE=%d WIDTH=%d AW=%d seed=%d", size, width, aw, cocotb.RANDOM_SEED)

    Clock(dut.clk, 10, unit="ns").start()
    chk = BufferChecker(dut, size, width, rng)
    await chk.reset()

    def rand_step(p_valid: float, p_ready: float, p_last: float):
        return chk.step(
            in_valid=rng.random() < p_valid,
            in_addr=rng.randrange(size),
            in_data=rng.getrandbits(width),
            out_addr=rng.randrange(size),
            out_ready=rng.random() < p_ready,
            out_last=rng.random() < p_last,
        )

    # 1. Fill every slot.  Non-last reads keep a slot full, a last read empties it.
    async def fill() -> None:
        for a in range(size):
            written, _, _ = await chk.step(True, a, rng.getrandbits(width), 0, False, False)
            assert written
        for _ in range(1 + 2 * chk.inreg):  # the last word into its slot (through the input registers)
            await chk.step(False, 0, 0, 0, False, False)
        assert sum(chk.full) == size and not chk.queue and chk.reg is None and chk.reg2 is None

    await fill()
    for a in range(size):
        for _ in range(2):
            _, read, _ = await chk.step(False, 0, 0, a, True, False)
            assert read
        _, read, _ = await chk.step(False, 0, 0, a, True, True)
        assert read
        _, read, _ = await chk.step(False, 0, 0, a, True, True)
        assert not read
    assert sum(chk.full) == 0
    # Writes to full slots wait in the input queue, which takes two (four with the input registers)
    # and then refuses; the contents stay; the queued words land once their slots are emptied.
    await fill()
    for k in range(5):
        written, _, _ = await chk.step(True, k % size, rng.getrandbits(width), 0, True, False)
        assert written == (k < 2 + 2 * chk.inreg), "the input queue took a word too many" if written else "the queue refused"
    for a in range(size):
        _, read, _ = await chk.step(False, 0, 0, a, True, False)
        assert read
    await chk.drain()
    assert sum(chk.full) == 0 and not chk.queue and chk.reg is None and chk.reg2 is None

    # 2. Random traffic: fill-biased, drain-biased and balanced stretches.
    phases = [(0.7, 0.5, 0.3), (0.9, 0.3, 0.2), (0.3, 0.9, 0.7), (0.6, 0.6, 0.5)]
    for pv, pr, pl in phases:
        for _ in range(max(1, cycles // len(phases))):
            await rand_step(pv, pr, pl)
    # Empty the buffer and its queue.
    await chk.drain()
    assert sum(chk.full) == 0 and not chk.queue

    # 3. Token streams as the compiler uses the buffer.
    n_tokens = max(4 * size, cycles // 6)
    n_tokens -= n_tokens % size
    values = [rng.getrandbits(width) for _ in range(n_tokens)]
    order: list[int] = []  # consumer order: each window of SIZE tokens shuffled
    for base in range(0, n_tokens, size):
        window = list(range(base, base + size))
        rng.shuffle(window)
        order.extend(window)
    reads_left = {t: rng.choice((1, 1, 2, 3)) for t in range(n_tokens)}
    produced = 0
    consumed = 0
    previous_read = None  # token whose last transfer was a non-last read
    budget = 20 * n_tokens + 100
    while consumed < n_tokens:
        budget -= 1
        assert budget > 0, f"token stream stuck: produced {produced}, consumed {consumed}"
        p_valid = produced < n_tokens and rng.random() < 0.7
        tok_in = min(produced, n_tokens - 1)
        tok_out = order[consumed]
        last = reads_left[tok_out] == 1
        out_ready = rng.random() < 0.7
        written, read, got = await chk.step(
            p_valid, tok_in % size, values[tok_in], tok_out % size, out_ready, last
        )
        if previous_read == tok_out:
            assert int(dut.out_valid.value) == 1, f"re-read of token {tok_out} not valid"
            chk.cov.rereads_valid += 1
            previous_read = None
        if written:
            produced += 1
        if read:
            assert got == values[tok_out], f"token {tok_out}: read {got:#x}, wrote {values[tok_out]:#x}"
            reads_left[tok_out] -= 1
            if last:
                consumed += 1
            else:
                previous_read = tok_out
    assert produced == n_tokens and sum(chk.full) == 0

    cov = chk.cov
    dut._log.info("coverage: %s", cov)
    assert cov.write_refused > 100 and cov.read_not_valid > 100, f"weak coverage: {cov}"
    assert cov.rereads_valid > 50 and cov.last_reads > 200, f"weak coverage: {cov}"
    assert cov.cycles_all_full > 5, f"weak coverage: {cov}"
    if size >= 2:  # with one slot a write and a clearing read can never meet
        assert cov.write_and_clear > 20, f"weak coverage: {cov}"
