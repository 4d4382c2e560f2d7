"""Tiled data-aware process networks: legality, coalesced traffic, and every example against gcc."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

from hls.diagnostics import CompileError
from hls.dpn.network import ProcessKind
from hls.dpn.simulate import simulate
from hls.dpn.tiling import conflicts, is_legal, schedule_bands, tile_program
from hls.poly import isl_utils as iu
from hls.pipeline import Options, run
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import EXAMPLES, ROOT, example_params, sweep


def _check(res, seeds=(0, 1)):
    for seed in seeds:
        inputs = random_inputs(res.program, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        out = simulate(res.network, inputs, seed=seed, tables=res.tables)
        assert out.deadlock is None, out.deadlock.format()
        assert not compare(expected, out.outputs)
    return out


@pytest.mark.parametrize("path", sweep(EXAMPLES))
def test_example_tiled_auto_matches_gcc(path):
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    assert is_legal(res.program, res.network.tiling.schedule)
    out = _check(res)
    loads = sum(len(res.tables.process(p.name).iterations) for p in res.network.processes if p.kind == ProcessKind.LOAD)
    assert out.words_loaded == loads  # the load units move exactly their coalesced sets


@pytest.mark.parametrize("path", sweep(EXAMPLES))
def test_fifo_recovery_is_complete_with_original_point_order(path):
    """Theorem 5.3: with the original order inside tiles, splitting by depth restores every FIFO that
    tiling broke.  Small tiles (`--local-words 64`) so that tiling cuts bands where it can."""
    res = run(Options(str(path), params=example_params(path), tile="auto", local_words=64, point_order="original"))
    if res.fifo_stats is not None:
        assert res.fifo_stats["fifos_restored"] == res.fifo_stats["fifos_broken"], res.fifo_stats
    _check(res, seeds=(5,))


TILED = {"seidel-2d": "2,2,2", "seidel-int": "3,3,3", "trmm": "4,4", "gemm-int": "4", "jacobi-1d-int": "2",
         "2mm": "4,4", "syrk": "4,4"}


@pytest.mark.parametrize("order,name,sizes", [
    pytest.param(order, name, sizes, marks=pytest.mark.slow if name == "2mm" else ())
    for order in ("latency", "original") for name, sizes in sorted(TILED.items())])  # 2mm: 30-35 s each
def test_explicit_tiles_match_gcc(name, sizes, order):
    path = ROOT / "examples" / f"{name}.c"
    res = run(Options(str(path), params=example_params(path), tile=sizes, point_order=order))
    t = res.network.tiling
    assert t.is_tiled and t.sizes[:len(sizes.split(","))] == tuple(int(x) for x in sizes.split(","))
    assert is_legal(res.program, t.schedule)
    _check(res, seeds=(3,))
    if order == "original":
        assert res.fifo_stats["fifos_restored"] == res.fifo_stats["fifos_broken"], res.fifo_stats


def test_too_many_tile_sizes_are_refused():
    path = ROOT / "examples" / "jacobi-1d.c"
    with pytest.raises(CompileError, match="permutable band"):
        run(Options(str(path), params=example_params(path), tile="4,4,4,4"))


def test_scheduler_skews_when_rectangular_tiles_are_illegal(tmp_path):
    """A[i][j] = A[i-1][j+1] + 1: tiling i and j as they are would reorder dependent accesses; the
    scheduler's band is skewed and its tiling is legal."""
    src = tmp_path / "k.c"
    src.write_text("void k(double A[12][12]) {\n#pragma scop\n for (int i = 1; i < 12; i++)\n"
                   "  for (int j = 0; j < 11; j++)\n   A[i][j] = A[i-1][j+1] + 1.0;\n#pragma endscop\n}\n")
    p = run(Options(str(src)), until="dataflow").program
    plain = p.schedule.apply_range(isl.Map("{ [t0, t1, t2, t3, t4] -> [floor(t1 / 4), floor(t3 / 4), t0, t1, t2, t3, t4] }"))
    assert not is_legal(p, plain)
    band = next(b for b in schedule_bands(p) if b.depth)
    assert band.depth == 2 and band.describe().count("i + j") + band.describe().count("j + i") >= 1, band.describe()
    tiled = tile_program(p, [4, 4])
    assert is_legal(p, tiled.schedule)
    _check(run(Options(str(src), tile="4,4")), seeds=(0,))


@pytest.fixture(scope="module")
def two_mm_auto():
    """2mm with `--tile auto` (two tests look at it; a compile takes seconds)."""
    path = ROOT / "examples" / "2mm.c"
    return run(Options(str(path), params=example_params(path), tile="auto"))


