"""cocotb test for the AXI4 wrapper `<kernel>_axi` (`--interface axi4`), driven like a host would.

Configuration: the JSON file named by `DPN_AXI_CONFIG`:

    {"masters": ["m_axi_A", ...], "stall": 0.2 or {"ar": 0.9, ...}, "seed": 1, "max_cycles": N,
     "result_file": PATH,
     "runs": [{"arrays": [{"name", "base", "hex"}], "regs": [[offset, value32], ...], "irq": bool}]}

Per master an `AxiRam` (cocotbext-axi) serves the bursts, with random pauses (probability `stall`,
for every channel or per channel name aw/w/b/ar/r); an `AxiLiteMaster` writes the argument registers
and AP_CTRL.  Each run loads its arrays (little-endian bytes at their base addresses), writes its
registers, sets ap_start, and waits for the end either through the interrupt (`irq`: GIE/IER set, ISR
read and acknowledged) or by polling AP_CTRL.ap_done; memory is read back as soon as the end is seen.
Everything observed (register values, cycles, memory contents, bursts) goes to `result_file`; the
Python side asserts on it.

`port_traffic` (select it with `testcase=`) drives the port adapters and master alone (a harness built
by tests/rtl/test_axi.py) with independent random read and write streams per port and checks what
they return against the ordering the design relies on (docs/rtl-interface.md).
"""

from __future__ import annotations

import json
import logging
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer

from hls.rtl.axi import AP_CTRL_BITS, CONTROL_REGISTERS, INTERRUPT_BITS

PERIOD_NS = 10
#: Register offsets and bits from the generator's own tables (the C header `<kernel>_regs.h` too).
_OFFSET = {r["name"]: r["offset"] for r in CONTROL_REGISTERS}
AP_CTRL, GIE, IER, ISR = _OFFSET["AP_CTRL"], _OFFSET["GIE"], _OFFSET["IER"], _OFFSET["ISR"]
AP_START, AP_DONE = 1 << AP_CTRL_BITS["ap_start"], 1 << AP_CTRL_BITS["ap_done"]
IRQ_DONE = 1 << INTERRUPT_BITS["ap_done"]
MEMORY_BYTES = 1 << 48  # sparse: only touched pages are stored


def _pauses(rng: random.Random, p: float):
    while True:
        yield rng.random() < p


class _Cycles:
    def __init__(self, clk):
        self.n = 0
        cocotb.start_soon(self._count(clk))

    async def _count(self, clk):
        while True:
            await RisingEdge(clk)
            self.n += 1


async def _count_bursts(dut, prefix: str, stats: dict) -> None:
    """Per master: AR / AW handshakes, their beats, the longest burst, and the AR handshakes made while
    a write burst of the same ID (the same array) was without its B response (`ar_under_writes`: reads
    and writes of one array overlap)."""
    names = ("ARVALID", "ARREADY", "ARLEN", "ARID", "AWVALID", "AWREADY", "AWLEN", "AWID", "BVALID", "BREADY", "BID")
    sig = {n: getattr(dut, f"{prefix}_{n}") for n in names}
    open_writes: dict[int, int] = {}  # AWID -> write bursts without B
    stats.setdefault("ar_under_writes", 0)
    while True:
        await RisingEdge(dut.ap_clk)
        fired = {ch: int(sig[ch + "VALID"].value) and int(sig[ch + "READY"].value) for ch in ("AR", "AW", "B")}
        for ch in ("AR", "AW"):
            if fired[ch]:
                n = int(sig[ch + "LEN"].value) + 1
                stats[ch.lower()] += 1
                stats[ch.lower() + "_beats"] += n
                stats["max_len"] = max(stats["max_len"], n)
        if fired["AR"] and open_writes.get(int(sig["ARID"].value), 0):
            stats["ar_under_writes"] += 1
        if fired["AW"]:
            key = int(sig["AWID"].value)
            open_writes[key] = open_writes.get(key, 0) + 1
        if fired["B"]:
            open_writes[int(sig["BID"].value)] -= 1


