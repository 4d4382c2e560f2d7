"""cocotb testbench for hw_templates/mem_model.v.j2 (run by tests/rtl/test_mem_model.py, not by pytest).

One Verilator build serves every configuration: LATENCY, WRITE_LATENCY, INTERVAL, STALL and SEED
reach the model as plusargs, and the launcher tells this testbench, through the environment, which
values it passed (``MEM_LATENCY``, ``MEM_WRITE_LATENCY``, ``MEM_INTERVAL``, ``MEM_STALL``; defaults are
the model's 4, LATENCY, 1, 0), so a plusarg that got lost shows up as wrong timing.

The model has a read channel and a write channel, driven here independently (both in one cycle as
often as not), and is checked cycle by cycle against a Python model of the memory and of both queues:

* read data: a read returns the memory as of the edge before its response may first be offered
  (acceptance + LATENCY - 1), and a write changes memory at the edge its response is transferred,
  never earlier: a read issued while a write of its word waits for its response gets the old word,
  one issued after the response the new one (initial contents from the ``$readmemh`` file
  ``MEM_INIT`` when given);
* order and timing: each channel answers in request order, never before ``accept + latency`` (its
  own latency: LATENCY for reads, WRITE_LATENCY for writes); with STALL = 0 exactly then (when the
  consumer is ready); a response once offered stays offered, unchanged, until taken; no response
  without a request;
* bandwidth: each channel's accepted requests are at least INTERVAL cycles apart (exactly INTERVAL
  under full load with STALL = 0), a ready is never high during its channel's cool-down or with its
  queue full, and the two channels accept in the same cycle;
* back-pressure: with STALL = 0 no ready or response valid is withheld; otherwise each of the four is
  withheld on close to STALL/1000 of its cycles;
* queues: with the consumer stalled each channel accepts exactly ``MEM_QUEUE`` requests, then refuses;
* ``$writememh``: the file named by ``MEM_DUMP`` holds the memory as of the clock edge where ``dump``
  rose (later writes while ``dump`` stays high are not in it), and a second rising edge rewrites it.
  The final expected contents are written as JSON to ``MEM_EXPECTED_JSON`` for the launcher to
  compare with the dump file itself.

Other environment variables: ``MEM_WIDTH``, ``MEM_DEPTH``, ``MEM_AW``, ``MEM_QUEUE`` (required),
``MEM_CYCLES`` (default 3000).
"""

from __future__ import annotations

import json
import os
import random
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, Timer

CHANNELS = ("rd", "wr")


def parse_memh(text: str) -> dict[int, int]:
    """Words of a ``$readmemh``/``$writememh`` file by address (``@addr`` lines and comments allowed)."""
    words: dict[int, int] = {}
    addr = 0
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        for token in line.split():
            if token.startswith("@"):
                addr = int(token[1:], 16)
            else:
                words[addr] = int(token.replace("_", ""), 16)
                addr += 1
    return words


@dataclass
class Entry:
    """A request in a channel's queue: its address, data (a write's), acceptance cycle and, for a read,
    the word it took (None until it takes it)."""

    addr: int
    data: int | None
    accepted: int


@dataclass
class Stats:
    accepted: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    responses: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    checked_reads: int = 0
    stale_reads: int = 0  # reads that returned a word a write accepted before them had not yet replaced
    same_cycle: int = 0  # cycles in which both channels accepted a request
    min_latency: dict[str, int | None] = field(default_factory=lambda: {"rd": None, "wr": None})
    min_spacing: dict[str, int | None] = field(default_factory=lambda: {"rd": None, "wr": None})
    req_opportunities: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    req_withheld: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    rsp_opportunities: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    rsp_withheld: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})
    max_outstanding: dict[str, int] = field(default_factory=lambda: {"rd": 0, "wr": 0})