def test_latency_point_order_covers_reductions(two_mm_auto):
    """2mm's reductions over k: in the source order consecutive iterations depend on each other and the
    pipelined adder stalls them; the point order the pipeline keeps (by the cycle model) has fewer
    modelled cycles than the source order, and the RTL-level model agrees with the choice."""
    path = ROOT / "examples" / "2mm.c"
    orig = run(Options(str(path), params=example_params(path), tile="auto", point_order="original"))
    best = two_mm_auto
    assert best.network.tiling.point_order != "original"
    assert best.timing["estimated_cycles"] < 0.9 * orig.timing["estimated_cycles"]
    assert "fewest modelled cycles" in best.network.tiling.reason
    _check(best, seeds=(2,))


def test_parallel_parts_split_compute_processes():
    path = ROOT / "examples" / "gemm.c"
    one = run(Options(str(path), params=example_params(path), defines=("NK=100",), tile="auto", merge="none"))
    four = run(Options(str(path), params=example_params(path), defines=("NK=100",), tile="auto", parallel=4,
                       merge="none"))
    assert sum(1 for p in one.network.processes if p.kind == ProcessKind.COMPUTE) == len(one.program.statements)
    # the heaviest statement (the k-reduction) gets the 4 processes; `C *= beta` (1% of the work: a part of
    # it runs 4% of a heavy part's, below `partition.LIGHT_SHARE`) keeps one
    count = {st.name: sum(1 for p in four.network.processes if p.statements == (st.name,)) for st in four.program.statements}
    by_weight = sorted(four.program.statements, key=lambda st: iu.card(st.domain))
    assert count[by_weight[-1].name] == 4 and count[by_weight[0].name] == 1
    # every statement instance runs in exactly one part
    for st in four.program.statements:
        parts = [p for p in four.network.processes if p.statements == (st.name,)]
        assert sum(iu.card(p.domain) for p in parts) == iu.card(st.domain)
    assert four.timing["estimated_cycles"] < 0.6 * one.timing["estimated_cycles"]
    _check(four, seeds=(1,))


def test_parallel_needs_tiling():
    from hls.diagnostics import UsageError

    with pytest.raises(UsageError, match="--tile"):
        run(Options(str(ROOT / "examples" / "gemm.c"), parallel=2))


def test_auto_tiling_is_legal_and_creates_bands():
    path = ROOT / "examples" / "seidel-2d.c"
    res = run(Options(str(path), tile="auto", local_words=64))
    t = res.network.tiling
    assert t.is_tiled and t.band_dims >= 1 and is_legal(res.program, t.schedule, conflicts(res.program))
    # several bands: the load unit's domain has more than one band coordinate value
    load = res.network.process("LOAD_A")
    bands = load.domain.project_out(isl.dim_type.set, t.band_dims, load.domain.dim(isl.dim_type.set) - t.band_dims)
    assert iu.card(bands) > 1


def test_auto_tiling_keeps_a_band_that_fits_untiled_traffic():
    """When the whole group fits the local-memory budget, one band holds it: traffic is compulsory."""
    path = ROOT / "examples" / "gemm.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    out = _check(res, seeds=(0,))
    from hls.metrics import traffic
    assert out.words_loaded + out.words_stored == traffic(res.program, res.network)["compulsory_words"]


def test_untiled_traffic_equals_compulsory():
    for name in ("gemm", "jacobi-2d", "cholesky"):
        path = ROOT / "examples" / f"{name}.c"
        res = run(Options(str(path)))
        out = _check(res, seeds=(0,))
        live_in = sum(1 for p in res.network.processes if p.kind == ProcessKind.LOAD for _ in res.tables.process(p.name).iterations)
        assert out.words_loaded == live_in


@pytest.mark.parametrize("parallel", [2, 4])
@pytest.mark.parametrize("path", sweep(EXAMPLES))
def test_example_parallel_matches_gcc(path, parallel):
    res = run(Options(str(path), params=example_params(path), tile="auto", parallel=parallel))
    _check(res, seeds=(parallel,))
    for st in res.program.statements:  # the parts of a statement (merged or not) cover its instances exactly once
        runs = [m for p in res.network.iter_compute() for m in p.members if m.statement == st.name]
        assert sum(iu.card(m.domain) for m in runs) == iu.card(st.domain)


