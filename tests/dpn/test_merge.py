"""Process merging (hls/dpn/merge.py): light statements share a compute process, results stay bit-exact."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hls.dpn.merge import SLACK, balance_groups, merge_processes
from hls.dpn.serialize import network_from_json, network_to_json
from hls.dpn.simulate import simulate
from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import ROOT, example_params

# examples whose chosen network merges (symm's merge sits at merge.SLACK: 19% slower before the DSPs'
# operand registers, over it since)
MERGING = ["gemm", "syrk", "trmm", "2mm", "checksum-u8", "relu-norm", "fir-int", "bicg", "band-mv"]


def _compile(name: str, **kw):
    path = ROOT / "examples" / f"{name}.c"
    return run(Options(str(path), params=example_params(path), tile="auto", **kw))


def _compute(net) -> list:
    return list(net.iter_compute())


def _check_against_gcc(res, seeds) -> None:
    for seed in seeds:
        inputs = random_inputs(res.program, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        for order in ("random", "schedule"):
            out = simulate(res.network, inputs, seed=seed, order=order, tables=res.tables)
            assert out.deadlock is None, out.deadlock.format()
            assert not compare(expected, out.outputs)


def test_gemm_merges_the_scaling_into_the_reduction():
    """`C *= beta` (N^2 instances) joins the k-reduction (N^3): one compute process, at most 20% slower (merge.SLACK)."""
    merged, alone = _compile("gemm"), _compile("gemm", merge="none")
    assert [p.statements for p in _compute(alone.network)] == [("S0",), ("S1",)]
    (proc,) = _compute(merged.network)
    assert proc.merged and proc.statements == ("S0", "S1")
    # the members partition the process domain and cover every statement instance once
    doms = [m.domain for m in proc.members]
    assert doms[0].intersect(doms[1]).is_empty() and doms[0].union(doms[1]).is_equal(proc.domain)
    for m in proc.members:
        assert iu.card(m.domain) == iu.card(merged.program.statement(m.statement).domain)
        assert m.instance.is_single_valued() and m.instance.reverse().is_single_valued()
    a, b = merged.timing["estimated_cycles"], alone.timing["estimated_cycles"]
    assert a <= (1 + SLACK) * b
    assert any("merged compute processes" in n for n in merged.network.notes)
    # the dependence S0 -> S1 (same C element) is now a channel from the process to itself
    assert any(c.producer == c.consumer == proc.name and c.role == "local" for c in merged.network.channels)


@pytest.mark.parametrize("name", MERGING)
def test_merged_networks_match_gcc(name):
    res = _compile(name)
    assert any(p.merged for p in _compute(res.network))
    _check_against_gcc(res, seeds=(0, 3))


def test_merge_none_keeps_one_process_per_statement():
    res = _compile("syrk", merge="none")
    assert all(not p.merged for p in _compute(res.network))
    assert len(_compute(res.network)) == len(res.program.statements)


def test_balance_groups_respects_capacity_and_bands():
    res = _compile("2mm", merge="none")
    net = res.network
    weight = {p.name: iu.card(p.domain) for p in _compute(net)}
    cap = (1 + SLACK) * max(weight.values())
    for per_band, light_only in ((True, False), (False, False), (False, True), (True, True)):
        groups = balance_groups(net, per_band=per_band, light_only=light_only)
        seen = [n for g in groups for n in g]
        assert len(seen) == len(set(seen))  # a process is in one group at most
        for g in groups:
            assert len(g) > 1 and sum(weight[n] for n in g) <= cap
            if light_only:
                assert all(2 * weight[n] <= max(weight.values()) for n in g)
            if per_band:
                bands = {next(k for k, b in enumerate(net.tiling.bands) if net.process(n).statements[0] in b.statements)
                         for n in g}
                assert len(bands) == 1


def test_merging_everything_is_still_exact():
    """Merging is legal for any grouping (the global order is sequential): one process for all of 2mm."""
    from hls.dpn.channels import fifoize, size_channels, type_channels
    from hls.dpn.partition import build_network
    from hls.dpn.tables import NetworkTables

    res = _compile("2mm", merge="none")
    part = build_network(res.program, res.network.tiling)
    net = merge_processes(part, [[p.name for p in _compute(part)]])
    tables = NetworkTables(net)
    net = fifoize(type_channels(net))
    tables = tables.for_network(net)
    net = size_channels(net, tables)
    assert len(_compute(net)) == 1 and len(_compute(net)[0].members) == len(res.program.statements)
    res.network, res.tables = net, tables
    _check_against_gcc(res, seeds=(1,))


@pytest.mark.parametrize("name", ["2mm", "fir-int", "trmm"])
def test_a_merged_network_takes_the_channel_types_it_would_decide(name):
    """`type_channels(..., typed_as=)`: the types of the unmerged network's channels, taken by the
    merged network, are the types classifying the merged channels again gives (every grouping the
    pipeline tries, and all compute processes in one)."""
    from hls.dpn.channels import type_channels
    from hls.dpn.partition import build_network

    res = _compile(name, merge="none")
    part = build_network(res.program, res.network.tiling)
    typed = type_channels(part)
    groupings = [balance_groups(part, per_band=a, light_only=b, independent=c, affinity=False)
                 for a in (True, False) for b in (True, False) for c in (True, False)]
    groupings = [g for g in groupings if g] + [[[p.name for p in _compute(part)]]]
    for groups in groupings:
        merged = merge_processes(part, groups)
        decided = {c.name: (c.kind, c.in_order, c.unicity) for c in type_channels(merged).channels}
        taken = {c.name: (c.kind, c.in_order, c.unicity) for c in type_channels(merged, typed_as=typed).channels}
        assert taken == decided, groups


def test_independent_bins_hold_no_dependent_pair():
    """fir-int: `acc = 0`, the rounding, the saturation and the shift are light; the rounding feeds the
    saturation, which feeds the shift, so independent bins keep those apart."""
    res = _compile("fir-int", merge="none")
    net = res.network
    deps = {(d.source, d.sink) for d in res.program.flow.dependences}
    groups = balance_groups(net, per_band=False, light_only=True, independent=True)
    assert groups
    for g in groups:
        sts = [s for n in g for s in net.process(n).statements]
        assert not any((a, b) in deps for a in sts for b in sts if a != b)
    chained = balance_groups(net, per_band=False, light_only=True)
    assert any(len(g) > max(len(h) for h in groups) for g in chained)


def test_affinity_bins_put_each_light_process_with_a_heavy_one_it_depends_on():
    """bicg: `s[j] = 0` starts the reduction into s, `q[i] = 0` the one into q.  Affinity bins pair
    each initialization with its own reduction; the pipeline keeps that merge with the statements one
    after another inside tiles (the initializations are done before the reduction reads them), two
    compute processes, bit-exact."""
    unmerged = _compile("bicg", merge="none")
    net = unmerged.network
    deps = {(d.source, d.sink) for d in unmerged.program.flow.dependences}
    sts = {p.name: p.statements for p in net.iter_compute()}
    weight = {p.name: iu.card(p.domain) for p in net.iter_compute()}
    heavy = {n for n, w in weight.items() if 2 * w > max(weight.values())}
    groups = balance_groups(net, per_band=True, affinity=True)
    assert groups and all(len([n for n in g if n in heavy]) == 1 for g in groups)
    for g in groups:
        (h,) = [n for n in g if n in heavy]
        for light in (n for n in g if n != h):
            assert any((a, b) in deps or (b, a) in deps for a in sts[light] for b in sts[h]), (light, h)
    res = _compile("bicg")
    compute = _compute(res.network)
    assert len(compute) == 2
    by_stmt = {st: p.name for p in compute for st in p.statements}
    for src, dst in deps:  # every initialization runs in the process of the reduction it starts
        if src in ("S0", "S1") and dst in by_stmt:
            assert by_stmt[src] == by_stmt[dst], (src, dst)
    assert any(b.fission for b in res.network.tiling.bands)
    _check_against_gcc(res, seeds=(2,))


def test_merged_dpn_json_round_trips():
    res = _compile("gemm")
    data = network_to_json(res.network)
    back = network_from_json(json.loads(json.dumps(data)), res.program)
    (p,) = _compute(back)
    (q,) = _compute(res.network)
    assert p.statements == q.statements
    for a, b in zip(p.members, q.members):
        assert a.instance.is_equal(b.instance)
    again = network_to_json(back)
    assert {k: v for k, v in again.items() if k != "tiling"} == {k: v for k, v in data.items() if k != "tiling"}


@pytest.mark.slow  # 30-40 s each; merged networks run bit-exact in the DPN simulator by default
@pytest.mark.parametrize("name", ["gemm", "checksum-u8"])
def test_merged_rtl_matches_gcc_under_back_pressure(name, capsys):
    """A merged process in Verilog: one pipeline, each iteration computing the statement that owns it."""
    from tests.kernels import cli_args, run_cli

    path = ROOT / "examples" / f"{name}.c"
    res = _compile(name)
    assert any(p.merged for p in _compute(res.network))
    rc, out, err = run_cli(["sim", str(path), *cli_args(path), "--tile", "auto", "--stall", "0.3", "--seed", "5",
                            "--json"], capsys)
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["ok"] and rep["mismatches"] == 0
    assert rep["compute_processes"] == len(_compute(res.network)) < len(res.program.statements)


@pytest.mark.slow  # 35-50 s each
@pytest.mark.parametrize("name", ["syrk", "tri-sum"])
def test_parallel_parts_stay_parallel(name, capsys):
    """`--parallel 4` parts of one statement never share a process (regression: a merged process held
    two parts of syrk's reduction, undoing the parallelism and declaring its read ports twice)."""
    from tests.kernels import cli_args, run_cli

    res = _compile(name, parallel=4)
    for p in _compute(res.network):
        assert len(set(p.statements)) == len(p.statements)
    heaviest = max(res.program.statements, key=lambda st: iu.card(st.domain)).name
    assert sum(1 for p in _compute(res.network) if heaviest in p.statements) == 4  # in 4 processes still
    _check_against_gcc(res, seeds=(4,))
    path = ROOT / "examples" / f"{name}.c"
    rc, out, err = run_cli(["sim", str(path), *cli_args(path), "--tile", "auto", "--parallel", "4", "--json"], capsys)
    assert rc == 0, err
    d = json.loads(out)
    assert d["ok"]
    assert d["efficiency"] == round(d["statement_instances"] / (d["cycles"] * d["compute_processes"]), 4) <= 1
