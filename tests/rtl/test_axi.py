"""`compile --interface axi4`: the `<kernel>_axi` wrapper under Verilator, driven like a host through
cocotbext-axi (AxiLiteMaster on s_axi_control, AxiRam per master) and compared bit for bit with gcc.

Covered: one master per array (gemm-int: 32-bit scalars, two runs back to back with new arguments and
base addresses, interrupt then polling), one bundled master (jacobi-1d: double data, both arrays read
and written through one port), a bundle of 8/16/64-bit arrays with a 64-bit scalar (narrow
transfers on a 64-bit bus), and jacobi-1d tiled 4x4, whose later tile bands read back elements earlier
ones wrote (the read must wait for the write's B response).  Memories answer with random pauses on
every channel; bases make bursts reach 4 KiB page ends (cocotbext-axi's RAM asserts that no burst
crosses one).  Every argument register
reads back, AP_CTRL/ISR/interrupt behave as documented, and memory is read back the moment the host
sees the end (so every write must have its B response by then).

A port-level test drives the adapters and master directly with independent random read and write
traffic full of read-after-write and write-after-read pairs (the second request waiting for the
first's response, as the design's memory-order tokens make it), against a RAM that stalls its
channels, to check the write responses, read data, narrow lanes and burst limits.
Register map values in report.md / report.json and the usage errors are checked too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hls.cli import main
from hls.pipeline import Options, run
from hls.rtl import axi as axi_mod
from hls.rtl.axi import register_map
from hls.rtl.render import render
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_runner import build_verilator, lint_verilator, run_cocotb
from sim.rtl_sim import scalar_bits
from tests.kernels import ROOT

pytest.importorskip("cocotbext.axi")

EXAMPLES = ROOT / "examples"
AP_CTRL_IDLE = 0x4

MIXED = r"""
#include <stdint.h>
#define N 40