def _mvt_constraints():
    from hls.dpn import tiling as tl

    path = ROOT / "examples" / "mvt.c"
    prog = run(Options(str(path), params=example_params(path), tile="none")).program
    dom = isl.UnionSet.empty(prog.schedule.get_space().params())
    for st in prog.statements:
        dom = dom.union(isl.UnionSet.from_set(st.domain))
    deps = conflicts(prog)
    return isl.ScheduleConstraints.on_domain(dom).set_validity(deps).set_coincidence(deps).set_proximity(
        deps.union(tl.read_reuse(prog)))


def _bounded_in_worker(_arg) -> str:
    from hls.dpn import tiling as tl

    return str(tl._compute_schedule_bounded(_mvt_constraints(), True, 60.0))


def test_fused_scheduling_runs_inside_a_pool_worker():
    """Pool workers are daemonic and multiprocessing forbids them children: the benchmark compiles
    in such workers, so the time-bounded scheduler must fork without multiprocessing."""
    import multiprocessing as mp

    from hls.dpn import tiling as tl

    with mp.get_context("fork").Pool(1) as pool:
        got = pool.map(_bounded_in_worker, [0])[0]
    assert got == str(tl._compute_schedule(_mvt_constraints(), True))


def test_fused_scheduling_is_bounded_in_time():
    """The fused candidate's isl scheduling runs in a forked child with a time limit (fuzzer seed 859
    kept isl busy for more than ten minutes): the schedule handed back is the one computed in-process,
    and a child over the limit is killed and reported as an isl error (the candidate is dropped)."""
    from hls.dpn import tiling as tl

    path = ROOT / "examples" / "mvt.c"
    res = run(Options(str(path), params=example_params(path), tile="none"))
    prog = res.program
    dom = isl.UnionSet.empty(prog.schedule.get_space().params())
    for st in prog.statements:
        dom = dom.union(isl.UnionSet.from_set(st.domain))
    deps = conflicts(prog)
    sc = isl.ScheduleConstraints.on_domain(dom).set_validity(deps).set_coincidence(deps).set_proximity(
        deps.union(tl.read_reuse(prog)))
    direct = tl._compute_schedule(sc, True)
    bounded = tl._compute_schedule_bounded(sc, True, 60.0)
    assert str(bounded) == str(direct)



def test_scheduling_over_the_time_limit_is_an_isl_error(monkeypatch):
    """A child still scheduling at the limit is killed and reported as an isl error.  The slow
    scheduler is simulated by a sleep in the forked child; a zero limit alone raced against a fast
    machine finishing mvt's schedule before the first poll."""
    import time

    from hls.dpn import tiling as tl

    def slow(sc, whole_component, outer_coincidence=False):
        time.sleep(30)
        raise AssertionError("not killed")

    monkeypatch.setattr(tl, "_compute_schedule", slow)
    start = time.monotonic()
    with pytest.raises(isl.Error, match="took more than"):
        tl._compute_schedule_bounded(None, True, 0.5)
    assert time.monotonic() - start < 10


def test_a_late_separate_schedule_falls_back_to_an_outer_coincident_member(monkeypatch):
    """isl's separate schedule runs under `SEPARATE_SCHEDULE_SECONDS` (ADI at TS=3, N=8 took 118 s);
    past it, the schedule with an outer coincident member required is asked for instead.  The slow
    search is simulated by a sleep in the forked child."""
    import time

    from hls.dpn import tiling as tl

    real = tl._compute_schedule

    def slow_unless_outer(sc, whole_component, outer_coincidence=False):
        if not outer_coincidence:
            time.sleep(30)
        return real(sc, whole_component, outer_coincidence)

    path = ROOT / "examples" / "jacobi-1d-int.c"
    prog = run(Options(str(path), tile="none"), until="dataflow").program
    monkeypatch.setattr(tl, "SEPARATE_SCHEDULE_SECONDS", 0.5)
    monkeypatch.setattr(tl, "_compute_schedule", slow_unless_outer)
    start = time.monotonic()
    bands = [b for b in schedule_bands(prog) if b.depth]
    assert time.monotonic() - start < 10
    monkeypatch.setattr(tl, "_compute_schedule", lambda sc, whole, outer=False: real(sc, whole, True))
    monkeypatch.setattr(tl, "SEPARATE_SCHEDULE_SECONDS", 60.0)
    expected = [b for b in schedule_bands(prog) if b.depth]
    assert bands and [b.describe() for b in bands] == [b.describe() for b in expected]


def _band_of(path, fusion, **params):
    res = run(Options(str(path), params=params or example_params(path), tile="none"))
    from hls.frontend.privatize import privatize

    prog = privatize(res.program)
    bands = [b for b in schedule_bands(prog, fusion=fusion) if b.depth]
    return prog, bands


