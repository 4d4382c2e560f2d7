"""Timing structures of the RTL that must be cycle for cycle the logic they replace
(docs/rtl-timing.md): each pipeline register group's registered clock enable (`r_ce_*`, loaded with
its segment's enable of the next cycle) equals the segment's enable `en_seg*` in every cycle of a run
under back-pressure, checked by an assertion added to the generated Verilog; and the control's copy
one iteration ahead announces the registers' values after each step."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT, example_params

_COPY = re.compile(r"^\s*\(\* keep \*\) always @\(posedge clk\) r_(ce_\w+) <= nx_en_seg(\d+);", re.M)


def _checked(text: str) -> tuple[str, int]:
    """A process module with an assertion that every registered enable equals its segment's enable
    (after the start: before it the copies hold their power-up value), and the number of copies."""
    copies = _COPY.findall(text)
    if not copies:
        return text, 0
    differ = " || ".join(f"({ce} != en_seg{seg})" for ce, seg in copies)
    check = (f"  always @(posedge clk) if (!rst && started && ({differ}))\n"
             f"    $fatal(1, \"%m: a registered clock enable differs from its segment's enable\");\n")
    head, tail = text.rsplit("endmodule", 1)
    return head + check + "endmodule" + tail, len(copies)


def _design(kernel: str, parallel: int = 1):
    path = ROOT / "examples" / f"{kernel}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto", parallel=parallel))
    return res, generate(res.network)


@pytest.mark.parametrize("kernel", ["atax", pytest.param("seidel-2d", marks=pytest.mark.slow)])
def test_registered_enables_equal_the_segment_enables(kernel, tmp_path, rtl_cache):
    """atax's late reads come from FIFOs (the whole enable is registered); seidel-2d's from buffers
    (their holds are ANDed in behind the registers)."""
    res, design = _design(kernel)
    copies = 0
    for name, text in list(design.rtl.items()):
        design.rtl[name], n = _checked(text)
        copies += n
    assert copies > 0
    inputs = random_inputs(res.program, 3)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path, stall=0.3, seed=3, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)


def test_no_pipeline_register_takes_the_shared_enable():
    """Every pipeline register group of a process with stages has an enable of its own, each its own
    `keep` process (Yosys merges equal registers otherwise), and the announced values after a step
    are selected from the control's copy ahead by `started`, not computed by the next-state logic."""
    _res, design = _design("atax")
    text = next(t for n, t in design.rtl.items() if n.endswith("_s0_s2.v"))
    assert not re.search(r"if \(en_seg\d+\)", text)
    assert "u_n1 (.clk(clk), .en(ce_u_n1)" in text
    copies = _COPY.findall(text)
    assert len(copies) == len({c for c, _ in copies}) >= 20
    for m in re.finditer(r"wire \[\d+:0\] ld_(v\d+) = (.*);", text):
        assert m.group(2).startswith("!started ? ") and m.group(2).endswith(f": a_{m.group(1)}"), m.group(0)
