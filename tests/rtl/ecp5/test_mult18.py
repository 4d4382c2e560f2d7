"""The ECP5 implementation of the multiplier's partial product (hw_templates/ecp5/mult18.v.j2, used
by the ECP5 place-and-route flow and kit) against the generic one that `rtl/` holds and every other
test simulates: same ports, same values cycle by cycle, under random operands and clock enables.

Yosys ships no simulation model of MULT18X18D, so the block is modelled here (`mult18x18d_model`)
from its documented parameters, for the modes the template uses: input registers on CE0 (or none),
no pipeline register, the output register on CE1, unsigned operands.  The model refuses other modes,
so a template change that starts using them fails here rather than passing on a wrong model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hls.rtl.library import MULT18_MODULE, library_files
from hls.rtl.render import render
from sim.rtl_runner import build_verilator, lint_verilator, run_cocotb

COCOTB_MODULE = "tests.rtl.ecp5.cocotb_mult18"
TOP = "mult18_pair"
ECP5_NAME = "dpn_mult18_ecp5"


def mult18x18d_model() -> str:
    """Verilog of a behavioural MULT18X18D for the modes above (its 18 + 18 operand bits and 36
    product bits are single-bit ports, as on the primitive)."""
    a_ports = ", ".join(f"A{k}" for k in range(18))
    b_ports = ", ".join(f"B{k}" for k in range(18))
    p_ports = ", ".join(f"P{k}" for k in range(36))
    params = [f'parameter {n} = "{v}"' for n, v in (
        ("REG_INPUTA_CLK", "NONE"), ("REG_INPUTA_CE", "CE0"), ("REG_INPUTA_RST", "RST0"),
        ("REG_INPUTB_CLK", "NONE"), ("REG_INPUTB_CE", "CE0"), ("REG_INPUTB_RST", "RST0"),
        ("REG_PIPELINE_CLK", "NONE"), ("REG_OUTPUT_CLK", "NONE"), ("REG_OUTPUT_CE", "CE0"),
        ("REG_OUTPUT_RST", "RST0"), ("GSR", "ENABLED"), ("RESETMODE", "SYNC"))]
    return f"""// A behavioural model of Lattice ECP5 MULT18X18D for tests/rtl/ecp5/test_mult18.py (our own).
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
module MULT18X18D #(
  {(','.join(chr(10) + '  ' + p for p in params)).lstrip()}
) (
  input {a_ports},
  input {b_ports},
  input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB, CLK0, CE0, CE1, RST0,
  output {p_ports}
);
  initial begin
    if (REG_INPUTA_CLK != REG_INPUTB_CLK || (REG_INPUTA_CLK != "NONE" && REG_INPUTA_CLK != "CLK0")
        || REG_INPUTA_CE != "CE0" || REG_INPUTB_CE != "CE0" || REG_PIPELINE_CLK != "NONE"
        || REG_OUTPUT_CLK != "CLK0" || REG_OUTPUT_CE != "CE1" || RESETMODE != "SYNC") begin
      $display("MULT18X18D model: a mode it does not model");
      $finish;
    end
  end
  wire [17:0] a = {{{", ".join(f"A{k}" for k in reversed(range(18)))}}};
  wire [17:0] b = {{{", ".join(f"B{k}" for k in reversed(range(18)))}}};
  reg [17:0] a_q, b_q;
  reg [35:0] p_q;
  always @(posedge CLK0) if (RST0) begin a_q <= 18'd0; b_q <= 18'd0; end else if (CE0) begin a_q <= a; b_q <= b; end
  wire [17:0] x = (REG_INPUTA_CLK == "NONE") ? a : a_q;
  wire [17:0] y = (REG_INPUTB_CLK == "NONE") ? b : b_q;
  wire [35:0] m = (SIGNEDA | SIGNEDB) ? 36'bx : {{18'd0, x}} * {{18'd0, y}};
  always @(posedge CLK0) if (RST0) p_q <= 36'd0; else if (CE1) p_q <= m;
  assign {{{", ".join(f"P{k}" for k in reversed(range(36)))}}} = p_q;
endmodule
"""


def harness() -> str:
    return f"""module {TOP} #(parameter integer AW = 18, parameter integer BW = 18, parameter integer PW = 36,
                   parameter integer IN_REGS = 1) (
  input clk, input ce_in, input ce_out, input [AW-1:0] a, input [BW-1:0] b,
  output [PW-1:0] p_generic, output [PW-1:0] p_ecp5
);
  {MULT18_MODULE} #(.AW(AW), .BW(BW), .PW(PW), .IN_REGS(IN_REGS)) u_generic (
    .clk(clk), .ce_in(ce_in), .ce_out(ce_out), .a(a), .b(b), .p(p_generic));
  {ECP5_NAME} #(.AW(AW), .BW(BW), .PW(PW), .IN_REGS(IN_REGS)) u_ecp5 (
    .clk(clk), .ce_in(ce_in), .ce_out(ce_out), .a(a), .b(b), .p(p_ecp5));
endmodule
"""


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("mult18")
    files = {**library_files([MULT18_MODULE]), f"{ECP5_NAME}.v": render("ecp5/mult18.v.j2", module_name=ECP5_NAME),
             "MULT18X18D.v": mult18x18d_model(), f"{TOP}.v": harness()}
    paths = []
    for name, text in files.items():
        paths.append(d / name)
        paths[-1].write_text(text)
    return paths


def test_library_files_per_target() -> None:
    generic = library_files([MULT18_MODULE])[f"{MULT18_MODULE}.v"]
    ecp5 = library_files([MULT18_MODULE], "ecp5")[f"{MULT18_MODULE}.v"]
    assert f"module {MULT18_MODULE} #(" in generic and f"module {MULT18_MODULE} #(" in ecp5
    assert "MULT18X18D" not in generic.split("endmodule")[0].split("*/")[-1]
    assert 'REG_OUTPUT_CLK("CLK0")' in ecp5 and '.CE1(ce_out)' in ecp5


def test_lint_clean(sources: list[Path]) -> None:
    generic = [p for p in sources if p.name == f"{MULT18_MODULE}.v"]
    assert lint_verilator(generic, MULT18_MODULE) == []


@pytest.mark.parametrize(("aw", "bw", "pw", "in_regs"), [(18, 18, 36, 1), (18, 14, 14, 1), (14, 18, 32, 1),
                                                         (17, 11, 28, 0), (5, 18, 20, 1)], ids=str)
def test_ecp5_matches_generic(aw: int, bw: int, pw: int, in_regs: int, sources: list[Path], rtl_cache: Path,
                              tmp_path: Path) -> None:
    build = build_verilator(sources, TOP, parameters={"AW": aw, "BW": bw, "PW": pw, "IN_REGS": in_regs},
                            cache_root=rtl_cache, extra_args=["-Wno-lint", "-Wno-style"])
    env = {"M18_AW": str(aw), "M18_BW": str(bw), "M18_PW": str(pw), "M18_IN_REGS": str(in_regs),
           "M18_CYCLES": "3000"}
    result = run_cocotb(build, COCOTB_MODULE, test_dir=tmp_path / "sim", extra_env=env, timeout_s=120.0)
    assert result.ok, result.summary()
    assert result.passed == 1
