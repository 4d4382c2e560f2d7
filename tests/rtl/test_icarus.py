"""`dpn-synth sim --simulator icarus`: the generated design and testbench under Icarus Verilog + cocotb.

Icarus is an optional extra: the simulation tests skip (with the reason) when `iverilog` is absent, and
then `sim --simulator icarus` must fail cleanly (exit 2, no traceback), which is tested everywhere.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hls.cli import main
from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.inputs import random_inputs
from sim.rtl_sim import from_hex, run_rtl
from tests.conftest import requires_iverilog
from tests.kernels import ROOT, cli_args, example_params

INTEGER = ROOT / "examples" / "fir-int.c"
DOUBLE = ROOT / "examples" / "jacobi-1d.c"


@pytest.fixture
def cache_in_session(rtl_cache, monkeypatch):
    """Builds made through the command line go to the session's cache, not the user's."""
    import sim.rtl_runner

    monkeypatch.setattr(sim.rtl_runner, "default_cache_root", lambda: rtl_cache)
    return rtl_cache


@requires_iverilog
@pytest.mark.parametrize("path", [INTEGER, DOUBLE], ids=["fir-int", "jacobi-1d"])
def test_icarus_matches_gcc(path, cache_in_session, capsys):
    """The same path as `dpn-synth sim K.c --simulator icarus --json`: bit-exact against gcc."""
    rc = main(["sim", str(path), *cli_args(path), "--tile", "none", "--simulator", "icarus", "--seed", "1", "--json"])
    out = capsys.readouterr()
    d = json.loads(out.out)
    assert rc == 0, out.err[-3000:]
    assert d["ok"] is True and d["mismatches"] == 0 and d["deadlock"] is None
    assert d["simulator"] == "icarus" and d["cycles"] > 0


@requires_iverilog
@pytest.mark.parametrize("seed,stall", [(0, 0.0), (3, 0.3)])
def test_verilator_and_icarus_agree_cycle_for_cycle(seed, stall, rtl_cache, tmp_path):
    """The design and the memory models are deterministic (stalls come from a seeded LFSR in the
    Verilog), and the testbench samples mid-cycle, so both simulators count the same cycles."""
    res = run(Options(str(DOUBLE), params=example_params(DOUBLE)))
    design = generate(res.network)
    inputs = random_inputs(res.program, seed)
    runs = {sim: run_rtl(design, inputs, tmp_path / sim, stall=stall, seed=seed, cache_root=rtl_cache, simulator=sim)
            for sim in ("verilator", "icarus")}
    for sim, r in runs.items():
        assert r.completed and r.simulator == sim, r.problem or r.log[-2000:]
    assert runs["verilator"].cycles == runs["icarus"].cycles > 0
    for name, value in runs["verilator"].outputs.items():
        assert np.array_equal(value.view(np.uint64), runs["icarus"].outputs[name].view(np.uint64)), name


def test_icarus_missing_is_a_usage_error(monkeypatch, capsys):
    import hls.toolchain

    monkeypatch.setattr(hls.toolchain, "find_iverilog", lambda: None)
    assert main(["sim", str(DOUBLE), "--simulator", "icarus"]) == 2
    err = capsys.readouterr().err
    assert "error: --simulator icarus needs Icarus Verilog" in err and "iverilog" in err
    assert "Traceback" not in err


def test_memory_dumps_with_address_comments_are_read():
    """Icarus's $writememh marks every 16th word with `// 0x...`; those are not data words."""
    words = [f"{k:08x}" for k in range(20)]
    text = "// 0x00000000\n" + "\n".join(words[:16]) + "\n// 0x00000010\n" + "\n".join(words[16:]) + "\n"
    got = from_hex(text, np.dtype(np.int32), (4, 5))
    assert got.reshape(-1).tolist() == list(range(20))
    assert from_hex("xxxxxxxx\n00000001\n", np.dtype(np.int32), (2,)).tolist() == [0, 1]
