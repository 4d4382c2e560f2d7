"""Bands scheduled on a sample of the program, their constant terms refit at full size (`dpn.shifts`,
`tiling.schedule_bands`).  The oracle is the enumerated dependences: every pair keeps a nonnegative
distance along every hyperplane, and no constant term can be lowered."""

from __future__ import annotations

from dataclasses import replace

import islpy as isl
import pytest

from hls.dpn import tiling as tl
from hls.dpn.restrict import instance_count, sampled
from hls.dpn.shifts import extended, linear_text, refit_inner, refit_shifts
from hls.frontend.privatize import privatize
from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from tests.kernels import ROOT


def _program(stem: str, defines=()):
    res = run(Options(str(ROOT / "examples" / f"{stem}.c"), defines=tuple(defines)), until="dataflow")
    return privatize(res.program)


def _affs(hyper: isl.Map) -> list[tuple[list[int], int]]:
    """(coefficients, constant term) of each hyperplane."""
    n_in = hyper.dim(isl.dim_type.in_)
    pma = isl.PwMultiAff.from_map(hyper)
    out = []
    for d in range(hyper.dim(isl.dim_type.out)):
        pieces: list[isl.Aff] = []
        pma.get_pw_aff(d).foreach_piece(lambda _s, aff: pieces.append(aff))
        aff = pieces[0]
        out.append(([aff.get_coefficient_val(isl.dim_type.in_, k).to_python() for k in range(n_in)],
                    aff.get_constant_val().to_python()))
    return out


def _distances(hyper: dict, deps: isl.UnionMap) -> list[tuple[str, str, tuple[int, ...]]]:
    """(source, target, distance along each hyperplane) of every enumerated dependence pair."""
    affs = {st: _affs(h) for st, h in hyper.items()}
    out = []
    for m in iu.union_map_pieces(deps):
        s, t = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
        if s not in hyper or t not in hyper:
            continue
        n_in = m.dim(isl.dim_type.in_)
        for p in iu.points(m.wrap()):
            x, y = p[:n_in], p[n_in:]
            out.append((s, t, tuple(int(sum(c * v for c, v in zip(ct, y)) + kt - sum(c * v for c, v in zip(cs, x)) - ks)
                                    for (cs, ks), (ct, kt) in zip(affs[s], affs[t]))))
    return out


def _shifted(hyper: isl.Map, d: int, by: int) -> isl.Map:
    n = hyper.dim(isl.dim_type.out)
    outs = ", ".join(f"y{k} + {by}" if k == d else f"y{k}" for k in range(n))
    return hyper.apply_range(isl.Map(f"{{ [{', '.join(f'y{k}' for k in range(n))}] -> [{outs}] }}"))


def test_refit_constants_are_the_smallest_legal_ones():
    """2mm's fused band: the refit keeps isl's linear parts, every dependence pair has a nonnegative
    distance along every hyperplane, no positive constant term can be lowered, and none is above
    isl's own (which is legal too)."""
    prog = _program("2mm", ["NI=4", "NJ=5", "NK=3", "NL=4"])
    deps = tl.conflicts(prog)
    band = next(b for b in tl.schedule_bands(prog, deps, fusion="fused") if b.depth)
    domains = {st: prog.statement(st).domain for st in band.statements}
    hyper = refit_shifts(band.hyperplanes, domains, deps)
    assert hyper is not None and set(hyper) == set(band.statements)
    assert all(linear_text(hyper[st]) == linear_text(band.hyperplanes[st]) for st in hyper)
    assert all(min(dist) >= 0 for _s, _t, dist in _distances(hyper, deps))
    shifted = 0
    for st in hyper:
        for d, ((_c, k), (_ci, k_isl)) in enumerate(zip(_affs(hyper[st]), _affs(band.hyperplanes[st]))):
            assert 0 <= k <= k_isl
            if k > 0:
                shifted += 1
                lower = dict(hyper, **{st: _shifted(hyper[st], d, -1)})
                assert any(dist[d] < 0 for _s, _t, dist in _distances(lower, deps))
    assert shifted  # the second product runs after the first along a hyperplane


