"""Timing structures of the RTL that must be cycle for cycle the logic they replace
(docs/rtl-timing.md): each pipeline register group's registered clock enable (`r_ce_*`, loaded with
its segment's enable of the next cycle) equals the segment's enable `en_seg*` in every cycle of a run
under back-pressure, checked by an assertion added to the generated Verilog; and the control's copy
one iteration ahead announces the registers' values after each step."""

from __future__ import annotations

import re

import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from tests.kernels import ROOT, example_params
from tests.rtl.checks import assert_bit_exact

_COPY = re.compile(r"^\s*\(\* keep \*\) always @\(posedge clk\) r_(ce_\w+) <= nx_en_seg(\d+);", re.M)


_HOLD = re.compile(r"^\s*wire okh(q?_p\d+) = (.*);$", re.M)


def _checked(text: str) -> tuple[str, int]:
    """A process module with an assertion that every registered enable equals its segment's enable
    (after the start: before it the copies hold their power-up value), and the number of copies."""
    copies = _COPY.findall(text)
    if not copies:
        return text, 0
    differ = " || ".join(f"({ce} != en_seg{seg})" for ce, seg in copies)
    check = (f"  always @(posedge clk) if (!rst && started && ({differ}))\n"
             f"    $fatal(1, \"%m: a registered clock enable differs from its segment's enable\");\n")
    # the register copies of announced read addresses equal the values they copy
    for v in re.findall(r"^\s*reg \[\d+:0\] ldq_(v\d+);", text, re.M):
        check += (f"  always @(posedge clk) if (!rst && ldq_{v} != ld_{v})\n"
                  f"    $fatal(1, \"%m: ldq_{v} differs from ld_{v}\");\n")
    head, tail = text.rsplit("endmodule", 1)
    return head + check + "endmodule" + tail, len(copies)


def _flags_checked(text: str) -> tuple[str, int]:
    """A process module with an assertion that every registered operand flag `ok_p*` (or the FIFOs'
    part `okq_p*` of a port that also reads a buffer) equals the combinational flag it anticipates:
    its `okh_p*` (the flag if nothing steps) with each channel's look-ahead `hold_*` replaced by the
    channel's `out_valid` of this cycle (`now_*`)."""
    ports = _HOLD.findall(text)
    if not ports:
        return text, 0
    now = [(p, re.sub(r"\bhold_(\w+)", r"now_\1", expr)) for p, expr in ports]
    differ = " || ".join(f"(ok{p} != ({expr}))" for p, expr in now)
    check = (f"  always @(posedge clk) if (!rst && started && ({differ}))\n"
             f"    $fatal(1, \"%m: a registered operand flag differs from its channels' valid\");\n")
    head, tail = text.rsplit("endmodule", 1)
    return head + check + "endmodule" + tail, len(ports)


_ANNOUNCED = re.compile(r"^\s*output \[(\d+):0\] (\w+)_addr_nd,?$", re.M)


def _next_slot_checked(text: str) -> tuple[str, int]:
    """A module with an assertion that each buffer read's `_addr_nd` is, in every cycle, the value
    its `_addr_nx` takes in the next cycle (a big buffer's copies of the announced slot load it),
    and the number of such reads."""
    reads = _ANNOUNCED.findall(text)
    check = "  reg nd_chk_on = 1'b0;\n  always @(posedge clk) nd_chk_on <= 1'b1;\n"
    for msb, ch in reads:
        check += (f"  reg [{msb}:0] nd_chk_{ch};\n  always @(posedge clk) nd_chk_{ch} <= {ch}_addr_nd;\n"
                  f"  always @(posedge clk) if (nd_chk_on && {ch}_addr_nx != nd_chk_{ch})\n"
                  f"    $fatal(1, \"%m: {ch}_addr_nd was not the next {ch}_addr_nx\");\n")
    head, tail = text.rsplit("endmodule", 1)
    return (head + check + "endmodule" + tail if reads else text), len(reads)


def _design(kernel: str, parallel: int = 1):
    path = ROOT / "examples" / f"{kernel}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto", parallel=parallel))
    return res, generate(res.network)


@pytest.mark.parametrize("kernel", ["atax", pytest.param("conv2d", marks=pytest.mark.slow),
                                    pytest.param("seidel-2d", marks=pytest.mark.slow)])