@cocotb.test()
async def run_axi_kernel(dut):
    from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

    with open(os.environ["DPN_AXI_CONFIG"]) as f:
        cfg = json.load(f)
    result: dict = {"runs": []}
    cocotb.start_soon(Clock(dut.ap_clk, PERIOD_NS, unit="ns").start())
    cycles = _Cycles(dut.ap_clk)
    dut.ap_rst_n.value = 0
    rams = {}
    for prefix in cfg["masters"]:
        ram = AxiRam(AxiBus.from_prefix(dut, prefix), dut.ap_clk, dut.ap_rst_n, reset_active_level=False,
                     size=MEMORY_BYTES)
        for part in (ram.write_if, ram.read_if):
            part.log.setLevel(logging.WARNING)
        rams[prefix] = ram
    ctl = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control"), dut.ap_clk, dut.ap_rst_n,
                        reset_active_level=False)
    for part in (ctl.write_if, ctl.read_if):
        part.log.setLevel(logging.WARNING)
    stall = cfg.get("stall", 0.0)
    rng = random.Random(cfg.get("seed", 0))
    for ram in rams.values():
        for name, ch in (("aw", ram.write_if.aw_channel), ("w", ram.write_if.w_channel),
                         ("b", ram.write_if.b_channel), ("ar", ram.read_if.ar_channel), ("r", ram.read_if.r_channel)):
            p = stall.get(name, 0.0) if isinstance(stall, dict) else stall
            if p > 0:
                ch.set_pause_generator(_pauses(random.Random(rng.random()), p))
    result["bursts"] = {}
    for prefix in cfg["masters"]:
        result["bursts"][prefix] = {"ar": 0, "ar_beats": 0, "aw": 0, "aw_beats": 0, "max_len": 0}
        cocotb.start_soon(_count_bursts(dut, prefix, result["bursts"][prefix]))
    await ClockCycles(dut.ap_clk, 5)
    dut.ap_rst_n.value = 1
    await ClockCycles(dut.ap_clk, 2)

    async def read(offset: int) -> int:
        return int.from_bytes((await ctl.read(offset, 4)).data, "little")

    async def write(offset: int, value: int) -> None:
        await ctl.write(offset, int(value & 0xFFFFFFFF).to_bytes(4, "little"))

    result["ctrl_after_reset"] = await read(AP_CTRL)
    result["interrupt_after_reset"] = int(dut.interrupt.value)
    for run in cfg["runs"]:
        rec: dict = {"done": False}
        for a in run["arrays"]:
            rams[a["master"]].write(a["base"], bytes.fromhex(a["hex"]))
        for offset, value in run["regs"]:
            await write(offset, value)
        rec["regs_readback"] = [[offset, await read(offset)] for offset, _ in run["regs"]]
        if run.get("irq"):
            await write(GIE, 1)
            await write(IER, IRQ_DONE)  # ap_done only
        await write(AP_CTRL, AP_START)
        t0 = cycles.n

        def snapshot(run=run, rec=rec):
            rec["arrays"] = {a["name"]: rams[a["master"]].read(a["base"], len(a["hex"]) // 2).hex()
                             for a in run["arrays"]}

        rec["ctrl_running"] = await read(AP_CTRL)
        limit = t0 + cfg["max_cycles"]
        if run.get("irq"):
            while not int(dut.interrupt.value) and cycles.n < limit:
                await First(RisingEdge(dut.interrupt), Timer(20_000 * PERIOD_NS, unit="ns"))
            rec["done"] = bool(int(dut.interrupt.value))
            rec["cycles"] = cycles.n - t0
            snapshot()  # at once: every write must have landed when the interrupt rises
            rec["isr"] = await read(ISR)
            rec["ctrl_done"] = await read(AP_CTRL)
            rec["ctrl_done_again"] = await read(AP_CTRL)  # ap_done is clear-on-read
            await write(ISR, IRQ_DONE)  # toggle-on-write acknowledges
            rec["isr_after_ack"] = await read(ISR)
            await RisingEdge(dut.ap_clk)
            rec["interrupt_after_ack"] = int(dut.interrupt.value)
            await write(GIE, 0)
        else:
            while cycles.n < limit:
                ctrl = await read(AP_CTRL)
                if ctrl & AP_DONE:
                    snapshot()
                    rec["done"] = True
                    rec["cycles"] = cycles.n - t0
                    rec["ctrl_done"] = ctrl
                    break
                await ClockCycles(dut.ap_clk, 50)
            rec["ctrl_done_again"] = await read(AP_CTRL)
        result["runs"].append(rec)
        if not rec["done"]:
            break
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f, indent=1)


# --------------------------------------------------------------------------------------------------
# Port-level traffic: the port adapters and master alone (tests/rtl/test_axi.py builds the harness).