def test_illegal_linear_parts_have_no_refit():
    """A hyperplane that runs a reduction backwards (2mm's `k` reversed in S1) has no constant term
    that makes it legal: a positive cycle of the difference constraints."""
    prog = _program("2mm", ["NI=3", "NJ=3", "NK=4", "NL=3"])
    deps = tl.conflicts(prog)
    hyper = {"S1": iu.reread(isl.Map("{ S1[i, j, k] -> [i, j, -k] }").intersect_domain(prog.statement("S1").domain))}
    assert refit_shifts(hyper, {"S1": prog.statement("S1").domain}, deps) is None


def test_a_sample_cuts_every_loop():
    prog = _program("2mm", ["NI=30", "NJ=20", "NK=25", "NL=18"])
    small = sampled(prog, 6)
    assert small is not None and instance_count(small) == 6 * 6 + 6 ** 3 + 6 * 6 + 6 ** 3
    assert sampled(small, 6) is None  # nothing longer left to cut


def test_a_large_program_gets_its_aligned_band_from_a_sample(monkeypatch):
    """mvt at N = 96 (18,432 instances, above `SAMPLE_ABOVE`): the aligned band comes from the sample
    (the scheduler never sees the whole program) and is the one isl finds on the whole program: S1
    transposed, both statements reading each element of A at one band point."""
    prog = _program("mvt", ["N=96"])
    assert instance_count(prog) > tl.SAMPLE_ABOVE
    deps = tl.conflicts(prog)
    whole = [b for b in tl._scheduled_bands(prog, deps, "aligned") if b.depth]
    seen = []
    real = tl._scheduled_bands
    monkeypatch.setattr(tl, "_scheduled_bands", lambda p, d, f: seen.append(instance_count(p)) or real(p, d, f))
    bands = [b for b in tl.schedule_bands(prog, deps, fusion="aligned") if b.depth]
    assert seen and max(seen) < instance_count(prog)
    assert len(bands) == 1 == len(whole)
    for st in ("S0", "S1"):
        assert bands[0].hyperplanes[st].is_equal(whole[0].hyperplanes[st])
    a_at = {}
    for st in ("S0", "S1"):
        acc = next(a for a in prog.statement(st).reads if a.array == "A")
        a_at[st] = bands[0].hyperplanes[st].reverse().apply_range(acc.relation)
    assert a_at["S0"].is_equal(a_at["S1"])


@pytest.mark.parametrize("stem,defines", [("2mm", ["NI=30", "NJ=36", "NK=40", "NL=46"]), ("int-divmod", ["N=72", "M=54"])])
def test_sampled_aligned_bands_are_legal_at_full_size(stem, defines):
    """The aligned bands of programs whose whole-program scheduling took 5-30 s: legal tiled schedules
    of the whole program (the check `_finish` makes), with every hyperplane nonnegative along every
    dependence between a band's statements."""
    prog = _program(stem, defines)
    deps = tl.conflicts(prog)
    bands = tl.schedule_bands(prog, deps, fusion="aligned")
    assert any(b.depth for b in bands)
    whole = [b if not b.depth else
             replace(b, sizes=b.extents, point_order=tuple(f"f{d + 1}" for d in range(b.depth))) for b in bands]
    assert tl.is_legal(prog, tl.tiled_schedule(prog, whole), deps)
    for b in bands:
        if b.depth:
            h = iu.union((isl.UnionMap.from_map(m) for m in b.hyperplanes.values()),
                            isl.UnionMap.empty(deps.get_space()))
            for piece in iu.union_set_pieces(deps.apply_domain(h).apply_range(h).deltas()):
                for d in range(b.depth):
                    assert iu.constant_value(piece.dim_min(d)) >= 0


def _whole(bands):
    return [b if not b.depth else
            replace(b, sizes=b.extents, point_order=tuple(f"f{d + 1}" for d in range(b.depth))) for b in bands]