class MemChecker:
    def __init__(self, dut, cfg: dict[str, int], rng: random.Random, init: dict[int, int]) -> None:
        self.dut = dut
        self.cfg = cfg
        self.rng = rng
        self.mem: dict[int, int] = dict(init)  # known words only, as the model holds them
        self.queue: dict[str, deque[Entry]] = {ch: deque() for ch in CHANNELS}
        self.latency = {"rd": cfg["latency"], "wr": cfg["write_latency"]}
        self.cycle = 0
        self.last_accept: dict[str, int | None] = {ch: None for ch in CHANNELS}
        self.prev_offer: dict[str, int | None] = {ch: None for ch in CHANNELS}  # offered, not taken last cycle
        self.stats = Stats()

    def sig(self, name: str):
        return getattr(self.dut, name)

    async def reset(self) -> None:
        dut = self.dut
        dut.rst.value = 1
        for name in ("rd_req_valid", "rd_req_addr", "rd_rsp_ready", "wr_req_valid", "wr_req_addr", "wr_req_wdata",
                     "wr_rsp_ready", "dump"):
            self.sig(name).value = 0
        for _ in range(3):
            await FallingEdge(dut.clk)
        dut.rst.value = 0

    def _value(self, addr: int) -> int | None:
        return self.mem.get(addr) if addr < self.cfg["depth"] else 0

    async def step(self, rd: int | None = None, wr: tuple[int, int] | None = None, rd_ready: bool = True,
                   wr_ready: bool = True, dump: bool = False) -> dict[str, bool]:
        """One cycle: a read of address `rd`, a write (address, data) `wr`, the responses' readies.
        Returns which requests were accepted."""
        dut, cfg, st = self.dut, self.cfg, self.stats
        await FallingEdge(dut.clk)
        dut.rd_req_valid.value = int(rd is not None)
        if rd is not None:
            dut.rd_req_addr.value = rd
        dut.wr_req_valid.value = int(wr is not None)
        if wr is not None:
            dut.wr_req_addr.value, dut.wr_req_wdata.value = wr
        dut.rd_rsp_ready.value = int(rd_ready)
        dut.wr_rsp_ready.value = int(wr_ready)
        dut.dump.value = int(dump)
        await ReadOnly()
        c = self.cycle
        self.cycle += 1
        where = f"cycle {c}"
        wants = {"rd": rd is not None, "wr": wr is not None}
        req_ready = {ch: bool(int(self.sig(f"{ch}_req_ready").value)) for ch in CHANNELS}
        rsp_valid = {ch: bool(int(self.sig(f"{ch}_rsp_valid").value)) for ch in CHANNELS}

        for ch in CHANNELS:
            # Requests: ready only outside the cool-down and with room in the queue.
            last = self.last_accept[ch]
            allowed = (last is None or c - last >= cfg["interval"]) and len(self.queue[ch]) < cfg["queue"]
            assert not req_ready[ch] or allowed, f"{where}: {ch}_req_ready during cool-down or with a full queue"
            if allowed:
                st.req_opportunities[ch] += 1
                st.req_withheld[ch] += not req_ready[ch]
                if cfg["stall"] == 0:
                    assert req_ready[ch], f"{where}: {ch}_req_ready withheld with +stall=0"
            # Responses: in order, never early, held once offered.
            q = self.queue[ch]
            due = bool(q) and q[0].accepted + self.latency[ch] <= c
            if rsp_valid[ch]:
                assert due, f"{where}: {ch}_rsp_valid without a due request ({len(q)} outstanding)"
            if self.prev_offer[ch] is not None:
                assert rsp_valid[ch], f"{where}: an offered {ch} response was withdrawn"
                if ch == "rd":
                    assert int(dut.rd_rsp_rdata.value) == self.prev_offer[ch], f"{where}: offered data changed"
            elif due:
                st.rsp_opportunities[ch] += 1
                st.rsp_withheld[ch] += not rsp_valid[ch]
                if cfg["stall"] == 0:
                    assert rsp_valid[ch], f"{where}: a due {ch} response was withheld with +stall=0"

        accepted = {ch: wants[ch] and req_ready[ch] for ch in CHANNELS}
        # At this edge, in the model's order: reads take their word (the queued one whose response may
        # first be offered next cycle; with LATENCY 1 the one accepted now), from memory before this
        # edge's write; then the read response; then the write whose response is transferred changes
        # memory; then the requests join their queues.
        lat = self.latency["rd"]
        for e in self.queue["rd"]:
            if e.data is None and e.accepted + lat - 1 == c:
                e.data = self._value(e.addr)
        taken_now = self._value(rd) if accepted["rd"] and lat == 1 else None
        if rsp_valid["rd"]:
            data = int(dut.rd_rsp_rdata.value)
            if rd_ready:
                e = self.queue["rd"].popleft()
                self._answered("rd", e, c)
                if e.data is not None:
                    assert data == e.data, f"{where}: read of {e.addr} returned {data:#x}, expected {e.data:#x}"
                    st.checked_reads += 1
                self.prev_offer["rd"] = None
            else:
                self.prev_offer["rd"] = data
        else:
            self.prev_offer["rd"] = None
        if rsp_valid["wr"] and wr_ready:
            e = self.queue["wr"].popleft()
            self._answered("wr", e, c)
            if e.addr < cfg["depth"]:
                self.mem[e.addr] = e.data
        self.prev_offer["wr"] = 1 if rsp_valid["wr"] and not wr_ready else None
        for ch in CHANNELS:
            if not accepted[ch]:
                continue
            last = self.last_accept[ch]
            if last is not None:
                spacing = c - last
                st.min_spacing[ch] = spacing if st.min_spacing[ch] is None else min(st.min_spacing[ch], spacing)
            self.last_accept[ch] = c
            st.accepted[ch] += 1
            if ch == "rd":
                self.queue[ch].append(Entry(rd, taken_now, c))
                if any(e.addr == rd for e in self.queue["wr"]):
                    st.stale_reads += 1
            else:
                self.queue[ch].append(Entry(wr[0], wr[1], c))
            st.max_outstanding[ch] = max(st.max_outstanding[ch], len(self.queue[ch]))
        st.same_cycle += accepted["rd"] and accepted["wr"]
        return accepted

    def _answered(self, ch: str, e: Entry, c: int) -> None:
        st = self.stats
        latency = c - e.accepted
        assert latency >= self.latency[ch], f"cycle {c}: {ch} latency {latency}"
        st.min_latency[ch] = latency if st.min_latency[ch] is None else min(st.min_latency[ch], latency)
        st.responses[ch] += 1

    async def drain(self) -> None:
        budget = 10 * (sum(len(q) for q in self.queue.values()) + 1) * (max(self.latency.values()) + 5) + 1000
        while any(self.queue.values()):
            budget -= 1
            assert budget > 0, "responses stuck"
            await self.step()
        await self.step()

    async def until_accepted(self, rd: int | None = None, wr: tuple[int, int] | None = None, **kw) -> None:
        """Offer the requests, each until it is accepted (one may go before the other)."""
        while rd is not None or wr is not None:
            got = await self.step(rd, wr, **kw)
            rd = None if got["rd"] else rd
            wr = None if got["wr"] else wr