def _traffic(rng: random.Random, n: int, words: int, width: int) -> list[dict]:
    """Operations (read or write of one index; a write's data): runs of consecutive indices in one
    direction, and ordering pairs at random places: a write then a read of its index issued only once
    the write is answered (read after write), a read then a write of its index issued only once the
    read's data is back (write after read).  `after` names the operation whose response must have come
    first; everything else is free to overlap."""
    out: list[dict] = []
    while len(out) < n:
        kind = rng.random()
        start = rng.randrange(words)
        if kind < 0.5:  # a run in one direction
            write = rng.random() < 0.5
            for k in range(rng.randint(1, 24)):
                out.append({"write": write, "index": (start + k) % words, "data": rng.getrandbits(width)})
        else:
            first = rng.random() < 0.5  # True: read after write
            out.append({"write": first, "index": start, "data": rng.getrandbits(width)})
            out.append({"write": not first, "index": start, "data": rng.getrandbits(width), "after": len(out) - 1})
    return out[:n]


class _PortChecker:
    """One port's traffic and what memory may answer.  Writes of one port take effect in the order
    they were accepted; a read may return any value its index held from the last write answered
    before the read was accepted to the last write accepted before its data came back."""

    def __init__(self, ops: list[dict], init: list[int]) -> None:
        self.ops = ops
        self.queue = {False: [k for k, op in enumerate(ops) if not op["write"]],
                      True: [k for k, op in enumerate(ops) if op["write"]]}
        self.next = {False: 0, True: 0}
        self.offered: dict[bool, bool] = {False: False, True: False}
        self.history = [[v] for v in init]  # per index: initial value, then each write accepted
        self.answered = [0] * len(init)  # per index: the last entry of `history` known to be in memory
        self.done: set[int] = set()  # operations whose response came
        self.reads: list[tuple[int, int]] = []  # (op, lowest history entry allowed) awaiting data
        self.writes: list[tuple[int, int]] = []  # (op, history entry) awaiting their response
        self.mismatches: list[dict] = []
        self.checked = 0
        self.model = list(init)

    def head(self, write: bool):
        q = self.queue[write]
        if self.next[write] >= len(q):
            return None
        k = q[self.next[write]]
        after = self.ops[k].get("after")
        return k if after is None or after in self.done else None

    def busy(self) -> bool:
        return any(self.next[w] < len(self.queue[w]) for w in (False, True)) or bool(self.reads or self.writes)

    def accepted(self, write: bool) -> None:
        k = self.queue[write][self.next[write]]
        self.next[write] += 1
        op = self.ops[k]
        x = op["index"]
        if write:
            self.history[x].append(op["data"])
            self.model[x] = op["data"]
            self.writes.append((k, len(self.history[x]) - 1))
        else:
            self.reads.append((k, self.answered[x]))

    def write_answered(self) -> None:
        k, entry = self.writes.pop(0)
        x = self.ops[k]["index"]
        self.answered[x] = max(self.answered[x], entry)
        self.done.add(k)

    def read_data(self, data: int, cycle: int) -> None:
        k, lo = self.reads.pop(0)
        x = self.ops[k]["index"]
        allowed = self.history[x][lo:]
        self.checked += 1
        if data not in allowed and len(self.mismatches) < 20:
            self.mismatches.append({"cycle": cycle, "index": x, "got": data, "allowed": allowed[-4:]})
        self.done.add(k)


