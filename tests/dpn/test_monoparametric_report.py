"""Closed forms in the tile scale b in the compile report (`hls/report.py`, `monoparametric_report`).

The formulas are fitted by re-compiling along the family `N = N_b.b + N_l`, so the tests compare them
with figures computed another way: the words the DPN simulator moves between memory and the network,
and the sizes of the compiled channels, both at the compiled b and at a b outside the sampled range
(a separate compile with the family's sizes passed as -D)."""

from __future__ import annotations

import json
from functools import lru_cache

import islpy as isl
import pytest

from hls.cli import main
from hls.dpn import monoparametric as mp
from hls.dpn.network import ChannelKind
from hls.dpn.simulate import simulate
from hls.pipeline import Options, run
from hls.report import _eval_poly, monoparametric_report, write_reports
from sim.inputs import random_inputs
from tests.kernels import ROOT


def _path(name: str) -> str:
    return str(ROOT / "examples" / f"{name}.c")


@lru_cache(maxsize=None)
def _compiled(name: str, tile: str, defines: tuple = (), point_order: str = "latency"):
    """One process per statement (`--merge none`): which processes the cycle model merges or cuts into
    slabs may change along the family, the closed forms are about the tiling."""
    res = run(Options(_path(name), defines=defines, tile=tile, point_order=point_order, merge="none"))
    return res


@lru_cache(maxsize=None)
def _report(name: str, tile: str, point_order: str = "latency") -> dict:
    res = _compiled(name, tile, (), point_order)
    return monoparametric_report(res.program, res.network)


# The point order the cycle model picks may change with the model; entries whose channel sizes
# depend on it name the order they were derived for.
POINT_ORDER = {("gemm-int", "8,8"): "original", ("jacobi-1d-int", "4,4"): "inner"}


def _simulated_words(res) -> tuple[int, int]:
    """Words loaded / stored as the simulator counts them (not from the process domains)."""
    out = simulate(res.network, random_inputs(res.program, 0), seed=0, tables=res.tables)
    assert out.deadlock is None
    return out.words_loaded, out.words_stored


def _sized(c) -> int:
    """The size-channels figure: `deepen` may grow a FIFO's depth afterwards, never `max_live`."""
    return c.depth if c.kind == ChannelKind.BUFFER else c.max_live


# (kernel, tile) -> (family, words_loaded, words_stored, {channel: size}) as derived from the runs and
# checked by hand on gemm-int: B is kept for a whole column band (NK x b = 2b^2 words), the partial
# sums of C travel along k inside a tile (b words).
EXPECTED = {
    ("gemm-int", "4,4"): ({"NI": "2*b + 2", "NJ": "3*b", "NK": "2*b"}, "36*b^2 + 18*b", "6*b^2 + 6*b",
                          {"c2": "2*b^2", "c3": "b", "c4": "b", "c0": "1"}),
    ("gemm-int", "8,8"): ({"NI": "b + 2", "NJ": "b + 4", "NK": "b"}, "5*b^2 + 18*b + 8", "b^2 + 6*b + 8",
                          {"c2": "b^2", "c3": "b", "c4": "b"}),
    ("mvt", "4,4"): ({"N": "6*b"}, "72*b^2 + 84*b", "12*b", {"c3": "b", "c7": "b", "c0": "1"}),
    ("mvt", "8,8"): ({"N": "3*b"}, "18*b^2 + 24*b", "6*b", {"c3": "b", "c7": "b"}),
    ("fir-int", "4"): ({"N": "16*b", "TAPS": "2*b"}, "80*b - 16", "48*b", {"c0": "b - 1", "c2": "b"}),
    ("fir-int", "8"): ({"N": "8*b", "TAPS": "b"}, "24*b - 8", "24*b", {"c0": "b - 1", "c2": "b"}),
    ("jacobi-1d-int", "4,4"): ({"T": "b + 2", "N": "7*b + 2"}, "14*b + 8", "21*b",
                               {"c0": "2*b + 2", "c1_0": "2*b", "c1_1": "b", "c13": "7*b"}),
    ("jacobi-1d-int", "8,8"): ({"N": "3*b + 6"}, "3*b + 8", "6*b + 8", {"c1_1": "b - 2", "c3_1": "b - 1"}),
}


