"""Shared checks of the RTL tests."""

from __future__ import annotations

import numpy as np

from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl


def assert_bit_exact(res, design, tmp_path, rtl_cache, *, stall: float = 0.3, seed: int = 3) -> None:
    """`design` (generated from the compile `res`, possibly with checks added to its Verilog) runs to
    the end under Verilator with random memory stalls, and every output word equals gcc's."""
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path, stall=stall, seed=seed, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)