def test_aligned_fusion_gives_reads_of_one_element_one_time_stamp():
    """mvt reads `A[i][j]` in S0 and `A[j][i]` in S1.  The fused schedule keeps each statement's
    parallel loop outermost (coincidence), so one band reads A in transposed orders; the aligned one
    transposes S1, so both statements read each element at the same band point, and no hyperplane
    is coincident for both (S0 carries its reduction along j, S1 along its i)."""
    path = ROOT / "examples" / "mvt.c"
    prog, bands = _band_of(path, "aligned")
    assert len(bands) == 1 and set(bands[0].statements) == {"S0", "S1"}
    a_at = {}
    for st in ("S0", "S1"):
        acc = next(a for a in prog.statement(st).reads if a.array == "A")
        # band point -> element of A read there
        a_at[st] = bands[0].hyperplanes[st].reverse().apply_range(acc.relation)
    assert a_at["S0"].is_equal(a_at["S1"])
    assert bands[0].coincident == (False, False)
    _, fused = _band_of(path, "fused")
    assert not fused[0].hyperplanes["S1"].is_equal(bands[0].hyperplanes["S1"])


def test_coincident_members_are_computed_from_the_dependences():
    from hls.dpn.tiling import coincident_members

    path = ROOT / "examples" / "mvt.c"
    prog, bands = _band_of(path, "separate")
    for b in bands:  # the scheduler's own flags on the plain bands agree with the computed ones
        assert coincident_members(b.hyperplanes, conflicts(prog), b.depth) == b.coincident


def test_auto_tiling_keeps_the_aligned_band_for_mvt():
    """The cycle model prefers the aligned band with a wavefront point order: the load of A is then
    in the order both reductions read it."""
    path = ROOT / "examples" / "mvt.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    t = res.network.tiling
    assert t.fusion == "aligned" and t.point_order == "wavefront"
    assert "S1: (j, i)" in t.describe()
    _check(res, seeds=(3,))


@pytest.mark.slow  # a second 2mm compile without the cutoff: 21 s
def test_the_model_cutoff_drops_only_candidates_that_cannot_win(monkeypatch, two_mm_auto):
    """Candidates are modelled only up to `CUTOFF` x the best estimate so far: 2mm's source point
    orders (a reduction innermost) are cut off, and the network kept is the one an unbounded
    comparison keeps."""
    import hls.pipeline as pl

    path = ROOT / "examples" / "2mm.c"
    bounded = two_mm_auto
    assert "point order `original` > " in bounded.network.tiling.reason
    monkeypatch.setattr(pl, "CUTOFF", 10 ** 6)
    full = run(Options(str(path), params=example_params(path), tile="auto"))
    assert "> " not in full.network.tiling.reason.split("fewest modelled cycles")[1]
    assert full.network.tiling.describe() == bounded.network.tiling.describe()
    assert full.timing["estimated_cycles"] == bounded.timing["estimated_cycles"]


@pytest.mark.slow  # 80 s: ADI's 14 statements take isl's scheduler seconds per schedule
def test_interleaved_point_order_hides_a_recurrence_below_the_band():
    """ADI: the tiled band is the time loop alone; below it, each sweep's rows are independent and
    its columns carry a division's recurrence.  The `interleaved` point order puts the rows
    innermost (`TileBand.interleaved`): a legal order, bit-exact, and modelled faster than `inner`,
    which keeps the scheduler's rows-outside order there."""
    from hls.dpn.tiling import point_order_variants

    path = ROOT / "bench" / "kernels" / "adi.c"
    opts = Options(str(path), defines=("TS=4", "N=10"), tile="auto", merge="none")
    from hls.frontend.privatize import privatize

    res = run(Options(opts.path, defines=opts.defines), until="dataflow")
    program = privatize(res.program)
    base = tile_program(program, [2])
    assert any(b.interleaved for b in base.bands)
    variants = {t.point_order: t for t in point_order_variants(program, base)}
    assert {"inner", "interleaved"} <= variants.keys()
    assert not variants["inner"].schedule.is_equal(variants["interleaved"].schedule)
    assert is_legal(program, variants["interleaved"].schedule)
    cycles = {}
    for order in ("inner", "interleaved"):
        built = run(Options(opts.path, defines=opts.defines, tile="auto", merge="none", point_order=order))
        cycles[order] = built.timing["estimated_cycles"]
        if order == "interleaved":
            _check(built, seeds=(0,))
    assert cycles["interleaved"] < cycles["inner"] / 2, cycles


