"""`--load-order`: a load unit of a tiled band reads each element just before its first read there
(`first-read`), or before the band's first instance in row-major order (`band-start`), whose control
walks a lexicographic order of few pieces where the first reads of a skewed stencil make hundreds."""

from __future__ import annotations

import json

import islpy as isl
import pytest

from hls.dpn import partition
from hls.dpn.network import ProcessKind
from hls.dpn.partition import build_network, memory_order, memory_order_exact
from hls.pipeline import Options, run
from hls.poly.lexorder import equal_before, schedule_successor
from hls.rtl.affine import drop_params
from hls.rtl.control import successor_pieces
from tests.kernels import ROOT, run_cli

JACOBI = ROOT / "examples" / "jacobi-2d.c"
HEAT = ROOT / "examples" / "heat-3d.c"
#: local words that cut jacobi-2d (T=6, N=20) into 2 x 3 skewed tiles; heat-3d at its size is one tile
WORDS = {JACOBI: 256, HEAT: 8192}


def _loads(net):
    return [p for p in net.processes if p.kind == ProcessKind.LOAD]


def _runs_before_its_band(load, other, band_dims: int) -> bool:
    """Whether every time of `load` precedes every time of `other` that shares its band coordinates."""
    later_or_same = load.schedule.range().lex_ge_set(other.schedule.range())
    return equal_before(later_or_same, band_dims).is_empty()


@pytest.mark.parametrize("path", [JACOBI, HEAT], ids=["jacobi-2d", "heat-3d"])
def test_band_start_loads_precede_every_instance_of_their_band(path):
    net = run(Options(str(path), tile="auto", local_words=WORDS[path], load_order="band-start")).network
    assert net.partition[4] == "band-start"
    loads = _loads(net)
    assert loads
    for load in loads:
        for other in net.processes:
            if other.kind != ProcessKind.LOAD:
                assert _runs_before_its_band(load, other, load.band_dims), (load.name, other.name)


@pytest.mark.parametrize("path", [JACOBI, HEAT], ids=["jacobi-2d", "heat-3d"])
def test_band_start_memory_order_is_the_last_writer_problems(path):
    res = run(Options(str(path), tile="auto", local_words=WORDS[path], load_order="band-start"))

    def by_pair(rels):
        out: dict = {}
        for source, sink, rel, _array in rels:
            out[(source, sink)] = rel if (source, sink) not in out else out[(source, sink)].union(rel)
        return out

    fast = by_pair(memory_order(res.network, res.program))
    exact = by_pair(memory_order_exact(res.network, res.program))
    assert set(fast) == set(exact) and fast
    for pair in fast:
        assert fast[pair].is_equal(exact[pair]), pair


def _networks(path, **orders):
    """The networks of one program and tiling (the compile's own), one per load order given."""
    res = run(Options(str(path), tile="auto", local_words=WORDS[path]))
    return res.program, {name: build_network(res.program, res.network.tiling, load_order=order)
                         for name, order in orders.items()}


def _pieces(program, proc) -> int:
    return len(successor_pieces(schedule_successor(drop_params(proc.schedule, program.param_values()))))


def test_band_start_walks_fewer_successor_pieces_than_the_first_reads():
    program, nets = _networks(HEAT, first="first-read", start="band-start")
    for load in _loads(nets["first"]):
        assert _pieces(program, nets["start"].process(load.name)) < _pieces(program, load), load.name


def test_auto_takes_band_start_only_above_its_limit(monkeypatch):
    """jacobi-2d's first-read load schedules on its 2 x 3 tiles have 15 and 8 basic maps: `auto`
    keeps them below the limit and replaces those above it; heat-3d's one band keeps them at any."""
    program, nets = _networks(JACOBI, first="first-read", start="band-start", auto="auto")
    sizes = {p.name: p.schedule.n_basic_map() for p in _loads(nets["first"])}
    assert all(nets["auto"].process(n).schedule.is_equal(nets["first"].process(n).schedule) for n in sizes)
    limit = min(sizes.values())
    assert max(sizes.values()) > limit
    monkeypatch.setattr(partition, "BAND_START_ABOVE", limit)
    auto = build_network(program, nets["first"].tiling)
    for name, n in sizes.items():
        expected = nets["start" if n > limit else "first"].process(name).schedule
        assert auto.process(name).schedule.is_equal(expected), name
    program, nets = _networks(HEAT, first="first-read")
    monkeypatch.setattr(partition, "BAND_START_ABOVE", 0)
    auto = build_network(program, nets["first"].tiling)
    assert all(p.schedule.is_equal(nets["first"].process(p.name).schedule) for p in _loads(auto))


@pytest.mark.parametrize("path", [JACOBI, HEAT], ids=["jacobi-2d", "heat-3d"])
def test_band_start_network_matches_gcc(path, capsys):
    code, out, _ = run_cli(["sim", str(path), "--tile", "auto", "--local-words", str(WORDS[path]),
                            "--load-order", "band-start", "--dpn-only", "--json"], capsys)
    assert code == 0, out
    res = json.loads(out)
    assert res["ok"] and res["mismatches"] == 0


def test_an_unknown_load_order_is_a_usage_error(capsys):
    code, _, err = run_cli(["compile", str(JACOBI), "--load-order", "late", "-o", "/dev/null"], capsys)
    assert code == 2 and "--load-order" in err


def test_band_start_schedule_is_one_to_one_and_fixed_at_the_floor():
    res = run(Options(str(JACOBI), tile="auto", local_words=WORDS[JACOBI], load_order="band-start"))
    for load in _loads(res.network):
        s = load.schedule
        assert s.is_injective() and s.domain().is_equal(load.domain)
        at = s.range().project_out(isl.dim_type.set, load.band_dims + 1,
                                   s.dim(isl.dim_type.out) - load.band_dims - 1)
        assert not at.plain_get_val_if_fixed(isl.dim_type.set, load.band_dims).is_nan()


def test_a_network_chosen_on_a_corner_notes_each_unit_once(monkeypatch):
    """The corner's own load-order notes describe its units; the full-size partition writes its own."""
    monkeypatch.setattr(partition, "BAND_START_ABOVE", 0)
    net = run(Options(str(JACOBI), defines=("T=10", "N=30"), tile="auto", local_words=WORDS[JACOBI])).network
    assert any("reduced instance" in n for n in net.notes)
    noted = [n.split()[0] for n in net.notes if "loads each band's elements" in n]
    assert noted and len(noted) == len(set(noted))
    assert set(noted) <= {p.name for p in _loads(net)}


@pytest.mark.parametrize("path", [JACOBI, HEAT], ids=["jacobi-2d", "heat-3d"])
def test_band_start_loads_one_polyhedron_holding_the_first_reads_within_bounds(path):
    """`_band_hull`: one basic set, holding every element a band reads first, and no element outside
    what the bands read (the box of those elements per dimension)."""
    program, nets = _networks(path, first="first-read", start="band-start")
    for load in _loads(nets["first"]):
        hull = nets["start"].process(load.name).domain
        assert hull.n_basic_set() == 1, load.name
        assert load.domain.is_subset(hull), load.name
        for d in range(hull.dim(isl.dim_type.set)):
            assert hull.dim_min_val(d).ge(load.domain.dim_min_val(d)), (load.name, d)
            assert hull.dim_max_val(d).le(load.domain.dim_max_val(d)), (load.name, d)