def test_registered_enables_equal_the_segment_enables(kernel, tmp_path, rtl_cache):
    """atax's late reads come from FIFOs (the whole enable is registered); seidel-2d's from buffers
    (their holds are ANDed in behind the registers); conv2d reads a block-RAM buffer at issue, told
    its address by a register copy of the control's load value (`ldq_v*`, checked equal too)."""
    res, design = _design(kernel)
    copies = 0
    for name, text in list(design.rtl.items()):
        design.rtl[name], n = _checked(text)
        copies += n
    assert copies > 0
    assert_bit_exact(res, design, tmp_path, rtl_cache)


@pytest.mark.parametrize(("kernel", "how"), [("gemm-int", "ldqn_v"), ("band-mv", "= ce_c"), ("seidel-int", "vn_v")])
def test_announced_slot_next_value(kernel, how, tmp_path, rtl_cache):
    """A buffer read tells its buffer the announced slot's next value (`_addr_nd`), from which a big
    buffer's banks load their copies of the slot: gemm-int reads its 96-slot buffer at issue (the
    D input of the control's register copy `ldq_v*`), band-mv a buffer stages late (a carry
    register's D input; gemm's 360-slot buffer is read so, twelve stages late), seidel-int a buffer
    a stage late (the issue stage's slot of the next cycle's iteration registers, `vn_v*`).
    Checked in every cycle under back-pressure, and bit-exact."""
    res, design = _design(kernel)
    reads = 0
    for name, text in list(design.rtl.items()):
        design.rtl[name], n = _next_slot_checked(text)
        reads += n
    assert reads > 0 and how in "".join(design.rtl.values())
    assert_bit_exact(res, design, tmp_path, rtl_cache)


def test_fifo_part_of_a_port_reading_a_buffer_is_registered(tmp_path, rtl_cache):
    """seidel-int's ports read each value from its load unit's buffer or from the process's own
    earlier write through a FIFO: the FIFOs' part of the flag is a register (`okq_p*`), which must
    equal, in every cycle after the start and under back-pressure, the FIFOs' `out_valid` part."""
    res, design = _design("seidel-int")
    ports = 0
    for name, text in list(design.rtl.items()):
        design.rtl[name], n = _flags_checked(text)
        ports += len(re.findall(r"wire ok_p\d+ = okq_p\d+ \|\| \(sel_\w+ && \w+_valid\)", text))
    assert ports >= 2
    assert_bit_exact(res, design, tmp_path, rtl_cache)


@pytest.mark.slow  # 25-50 s each; the registered enables: test_registered_enables_equal_the_segment_enables
@pytest.mark.parametrize(("kernel", "parallel"), [("fir-int", 1), ("gemv-float", 4)])
def test_registered_operand_flags_equal_the_channels_valid(kernel, parallel, tmp_path, rtl_cache):
    """A port reading FIFOs, with multiplicity too (fir-int, gemv-float's parallel copies), keeps its
    operand flag in a register computed a cycle ahead; under back-pressure it must equal, in every
    cycle after the start, the flag computed from the channels' `out_valid`."""
    res, design = _design(kernel, parallel)
    ports, mult = 0, 0
    for name, text in list(design.rtl.items()):
        design.rtl[name], n = _flags_checked(text)
        ports += n
        mult += len(re.findall(r"wire hold_\w+ = \w+_first \?", text))
    assert ports > 0 and mult > 0
    assert_bit_exact(res, design, tmp_path, rtl_cache)


def test_no_pipeline_register_takes_the_shared_enable():
    """Every pipeline register group of a process with stages (each stage of an operator too) has an
    enable of its own, each its own `keep` process (Yosys merges equal registers otherwise), and the
    announced values after a step are the control's copy ahead itself, not computed by the next-state
    logic, nor selected by `started` (a reset leaves the first iteration in that copy)."""
    _res, design = _design("atax")
    text = next(t for n, t in design.rtl.items() if n.endswith("_s0_s2.v"))
    assert not re.search(r"if \(en_seg\d+\)", text)
    # an operator has one copy per register stage (the binary64 multiplier: 10 stages or more)
    ens = re.search(r"u_n1 \(\.clk\(clk\), \.en\(\{ce_u_n1_(\d+), ce_u_n1_\d+, .*, ce_u_n1_0\}\)", text)
    assert ens and int(ens.group(1)) >= 9
    copies = _COPY.findall(text)
    assert len(copies) == len({c for c, _ in copies}) >= 20
    for m in re.finditer(r"wire \[\d+:0\] ld_(v\d+) = (.*);", text):
        assert m.group(2) == f"a_{m.group(1)}", m.group(0)
    assert "started ?" not in text


