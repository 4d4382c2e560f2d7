"""PolyBench/C-style files (`tests/polybench_like/`: our own kernels in PolyBench's layout, with its
header, macros, MINI_DATASET and the default `double`), compiled with `--tile auto` and simulated under
Verilator with back-pressure: every output word must equal gcc's.

The default suite shrinks the three largest (floyd-warshall's N, the stencils' time steps) to keep CI
short; `pytest -m slow tests/rtl/test_polybench_rtl.py` runs every file at MINI_DATASET as is."""

from __future__ import annotations

import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_runner import lint_verilator
from sim.rtl_sim import run_rtl, write_design
from tests.kernels import POLYBENCH, POLYBENCH_KERNELS

INCLUDE = (str(POLYBENCH / "utilities"),)
DEFINES = ("MINI_DATASET", "POLYBENCH_USE_SCALAR_LB")
SMALLER = {"floyd-warshall": ({"N": 10}, {}), "seidel-2d": ({}, {"tsteps": 2}), "jacobi-2d": ({}, {"tsteps": 2})}


def _check(path, defines, params, rtl_cache, tmp_path) -> None:
    res = run(Options(str(path), include_dirs=INCLUDE, defines=defines, params=params, tile="auto"))
    design = generate(res.network)
    rtl_files, _ = write_design(design, tmp_path / "lint")
    assert lint_verilator(rtl_files, design.top) == []
    inputs = random_inputs(res.program, 1)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel, defines=defines).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path / "run", stall=0.3, seed=1, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    mism = compare(expected, out.outputs)
    assert not mism, f"{len(mism)} mismatches, first {mism[0]}"


# the others under `-m slow` (a minute each); atax's RTL runs in test_throughput's float kernels
DEFAULT = {"floyd-warshall"}  # trisolv (52 s) runs tiled in Verilator in test_throughput.py


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=() if p.stem in DEFAULT else pytest.mark.slow)
                                  for p in POLYBENCH_KERNELS])
def test_polybench_style_kernel_in_rtl(path, rtl_cache, tmp_path):
    macros, params = SMALLER.get(path.stem, ({}, {}))  # tsteps otherwise from the call site in main
    _check(path, DEFINES + tuple(f"{k}={v}" for k, v in macros.items()), params, rtl_cache, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in POLYBENCH_KERNELS if p.stem in SMALLER],
                         ids=[p.stem for p in POLYBENCH_KERNELS if p.stem in SMALLER])
def test_polybench_style_kernel_in_rtl_at_mini_dataset(path, request, rtl_cache, tmp_path):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("MINI_DATASET as is takes minutes: select it with `pytest -m slow`")
    _check(path, DEFINES, {}, rtl_cache, tmp_path)


def test_every_polybench_style_kernel_is_covered():
    assert {p.stem for p in POLYBENCH_KERNELS} >= {"gemm", "atax", "cholesky", "trisolv", "jacobi-2d", "seidel-2d",
                                                   "floyd-warshall", "gesummv"}
