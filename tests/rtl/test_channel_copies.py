"""Register copies inside the channel templates (docs/rtl-timing.md, sessions 20b and 41) must equal
what they copy in every cycle of a run under back-pressure, checked by an assertion added to the
generated Verilog: each 16-bit slice of a wide FIFO (64-bit words) has the same queue enables and
selects (`q_we`, `q_w1`) as the first slice, and its head pointer copy `hp_d` equals `hp`; a narrow
FIFO (32-bit words) has one slice.  Each 16-bit slice but the first of a wide FIFO selects its
output with copies of `r_empty` and `r_hp` and loads its ring with copies of `r_we0` and `r_we1`;
each 16-bit slice but the first of a wide buffer's input queue loads with copies of `e0_hold`,
`e0_from1` and `e1_hold`.  Kernels: atax (binary64 FIFOs, one a recurrence through a FIFO of depth
23, in RAM) and conv2d (binary64 FIFOs of depth 3 and 299); and widths whose last slice is
narrower, against the cycle-accurate FIFO model.  A buffer of more than 64 slots looks the slot of
its input register's word up in banks of 64, each with its own copy of the slot: the OR of the
banks' hits must equal `full_q` at the slot whenever the register holds a word."""

from __future__ import annotations

import re

import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from hls.rtl.render import render_to_file
from sim.rtl_runner import build_verilator, lint_verilator, run_cocotb
from tests.kernels import ROOT, example_params
from tests.rtl.checks import assert_bit_exact

_HEAD = "            assign head[LO +: W] ="
# a big buffer's producer-side lookup in banks, each addressed by a copy of the input register's slot
_BANK_CHECK = ("  always @(posedge clk) if (!rst && q_valid && q_full != full_q[q_idx])\n"
               "    $fatal(1, \"%m: the banked lookup differs from full_q at the input register's slot\");\n")
_SLICE_CHECK = ("            always @(posedge clk) if (!rst && (q_we != g_slice[0].q_we || q_w1 != g_slice[0].q_w1"
                " || hp_d != hp))\n"
                "                $fatal(1, \"%m: a slice's copies differ from the first slice's\");\n")

_OUT = "            assign out_data[LO +: W] ="
_OUT_CHECK = ("            always @(posedge clk) if (!rst && (r_empty_c != r_empty || r_hp_c != r_hp"
              " || r_we0_c != r_we0 || r_we1_c != r_we1))\n"
              "                $fatal(1, \"%m: a slice's output selects or ring enables differ from the first\");\n")
_DATA = "            always @(posedge clk) begin\n                if (!h0) e0_d"
_DATA_CHECK = ("            always @(posedge clk) if (h0 != e0_hold || f1 != e0_from1 || h1 != e1_hold)\n"
               "                $fatal(1, \"%m: a data slice's enables differ from the queue's\");\n")


@pytest.mark.parametrize("kernel", ["atax", pytest.param("conv2d", marks=pytest.mark.slow)])
def test_fifo_slice_copies_equal_the_first_slice(kernel, tmp_path, rtl_cache):
    path = ROOT / "examples" / f"{kernel}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    design = generate(res.network)
    fifos, buffers = 0, 0
    for name, text in list(design.rtl.items()):
        if _HEAD in text:
            assert _OUT in text
            text = design.rtl[name] = text.replace(_HEAD, _SLICE_CHECK + _HEAD).replace(_OUT, _OUT_CHECK + _OUT)
            fifos += 1
        if _DATA in text:
            text = design.rtl[name] = text.replace(_DATA, _DATA_CHECK + _DATA)
        if "wire             q_full;" in text:
            assert _DATA_CHECK in text
            head, tail = text.rsplit("endmodule", 1)
            design.rtl[name] = head + _BANK_CHECK + "endmodule" + tail
            buffers += 1
    assert fifos == 1 and buffers == 1  # one module each, instantiated per channel
    top = "\n".join(design.rtl.values())
    assert re.search(r"dpn_fifo #\(\.WIDTH\(64\)", top)
    assert (".SIZE(320)" in top) == (kernel == "conv2d")  # conv2d's buffer is banked, atax's are not
    assert_bit_exact(res, design, tmp_path, rtl_cache)


@pytest.mark.parametrize(("width", "depth", "ready_prob"), [(70, 2, 0.5), (80, 5, 0.4)], ids=lambda v: str(v))
def test_fifo_with_a_narrower_last_slice(width, depth, ready_prob, tmp_path, rtl_cache):
    """70 and 80 bits: 16-bit slices and a last one of 6 (queue only: DEPTH 2) or 16 bits (RAM),
    checked cycle for cycle against the FIFO model of `cocotb_fifo` under back-pressure."""
    src = render_to_file(tmp_path / "src" / "dpn_fifo.v", "fifo.v.j2", module_name="dpn_fifo", width=8, depth=4)
    assert lint_verilator([src], "dpn_fifo", parameters={"WIDTH": width, "DEPTH": depth}) == []
    build = build_verilator([src], "dpn_fifo", parameters={"WIDTH": width, "DEPTH": depth}, cache_root=rtl_cache)
    result = run_cocotb(build, "tests.rtl.cocotb_fifo", test_dir=tmp_path / "sim",
                        extra_env={"FIFO_WIDTH": str(width), "FIFO_DEPTH": str(depth), "FIFO_CYCLES": "4000",
                                   "FIFO_VALID_PROB": "0.6", "FIFO_READY_PROB": str(ready_prob)},
                        timeout_s=120.0)
    assert result.ok, result.summary()
    assert result.passed == 1