@pytest.mark.parametrize("name,tile", sorted(EXPECTED), ids=[f"{n}-{t}" for n, t in sorted(EXPECTED)])
def test_closed_forms_at_the_compiled_b(name, tile):
    family, loaded, stored, chans = EXPECTED[(name, tile)]
    order = POINT_ORDER.get((name, tile), "latency")
    m = _report(name, tile, order)
    assert m["available"], m
    b = int(tile.split(",")[0])
    assert m["b"] == b and m["ratios"] == [1] * len(m["cut_hyperplanes"])
    assert m["family"] == family
    assert (m["words_loaded"], m["words_stored"]) == (loaded, stored)
    res = _compiled(name, tile, (), order)
    assert (_eval_poly(loaded, b), _eval_poly(stored, b)) == _simulated_words(res)
    by_name = {c.name: c for c in res.network.channels}
    for ch, formula in chans.items():
        assert m["channel_sizes"][ch]["size"] == formula
    for ch, entry in m["channel_sizes"].items():
        if entry["size"] is not None:
            assert _eval_poly(entry["size"], b) == _sized(by_name[ch]), ch
    total = sum(_sized(c) + (c.kind == ChannelKind.FIFO_MULT) for c in res.network.channels)
    if m["sized_channel_words"] is not None:
        assert _eval_poly(m["sized_channel_words"], b) == total


@pytest.mark.parametrize("name,tile,b", [("gemm-int", "4,4", 9), ("mvt", "4,4", 9), ("fir-int", "4", 11),
                                         ("jacobi-1d-int", "4,4", 9)])
def test_closed_forms_predict_a_larger_b(name, tile, b):
    """The formula from the compile at b = 4, evaluated beyond every sampled b, against a separate
    compile of the family member (sizes as -D, tiles b x b, the same point order)."""
    m = _report(name, tile, POINT_ORDER.get((name, tile), "latency"))
    assert max(int(x) for x in m["valid_for"].split("b = ")[1].split(",")[0].split("..")) < b
    sizes = {k: _eval_poly(f, b) for k, f in m["family"].items()}
    order = _compiled(name, tile, (), POINT_ORDER.get((name, tile), "latency")).network.tiling.point_order
    res = _compiled(name, ",".join([str(b)] * len(tile.split(","))), tuple(f"{k}={v}" for k, v in sizes.items()),
                    order)
    assert (_eval_poly(m["words_loaded"], b), _eval_poly(m["words_stored"], b)) == _simulated_words(res)
    by_name = {c.name: c for c in res.network.channels}
    assert set(by_name) == set(m["channel_sizes"])
    for ch, entry in m["channel_sizes"].items():
        if entry["size"] is None:  # no formula is fine, with its reason; a wrong one is not
            assert f"channel {ch}" in m["not_available"], ch
            continue
        assert _eval_poly(entry["size"], b) == _sized(by_name[ch]), ch


def test_per_band_load_is_the_symbolic_tile_footprint():
    """gemm-int with b x b tiles on (i, j) and k whole (NK = 2b, ratio 2): a band is one tile, and the
    words it loads are the LOAD footprints of A, B and C built with Theorems 2.8-2.9, counted in b."""
    m = _report("gemm-int", "4,4")
    D = isl.Set("[NI, NJ, NK] -> { S1[i, j, k] : 0 <= i < NI and 0 <= j < NJ and 0 <= k < NK }")
    family = {"NI_b": 2, "NI_l": 2, "NJ_b": 3, "NJ_l": 0, "NK_b": 2, "NK_l": 0}  # m["family"] in tiled form
    assert m["family"] == {"NI": "2*b + 2", "NJ": "3*b", "NK": "2*b"}
    total = 0
    for access in ("A[i, k]", "B[k, j]", "C[i, j]"):
        fp = mp.tile_footprint(D, isl.Map(f"[NI, NJ, NK] -> {{ S1[i, j, k] -> {access} }}"), [1, 1, 2], [1, 1], [1, 1, 0])
        total += mp.card_in_b(fp, family, max_degree=2, b_min=3)(5)
    assert m["per_band_load"] == "5*b^2" and _eval_poly(m["per_band_load"], 5) == total