def test_the_schedule_below_a_sampled_band_is_refit(monkeypatch):
    """band-trsv-minmax at N = 200 (above `SAMPLE_ABOVE`): on the sample, the statement after the
    backward sweep's inner loop runs at that loop's last value, 12 (`S5 -> [0, 12, 1, 1]`); at full
    size that order needs the loop's full extent.  Taken as it is, the sample's schedule below the band
    is illegal at full size (checked by isl on the whole program); refit, the bands are legal, keep the
    sample's linear parts below the band, and come from the sample alone."""
    prog = _program("band-trsv-minmax", ["N=200", "BW=30"])
    assert instance_count(prog) > tl.SAMPLE_ABOVE
    deps = tl.conflicts(prog)
    small = sampled(prog, tl.SAMPLE_CAP)
    sample_bands = [b for b in tl._scheduled_bands(small, tl.conflicts(small), "aligned") if b.depth]
    assert sample_bands and all(b.inner for b in sample_bands)
    seen = []
    real = tl._scheduled_bands
    monkeypatch.setattr(tl, "_scheduled_bands", lambda p, d, f: seen.append(instance_count(p)) or real(p, d, f))
    bands = tl.schedule_bands(prog, deps, fusion="aligned")
    assert seen and max(seen) < instance_count(prog)
    assert tl.is_legal(prog, tl.tiled_schedule(prog, _whole(bands)), deps)
    refit = next(b for b in bands if b.depth)
    as_found = replace(refit, inner={st: extended(m, prog.statement(st).domain)
                                     for st, m in sample_bands[0].inner.items()})
    assert not tl.is_legal(prog, tl.tiled_schedule(prog, _whole([as_found if b.depth else b for b in bands])), deps)
    for st, m in refit.inner.items():
        assert linear_text(m) == linear_text(sample_bands[0].inner[st])
        assert refit_inner(refit.hyperplanes, {st: m for st, m in refit.inner.items()}, deps) is not None


def test_refit_inner_keeps_the_sample_constants_no_dependence_asks_to_raise():
    """Two statements no dependence ties keep the order the scheduler gave them below the band (the
    constants as found), and a raised constant is the smallest legal one: lowering it by one leaves
    an enumerated dependence pair at a lexicographically negative distance."""
    prog = _program("band-trsv-minmax", ["N=40", "BW=8"])
    deps = tl.conflicts(prog)
    small = sampled(prog, 6)
    band = next(b for b in tl._scheduled_bands(small, tl.conflicts(small), "aligned") if b.depth)
    domains = {st: prog.statement(st).domain for st in band.statements}
    hyper = refit_shifts(band.hyperplanes, domains, deps)
    inner = {st: extended(m, domains[st]) for st, m in band.inner.items()}
    refit = refit_inner(hyper, inner, deps)
    assert refit is not None
    stamps = {st: _affs(hyper[st]) + _affs(refit[st]) for st in refit}
    raised = [(st, d) for st in refit for d, ((_c, k), (_c0, k0)) in enumerate(zip(_affs(refit[st]), _affs(inner[st])))
              if k != k0]
    assert raised and all(k >= k0 for st in refit for (_c, k), (_c0, k0) in zip(_affs(refit[st]), _affs(inner[st])))

    def violated(stamp_of):
        for m in iu.union_map_pieces(deps):
            s, t = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
            n_in = m.dim(isl.dim_type.in_)
            for p in iu.points(m.wrap()):
                x, y = p[:n_in], p[n_in:]
                a = [sum(c * v for c, v in zip(cs, x)) + k for cs, k in stamp_of[s]]
                b = [sum(c * v for c, v in zip(cs, y)) + k for cs, k in stamp_of[t]]
                if b < a:
                    return True
        return False

    assert not violated(stamps)
    depth = len(_affs(next(iter(hyper.values()))))
    for st, d in raised:
        lower = {k: list(v) for k, v in stamps.items()}
        coeffs, k = lower[st][depth + d]
        lower[st][depth + d] = (coeffs, k - 1)
        assert violated(lower)