# A consumer of a buffer as a process is: the read word into an operand register (with the stage's
# clock enable), then a full stage of logic (a carry chain) behind it.
_BRAM_CONSUMER = """
module bram_consumer (
    input wire clk, input wire rst, input wire in_valid, output wire in_ready, input wire [8:0] in_addr,
    input wire [63:0] in_data, input wire [8:0] out_addr, input wire [8:0] out_addr_nx,
    input wire [8:0] out_addr_nd, input wire out_step,
    input wire out_last, output wire out_valid, input wire out_ready, input wire en, output reg [31:0] y);
  wire [63:0] d;
  wire [8:0] count;
  dpn_buffer u_c (.clk(clk), .rst(rst), .in_valid(in_valid), .in_ready(in_ready), .in_addr(in_addr),
    .in_data(in_data), .out_addr(out_addr), .out_addr_nx(out_addr_nx), .out_addr_nd(out_addr_nd), .out_step(out_step),
    .out_last(out_last), .out_valid(out_valid), .out_ready(out_ready), .out_data(d), .count(count));
  reg [63:0] operand;
  always @(posedge clk) if (en) operand <= d;
  always @(posedge clk) y <= operand[31:0] + operand[63:32];
endmodule
"""


def _ram_output_depth(netlist: dict, top: str) -> list[tuple[str, int]]:
    """Per block RAM data output bit with logic behind it: the LUT4 levels (a PFUMX / L6MUX21 joins
    the LUTs of one level) before the first flip-flop, or -1 when a carry chain or another block
    takes it first."""
    cells = netlist["modules"][top]["cells"]
    sinks: dict[int, list[tuple[str, str]]] = {}
    for name, c in cells.items():
        for port, bits in c["connections"].items():
            if c["port_directions"].get(port) == "input":
                for b in bits:
                    sinks.setdefault(b, []).append((name, port))

    def levels(bit: int, depth: int) -> int:
        worst = 0
        for name, _port in sinks.get(bit, []):
            c = cells[name]
            if c["type"] == "TRELLIS_FF":
                continue
            if c["type"] not in ("LUT4", "PFUMX", "L6MUX21") or depth > 4:
                return -1
            step = 1 if c["type"] == "LUT4" else 0
            for port, bits in c["connections"].items():
                if c["port_directions"].get(port) == "output":
                    for b in bits:
                        sub = levels(b, depth + step)
                        if sub < 0:
                            return -1
                        worst = max(worst, sub + step)
        return worst

    out = []
    for name, c in cells.items():
        if c["type"] in ("DP16KD", "PDPW16KD"):
            for port, bits in c["connections"].items():
                if port.startswith("DO") and c["port_directions"].get(port) == "output":
                    out += [(f"{name}.{port}", levels(b, 0)) for b in bits if isinstance(b, int) and b in sinks]
    return out


def test_block_ram_buffer_reads_through_a_register(tmp_path):
    """A buffer above the distributed-RAM size is a block RAM whose clock to output (5.8 ns on ECP5)
    must reach a flip-flop through at most the forwarding multiplexer: never the operator logic of
    its consumer (conv2d: the RAM's output ran into the multiplier's first stage, 14.5 ns).  With a
    combinational read, Yosys absorbs the consumer's operand register into the RAM and the carry
    chain behind it takes the RAM's output."""
    import json
    import subprocess

    from hls.rtl.render import render_to_file
    from hls.toolchain import find_yosys

    yosys = find_yosys()
    if yosys is None:
        pytest.skip("Yosys is not installed (optional extra: pip install 'dpn-synth[yosys]')")
    render_to_file(tmp_path / "dpn_buffer.v", "buffer_sync.v.j2", module_name="dpn_buffer", width=64, size=320,
                   addr_width=9)
    (tmp_path / "bram_consumer.v").write_text(_BRAM_CONSUMER)
    script = "read_verilog dpn_buffer.v bram_consumer.v; synth_ecp5 -top bram_consumer -json net.json"
    proc = subprocess.run([*yosys, "-q", "-p", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    depths = _ram_output_depth(json.loads((tmp_path / "net.json").read_text()), "bram_consumer")
    assert len(depths) >= 64, depths  # a block RAM, every data bit used
    assert all(0 <= d <= 1 for _bit, d in depths), [x for x in depths if not 0 <= x[1] <= 1][:8]
