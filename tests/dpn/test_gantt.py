"""schedule.svg: the cycle model's record (`timing.ScheduleRecorder`) and its Gantt chart (`hls/dpn/gantt.py`).

The record is checked against the model's own counters: every process's intervals tile the run, its
busy cycles are the iterations it starts, and its stall cycles are what the model counts on its
channels (`Timing.empty_waits` per consumer, `full_waits` per producer) wherever one cycle of a
state is one count: a process reading every operand at issue counts at most one empty channel per
cycle, a producer one count per full output channel.  Recording changes nothing the model computes.
The picture has one row per process, parses as XML, is the same bytes twice, and stays as small for a
hundred million cycles as for a million.  `compile` writes it beside dpn.svg; where the network was
chosen on a reduced instance too large to model again, the reduced instance's schedule is drawn and
the title says so.
"""

from __future__ import annotations

import re

import random
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

import hls.schedule as schedule
from hls.cli import main
from hls import pipeline
from hls.dpn import reduced
from hls.dpn.gantt import LABEL, MAX_COLUMNS, schedule_svg
from hls.dpn.network import ProcessKind
from hls.dpn.timing import STATES, ScheduleRecorder, simulate_timing
from hls.pipeline import Options, run
from hls.rtl.generate import process_latencies, read_stages
from tests.kernels import ROOT, example_params

GEMM = ROOT / "examples" / "gemm-int.c"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def gemm():
    """gemm-int untiled: its reduction reads the accumulator late (stage 8), the loads wait on full
    FIFOs and the store on empty ones."""
    return run(Options(str(GEMM), params=example_params(GEMM)))


def _counted(start: int, stop: int, skipped: list[tuple[int, int]]) -> int:
    """Cycles of [start, stop) the model did not jump over (only those reach its counters)."""
    return (stop - start) - sum(max(0, min(stop, b) - max(start, a)) for a, b in skipped)


@pytest.mark.parametrize("late", [False, True], ids=["at-issue", "late-reads"])
def test_record_tiles_the_run_and_matches_the_model_counters(gemm, late):
    net, tables = gemm.network, gemm.tables
    stages = read_stages(net) if late else None
    joins = {p for p, per in (stages or {}).items() if any(per.values())}
    assert joins if late else not joins
    lat = process_latencies(net)
    plain = simulate_timing(net, tables, lat, read_stage=stages)
    rec = ScheduleRecorder()
    t = simulate_timing(net, tables, lat, read_stage=stages, recorder=rec)
    assert (t.cycles, t.busy, t.full_waits, t.empty_waits) == (plain.cycles, plain.busy, plain.full_waits,
                                                                plain.empty_waits)
    if late:
        assert t.cycles == gemm.timing["estimated_cycles"]
    assert rec.cycles == rec.end == t.cycles and rec.processes == [p.name for p in net.processes]
    seen = dict.fromkeys(STATES, 0)
    for p in net.processes:
        ivs = list(rec.intervals(p.name))
        assert ivs[0].start == 0 and ivs[-1].stop == t.cycles
        assert all(iv.start < iv.stop for iv in ivs) and all(a.stop == b.start for a, b in zip(ivs, ivs[1:]))
        assert all((a.state, a.on) != (b.state, b.on) for a, b in zip(ivs, ivs[1:]))  # run-length
        total = dict.fromkeys(STATES, 0)
        counted = dict.fromkeys(STATES, 0)
        ins = {c.name for c in net.inputs(p.name)}
        outs = {c.name for c in net.outputs(p.name)}
        for iv in ivs:
            total[iv.state] += iv.stop - iv.start
            counted[iv.state] += _counted(iv.start, iv.stop, rec.skipped)
            assert iv.on in {"empty": ins, "full": outs}.get(iv.state, {None})
        for s in STATES:
            seen[s] += total[s]
        assert total["busy"] == counted["busy"] == t.busy[p.name]  # a cycle that issues is never jumped over
        empty = sum(t.empty_waits[c] for c in ins)
        if p.name in joins:  # one count per late operand missing, also while the pipeline is held
            assert counted["empty"] <= empty
        else:
            assert counted["empty"] == empty, p.name
        full = sum(t.full_waits[c] for c in outs)
        assert counted["full"] <= full <= len(outs) * counted["full"], p.name  # one count per full output
        if len(outs) == 1:
            assert counted["full"] == full
    assert seen["busy"] and seen["full"] and seen["empty"] and seen["done"]


def test_svg_has_a_row_per_process_and_is_deterministic(gemm):
    net = gemm.network
    rec = ScheduleRecorder()
    simulate_timing(net, gemm.tables, process_latencies(net), read_stage=read_stages(net), recorder=rec)
    svg = schedule_svg(rec, net, "gemm-int", ["a note"])
    assert svg == schedule_svg(rec, net, "gemm-int", ["a note"])
    root = ET.fromstring(svg)
    rows = [g for g in root.iter(f"{SVG}g") if "process" in g.get("class", "").split()]
    assert sorted(g.get("id") for g in rows) == sorted(f"p-{p.name}" for p in net.processes)
    kinds = {p.name: p.kind for p in net.processes}
    order = [g.get("id")[2:] for g in rows]  # loads, compute processes, stores
    assert [kinds[n] for n in order] == sorted((kinds[n] for n in order),
                                               key=[ProcessKind.LOAD, ProcessKind.COMPUTE, ProcessKind.STORE].index)
    for g in rows:
        spans = g.findall(f"{SVG}g")
        assert spans and all(sp.find(f"{SVG}title") is not None for sp in spans)
        rects = [r for sp in spans for r in sp.findall(f"{SVG}rect")]
        assert all(r.get("class") in STATES for r in rects)
        # a stack of whole pixels per column, the row's height; the columns cover the plot's width
        assert sum(float(r.get("width")) * float(r.get("height")) for r in rects) == pytest.approx(800 * 16, rel=1e-3)
    tips = " ".join(t.text for t in root.iter(f"{SVG}title"))
    store = next(p for p in net.processes if p.kind == ProcessKind.STORE)
    assert "mostly on channel " in tips and f"{store.name}: " in tips
    texts = {t.text for t in root.iter(f"{SVG}text")}
    assert set(LABEL.values()) <= texts and "cycles" in texts  # the legend names every state; the axis


