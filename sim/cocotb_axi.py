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
by tests/rtl/test_axi.py) with random request streams and checks in-order memory semantics.
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
    """Per master: AR / AW handshakes, their beats, the longest burst."""
    sig = {n: getattr(dut, f"{prefix}_{n}") for n in ("ARVALID", "ARREADY", "ARLEN", "AWVALID", "AWREADY", "AWLEN")}
    while True:
        await RisingEdge(dut.ap_clk)
        for ch in ("AR", "AW"):
            if int(sig[ch + "VALID"].value) and int(sig[ch + "READY"].value):
                n = int(sig[ch + "LEN"].value) + 1
                stats[ch.lower()] += 1
                stats[ch.lower() + "_beats"] += n
                stats["max_len"] = max(stats["max_len"], n)


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


def _traffic(rng: random.Random, n: int, words: int, width: int, write_bias: float):
    """Requests (write, index, data): runs of consecutive indices, and many reads right after writes
    of the same index and writes right after reads (the ordering cases), at random places."""
    out = []
    while len(out) < n:
        kind = rng.random()
        start = rng.randrange(words)
        if kind < 0.5:  # a run in one direction
            write = rng.random() < write_bias
            for k in range(rng.randint(1, 24)):
                out.append((write, (start + k) % words, rng.getrandbits(width)))
        elif kind < 0.75:  # write then read back (read after write)
            out.append((True, start, rng.getrandbits(width)))
            out.append((False, start, 0))
        else:  # read then overwrite (write after read)
            out.append((False, start, 0))
            out.append((True, start, rng.getrandbits(width)))
    return out[:n]


@cocotb.test()
async def port_traffic(dut):
    """Random request streams on every port of the harness, checked against in-order memory semantics."""
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
        model = [int.from_bytes(init[k * nbytes:(k + 1) * nbytes], "little") for k in range(p["words"])]
        sig = {n: getattr(dut, f"{p['name']}_{n}") for n in ("req_valid", "req_ready", "req_addr", "req_write",
                                                             "req_wdata", "rsp_valid", "rsp_ready", "rsp_rdata",
                                                             "idle")}
        getattr(dut, f"{p['name']}_base").value = p["base"]
        sig["req_valid"].value = 0
        sig["rsp_ready"].value = 0
        ports.append({"cfg": p, "sig": sig, "model": model, "pending": [], "mismatches": [],
                      "todo": _traffic(rng, cfg["requests"], p["words"], p["width"], 0.5), "next": 0, "reads": 0,
                      "offered": False})
    await ClockCycles(dut.ap_clk, 5)
    dut.rst.value = 0
    await RisingEdge(dut.ap_clk)

    cycles = 0
    while cycles < cfg["max_cycles"]:
        busy = False
        for st in ports:  # drive this cycle's inputs
            s = st["sig"]
            # A request stays offered until taken (as the design's units do); new ones come with gaps.
            if st["next"] < len(st["todo"]) and (st["offered"] or rng.random() >= cfg["gap"]):
                st["offered"] = True
                write, index, data = st["todo"][st["next"]]
                s["req_valid"].value = 1
                s["req_write"].value = int(write)
                s["req_addr"].value = index
                s["req_wdata"].value = data
            else:
                s["req_valid"].value = 0
            s["rsp_ready"].value = int(rng.random() >= cfg["rsp_stall"])
        await ReadOnly()
        fired = []
        for st in ports:
            s = st["sig"]
            req = int(s["req_valid"].value) and int(s["req_ready"].value)
            rsp = int(s["rsp_valid"].value) and int(s["rsp_ready"].value)
            fired.append((req, rsp, int(s["rsp_rdata"].value) if rsp else None))
            busy |= st["next"] < len(st["todo"]) or bool(st["pending"]) or not int(s["idle"].value)
        await RisingEdge(dut.ap_clk)
        cycles += 1
        for st, (req, rsp, rdata) in zip(ports, fired):
            st["offered"] = st["offered"] and not req
            if rsp:  # responses come in request order
                expected = st["pending"].pop(0) if st["pending"] else None
                if rdata != expected and len(st["mismatches"]) < 20:
                    st["mismatches"].append({"cycle": cycles, "expected": expected, "got": rdata})
            if req:  # the memory applies requests in the order it accepts them
                write, index, data = st["todo"][st["next"]]
                st["next"] += 1
                if write:
                    st["model"][index] = data
                else:
                    st["pending"].append(st["model"][index])
                    st["reads"] += 1
        if not busy:
            break
    result = {"cycles": cycles, "bursts": stats, "ports": {}}
    for st in ports:
        p = st["cfg"]
        nbytes = p["width"] // 8
        final = ram.read(p["base"], p["words"] * nbytes)
        memory = [int.from_bytes(final[k * nbytes:(k + 1) * nbytes], "little") for k in range(p["words"])]
        result["ports"][p["name"]] = {
            "issued": st["next"], "requests": len(st["todo"]), "reads": st["reads"], "unanswered": len(st["pending"]),
            "mismatches": st["mismatches"],
            "memory_mismatches": sum(1 for a, b in zip(memory, st["model"]) if a != b)}
    with open(cfg["result_file"], "w") as f:
        json.dump(result, f, indent=1)
