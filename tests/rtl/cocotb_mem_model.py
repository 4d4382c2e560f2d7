"""cocotb testbench for hw_templates/mem_model.v.j2 (run by tests/rtl/test_mem_model.py, not by pytest).

One Verilator build serves every configuration: LATENCY, INTERVAL, STALL and SEED reach the model
as plusargs, and the launcher tells this testbench, through the environment, which values it
passed (``MEM_LATENCY``, ``MEM_INTERVAL``, ``MEM_STALL``; defaults are the model's 4, 1, 0), so a
plusarg that got lost shows up as wrong timing.

Checked cycle by cycle against a Python model of the memory and of the outstanding reads:

* read data: every read returns the memory word as of its acceptance (read-after-write through the
  model; initial contents from the ``$readmemh`` file ``MEM_INIT`` when given);
* order and timing: responses in request order, never before ``accept + LATENCY``; with STALL = 0
  exactly then (when the consumer is ready), so the measured minimum latency equals LATENCY;
  a response once offered stays offered, unchanged, until taken; no response without a read;
* bandwidth: accepted requests are at least INTERVAL cycles apart (exactly INTERVAL under full
  load with STALL = 0), and ``req_ready`` is never high during the cool-down or with a full queue;
* back-pressure: with STALL = 0 ``req_ready``/``rsp_valid`` are never withheld; otherwise the
  fraction of withheld cycles is close to STALL/1000;
* queue: with the consumer stalled the model accepts exactly ``MEM_QUEUE`` reads, then refuses;
* ``$writememh``: the file named by ``MEM_DUMP`` holds the memory as of the clock edge where
  ``dump`` rose (later writes while ``dump`` stays high are not in it), and a second rising edge
  rewrites it.  The final expected contents are written as JSON to ``MEM_EXPECTED_JSON`` for the
  launcher to compare with the dump file itself.

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
class Request:
    addr: int
    write: bool
    wdata: int


@dataclass
class Stats:
    accepted: int = 0
    reads: int = 0
    writes: int = 0
    responses: int = 0
    checked_reads: int = 0
    min_latency: int | None = None
    min_spacing: int | None = None
    req_opportunities: int = 0  # cycles where only a stall could hold req_ready low
    req_withheld: int = 0
    rsp_opportunities: int = 0  # cycles where a due response was not yet offered
    rsp_withheld: int = 0
    max_outstanding: int = 0
    latencies: list[int] = field(default_factory=list)


class MemChecker:
    def __init__(self, dut, cfg: dict[str, int], rng: random.Random, init: dict[int, int]) -> None:
        self.dut = dut
        self.cfg = cfg
        self.rng = rng
        self.mem: dict[int, int] = dict(init)  # known words only
        self.outstanding: deque[tuple[int | None, int]] = deque()  # (expected value, accept cycle)
        self.cycle = 0
        self.last_accept: int | None = None
        self.prev_offer: int | None = None  # data of a response offered but not taken last cycle
        self.stats = Stats()

    async def reset(self) -> None:
        dut = self.dut
        dut.rst.value = 1
        for sig in (dut.req_valid, dut.req_addr, dut.req_write, dut.req_wdata, dut.rsp_ready, dut.dump):
            sig.value = 0
        for _ in range(3):
            await FallingEdge(dut.clk)
        dut.rst.value = 0

    async def step(self, req: Request | None, rsp_ready: bool, dump: bool = False) -> tuple[bool, int | None]:
        """One cycle.  Returns (request accepted, data of the response taken or None)."""
        dut = self.dut
        cfg = self.cfg
        await FallingEdge(dut.clk)
        dut.req_valid.value = int(req is not None)
        if req is not None:
            dut.req_addr.value = req.addr
            dut.req_write.value = int(req.write)
            dut.req_wdata.value = req.wdata
        dut.rsp_ready.value = int(rsp_ready)
        dut.dump.value = int(dump)
        await ReadOnly()
        c = self.cycle
        self.cycle += 1
        where = f"cycle {c}"
        req_ready = bool(int(dut.req_ready.value))
        rsp_valid = bool(int(dut.rsp_valid.value))
        st = self.stats

        # Requests: ready only outside the cool-down and with room in the queue.
        allowed = (self.last_accept is None or c - self.last_accept >= cfg["interval"]) and (
            len(self.outstanding) < cfg["queue"]
        )
        assert not req_ready or allowed, f"{where}: req_ready during cool-down or with a full queue"
        if allowed:
            st.req_opportunities += 1
            st.req_withheld += not req_ready
            if cfg["stall"] == 0:
                assert req_ready, f"{where}: req_ready withheld with +stall=0"

        # Responses: in order, never early, held once offered.
        due = bool(self.outstanding) and self.outstanding[0][1] + cfg["latency"] <= c
        if rsp_valid:
            assert due, f"{where}: rsp_valid without a due read ({len(self.outstanding)} outstanding)"
        if self.prev_offer is not None:
            assert rsp_valid, f"{where}: an offered response was withdrawn"
            assert int(dut.rsp_rdata.value) == self.prev_offer, f"{where}: offered data changed"
        elif due:
            st.rsp_opportunities += 1
            st.rsp_withheld += not rsp_valid
            if cfg["stall"] == 0:
                assert rsp_valid, f"{where}: a due response was withheld with +stall=0"

        taken: int | None = None
        if rsp_valid:
            data = int(dut.rsp_rdata.value)
            if rsp_ready:
                expected, accepted_at = self.outstanding.popleft()
                latency = c - accepted_at
                assert latency >= cfg["latency"], f"{where}: latency {latency}"
                st.min_latency = latency if st.min_latency is None else min(st.min_latency, latency)
                st.responses += 1
                if expected is not None:
                    assert data == expected, f"{where}: read returned {data:#x}, expected {expected:#x}"
                    st.checked_reads += 1
                taken = data
                self.prev_offer = None
            else:
                self.prev_offer = data
        else:
            self.prev_offer = None

        accepted = req is not None and req_ready
        if accepted:
            assert req is not None
            if self.last_accept is not None:
                spacing = c - self.last_accept
                st.min_spacing = spacing if st.min_spacing is None else min(st.min_spacing, spacing)
            self.last_accept = c
            st.accepted += 1
            in_range = req.addr < cfg["depth"]
            if req.write:
                st.writes += 1
                if in_range:
                    self.mem[req.addr] = req.wdata
            else:
                st.reads += 1
                self.outstanding.append((self.mem.get(req.addr) if in_range else 0, c))
        st.max_outstanding = max(st.max_outstanding, len(self.outstanding))
        return accepted, taken

    def random_request(self, p_write: float) -> Request:
        write = self.rng.random() < p_write
        return Request(self.rng.randrange(self.cfg["depth"]), write, self.rng.getrandbits(self.cfg["width"]))

    async def drain(self) -> None:
        budget = 10 * (len(self.outstanding) + 1) * (self.cfg["latency"] + 5) + 1000
        while self.outstanding:
            budget -= 1
            assert budget > 0, "responses stuck"
            await self.step(None, True)
        await self.step(None, True)


def _env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        if default is None:
            raise RuntimeError(f"{name} must be set by the test launcher")
        return default
    return int(raw)


def _config() -> dict[str, int]:
    return {
        "width": _env_int("MEM_WIDTH"),
        "depth": _env_int("MEM_DEPTH"),
        "aw": _env_int("MEM_AW"),
        "queue": _env_int("MEM_QUEUE"),
        "latency": _env_int("MEM_LATENCY", 4),
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
    ours = {"A_latency", "A_interval", "A_init", "A_dump", "stall", "seed", "note"}
    extra = (ours - set(expected)) & set(cocotb.plusargs)
    assert not extra, f"plusargs {sorted(extra)} were not passed by the launcher"
    cfg = _config()
    # The model's own view of its configuration (internal integers, visible through VPI).
    assert int(dut.latency_cfg.value) == cfg["latency"]
    assert int(dut.interval_cfg.value) == cfg["interval"]
    assert int(dut.stall_cfg.value) == cfg["stall"]


@cocotb.test()
async def mem_model_traffic(dut) -> None:
    cfg = _config()
    init_path = os.environ.get("MEM_INIT", "")
    dump_path = Path(os.environ["MEM_DUMP"])
    expected_json = Path(os.environ["MEM_EXPECTED_JSON"])
    assert len(dut.req_wdata) == cfg["width"] and len(dut.req_addr) == cfg["aw"]
    init = parse_memh(Path(init_path).read_text()) if init_path else {}
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("config %s, init=%r, seed=%d", cfg, init_path, cocotb.RANDOM_SEED)

    Clock(dut.clk, 10, unit="ns").start()
    chk = MemChecker(dut, cfg, rng, init)
    await chk.reset()
    depth, width = cfg["depth"], cfg["width"]

    # 1. Read every word back-to-back: the $readmemh contents (when given).
    for addr in range(depth):
        req = Request(addr, False, 0)
        while not (await chk.step(req, True))[0]:
            pass
    await chk.drain()
    if init:
        assert chk.stats.checked_reads == depth, chk.stats

    # 2. Write-then-read of the same word on consecutive accepts (read-after-write).
    for _ in range(20):
        addr, value = rng.randrange(depth), rng.getrandbits(width)
        for req in (Request(addr, True, value), Request(addr, False, 0)):
            while not (await chk.step(req, rng.random() < 0.8))[0]:
                pass
    await chk.drain()

    # 3. Full load (a request always pending, consumer always ready): exact spacing and latency.
    pending: Request | None = None
    for _ in range(cfg["cycles"] // 3):
        pending = pending or chk.random_request(0.3)
        accepted, _ = await chk.step(pending, True)
        if accepted:
            pending = None
    if cfg["stall"] == 0:
        assert chk.stats.min_spacing == cfg["interval"], chk.stats
        assert chk.stats.min_latency == cfg["latency"], chk.stats

    # 4. Random mix with a randomly ready consumer; requests held until accepted.
    for p_req, p_rsp in ((0.5, 0.7), (0.9, 0.3), (0.3, 0.95)):
        for _ in range(cfg["cycles"] // 4):
            if pending is None and rng.random() < p_req:
                pending = chk.random_request(0.4)
            accepted, _ = await chk.step(pending, rng.random() < p_rsp)
            if accepted:
                pending = None
    while pending is not None:
        accepted, _ = await chk.step(pending, True)
        if accepted:
            pending = None
    await chk.drain()

    # 5. Consumer stalled: the model takes exactly QUEUE reads, then refuses more.
    if cfg["interval"] == 1:
        budget = 20 * cfg["queue"] + 200
        refused_in_a_row = 0
        while refused_in_a_row < 30:
            budget -= 1
            assert budget > 0, f"queue never filled ({len(chk.outstanding)} outstanding)"
            accepted, _ = await chk.step(Request(rng.randrange(depth), False, 0), False)
            refused_in_a_row = 0 if accepted else refused_in_a_row + 1
        assert len(chk.outstanding) == cfg["queue"], f"{len(chk.outstanding)} reads queued"
        await chk.drain()

    # 6. Out-of-range address (only when AW can express one): reported, read as 0, write ignored.
    if depth < 2 ** cfg["aw"]:
        for req in (Request(depth, True, 1), Request(depth, False, 0)):
            while not (await chk.step(req, True))[0]:
                pass
        await chk.drain()

    # 7. $writememh on the rising edge of dump, not while it stays high.
    for addr in range(depth):  # make every word known
        req = Request(addr, True, rng.getrandbits(width))
        while not (await chk.step(req, True))[0]:
            pass
    await chk.step(None, True)
    snapshot = dict(chk.mem)
    await chk.step(None, True, dump=True)  # rising edge: dumps `snapshot`
    for _ in range(8):  # writes while dump stays high must not be dumped
        req = Request(rng.randrange(depth), True, rng.getrandbits(width))
        while not (await chk.step(req, True, dump=True))[0]:
            pass
    await chk.step(None, True, dump=True)
    dumped = parse_memh(dump_path.read_text())
    assert dumped == snapshot, "the dump does not hold the memory as of the rising edge of dump"
    assert chk.mem != snapshot, "the writes after the dump changed nothing; the check is void"
    await chk.step(None, True, dump=False)
    await chk.step(None, True, dump=True)  # second rising edge
    await chk.step(None, True, dump=False)
    await chk.step(None, True)
    assert parse_memh(dump_path.read_text()) == chk.mem
    expected_json.write_text(json.dumps({str(a): v for a, v in sorted(chk.mem.items())}))

    st = chk.stats
    dut._log.info(
        "stats: accepted=%d reads=%d writes=%d checked=%d min_latency=%s min_spacing=%s "
        "req withheld %d/%d rsp withheld %d/%d max_outstanding=%d",
        st.accepted, st.reads, st.writes, st.checked_reads, st.min_latency, st.min_spacing,
        st.req_withheld, st.req_opportunities, st.rsp_withheld, st.rsp_opportunities, st.max_outstanding,
    )
    assert st.checked_reads > 300, st
    assert st.min_latency is not None and st.min_latency >= cfg["latency"]
    assert st.min_spacing is not None and st.min_spacing >= cfg["interval"]
    assert st.accepted <= chk.cycle // cfg["interval"] + 1
    p = cfg["stall"] / 1000
    for withheld, opportunities in ((st.req_withheld, st.req_opportunities), (st.rsp_withheld, st.rsp_opportunities)):
        assert opportunities > 300, st
        assert abs(withheld / opportunities - p) < 0.06, (
            f"withheld {withheld}/{opportunities}, +stall={cfg['stall']} ({st})"
        )
