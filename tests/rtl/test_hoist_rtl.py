"""Hoisted scalars in hardware: top input ports `arg_h<k>` fed with gcc's values, bit-exact under
Verilator with back-pressure; a wrong port value is caught; the standalone testbench recomputes the
values at run time from the shipped C (`tb/hoisted.c`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.hoisted import write_host_files
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hoisted-exp.c"
EXAMPLE_F = ROOT / "examples" / "hoisted-powf.c"


def test_ports_and_bit_exact_and_wrong_value_detected(rtl_cache, tmp_path):
    res = run(Options(str(EXAMPLE), tile="auto"))
    design = generate(res.network)
    ports = {s["port"]: s["type"] for s in design.interface["scalars"]}
    assert ports == {"arg_alpha": "double", "arg_beta": "double", "arg_h0": "double", "arg_h1": "double"}
    assert "arg_h0" in design.rtl[f"{design.top}.v"]
    inputs = random_inputs(res.program, 2)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path / "ok", stall=0.3, seed=2, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)
    # the same design fed a slightly wrong exp(-alpha) no longer matches gcc
    wrong = {**inputs, "h0": inputs["h0"] * (1 + 2.0 ** -20), "h1": inputs["h1"]}
    bad = run_rtl(design, wrong, tmp_path / "bad", stall=0.3, seed=2, cache_root=rtl_cache)
    assert bad.completed and compare(expected, bad.outputs)


@pytest.mark.parametrize("path", [EXAMPLE, pytest.param(EXAMPLE_F, marks=pytest.mark.slow)], ids=lambda p: p.stem)
def test_cli_sim_rtl_tile_auto_stall(path, capsys):
    rc, out, err = run_cli(["sim", str(path), "--tile", "auto", "--stall", "0.3"], capsys)
    assert rc == 0, out + err
    assert "PASS" in out and " 0 mismatches" in out


@pytest.mark.slow  # 40-60 s: the standalone testbench builds its own Verilator model
def test_standalone_testbench_recomputes_hoisted_ports(tmp_path, capsys):
    outdir = tmp_path / "out"
    rc, _, err = run_cli(["compile", str(EXAMPLE_F), "-o", str(outdir), "-q"], capsys)
    assert rc == 0, err
    report = (outdir / "report.md").read_text()
    assert "`expf(-alpha)`" in report and "computed once on the host before start: top input arg_h0" in report
    cfg_file = outdir / "tb" / "config.json"
    cfg = json.loads(cfg_file.read_text())
    assert {f"arg_h{k}" for k in range(5)} <= set(cfg["test"]["scalars"])
    # `compile` does not write the host C yet (hls/cli.py would call write_host_files); do it here
    res = run(Options(str(EXAMPLE_F)))
    write_host_files(res.program, outdir / "tb")
    cfg["test"]["scalars"]["arg_h0"] ^= 1 << 20  # run.py must recompute it with gcc, not trust the file
    cfg_file.write_text(json.dumps(cfg))
    proc = subprocess.run([sys.executable, str(outdir / "tb" / "run.py"), "--stall", "0.3"], capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "PASS" in proc.stdout and " 0 mismatching words" in proc.stdout