def _env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        if default is None:
            raise RuntimeError(f"{name} must be set by the test launcher")
        return default
    return int(raw)


def _config() -> dict[str, int]:
    latency = _env_int("MEM_LATENCY", 4)
    return {
        "width": _env_int("MEM_WIDTH"),
        "depth": _env_int("MEM_DEPTH"),
        "aw": _env_int("MEM_AW"),
        "queue": _env_int("MEM_QUEUE"),
        "latency": latency,
        "write_latency": _env_int("MEM_WRITE_LATENCY", latency),
        "interval": _env_int("MEM_INTERVAL", 1),
        "stall": _env_int("MEM_STALL", 0),
        "cycles": _env_int("MEM_CYCLES", 3000),
    }


@cocotb.test()
async def plusargs_reach_simulator(dut) -> None:
    """The simulator saw exactly the plusargs the launcher passed (``MEM_PLUSARGS``, JSON)."""
    # Verilator runs initial blocks at its first evaluation, after cocotb has started: step past
    # it (a bad plusarg makes the model $finish there).
    await Timer(1, unit="ns")
    expected = json.loads(os.environ.get("MEM_PLUSARGS", "{}"))
    for key, value in expected.items():
        assert cocotb.plusargs.get(key) == value, f"+{key}: {cocotb.plusargs.get(key)!r}, passed {value!r}"
    ours = {"A_latency", "A_write_latency", "A_interval", "A_init", "A_dump", "stall", "seed", "note"}
    extra = (ours - set(expected)) & set(cocotb.plusargs)
    assert not extra, f"plusargs {sorted(extra)} were not passed by the launcher"
    cfg = _config()
    # The model's own view of its configuration (internal integers, visible through VPI).
    assert int(dut.latency_cfg.value) == cfg["latency"]
    assert int(dut.write_latency_cfg.value) == cfg["write_latency"]
    assert int(dut.interval_cfg.value) == cfg["interval"]
    assert int(dut.stall_cfg.value) == cfg["stall"]