def _synthetic(span: int, runs: int) -> ScheduleRecorder:
    """Two processes changing state `runs` times over `span` cycles, in runs of uneven lengths (a long
    run's shape, without the model)."""
    rec = ScheduleRecorder()
    rec.begin(["LOAD_A", "S0"])
    rng = random.Random(1)
    starts = sorted(rng.sample(range(1, span), runs - 1))
    for i in range(2):
        for k, start in enumerate([0, *starts]):
            state = (k * (3 + i) + i) % 5
            rec.mark(i, start, state, "c0" if state in (1, 2) else "A" if state == 3 else None)
    rec.finish(span, span)
    return rec


def test_long_runs_give_a_bounded_svg(gemm):
    net = gemm.network
    short = schedule_svg(_synthetic(10**6, 5_000), net, "t")
    long = schedule_svg(_synthetic(10**8, 5_000), net, "t")
    for svg in (short, long):
        root = ET.fromstring(svg)
        rows = [g for g in root.iter(f"{SVG}g") if "process" in g.get("class", "").split()]
        assert len(rows) == 2
        for g in rows:
            spans = g.findall(f"{SVG}g")
            assert MAX_COLUMNS // 4 < len(spans) <= MAX_COLUMNS  # mixed columns: many, but one per column at most
            assert len([r for sp in spans for r in sp.findall(f"{SVG}rect")]) <= len(STATES) * MAX_COLUMNS
    assert len(long) < 1.2 * len(short) and len(long) < 2 * MAX_COLUMNS * 1000  # not 10**8 of anything
    assert ">100M<" in long and "cycles per column" in long


def test_what_compile_draws(gemm, monkeypatch):
    """The compiled network while it is small enough to model again; else a note, never a re-run."""
    svg = schedule.compiled_schedule_svg(gemm)
    assert f"schedule of the compiled network, {gemm.timing['estimated_cycles']} cycles" in svg
    monkeypatch.setattr(schedule, "SCHEDULE_BELOW", 0)
    note = schedule.compiled_schedule_svg(gemm)
    ET.fromstring(note)
    assert "no schedule drawn" in note and "statement instances" in note and "<rect" in note
    cut = schedule.compiled_schedule_svg(replace(gemm, timing={**gemm.timing, "estimated_cycles": None}))
    assert "did not finish" in cut


def test_reduced_instance_is_drawn_when_the_network_is_too_large(monkeypatch):
    monkeypatch.setattr(reduced, "REDUCE_ABOVE", 0)
    monkeypatch.setattr(pipeline, "SEQUENTIAL_MODEL_FULL_BELOW", 0)  # the estimate extrapolated from the corner
    res = run(Options(str(GEMM), defines=("NI=12", "NJ=12", "NK=12"), tile="3,3,3"))
    red = res.timing["reduced_instance"]
    assert res.reduced is not None
    full = schedule.compiled_schedule_svg(res)  # small: the full-size network, modelled again
    # its own run's cycles in the title, the (extrapolated) estimate in the notes; the two agree
    # within the extrapolation's error (bench/results/extrapolation.md: 3.3% at most)
    est = res.timing["estimated_cycles"]
    ran = int(re.search(r"schedule of the compiled network, (\d+) cycles", full).group(1))
    assert f"(report.md: {est} cycles)" in full
    assert abs(ran - est) <= 0.02 * est, (ran, est)
    monkeypatch.setattr(schedule, "SCHEDULE_BELOW", 0)
    svg = schedule.compiled_schedule_svg(res)
    ET.fromstring(svg)
    assert f"schedule of the reduced instance, {red['estimated_cycles']} cycles" in svg
    small_work, full_work = red["busiest_iterations"]
    assert f"{red['instances']} of " in svg
    assert f"plus one per further iteration of the busiest process ({full_work - small_work})" in svg
    monkeypatch.setattr(schedule, "PICTURE_CYCLES", 40)  # a long corner: its first cycles, and the title says so
    first = schedule.compiled_schedule_svg(res)
    ET.fromstring(first)
    assert f"schedule of the reduced instance, its first 40 cycles (of {red['estimated_cycles']})" in first


def test_compile_writes_schedule_svg(tmp_path: Path, capsys):
    out = tmp_path / "o"
    assert main(["compile", str(GEMM), "-o", str(out)]) == 0
    assert "pictures: dpn.svg, schedule.svg" in capsys.readouterr().out
    root = ET.fromstring((out / "schedule.svg").read_bytes())
    assert root.tag == f"{SVG}svg" and "schedule of the compiled network" in root.find(f"{SVG}title").text
