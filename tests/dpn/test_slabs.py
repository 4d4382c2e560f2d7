"""Slab processes, fission inside tiles and on-chip flows between tile bands (hls/pipeline.py `_slabbed`,
`partition.slab_groups`, `tiling.with_fission`, `partition._onchip_arrays`), checked against gcc."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hls.dpn.network import ProcessKind
from hls.dpn.partition import build_network, slab_groups
from hls.dpn.simulate import simulate
from hls.dpn.tiling import conflicts, is_legal, with_fission
from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import ROOT, cli_args, example_params, run_cli


def _compile(name: str, **kw):
    path = ROOT / "examples" / f"{name}.c"
    return run(Options(str(path), params=example_params(path), tile="auto", **kw))


def _exact(res, seed: int):
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = simulate(res.network, inputs, seed=seed, order="random", tables=res.tables)
    assert out.deadlock is None, out.deadlock.format()
    assert not compare(expected, out.outputs)
    return out


def test_fir_int_runs_one_slab_per_process():
    """fir-int: the k-reduction holds 2/3 of the instances; per-statement processes (merged or not)
    leave one process idle most of the time.  Two slabs of samples, each running all five statements,
    share the work evenly: fewer modelled cycles with no more processes, and still exact."""
    res, alone = _compile("fir-int"), _compile("fir-int", merge="none")
    procs = list(res.network.iter_compute())
    n_statements = len(res.program.statements)
    assert len(procs) == 2 and all(len(p.members) == n_statements for p in procs)
    loads = [iu.card(p.domain) for p in procs]
    assert abs(loads[0] - loads[1]) <= 0.1 * max(loads)
    assert res.timing["estimated_cycles"] < 0.8 * alone.timing["estimated_cycles"]
    assert res.network.partition == (2, True, "shared", "shared", "auto", "auto")  # at --parallel 1, slabs share the channels
    assert any("slab" in n for n in res.network.notes)
    _exact(res, seed=2)


def test_slab_groups_hold_one_part_of_every_statement():
    res = _compile("fir-int", merge="none")
    tiling = res.network.tiling
    net = build_network(res.program, tiling, 2, uniform=True)
    groups = slab_groups(res.program, tiling, 2)
    assert len(groups) == 2
    names = [n for g in groups for n in g]
    assert len(names) == len(set(names)) == len(list(net.iter_compute()))
    for g in groups:
        assert sorted(net.process(n).statements[0] for n in g) == sorted(s.name for s in res.program.statements)


def test_fission_is_refused_where_a_dependence_forbids_it():
    """mixed-width: the saturation only reads the convolution of its own point, so the statements may
    run one after the other inside a tile.  tri-sum: `P[i][j] = rs[i]` reads the running sum that the
    next iteration overwrites, so the statements must stay interleaved."""
    ok = _compile("mixed-width", merge="none")
    t = with_fission(ok.program, ok.network.tiling)
    assert t is not None and all(b.fission for b in t.bands if b.depth and len(b.statements) > 1)
    assert is_legal(ok.program, t.schedule, conflicts(ok.program))
    assert "one statement after another" in t.describe()
    bad = _compile("tri-sum", merge="none")
    assert with_fission(bad.program, bad.network.tiling) is None


@pytest.mark.parametrize("local_words", [pytest.param(8192, marks=pytest.mark.slow), 64])
def test_a_flow_between_bands_stays_on_chip_within_the_budget(local_words):
    """2mm: `tmp` made by the first product is read by the second, in another tile band.  On chip, the
    off-chip traffic is the compulsory traffic; with a budget too small for its 168 values it goes
    through memory (stored, then loaded again).  Exact either way."""
    res = _compile("2mm", local_words=local_words)
    loads = {p.array for p in res.network.processes if p.kind == ProcessKind.LOAD}
    out = _exact(res, seed=1)
    size = {a: iu.card(x.extent) for a, x in res.program.arrays.items()}
    compulsory = size["A"] + size["B"] + size["C"] + size["D"] + size["D"] + size["tmp"]  # inputs, then outputs
    if local_words == 8192:
        assert "tmp" not in loads
        assert out.words_loaded + out.words_stored == compulsory
    else:
        assert "tmp" in loads
        assert out.words_loaded + out.words_stored > compulsory


def test_slab_rtl_matches_gcc_under_back_pressure(capsys):
    path = ROOT / "examples" / "fir-int.c"
    rc, out, err = run_cli(["sim", str(path), *cli_args(path), "--tile", "auto", "--stall", "0.3", "--seed", "3",
                            "--json"], capsys)
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["ok"] and rep["mismatches"] == 0 and rep["compute_processes"] == 2
    assert rep["words_loaded"] + rep["words_stored"] == rep["compulsory_words"]
