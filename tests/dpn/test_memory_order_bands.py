"""`--memory-order band`: a tile band's first load (store) waits for the last store (load) of the
latest earlier band it depends on, one token per band, where `element` keeps a token per element
alive from one band to a later one (about the whole array at large sizes)."""

from __future__ import annotations

import json

import islpy as isl
import pytest

from hls.dpn import partition
from hls.dpn.partition import build_network, memory_order
from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from tests.kernels import ROOT, run_cli

JACOBI = ROOT / "examples" / "jacobi-2d.c"
SEIDEL = ROOT / "examples" / "seidel-2d.c"
FDTD = ROOT / "examples" / "fdtd-2d.c"
#: local words that cut each kernel at its own size into several skewed tile bands
CASES = [(JACOBI, 256), (SEIDEL, 256), (FDTD, 512)]
IDS = ["jacobi-2d", "seidel-2d", "fdtd-2d"]


def _by_pair(rels) -> dict:
    out: dict = {}
    for source, sink, rel, _array in rels:
        out[(source, sink)] = rel if (source, sink) not in out else out[(source, sink)].union(rel)
    return out


def _later_or_same(schedule: isl.Map) -> isl.Map:
    """{ x -> x' : x' runs at or after x } on one process."""
    times = schedule.range()
    return schedule.apply_range(times.lex_le_set(times)).apply_range(schedule.reverse())


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def orders(request):
    path, words = request.param
    res = run(Options(str(path), tile="auto", local_words=words))
    program, tiling = res.program, res.network.tiling
    element = build_network(program, tiling, memory_order_mode="element")
    band = build_network(program, tiling, memory_order_mode="band")
    return element, band, _by_pair(memory_order(element, program, "element")), \
        _by_pair(memory_order(band, program, "band"))


def test_every_element_wait_is_covered_by_a_band_wait(orders):
    """For each exact wait x -> y (y needs x's access done), the band order has a wait x' -> y' with x'
    at or after x in the source unit and y' at or before y in the sink unit: y still runs after x."""
    element, band, exact, coarse = orders
    assert exact and set(coarse) == set(exact)
    for (source, sink), rel in exact.items():
        src, snk = band.process(source), band.process(sink)
        cover = _later_or_same(src.schedule).apply_range(coarse[(source, sink)]) \
            .apply_range(_later_or_same(snk.schedule))
        assert rel.is_subset(cover), (source, sink)


def test_band_waits_point_back_in_the_global_order_one_source_each(orders):
    """A wait whose source ran later in the global order could close a cycle; a sink iteration with
    two sources would need two tokens on its one order port."""
    _element, band, _exact, coarse = orders
    for (source, sink), rel in coarse.items():
        times = band.process(source).schedule.range()
        forward = band.process(source).schedule.reverse().apply_range(rel).apply_range(band.process(sink).schedule)
        assert forward.intersect(times.lex_ge_set(forward.range())).is_empty(), (source, sink)
        assert rel.reverse().is_single_valued(), (source, sink)


def test_band_order_carries_fewer_tokens(orders):
    _element, _band, exact, coarse = orders
    tokens = {k: iu.card(rel.wrap()) for k, rel in coarse.items()}
    exact_tokens = {k: iu.card(rel.wrap()) for k, rel in exact.items()}
    assert all(tokens[k] <= exact_tokens[k] for k in exact_tokens)
    assert sum(tokens.values()) < sum(exact_tokens.values())


@pytest.mark.parametrize("path,words", CASES, ids=IDS)
def test_band_memory_order_network_matches_gcc_in_any_interleaving(path, words, capsys):
    for seed in (0, 1, 2):
        code, out, _ = run_cli(["sim", str(path), "--tile", "auto", "--local-words", str(words),
                                "--memory-order", "band", "--dpn-only", "--seed", str(seed), "--json"], capsys)
        assert code == 0, out
        res = json.loads(out)
        assert res["ok"] and res["mismatches"] == 0


def test_band_memory_order_rtl_matches_gcc(capsys):
    code, out, _ = run_cli(["sim", str(JACOBI), "--tile", "auto", "--local-words", "256",
                            "--memory-order", "band", "--stall", "0.3", "--json"], capsys)
    assert code == 0, out
    res = json.loads(out)
    assert res["ok"] and res["mismatches"] == 0


def test_auto_orders_by_band_above_its_array_size(monkeypatch):
    res = run(Options(str(JACOBI), tile="auto", local_words=256))
    program, tiling = res.program, res.network.tiling

    def order_channels(net):
        return sorted((c.producer, c.consumer, str(c.relation)) for c in net.channels if c.role == "order")

    auto = build_network(program, tiling)
    assert auto.partition[5] == "auto"
    assert order_channels(auto) == order_channels(build_network(program, tiling, memory_order_mode="element"))
    monkeypatch.setattr(partition, "BAND_ORDER_ABOVE", 0)
    auto = build_network(program, tiling)
    band = build_network(program, tiling, memory_order_mode="band")
    assert order_channels(auto) == order_channels(band) != order_channels(res.network)


def test_an_unknown_memory_order_is_a_usage_error(capsys):
    code, _, err = run_cli(["compile", str(JACOBI), "--memory-order", "tile", "-o", "/dev/null"], capsys)
    assert code == 2 and "--memory-order" in err