def test_unfittable_quantities_are_not_reported():
    """jacobi-1d-int with 8x8 tiles: only the skewed space hyperplane is cut (T = 6 < 8) and the
    buffer c0 is not a polynomial in b along N = 3b + 6; it is listed with the reason, not guessed."""
    m = _report("jacobi-1d-int", "8,8")
    assert m["cut_hyperplanes"] == [2]
    assert m["channel_sizes"]["c0"]["size"] is None
    assert "not a polynomial" in m["not_available"]["channel c0"]
    assert m["sized_channel_words"] is None and "sized_channel_words" in m["not_available"]


def test_no_closed_form_without_a_cut_hyperplane():
    res = _compiled("gemm-int", "auto")  # everything fits one band: no tile size to scale
    m = monoparametric_report(res.program, res.network)
    assert m == {"available": False, "reason": m["reason"]} and "no hyperplane is cut" in m["reason"]


def test_wrong_defaults_are_caught_at_the_compiled_b():
    """Compiled with -D sizes the report is not told about: re-compiling from the source defaults
    cannot reproduce the network, so no formula is given; with the options it is."""
    res = _compiled("mvt", "4,4", ("N=25",))
    m = monoparametric_report(res.program, res.network)
    assert not m["available"] and "does not reproduce the compiled network" in m["reason"], m
    m = monoparametric_report(res.program, res.network, options=Options(_path("mvt"), defines=("N=25",)))
    assert m["available"] and m["family"] == {"N": "6*b + 1"}, m
    assert _eval_poly(m["words_loaded"], 4) == _simulated_words(res)[0]


def test_time_budget():
    res = _compiled("mvt", "4,4")
    m = monoparametric_report(res.program, res.network, budget_s=0)
    assert not m["available"] and "more than 0 s" in m["reason"]


def test_closed_forms_are_opt_in(tmp_path):
    res = _compiled("fir-int", "4")
    write_reports(tmp_path, res.program, res.network, {})
    assert "monoparametric" not in json.loads((tmp_path / "report.json").read_text())


def test_report_files(tmp_path):
    res = _compiled("fir-int", "4")
    write_reports(tmp_path, res.program, res.network, {}, closed_forms=True)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["monoparametric"]["words_loaded"] == "80*b - 16"
    md = (tmp_path / "report.md").read_text()
    assert "## Closed forms in the tile scale b" in md and "| words loaded | `80*b - 16` | 304 |" in md
    untiled = _compiled("fir-int", "none")
    write_reports(tmp_path, untiled.program, untiled.network, {}, closed_forms=True)
    assert "monoparametric" not in json.loads((tmp_path / "report.json").read_text())


def test_cli_compile_report(tmp_path):
    out = tmp_path / "out"
    assert main(["compile", _path("mvt"), "--tile", "4,4", "--closed-forms", "-o", str(out), "-q"]) == 0
    data = json.loads((out / "report.json").read_text())["monoparametric"]
    assert data["words_loaded"] == "72*b^2 + 84*b" and data["b"] == 4
    assert "## Closed forms in the tile scale b" in (out / "report.md").read_text()


def test_scaled_family_helpers():
    assert mp.split_value(30, 4) == (7, 2)
    assert str(mp.scaled(30, 4)) == "7*b + 2" and mp.scaled(30, 4)(4) == 30
    p, b_min = mp.fit_from(lambda b: b * b if b >= 3 else 0, 2, 1, 5)
    assert str(p) == "b^2" and b_min == 3
    with pytest.raises(mp.NotPolynomialError):
        mp.fit_from(lambda b: b // 2, 1, 1, 3)
