"""Wide read ports (`--mem-width`): which arrays get one, which requests fetch a line, the roofline
they give, and the errors of a bad width (`tests/rtl/test_wide_ports.py` runs the RTL)."""

from __future__ import annotations

import json

import pytest

from hls.dpn.memports import (LINE_SLOTS, check_mem_latency, check_mem_width, line_slots, new_lines, row_major,
                              words_per_beat)
from hls.metrics import memory_words_per_cycle, traffic
from hls.pipeline import Options, run
from tests.kernels import ROOT, example_params, run_cli

GEMV = ROOT / "examples" / "gemv-float.c"
SIZES = [a for k, v in example_params(GEMV).items() for a in ("--param", f"{k}={v}")]


def _lines_touched(points, shape, words):
    return [row_major(p, shape) // words for p in points]


def test_a_row_walk_fetches_each_line_once():
    shape = (3, 10)
    points = [(i, j) for i in range(3) for j in range(10)]
    flags = new_lines(points, shape, 4)
    lines = _lines_touched(points, shape, 4)
    # a request fetches exactly when its line differs from the one before (a row walk never comes back)
    assert flags == [k == 0 or lines[k] != lines[k - 1] for k in range(len(points))]
    assert sum(flags) == len(set(lines)) == 8  # 30 words from word 0: lines 0..7


def test_a_column_walk_comes_back_to_kept_lines():
    rows, cols, words = 20, 16, 8
    points = [(i, j) for j in range(cols) for i in range(rows)]
    flags = new_lines(points, (rows, cols), words)
    # each row's line is fetched at its first column and kept for the next seven: 20 rows x 2 lines
    assert sum(flags) == rows * cols // words
    assert all(flags[:rows]) and not any(flags[rows:rows * words])


def test_a_walk_over_more_rows_than_slots_fetches_again():
    rows, words = LINE_SLOTS + 1, 4
    points = [(i, j) for j in range(2) for i in range(rows)]
    flags = new_lines(points, (rows, words), words)
    # first in, first out: the 33rd row's line replaced row 0's, whose line the next column needs, ...
    assert flags == [True] * (2 * rows)
    assert line_slots(10, 4) == 3 and line_slots(10_000, 16) == LINE_SLOTS


@pytest.mark.parametrize("bits,ok", [(0, True), (64, True), (512, True), (1024, True), (100, False), (2048, False),
                                     (4, False)])
def test_mem_width_values(bits, ok):
    assert (check_mem_width(bits) is None) == ok


@pytest.mark.parametrize("cycles,ok", [(1, True), (4, True), (20, True), (250, True), (0, False), (251, False)])
def test_mem_latency_values(cycles, ok):
    assert (check_mem_latency(cycles) is None) == ok


def test_only_arrays_never_written_get_a_wide_port():
    net = run(Options(str(GEMV), params=example_params(GEMV), tile="auto", parallel=4, mem_width=512)).network
    assert net.mem_width == 512
    assert words_per_beat(net) == {"A": 16, "x": 16}  # y is read and written: one word per beat
    rates = memory_words_per_cycle(net)
    # four load units each of A and x share their port: four words a cycle; y's units (one, or one per
    # slab) a word each, and so its store units
    units = {(kind, sum(p.kind.value == kind and p.array == "y" for p in net.processes)) for kind in ("load", "store")}
    assert rates[("A", "in")] == 4 and rates[("x", "in")] == 4
    assert (rates[("y", "in")], rates[("y", "out")]) == (dict(units)["load"], dict(units)["store"])
    narrow = run(Options(str(GEMV), params=example_params(GEMV), tile="auto", parallel=4)).network
    assert words_per_beat(narrow) == {}
    # 64-bit words of a 64-bit port: nothing to gain
    assert words_per_beat(run(Options(str(ROOT / "examples" / "horner-u64.c"),
                                      params=example_params(ROOT / "examples" / "horner-u64.c"), tile="auto",
                                      mem_width=64)).network) == {}


def test_the_memory_roof_is_the_busiest_arrays():
    """gemv at --parallel 1: A's 320 words through its one load unit bound the run, whatever the other
    arrays' channels could move (the old roof divided all compulsory words by all channels)."""
    res = run(Options(str(GEMV), params=example_params(GEMV), tile="auto"))
    t = traffic(res.program, res.network)
    a_words = example_params(GEMV)["m"] * example_params(GEMV)["n"]
    assert t["roofline_cycles"] >= a_words
    assert t["roofline_cycles"] >= -(-t["compulsory_words"] // t["memory_words_per_cycle"])


def test_bad_mem_width_is_a_usage_error(capsys):
    code, _, err = run_cli(["sim", str(GEMV), *SIZES, "--mem-width", "100", "--dpn-only"], capsys)
    assert code == 2 and "--mem-width" in err
    code, _, err = run_cli(["sim", str(GEMV), *SIZES, "--mem-latency", "0", "--dpn-only"], capsys)
    assert code == 2 and "--mem-latency" in err


def test_the_network_keeps_its_memory_in_dpn_json(tmp_path, capsys):
    code, out, _ = run_cli(["compile", str(GEMV), *SIZES, "--mem-width", "256", "--mem-latency", "20", "-o",
                            str(tmp_path / "o")], capsys)
    assert code == 0, out
    data = json.loads((tmp_path / "o" / "dpn.json").read_text())
    assert data["mem_width"] == 256 and data["mem_latency"] == 20
    # the standalone testbench runs its memories at the latency the design was built for
    assert json.loads((tmp_path / "o" / "tb" / "config.json").read_text())["memory_latency"] == 20
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["latency"]["memory_latency"] == 20