void kernel_axpy_mixed(int64_t s, int8_t x[N], int16_t w[N], int64_t y[N], int32_t z[N])
{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    z[i] = (int32_t)(y[i] + s * x[i] - w[i]);
#pragma endscop
}
"""


def _compile(src: Path, out: Path, *extra: str) -> dict:
    assert main(["compile", str(src), "-o", str(out), "-q", "--interface", "axi4", *extra]) == 0
    return json.loads((out / "report.json").read_text())["axi4"]


def _base(k: int, shift: int, align: int) -> int:
    """Above 4 GiB (both address words matter), 64 bytes before a page end (bursts get cut there), on a
    multiple of `align` bytes (a wide port's line: docs/rtl-interface.md)."""
    return (((1 + k % 2) << 32) + 0x100000 * k + 0xFC0 + shift) // align * align


def _run_spec(res, axi: dict, seed: int, shift: int, irq: bool):
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    master = {a: m["prefix"] for m in axi["masters"] for a in m["arrays"]}
    names = [a for m in axi["masters"] for a in m["arrays"]]
    width = {a: m["data_width"] for m in axi["masters"] for a in m["arrays"]}
    bases = {a: _base(k, shift, width[a] // 8) for k, a in enumerate(names)}
    regs = []
    for r in axi["register_map"]:
        if r["kind"] == "scalar":
            bits = scalar_bits(inputs[r["arg"]], r["type"])
        elif r["kind"] == "array":
            bits = bases[r["arg"]]
        else:
            continue
        regs.append([r["offset"], (bits >> (32 * r["word"])) & 0xFFFFFFFF])
    arrays = [{"name": a, "master": master[a], "base": bases[a],
               "hex": np.ascontiguousarray(inputs[a]).tobytes().hex()} for a in names]
    return {"arrays": arrays, "regs": regs, "irq": irq}, inputs, expected


def _simulate(out: Path, top: str, axi: dict, runs: list[dict], cache: Path, stall, seed: int) -> dict:
    build = build_verilator(sorted((out / "rtl").glob("*.v")), top, cache_root=cache)
    run_dir = out / "axi_run"
    run_dir.mkdir()
    cfg = {"masters": [m["prefix"] for m in axi["masters"]], "runs": runs, "stall": stall, "seed": seed,
           "max_cycles": 400_000, "result_file": str(run_dir / "result.json")}
    (run_dir / "config.json").write_text(json.dumps(cfg))
    res = run_cocotb(build, "sim.cocotb_axi", test_dir=run_dir, testcase="run_axi_kernel", timeout_s=600,
                     extra_env={"DPN_AXI_CONFIG": str(run_dir / "config.json")})
    assert res.ok, res.summary()
    return json.loads((run_dir / "result.json").read_text())


def _check_outputs(rec: dict, expected: dict) -> None:
    assert rec["done"], rec
    outputs = {}
    for name, exp in expected.items():
        raw = bytes.fromhex(rec["arrays"][name])
        outputs[name] = np.frombuffer(raw, dtype=exp.dtype).reshape(exp.shape)
    mism = compare(expected, outputs)
    assert not mism, f"{len(mism)} mismatching elements, first {mism[0]}"


CASES = [
    # (source, extra compile flags, runs (seed, base shift, interrupt), stall)
    pytest.param(EXAMPLES / "gemm-int.c", [], [(0, 0, True), (1, 0x40, False)], 0.3, id="gemm-int-per-array",
                 marks=pytest.mark.slow),  # masters per array: gemm-int-read-ports has them too
    pytest.param(EXAMPLES / "jacobi-1d.c", ["--axi-bundle"], [(2, 0, False)], 0.2, id="jacobi-1d-bundle",
                 marks=pytest.mark.slow),  # bundling is covered by mixed-width-bundle
    pytest.param(None, ["--axi-bundle"], [(3, 0x20, True)], 0.2, id="mixed-width-bundle"),
    # tiled 4x4: later tile bands read back what earlier ones stored (memory-order tokens released by
    # the write responses, i.e. by B)
    pytest.param(EXAMPLES / "jacobi-1d.c", ["--tile", "4,4"], [(4, 0, False)], 0.3, id="jacobi-1d-read-back"),
    # --parallel 2: A and B (only read) and C (read for one slab's rows each, then stored) get a read
    # channel per slab, two port adapters on one master; C a write channel per slab too, on the same
    # two adapters, each slab's stores waiting for its own load unit's tokens
    # (one word per beat: --mem-width 0; the other cases have the default 512-bit ports)
    pytest.param(EXAMPLES / "gemm-int.c", ["--parallel", "2", "--mem-width", "0"], [(5, 0x40, False)], 0.3,
                 id="gemm-int-read-ports"),
    # --mem-width 256 at --parallel 2: A, y1 and y2 (only read) are read a line of four doubles per beat
    # through their line readers, each shared by its load units, on 256-bit masters; x1 and x2 stay narrow
    pytest.param(EXAMPLES / "mvt.c", ["--mem-width", "256", "--parallel", "2"], [(6, 0, False)], 0.3,
                 id="mvt-wide"),
]


@pytest.mark.parametrize("src, flags, runs, stall", CASES)
def test_axi_wrapper_matches_gcc(src, flags, runs, stall, rtl_cache, tmp_path):
    if src is None:
        src = tmp_path / "axpy_mixed.c"
        src.write_text(MIXED)
    out = tmp_path / "out"
    axi = _compile(src, out, *flags)
    top = axi["top"]
    assert axi["bundle"] == ("--axi-bundle" in flags)
    assert lint_verilator(sorted((out / "rtl").glob("*.v")), top) == []
    res = run(Options(str(src)))
    ports = {m["prefix"]: (m["ports"], m["data_width"]) for m in axi["masters"]}
    if "256" in flags:  # a wide array: one adapter (its line reader's port) as wide as the option
        assert ports == {"m_axi_x1": (2, 64), "m_axi_x2": (2, 64), "m_axi_y1": (1, 256), "m_axi_y2": (1, 256),
                         "m_axi_A": (1, 256)}
    elif "--parallel" in flags:  # every read channel of an array has its own port adapter on the array's master
        assert ports == {"m_axi_A": (2, 32), "m_axi_B": (2, 32), "m_axi_C": (2, 32)}
        assert "C_wr1_req_valid" in (out / "rtl" / f"{top}.v").read_text()  # C's second write channel
    specs = [_run_spec(res, axi, seed, shift, irq) for seed, shift, irq in runs]
    result = _simulate(out, top, axi, [s[0] for s in specs], rtl_cache, stall, seed=len(runs))

    assert result["ctrl_after_reset"] == AP_CTRL_IDLE and result["interrupt_after_reset"] == 0
    assert len(result["runs"]) == len(runs)
    for (spec, _, expected), rec in zip(specs, result["runs"]):
        assert rec["regs_readback"] == spec["regs"]  # every argument register reads back what was written
        assert rec["ctrl_running"] & 0x5 == 0x1, hex(rec["ctrl_running"])  # ap_start set, not idle
        _check_outputs(rec, expected)
        assert rec["cycles"] > 0
        assert rec["ctrl_done"] & 0x6 == 0x6, hex(rec["ctrl_done"])  # ap_done and ap_idle
        assert rec["ctrl_done_again"] & 0x3 == 0x0, hex(rec["ctrl_done_again"])  # ap_done cleared on read
        if spec["irq"]:
            assert rec["isr"] == 0x1 and rec["isr_after_ack"] == 0 and rec["interrupt_after_ack"] == 0
    bursts = result["bursts"]
    for prefix, b in bursts.items():
        assert b["max_len"] <= 16 and b["ar_beats"] >= b["ar"] and b["aw_beats"] >= b["aw"], (prefix, b)
    # Consecutive requests were coalesced: a streamed operand moved several beats per burst (not so
    # in gemm-int's slabs at --parallel 2: each load unit reads a few elements of a row per tile).  A wide
    # port's line reader asks for a line when a unit first needs it: those beats come one by one.
    narrow = [b for p, b in bursts.items() if ports[p][1] <= 64 and b["ar"]]
    assert "--parallel" in flags or not narrow or max(b["ar_beats"] / b["ar"] for b in narrow) >= 3, bursts
    if "256" in flags:  # mvt reads A's 576 doubles twice, four to a beat; the line readers keep lines
        assert bursts["m_axi_A"]["ar_beats"] < 2 * 576 // 4 and bursts["m_axi_y1"]["ar_beats"] <= 2 * 24 // 4, bursts


def test_register_map_in_report(tmp_path):
    out = tmp_path / "gemm"
    axi = _compile(EXAMPLES / "gemm-int.c", out)
    assert [m["prefix"] for m in axi["masters"]] == ["m_axi_C", "m_axi_A", "m_axi_B"]
    assert all(m["arrays"] == [m["prefix"][6:]] for m in axi["masters"])
    # A and B, only read, get 512-bit ports by default (--mem-width); C, read and written, moves a word
    assert [m["data_width"] for m in axi["masters"]] == [32, 512, 512]
    aligned = {r["arg"] for r in axi["register_map"] if "a multiple of 64 bytes" in r["description"]}
    assert aligned == {"A", "B"}  # a line per beat: the host places them on line boundaries
    got = [(r["offset"], r["name"]) for r in axi["register_map"]]
    assert got == [(0x00, "AP_CTRL"), (0x04, "GIE"), (0x08, "IER"), (0x0C, "ISR"), (0x10, "alpha"), (0x18, "beta"),
                   (0x20, "C[31:0]"), (0x24, "C[63:32]"), (0x28, "A[31:0]"), (0x2C, "A[63:32]"),
                   (0x30, "B[31:0]"), (0x34, "B[63:32]")]
    md = (out / "report.md").read_text()
    section = md[md.index("## AXI4 interface"):]
    rows = re.findall(r"^\| (0x[0-9a-f]+) \| ([^|]+) \|", section, re.M)
    assert [(int(o, 16), n.strip()) for o, n in rows] == got
    assert "`m_axi_C`" in section and "`s_axi_control`" in section
    rtl = out / "rtl"
    top = (rtl / "kernel_gemm_int_axi.v").read_text()
    for port in ("s_axi_control_AWADDR", "interrupt", "m_axi_A_ARLEN", "m_axi_C_WSTRB", "m_axi_B_RID", "ap_rst_n"):
        assert re.search(rf"\b{re.escape(port)}\b", top), port
    ctl = (rtl / "kernel_gemm_int_control_s_axi.v").read_text()
    assert "parameter AW = 6" in ctl

    bundled = _compile(EXAMPLES / "gemm-int.c", tmp_path / "gemm-b", "--axi-bundle")
    assert [(m["prefix"], m["arrays"], m["id_width"]) for m in bundled["masters"]] == [
        ("m_axi_gmem", ["C", "A", "B"], 2)]
    assert bundled["register_map"] == axi["register_map"]


def test_register_map_layout():
    scalars = [{"name": "s", "port": "arg_s", "width": 64, "type": "int64_t"},
               {"name": "k", "port": "arg_k", "width": 16, "type": "int16_t"}]
    arrays = [{"name": "x", "width": 8, "shape": [4], "type": "int8_t"}]
    regs = register_map(scalars, arrays, ["x", "s", "k"])
    assert [(r["offset"], r["arg"], r["word"], r["width"]) for r in regs[4:]] == [
        (0x10, "x", 0, 32), (0x14, "x", 1, 32), (0x18, "s", 0, 32), (0x1C, "s", 1, 32), (0x20, "k", 0, 16)]
    # Default order: scalars, then arrays.
    assert [(r["offset"], r["arg"]) for r in register_map(scalars, arrays)[4:]] == [
        (0x10, "s"), (0x14, "s"), (0x18, "k"), (0x20, "x"), (0x24, "x")]


@pytest.mark.parametrize("argv, message", [
    (["compile", "--axi-bundle", "-o", "OUT"], "--axi-bundle needs --interface axi4"),
    (["sim", "--interface", "axi4"], "sim --interface axi4 is not supported"),
    (["compile", "--interface", "axi5", "-o", "OUT"], "invalid choice"),
])
def test_interface_usage_errors(argv, message, tmp_path, capsys):
    argv = [a.replace("OUT", str(tmp_path / "o")) for a in argv]
    try:
        code = main([argv[0], str(EXAMPLES / "gemm-int.c"), *argv[1:]])
    except SystemExit as e:  # argparse's own errors
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def _harness(ports: list[dict], dw: int) -> str:
    """A top with the port adapters of `ports` on one master `m_axi_gmem` (what --axi-bundle builds),
    their design-side signals as top-level ports."""
    n = len(ports)
    pw = max(1, (n - 1).bit_length())
    lines = ["module axi_port_harness (", "    input ap_clk,", "    input rst,"]
    for p in ports:
        a, iw, ew = p["name"], p["iw"], p["width"]
        lines += [f"    input [63:0] {a}_base,", f"    input {a}_rd_req_valid,", f"    output {a}_rd_req_ready,",
                  f"    input [{iw - 1}:0] {a}_rd_req_addr,", f"    output {a}_rd_rsp_valid,",
                  f"    input {a}_rd_rsp_ready,", f"    output [{ew - 1}:0] {a}_rd_rsp_rdata,",
                  f"    input {a}_wr_req_valid,", f"    output {a}_wr_req_ready,",
                  f"    input [{iw - 1}:0] {a}_wr_req_addr,", f"    input [{ew - 1}:0] {a}_wr_req_wdata,",
                  f"    output {a}_wr_rsp_valid,", f"    input {a}_wr_rsp_ready,", f"    output {a}_idle,"]
    sigs = []
    for sig, direction, kind in axi_mod.MASTER_SIGNALS:
        width = {"id": pw, "data": dw, "strb": dw // 8}.get(kind, kind) if isinstance(kind, str) else kind
        sigs.append(f"    {direction} [{width - 1}:0] m_axi_gmem_{sig}")
    lines += [",\n".join(sigs), ");"]
    per = []
    for p in ports:
        a = p["name"]
        lines += [f"    wire {a}_ar_valid, {a}_ar_ready, {a}_aw_valid, {a}_aw_ready;",
                  f"    wire {a}_w_pop, {a}_r_valid, {a}_b_valid;",
                  f"    wire [63:0] {a}_ar_addr, {a}_aw_addr;", f"    wire [7:0] {a}_ar_len, {a}_aw_len;",
                  f"    wire [2:0] {a}_ar_size, {a}_aw_size;", f"    wire [{dw - 1}:0] {a}_w_data;",
                  f"    wire [{dw // 8 - 1}:0] {a}_w_strb;"]
        esz, dsz = (p["width"] // 8).bit_length() - 1, (dw // 8).bit_length() - 1
        lines.append(
            f"    {axi_mod.PORT_MODULE} #(.IW({p['iw']}), .EW({p['width']}), .ESZ({esz}), .DW({dw}), .DSZ({dsz}), "
            f".RQ_LOG2({axi_mod.READ_QUEUE_LOG2}), .WQ_LOG2({axi_mod.WRITE_QUEUE_LOG2}), "
            f".FLUSH_IDLE({axi_mod.FLUSH_IDLE})) u_{a} (.clk(ap_clk), .rst(rst), .base({a}_base), "
            + ", ".join(f".{x}({a}_{x})" for x in ("rd_req_valid", "rd_req_ready", "rd_req_addr", "rd_rsp_valid",
                                                     "rd_rsp_ready", "rd_rsp_rdata", "wr_req_valid", "wr_req_ready",
                                                     "wr_req_addr", "wr_req_wdata", "wr_rsp_valid", "wr_rsp_ready",
                                                     "ar_valid", "ar_ready", "ar_addr", "ar_len", "ar_size",
                                                     "aw_valid", "aw_ready", "aw_addr", "aw_len", "aw_size", "w_data",
                                                     "w_strb", "w_pop", "r_valid", "b_valid", "idle"))
            + ", .r_data(r_data), .r_last(r_last));")
        per.append(a)

    def cat(suffix: str) -> str:
        return "{" + ", ".join(f"{a}_{suffix}" for a in reversed(per)) + "}"

    lines += [f"    wire [{dw - 1}:0] r_data;", "    wire r_last;",
              f"    {axi_mod.MASTER_MODULE} #(.N({n}), .PW({pw}), .IDW({pw}), .DW({dw}), "
              f".WQ_LOG2({axi_mod.W_ORDER_LOG2})) u_master (.clk(ap_clk), .rst(rst), "
              + ", ".join(f".p_{x}({cat(x)})" for x in axi_mod.PORT_VECTORS)
              + ", .p_r_data(r_data), .p_r_last(r_last), "
              + ", ".join(f".{sig}(m_axi_gmem_{sig})" for sig, _, _ in axi_mod.MASTER_SIGNALS) + ");",
              "endmodule", ""]
    return "\n".join(lines)


def test_port_traffic_keeps_memory_order(rtl_cache, tmp_path):
    """Independent read and write streams (runs, and read-after-write / write-after-read pairs of one
    element whose second request waits for the first's response) on a 16-bit and a 64-bit port sharing
    a 64-bit master, against a RAM that stalls every channel at random: every read returns a value its
    element may hold (never older than a write answered before the read), in request order; the final
    memory agrees; reads and writes of one port overlap (same-cycle requests, AR bursts issued while
    a write burst of the same array waits for B)."""
    ports = [{"name": "h", "iw": 9, "width": 16, "words": 300, "base": 0x1_0000_0F00},
             {"name": "d", "iw": 9, "width": 64, "words": 300, "base": 0x2_0000_0F80}]
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    files = {f"{axi_mod.FIFO_MODULE}.v": render("axi/fifo.v.j2", module_name=axi_mod.FIFO_MODULE),
             f"{axi_mod.PORT_MODULE}.v": render("axi/port.v.j2", module_name=axi_mod.PORT_MODULE,
                                                fifo_module=axi_mod.FIFO_MODULE),
             f"{axi_mod.MASTER_MODULE}.v": render("axi/master.v.j2", module_name=axi_mod.MASTER_MODULE,
                                                  fifo_module=axi_mod.FIFO_MODULE),
             "axi_port_harness.v": _harness(ports, 64)}
    for name, text in files.items():
        (rtl / name).write_text(text)
    srcs = sorted(rtl.glob("*.v"))
    build = build_verilator(srcs, "axi_port_harness", cache_root=rtl_cache)
    cfg = {"master": "m_axi_gmem", "seed": 7, "requests": 600, "gap": 0.2, "rsp_stall": 0.2, "max_cycles": 200_000,
           "stall": {"aw": 0.3, "w": 0.6, "b": 0.5, "ar": 0.6, "r": 0.3},
           "ports": [{k: p[k] for k in ("name", "width", "words", "base")} for p in ports],
           "result_file": str(tmp_path / "result.json")}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    res = run_cocotb(build, "sim.cocotb_axi", test_dir=tmp_path / "run", testcase="port_traffic", timeout_s=600,
                     extra_env={"DPN_AXI_CONFIG": str(tmp_path / "config.json")})
    assert res.ok, res.summary()
    result = json.loads((tmp_path / "result.json").read_text())
    for name, r in result["ports"].items():
        assert r["issued"] == r["requests"] == 600, (name, r, result["cycles"])
        assert r["reads"] > 100 and r["checked"] == r["reads"] and r["unanswered"] == 0, (name, r)
        assert r["mismatches"] == [] and r["memory_mismatches"] == 0, (name, r)
        assert r["same_cycle"] > 10, (name, r)
    b = result["bursts"]
    assert b["max_len"] == 16 and b["ar_beats"] + b["aw_beats"] > 2 * (b["ar"] + b["aw"]), b
    assert b["ar_under_writes"] > 10, b