@cocotb.test()
async def port_traffic(dut):
    """Random read and write streams on every port of the harness, driven independently (ordering
    pairs wait for the response they depend on), checked against what memory may answer."""
    from cocotb.triggers import ReadOnly

    from cocotbext.axi import AxiBus, AxiRam

    with open(os.environ["DPN_AXI_CONFIG"]) as f:
        cfg = json.load(f)
    rng = random.Random(cfg["seed"])
    cocotb.start_soon(Clock(dut.ap_clk, PERIOD_NS, unit="ns").start())
    dut.rst.value = 1
    ram = AxiRam(AxiBus.from_prefix(dut, cfg["master"]), dut.ap_clk, dut.rst, reset_active_level=True,
                 size=MEMORY_BYTES)
    for part in (ram.write_if, ram.read_if):
        part.log.setLevel(logging.WARNING)
    for name, ch in (("aw", ram.write_if.aw_channel), ("w", ram.write_if.w_channel), ("b", ram.write_if.b_channel),
                     ("ar", ram.read_if.ar_channel), ("r", ram.read_if.r_channel)):
        if cfg["stall"].get(name, 0) > 0:
            ch.set_pause_generator(_pauses(random.Random(rng.random()), cfg["stall"][name]))
    stats = {"ar": 0, "ar_beats": 0, "aw": 0, "aw_beats": 0, "max_len": 0}
    cocotb.start_soon(_count_bursts(dut, cfg["master"], stats))

    ports = []
    for p in cfg["ports"]:
        nbytes = p["width"] // 8
        init = bytes(rng.getrandbits(8) for _ in range(p["words"] * nbytes))
        ram.write(p["base"], init)
        values = [int.from_bytes(init[k * nbytes:(k + 1) * nbytes], "little") for k in range(p["words"])]
        sig = {n: getattr(dut, f"{p['name']}_{n}") for n in (
            "rd_req_valid", "rd_req_ready", "rd_req_addr", "rd_rsp_valid", "rd_rsp_ready", "rd_rsp_rdata",
            "wr_req_valid", "wr_req_ready", "wr_req_addr", "wr_req_wdata", "wr_rsp_valid", "wr_rsp_ready", "idle")}
        getattr(dut, f"{p['name']}_base").value = p["base"]
        for n in ("rd_req_valid", "rd_rsp_ready", "wr_req_valid", "wr_rsp_ready"):
            sig[n].value = 0
        ports.append({"cfg": p, "sig": sig, "chk": _PortChecker(_traffic(rng, cfg["requests"], p["words"], p["width"]),
                                                                values), "both": 0})
    await ClockCycles(dut.ap_clk, 5)
    dut.rst.value = 0
    await RisingEdge(dut.ap_clk)

    cycles = 0
    while cycles < cfg["max_cycles"]:
        busy = False
        for st in ports:  # drive this cycle's inputs
            s, chk = st["sig"], st["chk"]
            for write, pre in ((False, "rd"), (True, "wr")):
                # A request stays offered until taken (as the design's units do); new ones come with gaps.
                k = chk.head(write)
                if k is not None and (chk.offered[write] or rng.random() >= cfg["gap"]):
                    chk.offered[write] = True
                    s[f"{pre}_req_valid"].value = 1
                    s[f"{pre}_req_addr"].value = chk.ops[k]["index"]
                    if write:
                        s["wr_req_wdata"].value = chk.ops[k]["data"]
                else:
                    s[f"{pre}_req_valid"].value = 0
                s[f"{pre}_rsp_ready"].value = int(rng.random() >= cfg["rsp_stall"])
        await ReadOnly()
        fired = []
        for st in ports:
            s = st["sig"]
            f = {n: int(s[f"{n}_valid"].value) and int(s[f"{n}_ready"].value)
                 for n in ("rd_req", "rd_rsp", "wr_req", "wr_rsp")}
            f["rdata"] = int(s["rd_rsp_rdata"].value) if f["rd_rsp"] else None
            fired.append(f)
            busy |= st["chk"].busy() or not int(s["idle"].value)
        await RisingEdge(dut.ap_clk)
        cycles += 1
        for st, f in zip(ports, fired):
            chk = st["chk"]
            st["both"] += bool(f["rd_req"] and f["wr_req"])
            if f["rd_rsp"]:  # responses come in request order
                chk.read_data(f["rdata"], cycles)
            for write, name in ((False, "rd_req"), (True, "wr_req")):
                if f[name]:
                    chk.offered[write] = False
                    chk.accepted(write)
            if f["wr_rsp"]:  # a read accepted at this edge need not see it: answered after acceptances
                chk.write_answered()
        if not busy:
            break
    result = {"cycles": cycles, "bursts": stats, "ports": {}}
    for st in ports:
        p, chk = st["cfg"], st["chk"]
        nbytes = p["width"] // 8
        final = ram.read(p["base"], p["words"] * nbytes)
        memory = [int.from_bytes(final[k * nbytes:(k + 1) * nbytes], "little") for k in range(p["words"])]
        result["ports"][p["name"]] = {
            "issued": sum(chk.next.values()), "requests": len(chk.ops), "reads": len(chk.queue[False]),
            "checked": chk.checked, "unanswered": len(chk.reads) + len(chk.writes), "mismatches": chk.mismatches,
            "same_cycle": st["both"], "memory_mismatches": sum(1 for a, b in zip(memory, chk.model) if a != b)}
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f, indent=1)
