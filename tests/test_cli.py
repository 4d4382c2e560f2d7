"""The command-line contract: analyze on PolyBench-style files, JSON shape, --dump-after, --version."""

from __future__ import annotations

import json

import pytest

from hls.cli import main
from hls.pipeline import PASSES
from tests.kernels import POLYBENCH_FLAGS, POLYBENCH_KERNELS, ROOT, ids


@pytest.mark.parametrize("path", POLYBENCH_KERNELS, ids=ids(POLYBENCH_KERNELS))
def test_analyze_polybench_lookalike_json(path, capsys):
    assert main(["analyze", str(path), *POLYBENCH_FLAGS, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("statements", "arrays", "params", "dependences", "live_in", "live_out"):
        assert key in d
    assert d["kernel"] == "kernel_" + path.stem.replace("-", "_")
    assert d["statements"] and d["live_out"]
    # Only the kernel's own arguments, never main's or init_array's locals.
    assert {a["name"] for a in d["arrays"] if a["kind"] == "argument"} <= {"A", "B", "C", "x", "y", "b", "L",
                                                                           "tmp", "path"}
    for s in d["statements"]:
        assert s["loc"].startswith(str(path)) and s["domain"].startswith("[")


def test_analyze_text_names_dependences(capsys):
    assert main(["analyze", str(ROOT / "examples" / "jacobi-1d.c")]) == 0
    out = capsys.readouterr().out
    assert "dependences (source -> sink):" in out and "live-in reads" in out and "S0 -> S1.r" in out


@pytest.mark.parametrize("pass_name", PASSES)
def test_dump_after_each_pass(pass_name, capsys, tmp_path):
    assert main(["compile", str(ROOT / "examples" / "trisolv.c"), "--param", "n=8", "--dump-after", pass_name,
                 "-o", str(tmp_path / "o"), "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"// IR after pass `{pass_name}`")
    assert len(out.splitlines()) > 3


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("dpn-synth ")


def test_unknown_dump_pass_is_usage_error(capsys, tmp_path):
    assert main(["compile", str(ROOT / "examples" / "gemm.c"), "--dump-after", "nope", "-o", str(tmp_path)]) == 2
    assert "unknown pass" in capsys.readouterr().err


def test_parameters_from_the_call_site(tmp_path, capsys):
    """PolyBench's main calls kernel_jacobi_2d(tsteps, n, ...) with `int tsteps = TSTEPS;`: used as defaults.
    Untiled (`--tile none`): the parameters are bound before any tiling, and the tiled compile took 40 s."""
    path = ROOT / "tests" / "polybench_like" / "stencils" / "jacobi-2d" / "jacobi-2d.c"
    assert main(["compile", str(path), *POLYBENCH_FLAGS, "--tile", "none", "-o", str(tmp_path / "o"), "-q"]) == 0
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert rep["params"] == {"tsteps": 20, "n": 30}  # MINI_DATASET of the look-alike header
    assert any("taken from the call to kernel_jacobi_2d" in n for n in rep["notes"])
    assert main(["compile", str(path), *POLYBENCH_FLAGS, "--tile", "none", "--param", "tsteps=2",
                 "-o", str(tmp_path / "p"), "-q"]) == 0
    assert json.loads((tmp_path / "p" / "report.json").read_text())["params"]["tsteps"] == 2


def test_compile_tiles_by_default(tmp_path):
    """`--tile auto` is the default: the same network as asking for it, and `--tile none` the untiled one."""
    kernel = str(ROOT / "examples" / "gemm-int.c")
    reports = {}
    for name, extra in (("default", []), ("auto", ["--tile", "auto"]), ("none", ["--tile", "none"])):
        assert main(["compile", kernel, *extra, "-o", str(tmp_path / name), "-q"]) == 0
        reports[name] = json.loads((tmp_path / name / "report.json").read_text())
    assert reports["default"]["tiling"] == reports["auto"]["tiling"]
    assert reports["default"]["summary"] == reports["auto"]["summary"]
    assert reports["auto"]["tiling"]["sizes"] and reports["none"]["tiling"]["description"] == "none"
    assert (tmp_path / "default" / "dpn.json").read_text() == (tmp_path / "auto" / "dpn.json").read_text()
    for rep in reports.values():  # iterations per cycle and compute process: at most the compute roof
        s = rep["summary"]
        assert s["efficiency"] == round(s["statement_instances"] / (s["estimated_cycles"] * s["compute_processes"]), 4)
        assert 0 < s["efficiency"] <= 1


def test_a_verilog_run_is_stopped_at_a_multiple_of_the_models_cycles():
    """A livelocked design (handshakes that never finish the run) stops at 20x the cycle model's
    estimate, slowed by the memory's stalls, not after 10 M cycles."""
    from hls.cli import RTL_CYCLES_OVER_ESTIMATE, rtl_cycle_limit

    assert rtl_cycle_limit(None, 0.0) == 10_000_000
    assert rtl_cycle_limit(1_000, 0.0) == 200_000
    assert rtl_cycle_limit(100_000, 0.0) == RTL_CYCLES_OVER_ESTIMATE * 100_000
    assert rtl_cycle_limit(100_000, 0.5) == 2 * RTL_CYCLES_OVER_ESTIMATE * 100_000
    assert rtl_cycle_limit(10**9, 0.0) == 10_000_000