def test_a_late_separate_schedule_skips_the_optional_ones(monkeypatch):
    """When isl's own schedule ran past its limit, the whole-component ones (fused, aligned) are not
    asked for: harder still, they ran into their own limits (ludcmp at N=168: 5 s each, for nothing).
    mvt's candidates are three without the delay, its plain tiling alone with it."""
    import time
    from dataclasses import replace

    from hls import pipeline
    from hls.dpn import tiling as tl
    from hls.frontend.privatize import privatize

    path = ROOT / "examples" / "mvt.c"
    opts = Options(str(path), params=example_params(path), tile="auto")
    prog = privatize(run(replace(opts, tile="none"), until="dataflow").program)
    assert len(pipeline._auto_candidates(prog, opts)) > 1
    real = tl._compute_schedule

    def slow_unless_outer(sc, whole_component, outer_coincidence=False):
        if not outer_coincidence and not whole_component:
            time.sleep(30)
        return real(sc, whole_component, outer_coincidence)

    monkeypatch.setattr(tl, "SEPARATE_SCHEDULE_SECONDS", 0.5)
    monkeypatch.setattr(tl, "_compute_schedule", slow_unless_outer)
    (only,) = pipeline._auto_candidates(prog, opts)
    assert only.late and only.fusion == "separate" and "not asked for" in only.reason


def test_after_a_late_fused_schedule_the_aligned_one_is_asked_of_a_sample_only(monkeypatch):
    """The aligned schedule of the whole program is as hard for isl as the fused one: once the fused
    one ran out of time, the aligned one comes from a sample or not at all (mvt at its own size is
    below `SAMPLE_ABOVE`: not at all, one whole-component schedule asked instead of two)."""
    import time
    from dataclasses import replace

    from hls import pipeline
    from hls.dpn import tiling as tl
    from hls.frontend.privatize import privatize

    path = ROOT / "examples" / "mvt.c"
    opts = Options(str(path), params=example_params(path), tile="auto")
    prog = privatize(run(replace(opts, tile="none"), until="dataflow").program)
    real = tl._compute_schedule
    asked = []

    def slow_whole(sc, whole_component, outer_coincidence=False):
        if whole_component:
            time.sleep(30)
        return real(sc, whole_component, outer_coincidence)

    monkeypatch.setattr(tl, "OPTIONAL_SCHEDULE_SECONDS", 0.5)
    monkeypatch.setattr(tl, "_compute_schedule", slow_whole)
    real_bounded = tl._compute_schedule_bounded
    monkeypatch.setattr(tl, "_compute_schedule_bounded",
                        lambda sc, whole, seconds, **kw: asked.append(whole) or real_bounded(sc, whole, seconds, **kw))
    start = time.monotonic()
    (only,) = pipeline._auto_candidates(prog, opts)
    assert time.monotonic() - start < 20
    assert only.fusion == "separate" and asked.count(True) == 1


def test_streamed_tiles_let_a_reading_band_overlap_its_writer():
    """`tiling.streamed`: 2mm's second product reads `tmp` along its reduction; its band keeps whole
    tiles and the first product's columns are cut into `STREAM_TILES` tiles, so `tmp` is final a few
    columns at a time.  Legal, and at 2 parts the DPN of it computes gcc's result."""
    from hls.dpn.channels import fifoize, size_channels, type_channels
    from hls.dpn.partition import build_network
    from hls.dpn.tiling import STREAM_TILES, auto_tiling, slab_dim, streamed

    path = ROOT / "examples" / "2mm.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"), until="privatize")
    program = res.program
    base = auto_tiling(program, point_order="inner")
    out = streamed(program, base)
    assert out is not None and is_legal(program, out.schedule)
    writer, reader = out.bands
    assert set(writer.statements) == {"S0", "S1"} and reader.sizes == reader.extents
    d = slab_dim(writer)
    assert writer.sizes[d] == writer.extents[d] and writer.sizes[-1] == writer.extents[-1]
    for h in range(writer.depth - 1):
        if h != d:
            assert -(-writer.extents[h] // writer.sizes[h]) >= min(STREAM_TILES, writer.extents[h]) // 2
            assert writer.sizes[h] < base.bands[0].sizes[h]
    assert streamed(program, out) is None  # nothing left to change
    gemm = run(Options(str(ROOT / "examples" / "gemm.c"), tile="auto"), until="privatize").program
    assert streamed(gemm, auto_tiling(gemm)) is None  # one band: nothing to overlap
    net = build_network(program, out, 2)
    net = size_channels(fifoize(type_channels(net)))
    inputs = random_inputs(program, 3)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    sim = simulate(net, inputs, seed=3)
    assert sim.deadlock is None, sim.deadlock.format()
    assert not compare(expected, sim.outputs)
