"""Generated Verilog for every example kernel the RTL back end covers: lint-clean, and bit-exact with
gcc under Verilator, with and without random back-pressure."""

from __future__ import annotations

import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.poly.expr import walk
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_runner import lint_verilator
from sim.rtl_sim import run_rtl, write_design
from tests.kernels import EXAMPLES, RTL_SWEEP, example_params, sweep


def _is_integer(path) -> bool:
    res = run(Options(str(path), params=example_params(path)), until="dataflow")
    return not any(e.type.is_float for s in res.program.statements for e in walk(s.expr))


INTEGER = [p for p in EXAMPLES if _is_integer(p)]


def _compiled(path):
    return run(Options(str(path), params=example_params(path)))


@pytest.mark.parametrize("tile", ["none", "auto"])
@pytest.mark.parametrize("path", sweep(INTEGER, RTL_SWEEP))
def test_rtl_matches_gcc(path, tile, rtl_cache, tmp_path):
    res = run(Options(str(path), params=example_params(path), tile=tile))
    design = generate(res.network)
    rtl_files, _ = write_design(design, tmp_path / "lint")
    assert lint_verilator(rtl_files, design.top) == []
    runs = ((0, 0.0), (1, 0.3)) if tile == "none" else ((2, 0.3),)
    for seed, stall in runs:
        inputs = random_inputs(res.program, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        out = run_rtl(design, inputs, tmp_path / f"run{seed}", stall=stall, seed=seed, cache_root=rtl_cache)
        assert out.completed, out.problem or out.log[-2000:]
        mism = compare(expected, out.outputs)
        assert not mism, f"{len(mism)} mismatches, first {mism[0]}"
        assert out.cycles > 0


def test_integer_suite_is_not_empty():
    assert len(INTEGER) >= 8, [p.stem for p in INTEGER]


def test_rtl_is_deterministic():
    res = _compiled(INTEGER[0])
    a, b = generate(res.network), generate(_compiled(INTEGER[0]).network)
    assert a.rtl == b.rtl and a.tb == b.tb


@pytest.mark.slow  # 25 s; tests/rtl/test_rtl_deadlock.py reports undersized channels in Verilator
def test_rtl_deadlock_is_reported(rtl_cache, tmp_path):
    """A design whose channel is one word too small under the schedule must stop, not hang."""
    path = next(p for p in INTEGER if p.stem == "seidel-int")
    res = _compiled(path)
    chans = [c for c in res.network.channels if c.kind.value == "fifo" and c.depth > 2]
    assert chans
    from dataclasses import replace

    small = res.network.with_channels([replace(c, depth=1) if c.kind.value == "fifo" else c
                                       for c in res.network.channels], res.network.stage)
    design = generate(small)
    inputs = random_inputs(res.program, 0)
    out = run_rtl(design, inputs, tmp_path, cache_root=rtl_cache)
    assert not out.completed and out.problem and "deadlock" in out.problem
    assert out.unfinished and all(u in {p.name for p in res.network.processes} for u in out.unfinished)
    waits = [line for line in out.problem.splitlines()[1:] if " waits " in line]
    assert waits and all(" at iteration [" in line for line in waits), out.problem  # load units too


@pytest.mark.slow  # 68 s; byte-identical trees: tests/test_determinism.py; tb/run.py alone:
# test_hoist_rtl.py::test_standalone_testbench_recomputes_hoisted_ports
def test_compile_output_tree_is_deterministic_and_tb_runs(tmp_path):
    """Two compiles give byte-identical trees; the generated testbench runs alone and passes."""
    import subprocess
    import sys

    from hls.cli import main

    src = next(p for p in INTEGER if p.stem == "mixed-width")
    for name in ("a", "b"):
        assert main(["compile", str(src), "-o", str(tmp_path / name), "-q"]) == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and any(str(f).startswith("rtl/") for f in files_a)
    for f in files_a:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    proc = subprocess.run([sys.executable, str(tmp_path / "a" / "tb" / "run.py"), "--stall", "0.2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "PASS:" in proc.stdout and " 0 mismatching words" in proc.stdout