@cocotb.test()
async def mem_model_traffic(dut) -> None:
    cfg = _config()
    init_path = os.environ.get("MEM_INIT", "")
    dump_path = Path(os.environ["MEM_DUMP"])
    expected_json = Path(os.environ["MEM_EXPECTED_JSON"])
    assert len(dut.wr_req_wdata) == len(dut.rd_rsp_rdata) == cfg["width"]
    assert len(dut.rd_req_addr) == len(dut.wr_req_addr) == cfg["aw"]
    init = parse_memh(Path(init_path).read_text()) if init_path else {}
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("config %s, init=%r, seed=%d", cfg, init_path, cocotb.RANDOM_SEED)

    Clock(dut.clk, 10, unit="ns").start()
    chk = MemChecker(dut, cfg, rng, init)
    await chk.reset()
    depth, width = cfg["depth"], cfg["width"]
    st = chk.stats

    def word() -> int:
        return rng.getrandbits(width)

    # 1. Read every word back-to-back: the $readmemh contents (when given).
    for addr in range(depth):
        await chk.until_accepted(rd=addr)
    await chk.drain()
    if init:
        assert st.checked_reads == depth, st

    # 2. A write is in memory from its response on, not before: a read while the response is held
    # back gets the old word, a read after it the new one.
    for _ in range(10):
        addr = rng.randrange(depth)
        await chk.until_accepted(wr=(addr, word()), wr_ready=False)
        for _ in range(cfg["write_latency"]):
            await chk.step(wr_ready=False)
        stale = st.stale_reads
        await chk.until_accepted(rd=addr, wr_ready=False)
        assert st.stale_reads == stale + 1
        while chk.queue["rd"]:
            await chk.step(wr_ready=False)  # the read answers with the old word (the Python model's)
        while chk.queue["wr"]:
            await chk.step()
        await chk.until_accepted(rd=addr)  # now the written word
        await chk.drain()

    # 3. Full load on both channels (a request always pending on each, consumers ready): exact spacing
    # and latency, and both channels take a request in the same cycles.
    pending: dict[str, object] = {"rd": None, "wr": None}
    for _ in range(cfg["cycles"] // 3):
        pending["rd"] = pending["rd"] if pending["rd"] is not None else rng.randrange(depth)
        pending["wr"] = pending["wr"] or (rng.randrange(depth), word())
        got = await chk.step(pending["rd"], pending["wr"])
        for ch in CHANNELS:
            if got[ch]:
                pending[ch] = None
    if cfg["stall"] == 0:
        for ch in CHANNELS:
            assert st.min_spacing[ch] == cfg["interval"], st
            assert st.min_latency[ch] == chk.latency[ch], st
    assert st.same_cycle > cfg["cycles"] // (30 * cfg["interval"]), st

    # 4. Random mix on both channels with randomly ready consumers; requests held until accepted.
    for p_req, p_rsp in ((0.5, 0.7), (0.9, 0.3), (0.3, 0.95)):
        for _ in range(cfg["cycles"] // 4):
            if pending["rd"] is None and rng.random() < p_req:
                pending["rd"] = rng.randrange(depth)
            if pending["wr"] is None and rng.random() < p_req:
                pending["wr"] = (rng.randrange(depth), word())
            got = await chk.step(pending["rd"], pending["wr"], rng.random() < p_rsp, rng.random() < p_rsp)
            for ch in CHANNELS:
                if got[ch]:
                    pending[ch] = None
    await chk.until_accepted(pending["rd"], pending["wr"])
    await chk.drain()

    # 5. Consumers stalled: each channel takes exactly QUEUE requests, then refuses more.
    if cfg["interval"] == 1:
        budget = 40 * cfg["queue"] + 200
        refused_in_a_row = 0
        while refused_in_a_row < 30:
            budget -= 1
            assert budget > 0, f"queues never filled ({[len(q) for q in chk.queue.values()]} outstanding)"
            got = await chk.step(rng.randrange(depth), (rng.randrange(depth), word()), False, False)
            refused_in_a_row = 0 if got["rd"] or got["wr"] else refused_in_a_row + 1
        assert [len(chk.queue[ch]) for ch in CHANNELS] == [cfg["queue"]] * 2, "queues not full"
        await chk.drain()

    # 6. Out-of-range address (only when AW can express one): reported, read as 0, write ignored.
    if depth < 2 ** cfg["aw"]:
        await chk.until_accepted(wr=(depth, 1))
        await chk.drain()
        await chk.until_accepted(rd=depth)
        await chk.drain()

    # 7. $writememh on the rising edge of dump, not while it stays high.
    for addr in range(depth):  # make every word known
        await chk.until_accepted(wr=(addr, word()))
    await chk.drain()
    snapshot = dict(chk.mem)
    await chk.step(dump=True)  # rising edge: dumps `snapshot`
    for _ in range(8):  # writes while dump stays high must not be dumped
        await chk.until_accepted(wr=(rng.randrange(depth), word()), dump=True)
    while chk.queue["wr"]:
        await chk.step(dump=True)
    dumped = parse_memh(dump_path.read_text())
    assert dumped == snapshot, "the dump does not hold the memory as of the rising edge of dump"
    assert chk.mem != snapshot, "the writes after the dump changed nothing; the check is void"
    await chk.step(dump=False)
    await chk.step(dump=True)  # second rising edge
    await chk.step(dump=False)
    await chk.step()
    assert parse_memh(dump_path.read_text()) == chk.mem
    expected_json.write_text(json.dumps({str(a): v for a, v in sorted(chk.mem.items())}))

    dut._log.info("stats: %s", st)
    assert st.checked_reads > 300, st
    for ch in CHANNELS:
        assert st.min_latency[ch] is not None and st.min_latency[ch] >= chk.latency[ch], st
        assert st.min_spacing[ch] is not None and st.min_spacing[ch] >= cfg["interval"], st
        assert st.accepted[ch] <= chk.cycle // cfg["interval"] + 1
    p = cfg["stall"] / 1000
    for ch in CHANNELS:
        for withheld, opportunities in ((st.req_withheld[ch], st.req_opportunities[ch]),
                                        (st.rsp_withheld[ch], st.rsp_opportunities[ch])):
            assert opportunities > 300, (ch, st)
            assert abs(withheld / opportunities - p) < 0.06, (
                f"{ch}: withheld {withheld}/{opportunities}, +stall={cfg['stall']} ({st})"
            )
