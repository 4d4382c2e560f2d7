"""The benchmark: every example kernel under several configurations, RTL cycles against the roofline.

Run: `python -m bench [--kernels a,b] [--configs none,auto,p2,p4] [--jobs J] [--dask | --scheduler ADDRESS]
[--no-rtl] [--estimate] [--out DIR]` (or `dpn-synth bench ...`); rows run in local worker processes or on
Dask distributed (`hls.executors`).  Writes DIR/bench.{csv,json,md}, DIR/roofline.png and
DIR/scaling.png (default DIR: bench/results; the plots need matplotlib: pip install 'dpn-synth[bench]').

For every (kernel, configuration) the kernel (tests/kernels.py EXAMPLES, parameters from its
`// dpn-synth-args:` line) is compiled through the Python API, its Verilog simulated under Verilator on
random inputs (seed 0, no back-pressure, memory latency 4, one word per cycle per array port) and the
arrays compared bit for bit with gcc.  Configurations: `none` (--tile none), `auto` (--tile auto), `pN`
(--tile auto --parallel N).  A configuration the compiler refuses (UsageError / CompileError) is a
`skipped` row with the message; a wrong result or deadlock is a `fail` row; a crash an `error` row.

Figures per row (bench/README.md explains them): cycles, roofline_cycles (`hls.metrics.traffic`:
max(instances / compute processes, compulsory words / memory ports)) and their ratio; words moved by
the load/store units, compulsory words (live-in + live-out elements) and their ratio; channel words;
optional Yosys `synth_xilinx` LUT/FF/BRAM18/DSP (`--estimate`); compile seconds (front end to Verilog)
and simulated cycles per wall-clock second.  Rows above 2.0 x roofline get a reason computed from the
network: per-process imbalance, per-port memory traffic, the tiler's recurrence estimate, and what is
left over the tightest of those bounds.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from hls.diagnostics import UsageError
from hls.executors import Backend, NoProgress, TaskFailed, add_backend_options, map_unordered
from hls.explore import cell

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_CONFIGS = ("none", "auto", "p2", "p4")
DEFAULT_TIMEOUT = 1800.0
ABOVE = 2.0  # cycles/roofline above which a row needs a reason
TARGET_MEDIAN = 1.25
TARGET_TRAFFIC = 1.10
TARGET_COMPILE_S = 10.0

FIELDS = (
    "kernel", "config", "options", "status", "ok", "mismatches", "note", "tiling",
    "cycles", "roofline_cycles", "cycles_per_roofline", "bound_cycles", "bound_per_roofline", "cycles_per_bound",
    "ideal_cycles", "ideal_per_roofline", "cycles_per_ideal", "latency_cycles", "max_compute_latency",
    "model_cycles", "cycles_per_model",
    "words_moved", "words_loaded", "words_stored", "compulsory_words", "traffic_per_compulsory", "band_fits",
    "traffic_note",
    "channel_words", "processes", "compute_processes", "channels", "fifos", "statement_instances",
    "memory_words_per_cycle", "max_process_instances", "max_process", "busiest_port", "port_words",
    "recurrence_stalls", "intensity", "instances_per_cycle",
    "lut", "ff", "bram", "dsp", "estimate_note",
    "compile_s", "compile_cpu_s", "build_s", "sim_s", "sim_cycles_per_s", "reason",
)


# --------------------------------------------------------------------------------------------------
# configurations


WIDE_BITS = 512  # the memory width of the `w` configurations: an AXI port's


def parse_config(name: str) -> dict:
    """`none` | `auto` | `pN` (auto tiling, N parallel compute processes per band) | `pNs` (the same
    with one read channel per array, `--read-ports shared`) | `autow`, `pNw` (with wide read ports,
    `--mem-width 512`) -> run options."""
    if name == "none":
        return {"tile": "none", "parallel": 1, "read_ports": "per-part", "mem_width": 0}
    if name in ("auto", "autow"):
        return {"tile": "auto", "parallel": 1, "read_ports": "per-part",
                "mem_width": WIDE_BITS if name == "autow" else 0}
    m = re.fullmatch(r"p([1-9][0-9]*)([sw]?)", name)
    if m:
        return {"tile": "auto", "parallel": int(m.group(1)), "read_ports": "shared" if m.group(2) == "s" else "per-part",
                "mem_width": WIDE_BITS if m.group(2) == "w" else 0}
    raise ValueError(f"unknown configuration `{name}` (expected none, auto, autow, pN, pNs or pNw, e.g. p2)")


def config_options(name: str) -> str:
    c = parse_config(name)
    return (f"--tile {c['tile']}" + (f" --parallel {c['parallel']}" if c["parallel"] > 1 else "")
            + (" --read-ports shared" if c["read_ports"] == "shared" and c["parallel"] > 1 else "")
            + (f" --mem-width {c['mem_width']}" if c["mem_width"] else ""))


def config_parallel(name: str) -> int:
    return parse_config(name)["parallel"]


# --------------------------------------------------------------------------------------------------
# one row


def _band_fits(reason: str, local_words: int) -> Optional[bool]:
    """Whether every tiled band's footprint fits the local-memory budget (from the tiler's reason:
    `footprint N words[, M per band]` per band); None when the network is not tiled by --tile auto."""
    found = re.findall(r"footprint (\d+) words(?:, (\d+) per band)?", reason or "")
    if not found:
        return None
    return all(int(per or total) <= local_words for total, per in found)


def _stalls(reason: str) -> Optional[int]:
    m = re.search(r"about (\d+) recurrence stall cycles", reason or "")
    return int(m.group(1)) if m else None


def _round(x: Optional[float], n: int = 3) -> Optional[float]:
    return None if x is None else round(x, n)


def _traffic_note(res, ports: dict[tuple[str, str], list[int]]) -> str:
    """Arrays moved more than their compulsory words (over all their channels), with how many tile
    bands move them."""
    from hls.dpn.network import ProcessKind

    from hls.metrics import compulsory_by_array

    comp = compulsory_by_array(res.program)
    bands: dict[str, set] = {}
    for p in res.network.processes:
        if p.kind in (ProcessKind.LOAD, ProcessKind.STORE):
            its = res.tables.process(p.name).iterations
            bands.setdefault(p.array, set()).update((p.name, tuple(q)[:p.band_dims]) for q in its)
    moved: dict[str, list[int]] = {}
    for (arr, _channel), (ld, st) in ports.items():
        m = moved.setdefault(arr, [0, 0])
        m[0] += ld
        m[1] += st
    out = []
    for arr, (ld, st) in sorted(moved.items()):
        c = comp.get(arr, 0)
        if ld + st > c:
            out.append(f"{arr}: {ld} loads + {st} stores for {c} compulsory words, over {len(bands.get(arr, ()))} "
                       "tile bands")
    return "; ".join(out)


def ideal_cycles(net, tables) -> Optional[int]:
    """Cycles of the network on ideal hardware: every process starts one iteration per cycle, in its
    own order, as soon as every value it reads was produced (a value produced in cycle t is readable
    in cycle t + 1); operators, memories and channels have no further latency and channels no
    capacity limit.  A lower bound on the RTL's cycles that, unlike the roofline, sees the order in
    which processes produce and consume values: a consumer whose order differs from its producer's
    (a transposed read through a buffer), a chain of dependences through several processes.
    None if the tables do not allow a schedule (cannot happen for a valid network)."""
    procs = [p.name for p in net.processes]
    inputs: dict[str, list[tuple[str, dict]]] = {n: [] for n in procs}
    for c in net.channels:
        inputs[c.consumer].append((c.producer, tables.channel(c).source))
    seqs = {n: tables.process(n).iterations for n in procs}
    done: dict[str, dict] = {n: {} for n in procs}
    pos = dict.fromkeys(procs, 0)
    last = dict.fromkeys(procs, -1)
    remaining = sum(len(v) for v in seqs.values())
    progress = True
    while remaining and progress:
        progress = False
        for n in procs:
            seq, k, ins, mine = seqs[n], pos[n], inputs[n], done[n]
            while k < len(seq):
                y = seq[k]
                t = last[n] + 1
                for prod, src in ins:
                    x = src.get(y)
                    if x is None:
                        continue
                    ft = done[prod].get(x)
                    if ft is None:
                        break
                    if ft + 1 > t:
                        t = ft + 1
                else:
                    mine[y] = last[n] = t
                    k += 1
                    remaining -= 1
                    progress = True
                    continue
                break
            pos[n] = k
    return None if remaining else max(last.values(), default=-1) + 1


def _latency_model(net, tables) -> tuple[Optional[int], Optional[int]]:
    """The compiler's cycle model (hls/dpn/timing.py) with the RTL's process latencies but FIFOs of
    unbounded depth: what latency along dependence chains costs, without back-pressure; and the
    largest compute-process latency.  (None, None) when the model is not available."""
    try:
        from hls.dpn.network import ChannelKind, ProcessKind
        from hls.dpn.timing import simulate_timing
        from hls.rtl.generate import process_latencies, read_stages

        lat = process_latencies(net)
        deep = {c.name: 1 << 30 for c in net.channels if c.kind != ChannelKind.BUFFER}
        t = simulate_timing(net, tables, lat, deep, read_stage=read_stages(net))
        comp = [lat[p.name] for p in net.processes if p.kind == ProcessKind.COMPUTE and p.name in lat]
        return t.cycles, max(comp, default=None)
    except Exception:  # noqa: BLE001 - an optional figure; the model may change under us
        return None, None


def network_figures(res, local_words: int) -> dict:
    """DPN-level figures of a compiled network (no simulation)."""
    from hls.metrics import network_stats, traffic as traffic_of
    from hls.dpn.network import ProcessKind
    from hls.rtl.generate import read_channel

    net, tables = res.network, res.tables
    traffic = traffic_of(res.program, net)
    stats = network_stats(net)
    loaded = stored = 0
    ports: dict[tuple[str, str], list[int]] = {}  # (array, channel) -> [loads, stores]
    compute: list[tuple[int, str, str]] = []
    for p in net.processes:
        n = len(tables.process(p.name).iterations)
        if p.kind == ProcessKind.LOAD:
            loaded += n
            ports.setdefault((p.array, read_channel(p.port)), [0, 0])[0] += n
        elif p.kind == ProcessKind.STORE:
            stored += n
            ports.setdefault((p.array, "wr"), [0, 0])[1] += n
        elif p.kind == ProcessKind.COMPUTE:
            compute.append((n, p.name, "+".join(p.statements) or p.name))
    moved = loaded + stored
    roof = traffic["roofline_cycles"]
    # an array's loads and stores go through its read channels (one per slab with `--read-ports
    # per-part`) and its write channel: the busiest channel bounds it
    busiest = max(ports.items(), key=lambda kv: (max(kv[1]), kv[0]), default=((None, None), [0, 0]))
    max_inst, max_name, max_stmt = max(compute, default=(0, "", ""))
    tiling = net.tiling
    reason = tiling.reason if tiling is not None else ""
    bound = max(roof, max_inst, max(busiest[1]))
    ideal = ideal_cycles(net, tables)
    ideal = None if ideal is None else max(ideal, bound)
    latency_cycles, max_latency = _latency_model(net, tables)
    timing = getattr(res, "timing", None) or {}
    return {
        "tiling": tiling.describe() if tiling is not None else "none",
        "roofline_cycles": roof,
        "bound_cycles": bound,
        "bound_per_roofline": _round(bound / max(1, roof)),
        "ideal_cycles": ideal,
        "ideal_per_roofline": _round(ideal / max(1, roof)) if ideal else None,
        "latency_cycles": latency_cycles, "max_compute_latency": max_latency,
        "model_cycles": timing.get("estimated_cycles"),
        "words_moved": moved, "words_loaded": loaded, "words_stored": stored,
        "compulsory_words": traffic["compulsory_words"],
        "traffic_per_compulsory": _round(moved / traffic["compulsory_words"]) if traffic["compulsory_words"] else None,
        "band_fits": _band_fits(reason, local_words) if tiling is not None and tiling.is_tiled else None,
        "traffic_note": _traffic_note(res, ports) if moved > traffic["compulsory_words"] else "",
        "channel_words": stats["channel_words"], "processes": stats["processes"],
        "compute_processes": stats["compute_processes"], "channels": stats["channels"], "fifos": stats["fifos"],
        "statement_instances": traffic["statement_instances"],
        "memory_words_per_cycle": traffic["memory_words_per_cycle"],
        "max_process_instances": max_inst, "max_process": max_name, "_max_statement": max_stmt,
        "busiest_port": busiest[0][0], "_port_channel": busiest[0][1], "port_words": max(busiest[1]),
        "_port_loads": busiest[1][0], "_port_stores": busiest[1][1],
        "recurrence_stalls": _stalls(reason),
        "intensity": _round(traffic["statement_instances"] / moved, 4) if moved else None,
    }


def explain(row: dict) -> str:
    """Why a row's cycles are far above its roofline, from the figures of the row: the bounds that
    the roofline's averages hide (one process doing most of the work, one memory channel carrying most
    of the words, self-dependences the tiler estimates to stall), then what is left over the tightest."""
    roof, cycles = row.get("roofline_cycles"), row.get("cycles")
    if not roof or not cycles:
        return ""
    ratio = cycles / roof
    parts: list[tuple[float, str]] = []
    total, n_compute = row["statement_instances"], max(1, row["compute_processes"])
    mi = row["max_process_instances"]
    imb = mi / roof
    if imb > 1.1:
        share = 100 * mi / max(1, total)
        who = (f"statement {row['_max_statement']}" if row["max_process"] == row["_max_statement"]
               else f"process {row['max_process']} (statement {row['_max_statement']})")
        what = "one statement holds" if n_compute == 1 or who.startswith("statement") else "one process runs"
        parts.append((imb, f"{what} {share:.0f}% of the instances ({who}: {mi} of {total} over {n_compute} compute "
                           f"processes): per-process imbalance bounds cycles/roofline at {imb:.2f}"))
    pw = row["port_words"]
    mem = pw / roof
    if mem > 1.1:
        extra = ""
        tc = row.get("traffic_per_compulsory")
        if tc is not None and tc > TARGET_TRAFFIC:
            extra = f"; traffic is {tc:.2f} x compulsory ({row.get('traffic_note') or 'n/a'})"
        channel = "read" if row["_port_loads"] >= row["_port_stores"] else "write"
        ch = row.get("_port_channel")
        channel += f" channel `{ch}`" if ch not in (None, "rd", "wr") else " channel"
        parts.append((mem, f"memory-bound: array {row['busiest_port']} moves {pw} words through its {channel} "
                           f"({row['_port_loads']} loads, {row['_port_stores']} stores), bounding "
                           f"cycles/roofline at {mem:.2f}{extra}"))
    bound = row["bound_cycles"]
    ideal = row.get("ideal_cycles") or bound
    if ideal / bound > 1.1:
        parts.append((ideal / bound, f"dataflow order: even on ideal hardware (one iteration per cycle per process, "
                                     f"values readable the next cycle) the network needs {ideal} cycles, "
                                     f"{ideal / bound:.2f} x the per-process / per-port bound: consumers wait for "
                                     "values their producers make late in their own order"))
    ref = ideal
    lat = row.get("latency_cycles")
    if lat and lat / ref > 1.1:
        st = row.get("recurrence_stalls")
        parts.append((lat / ref, f"latency: with the datapath latencies (up to {row.get('max_compute_latency')} "
                                 f"cycles per compute process) and memory latency 4, the cycle model needs {lat} "
                                 f"cycles even with unbounded FIFOs, {lat / ref:.2f} x the ideal schedule: "
                                 "dependence chains (reductions, recurrences) wait for operator results"
                                 + (f"; the tiler estimates ~{st} recurrence stall cycles" if st else "")))
        ref = lat
    model = row.get("model_cycles")
    if model and lat and model / lat > 1.1:
        parts.append((model / lat, f"back-pressure: with the sized channels the cycle model needs {model} cycles, "
                                   f"{model / lat:.2f} x with unbounded FIFOs"))
    if model:
        ref = max(ref, model)
    left, excess = cycles / ref, cycles - ref
    if left > 1.1:
        what = "the cycle model" if model else ("the latency model" if lat else "the ideal schedule")
        if excess <= 250:
            parts.append((left, f"start-up: the RTL takes {excess} cycles more than {what} ({ref} cycles), large "
                                f"against a {roof}-cycle roofline"))
        else:
            parts.append((left, f"RTL: {left:.2f} x {what} ({ref} cycles): effects the model does not have "
                                "(handshake bubbles, the processes' real initiation interval, arbitration)"))
    parts.sort(key=lambda p: -p[0])
    return "; ".join(t for _, t in parts) or f"{ratio:.2f} x roofline (no single bound explains it)"


def measure(task: dict) -> dict:
    """One (kernel, configuration): compile, generate, simulate, compare, optionally estimate."""
    from hls.diagnostics import CompileError
    from hls.pipeline import Options, run
    from tests.kernels import example_params

    path = Path(task["path"])
    cfg = parse_config(task["config"])
    row: dict = {k: None for k in FIELDS}
    row.update(kernel=path.stem, config=task["config"], options=config_options(task["config"]), status="ok", note="")
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        res = run(Options(str(path), params=example_params(path), tile=cfg["tile"], parallel=cfg["parallel"],
                          local_words=task["local_words"], read_ports=cfg["read_ports"], mem_width=cfg["mem_width"]))
    except CompileError as e:  # includes UsageError: this compiler does not support the configuration
        row.update(status="skipped", note=_one_line(e.message))
        return row
    except Exception as e:  # noqa: BLE001 - a compiler bug is a row, not the end of the bench
        row.update(status="error", note=_one_line(f"compile: {type(e).__name__}: {e}"))
        return row
    design = None
    t1 = time.perf_counter()
    try:
        from hls.rtl.generate import generate

        design = generate(res.network)
    except CompileError as e:
        row.update(status="skipped", note=_one_line(f"no RTL: {e.message}"))
    except Exception as e:  # noqa: BLE001
        row.update(status="error", note=_one_line(f"RTL generation: {type(e).__name__}: {e}"))
    row["compile_s"] = round(res.seconds + (time.perf_counter() - t1), 3)
    row["compile_cpu_s"] = round(time.process_time() - cpu0, 3)
    try:
        row.update(network_figures(res, task["local_words"]))
    except Exception as e:  # noqa: BLE001
        row.update(status="error", note=_one_line(f"network figures: {type(e).__name__}: {e}"))
        return row
    if design is not None and task["rtl"]:
        _simulate(row, res, design, task)
    if design is not None and task["estimate"]:
        _estimate(row, design, task)
    if row["cycles"]:
        row["cycles_per_roofline"] = _round(row["cycles"] / max(1, row["roofline_cycles"]))
        row["cycles_per_bound"] = _round(row["cycles"] / max(1, row["bound_cycles"]))
        row["cycles_per_ideal"] = _round(row["cycles"] / row["ideal_cycles"]) if row["ideal_cycles"] else None
        row["cycles_per_model"] = _round(row["cycles"] / row["model_cycles"]) if row["model_cycles"] else None
        row["instances_per_cycle"] = _round(row["statement_instances"] / row["cycles"], 4)
        if row["cycles_per_roofline"] > ABOVE:
            row["reason"] = explain(row)
    row["_seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _one_line(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _simulate(row: dict, res, design, task: dict) -> None:
    import numpy as np

    from sim.gcc_ref import GccReference
    from sim.inputs import compare, random_inputs
    from sim.rtl_sim import run_rtl

    try:
        inputs = random_inputs(res.program, 0)
        expected = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        with tempfile.TemporaryDirectory(prefix="dpn-bench-") as work:
            out = run_rtl(design, inputs, Path(work),
                          cache_root=Path(task["cache_root"]) if task.get("cache_root") else None)
    except Exception as e:  # noqa: BLE001
        row.update(status="error", ok=False, note=_one_line(f"simulation: {type(e).__name__}: {e}"))
        return
    mismatches = [] if out.problem else compare(expected, out.outputs)
    row["ok"] = out.problem is None and not mismatches
    row["mismatches"] = len(mismatches)
    row["build_s"], row["sim_s"] = round(out.seconds_build, 2), round(out.seconds_sim, 2)
    if out.problem is None:
        row["cycles"] = out.cycles
        row["sim_cycles_per_s"] = round(out.cycles / max(1e-9, out.seconds_sim))
    if not row["ok"]:
        row["status"] = "fail"
        row["note"] = _one_line(out.problem or f"{len(mismatches)} mismatches, first {mismatches[0]}")


def _estimate(row: dict, design, task: dict) -> None:
    from hls import estimate as est

    yosys = est.find_yosys()
    if yosys is None:
        row["estimate_note"] = "yosys not found"
        return
    try:
        e = est.estimate_design(design, "xc7", timeout=task["estimate_timeout"], yosys=yosys)
    except est.EstimateError as exc:
        row["estimate_note"] = _one_line(str(exc), 160)
        return
    row.update(lut=e.lut, ff=e.ff, bram=e.bram, dsp=e.dsp, estimate_note="cached" if e.cached else "")


# --------------------------------------------------------------------------------------------------
# summary, tables, plots


GAP_STEPS = (("bound/roofline", "imbalance and ports: busiest process or array port against the averages"),
             ("ideal/bound", "dataflow order: ideal hardware (1 iteration/cycle/process, 1-cycle hops)"),
             ("latency/ideal", "operator and memory latency on dependence chains (unbounded FIFOs)"),
             ("model/latency", "back-pressure of the sized channels"),
             ("cycles/model", "RTL against the compiler's cycle model"))


def gap_steps(r: dict) -> Optional[dict[str, float]]:
    """cycles/roofline as a product of five factors (GAP_STEPS); None when a figure is missing."""
    chain = [r.get("roofline_cycles"), r.get("bound_cycles"), r.get("ideal_cycles"), r.get("latency_cycles"),
             r.get("model_cycles"), r.get("cycles")]
    if not all(chain):
        return None
    return {name: chain[k + 1] / chain[k] for k, (name, _) in enumerate(GAP_STEPS)}


def _median(xs: list[float]) -> Optional[float]:
    return round(statistics.median(xs), 3) if xs else None


def summarize(rows: list[dict], configs: Sequence[str]) -> dict:
    out: dict = {"configs": {}}
    for c in configs:
        rs = [r for r in rows if r["config"] == c]
        ratios = [r["cycles_per_roofline"] for r in rs if r["cycles_per_roofline"] is not None]
        bounds = [r["cycles_per_bound"] for r in rs if r["cycles_per_bound"] is not None]
        out["configs"][c] = {
            "options": config_options(c), "rows": len(rs),
            "ok": sum(1 for r in rs if r["ok"] is True), "fail": sum(1 for r in rs if r["status"] == "fail"),
            "skipped": sum(1 for r in rs if r["status"] == "skipped"),
            "error": sum(1 for r in rs if r["status"] == "error"),
            "median_cycles_per_roofline": _median(ratios),
            "geomean_cycles_per_roofline": round(statistics.geometric_mean(ratios), 3) if ratios else None,
            "max_cycles_per_roofline": max(ratios, default=None),
            "median_cycles_per_bound": _median(bounds),
            "median_bound_per_roofline": _median([r["bound_per_roofline"] for r in rs
                                                  if r["bound_per_roofline"] is not None]),
            "median_traffic_per_compulsory": _median([r["traffic_per_compulsory"] for r in rs
                                                      if r["traffic_per_compulsory"] is not None]),
        }
    auto = [r for r in rows if r["config"] == "auto"]
    out["median_cycles_per_roofline_auto"] = out["configs"].get("auto", {}).get("median_cycles_per_roofline")
    out["above_2_auto"] = [{"kernel": r["kernel"], "cycles_per_roofline": r["cycles_per_roofline"],
                            "cycles_per_bound": r["cycles_per_bound"], "reason": r["reason"]}
                           for r in auto if r["cycles_per_roofline"] is not None and r["cycles_per_roofline"] > ABOVE]
    fits = [r for r in auto if r["band_fits"] and r["traffic_per_compulsory"] is not None]
    out["traffic_band_fits_auto"] = {
        "rows": len(fits),
        "max": max((r["traffic_per_compulsory"] for r in fits), default=None),
        "above_1_10": [{"kernel": r["kernel"], "traffic_per_compulsory": r["traffic_per_compulsory"]}
                       for r in fits if r["traffic_per_compulsory"] > TARGET_TRAFFIC],
        "band_too_big": [r["kernel"] for r in auto if r["band_fits"] is False],
        "untiled": [r["kernel"] for r in auto if r["band_fits"] is None and r["status"] != "skipped"],
    }
    steps = [g for g in (gap_steps(r) for r in auto) if g]
    out["gap_auto"] = {"kernels": len(steps), "geomean": {
        name: round(statistics.geometric_mean([g[name] for g in steps]), 3) for name, _ in GAP_STEPS} if steps else {}}
    comp = [r for r in rows if r["compile_cpu_s"] is not None]
    out["compile_s"] = {
        "max_cpu": max((r["compile_cpu_s"] for r in comp), default=None),
        "median_cpu": _median([r["compile_cpu_s"] for r in comp]),
        "max_wall": max((r["compile_s"] for r in comp), default=None),
        "median_wall": _median([r["compile_s"] for r in comp]),
        "above_10": [{"kernel": r["kernel"], "config": r["config"], "compile_cpu_s": r["compile_cpu_s"],
                      "compile_s": r["compile_s"]} for r in comp if r["compile_cpu_s"] > TARGET_COMPILE_S],
    }
    out["not_ok"] = [{"kernel": r["kernel"], "config": r["config"], "status": r["status"], "note": r["note"]}
                     for r in rows if r["status"] != "ok"]
    return out


MD_COLUMNS = (("kernel", "kernel"), ("options", "options"), ("ok", "ok"), ("cycles", "cycles"),
              ("roofline_cycles", "roofline"), ("cycles_per_roofline", "cycles/roofline"),
              ("bound_per_roofline", "bound/roofline"),
              ("words_moved", "words moved"), ("compulsory_words", "compulsory"),
              ("traffic_per_compulsory", "traffic/compulsory"), ("channel_words", "channel words"),
              ("lut", "LUT"), ("ff", "FF"), ("bram", "BRAM18"), ("dsp", "DSP"), ("compile_cpu_s", "compile s (CPU)"),
              ("sim_cycles_per_s", "sim cycles/s"))


def markdown(rows: list[dict], summary: dict, meta: dict) -> str:
    s = summary
    md = ["# dpn-synth benchmark: the example suite against the roofline", "",
          f"`{meta['command']}` on {meta['date']}, {meta.get('backend') or str(meta['jobs']) + ' jobs'}, "
          f"{meta['seconds']} s; "
          f"{meta['kernels']} kernels x configurations {', '.join(meta['configs'])}; "
          + ("RTL under Verilator (seed 0, no back-pressure, memory latency 4, one word per cycle per array port), "
             "checked bit for bit against gcc." if meta["rtl"] else "DPN-level figures only (`--no-rtl`).")
          + ("" if meta["estimate"] else " Resources: not estimated (`--estimate`).")
          + (f" Resources: {meta['yosys']}, `synth_xilinx -family xc7` (hierarchy kept; BRAM in BRAM18), rows of "
             f"{', '.join(meta['estimate_configs'])}." if meta["estimate"] and meta.get("yosys") else "")
          + (" Resources: yosys not found, columns empty." if meta["estimate"] and not meta.get("yosys") else ""),
          "", "## Summary", ""]
    med = s.get("median_cycles_per_roofline_auto")
    if med is None:
        md.append("- Median cycles/roofline (`--tile auto`): n/a (no RTL cycles"
                  + (": `--no-rtl`)." if not meta["rtl"] else ")."))
    else:
        md.append(f"- Median cycles/roofline (`--tile auto`): **{cell(med)}** "
                  f"(target <= {TARGET_MEDIAN}; {'met' if med <= TARGET_MEDIAN else 'not met'}).")
    for c, cs in s["configs"].items():
        verdicts = (f"{cs['ok']} ok, {cs['fail']} fail" if meta["rtl"]
                    else f"{cs['rows'] - cs['skipped'] - cs['error']} compiled")
        md.append(f"- `{cs['options']}`: {cs['rows']} rows, {verdicts}, {cs['skipped']} skipped, {cs['error']} error; "
                  + (f"cycles/roofline median {cell(cs['median_cycles_per_roofline'])}, geomean "
                     f"{cell(cs['geomean_cycles_per_roofline'])}, max {cell(cs['max_cycles_per_roofline'])}; "
                     f"cycles/bound median {cell(cs['median_cycles_per_bound'])}; " if meta["rtl"] else "")
                  + f"bound/roofline median {cell(cs['median_bound_per_roofline'])}.")
    t = s["traffic_band_fits_auto"]
    md.append(f"- Traffic/compulsory with `--tile auto` where the local-memory budget holds every tile band "
              f"({t['rows']} kernels): max {cell(t['max'])} (target <= {TARGET_TRAFFIC}"
              + ("; above: " + ", ".join(f"{x['kernel']} {x['traffic_per_compulsory']:.2f}" for x in t["above_1_10"])
                 if t["above_1_10"] else "") + ")"
              + (f"; bands larger than the budget: {', '.join(t['band_too_big'])}" if t["band_too_big"] else "")
              + (f"; not tiled by --tile auto: {', '.join(t['untiled'])}" if t["untiled"] else "") + ".")
    c = s["compile_s"]
    md.append(f"- Compile CPU seconds (front end to Verilog, the worker's own CPU time) per row: median "
              f"{cell(c['median_cpu'])}, max {cell(c['max_cpu'])} (target < {TARGET_COMPILE_S:.0f} s"
              + ("; above: " + ", ".join(f"{x['kernel']} {x['config']} {x['compile_cpu_s']:.1f} s"
                                         for x in c["above_10"]) if c["above_10"] else "")
              + f"); wall-clock median {cell(c['median_wall'])}, max {cell(c['max_wall'])} "
              "(depends on the load: the other worker's Verilator and Yosys runs share the cores).")
    md += ["", f"## `--tile auto` kernels above {ABOVE} x roofline", ""]
    if s["above_2_auto"]:
        md += ["| kernel | cycles/roofline | cycles/bound | reason |", "|---|---|---|---|"]
        md += [f"| {x['kernel']} | {cell(x['cycles_per_roofline'])} | {cell(x['cycles_per_bound'])} | "
               f"{(x['reason'] or '').replace('|', '/')} |" for x in s["above_2_auto"]]
    else:
        md.append("None.")
    gap = s.get("gap_auto", {})
    if gap.get("kernels"):
        md += ["", "## Where the gap comes from (`--tile auto`)", "",
               "cycles/roofline = bound/roofline x ideal/bound x latency/ideal x model/latency x cycles/model "
               f"(bench/README.md); geometric means over {gap['kernels']} kernels:", "",
               "| factor | geomean | meaning |", "|---|---|---|"]
        md += [f"| {name} | {gap['geomean'][name]:.2f} | {what} |" for name, what in GAP_STEPS]
        md += ["", "| kernel | cycles/roofline | " + " | ".join(n for n, _ in GAP_STEPS) + " |",
               "|---|---|" + "---|" * len(GAP_STEPS)]
        for r in rows:
            g = gap_steps(r) if r["config"] == "auto" else None
            if g:
                md.append(f"| {r['kernel']} | {r['cycles_per_roofline']:.2f} | "
                          + " | ".join(f"{g[n]:.2f}" for n, _ in GAP_STEPS) + " |")
    md += ["", "Reasons are computed from the network: *bound* = max(roofline, the instances of the busiest compute "
           "process, the words through the busiest array port), a lower bound on cycles at one iteration per cycle "
           "per process and one word per cycle per port; see bench/README.md.", ""]
    if s["not_ok"]:
        md += ["## Rows that are not ok", "", "| kernel | options | status | note |", "|---|---|---|---|"]
        md += [f"| {x['kernel']} | {config_options(x['config'])} | {x['status']} | {x['note'].replace('|', '/')} |"
               for x in s["not_ok"]]
        md.append("")
    md += ["## All rows", "", "| " + " | ".join(h for _, h in MD_COLUMNS) + " |", "|" + "---|" * len(MD_COLUMNS)]
    for r in rows:
        cells = []
        for k, _ in MD_COLUMNS:
            v = r[k]
            if k == "ok" and r["status"] != "ok":
                v = r["status"]
            cells.append(cell(v))
        md.append("| " + " | ".join(cells) + " |")
    md += ["", "Reasons for every row above 2.0 x roofline (all configurations) are in bench.csv / bench.json "
           "(`reason`).", ""]
    if meta.get("plots"):
        md += ["## Plots", "", *[f"- `{p}`" for p in meta["plots"]], ""]
    if meta.get("plot_note"):
        md += [f"Plots: {meta['plot_note']}", ""]
    return "\n".join(md)


def plots(rows: list[dict], out: Path) -> tuple[list[str], str]:
    """roofline.png and scaling.png; ([], note) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed (pip install 'dpn-synth[bench]'); PNG plots skipped"
    written = []
    auto = [r for r in rows if r["config"] == "auto" and r["cycles"] and r["intensity"]]
    if auto:
        fig, (ax, axn) = plt.subplots(1, 2, figsize=(15, 6.5))
        cmax = max(r["compute_processes"] for r in auto)
        bmax = max(r["memory_words_per_cycle"] for r in auto)
        xs = [r["intensity"] for r in auto]
        lo, hi = min(xs) / 2, max(xs) * 2
        ridge = cmax / bmax
        grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
        ax.plot(grid, [bmax * x for x in grid], "--", color="tab:blue", lw=1,
                label=f"memory roof: {bmax} words/cycle x intensity (suite max ports)")
        ax.plot(grid, [cmax] * len(grid), "-", color="tab:red", lw=1,
                label=f"compute roof: {cmax} instances/cycle (suite max compute processes)")
        ax.plot(grid, [min(cmax, bmax * x) for x in grid], color="black", lw=2, alpha=0.3)
        ax.axvline(ridge, color="grey", lw=0.5, ls=":")
        for r in auto:
            x, y = r["intensity"], r["instances_per_cycle"]
            att = min(r["compute_processes"], r["memory_words_per_cycle"] * x)
            ax.plot([x, x], [y, att], ":", color="grey", lw=0.8)
            ax.plot(x, att, marker="_", color="tab:red", ms=10)
            ax.plot(x, y, "o", color="tab:green" if r["ok"] else "tab:orange", ms=5)
            ax.annotate(r["kernel"], (x, y), fontsize=6, xytext=(3, -3), textcoords="offset points")
        ax.plot([], [], "o", color="tab:green", label="achieved (RTL, --tile auto)")
        ax.plot([], [], "_", color="tab:red", ms=10, label="the kernel's own roof min(P, B x I)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("operational intensity (statement instances per off-chip word moved)")
        ax.set_ylabel("achieved throughput (statement instances per cycle)")
        ys = [r["instances_per_cycle"] for r in auto]
        ax.set_ylim(min(ys) / 1.5, max(cmax, bmax * max(xs)) * 1.5)
        ax.set_title("Roofline, --tile auto")
        ax.legend(fontsize=7, loc="upper left")
        # normalized: every kernel against its own roofs (x / ridge, y / compute roof): one common roof.
        nx = [r["intensity"] * r["memory_words_per_cycle"] / r["compute_processes"] for r in auto]
        lo, hi = min(nx + [1]) / 2, max(nx + [1]) * 2
        grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
        axn.plot(grid, [min(1.0, x) for x in grid], color="black", lw=1.5, label="roof: min(1, I / ridge)")
        for r, x in zip(auto, nx):
            y = r["instances_per_cycle"] / r["compute_processes"]
            axn.plot(x, y, "o", color="tab:green" if r["ok"] else "tab:orange", ms=5)
            axn.annotate(r["kernel"], (x, y), fontsize=6, xytext=(3, -3), textcoords="offset points")
        axn.set_xscale("log")
        axn.set_yscale("log")
        axn.set_xlabel("intensity / the kernel's ridge point (compute processes / memory ports)")
        axn.set_ylabel("achieved / compute roof")
        ny = [r["instances_per_cycle"] / r["compute_processes"] for r in auto]
        axn.set_ylim(min(ny + [0.5]) / 1.5, 1.5)
        axn.set_title("Per-kernel roofs (normalized)")
        axn.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        fig.savefig(out / "roofline.png", dpi=130)
        plt.close(fig)
        written.append("roofline.png")
    by_kernel: dict[str, dict[int, int]] = {}
    for r in rows:
        if r["cycles"] and r["config"] != "none":
            by_kernel.setdefault(r["kernel"], {})[config_parallel(r["config"])] = r["cycles"]
    series = {k: v for k, v in by_kernel.items() if len(v) >= 2 and 1 in v}
    if series:
        fig, (ax, axs) = plt.subplots(1, 2, figsize=(14, 6))
        ps = sorted({p for v in series.values() for p in v})
        cmap = plt.get_cmap("tab20")
        for n, (k, v) in enumerate(sorted(series.items())):
            pts = sorted(v.items())
            style = dict(color=cmap(n % 20), ls="-" if n < 20 else "--", marker="o", lw=1, ms=3)
            ax.plot([p for p, _ in pts], [c for _, c in pts], **style)
            ax.annotate(k, pts[-1], fontsize=6, xytext=(3, 0), textcoords="offset points")
            axs.plot([p for p, _ in pts], [v[1] / c for _, c in pts], **style)
            axs.annotate(k, (pts[-1][0], v[1] / pts[-1][1]), fontsize=6, xytext=(3, 0), textcoords="offset points")
        axs.plot(ps, ps, "k--", lw=1, label="ideal (speed-up = P)")
        for a in (ax, axs):
            a.set_xscale("log", base=2)
            a.set_xticks(ps, [str(p) for p in ps])
            a.set_xlabel("--parallel P (with --tile auto)")
        ax.set_yscale("log")
        ax.set_ylabel("cycles (RTL)")
        ax.set_title("Cycles against P")
        axs.set_ylabel("speed-up: cycles(P = 1) / cycles(P)")
        axs.set_title("Speed-up against P")
        axs.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "scaling.png", dpi=130)
        plt.close(fig)
        written.append("scaling.png")
    return written, "" if written else "no rows with cycles to plot"


def write_results(rows: list[dict], summary: dict, meta: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    public = [{k: r.get(k) for k in FIELDS} for r in rows]
    (out / "bench.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": public}, indent=1) + "\n")
    (out / "bench.md").write_text(markdown(rows, summary, meta))


# --------------------------------------------------------------------------------------------------
# driver


def build_parser(prog: str = "python -m bench") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Run the example suite through the RTL back end and compare "
                                "cycles and off-chip traffic with the roofline (bench/README.md).")
    p.add_argument("--kernels", metavar="A,B", help="comma-separated example names (default: every example)")
    p.add_argument("--configs", metavar="C,D", default=",".join(DEFAULT_CONFIGS),
                   help="configurations: none (--tile none), auto (--tile auto), pN (--tile auto --parallel N), "
                        "pNs (the same with --read-ports shared), autow and pNw (with --mem-width 512); "
                        f"default {','.join(DEFAULT_CONFIGS)}")
    add_backend_options(p, "rows", "this checkout")
    p.add_argument("--no-rtl", action="store_true", help="DPN-level figures only: no Verilog simulation")
    p.add_argument("--estimate", action="store_true",
                   help="add Yosys synth_xilinx resources (LUT/FF/BRAM18/DSP) when yosys is available")
    p.add_argument("--estimate-configs", metavar="C,D",
                   help="with --estimate: synthesize only the rows of these configurations (default: all)")
    p.add_argument("--estimate-timeout", type=float, default=600.0, metavar="S",
                   help="seconds per Yosys run (default 600)")
    p.add_argument("--local-words", type=int, default=8192, metavar="W", help="local memory budget of --tile auto")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"give up on the remaining rows when one row takes longer than S seconds (default "
                        f"{DEFAULT_TIMEOUT:.0f})")
    p.add_argument("--out", type=Path, default=RESULTS, help="output directory (default bench/results)")
    p.add_argument("--no-plots", action="store_true", help="do not write the PNG plots")
    return p


def _progress(k: int, n: int, row: dict, t0: float) -> None:
    if row["status"] == "ok":
        what = (f"{row['cycles']} cycles, {row['cycles_per_roofline']:.2f} x roofline" if row["cycles"]
                else f"{row['words_moved']} words moved")
    else:
        what = f"{row['status']}: {row['note'][:100]}"
    print(f"[{k:>{len(str(n))}}/{n}] {row['kernel']} {row['options']}: {what} "
          f"({row.get('_seconds', 0):.1f} s; {time.perf_counter() - t0:.0f} s elapsed)", file=sys.stderr, flush=True)


def _row(task: dict, **values: object) -> dict:
    """A row the worker did not return (it died, or --timeout stopped it)."""
    r: dict = {k: None for k in FIELDS}
    r.update(kernel=Path(task["path"]).stem, config=task["config"], options=config_options(task["config"]), **values)
    return r


def _ensure_path() -> None:
    if str(ROOT) not in sys.path:  # tests.kernels, sim: the source checkout
        sys.path.insert(0, str(ROOT))


def main(argv: Optional[Sequence[str]] = None, prog: str = "python -m bench") -> int:
    args = build_parser(prog).parse_args(argv)
    _ensure_path()
    from tests.kernels import EXAMPLES

    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        try:
            parse_config(c)
        except ValueError as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 2
    paths = list(EXAMPLES)
    if args.kernels:
        want = [k.strip().removesuffix(".c") for k in args.kernels.split(",") if k.strip()]
        unknown = sorted(set(want) - {p.stem for p in paths})
        if unknown:
            print(f"{prog}: error: unknown kernel(s) {', '.join(unknown)} (examples: "
                  f"{', '.join(p.stem for p in paths)})", file=sys.stderr)
            return 2
        paths = [p for p in paths if p.stem in want]
    try:
        backend = Backend(jobs=args.jobs, scheduler=args.scheduler, local_cluster=args.dask)
    except UsageError as e:
        print(f"{prog}: error: {e.message}", file=sys.stderr)
        return 2
    from sim.rtl_runner import default_cache_root

    yosys = None
    if args.estimate:
        from hls import estimate as est

        cmd = est.find_yosys()
        yosys = est.yosys_version(cmd) if cmd else None
        if cmd is None:
            print(f"{prog}: note: {est.NOT_FOUND_MESSAGE}; resource columns stay empty", file=sys.stderr)
    est_configs = set(configs if not args.estimate_configs else
                      [c.strip() for c in args.estimate_configs.split(",") if c.strip()])
    tasks = [{"path": str(p), "config": c, "rtl": not args.no_rtl,
              "estimate": args.estimate and yosys is not None and c in est_configs,
              "estimate_timeout": args.estimate_timeout, "local_words": args.local_words,
              "cache_root": str(default_cache_root())} for p in paths for c in configs]
    t0 = time.perf_counter()
    rows: list[dict] = []
    print(f"bench: {len(tasks)} rows ({len(paths)} kernels x {len(configs)} configurations), "
          f"{backend.describe()}", file=sys.stderr, flush=True)
    try:  # workers get this process's sys.path (the checkout: _ensure_path); 8 rows each (isl keeps memory)
        for k, (i, row) in enumerate(map_unordered(measure, tasks, backend, timeout=args.timeout,
                                                   max_tasks_per_child=8), 1):
            if isinstance(row, TaskFailed):
                row = _row(tasks[i], status="error", note=_one_line(row.message))
            rows.append(row)
            _progress(k, len(tasks), row, t0)
    except NoProgress:
        print(f"bench: no row finished for {args.timeout:.0f} s; stopping the workers", file=sys.stderr)
    done = {(r["kernel"], r["config"]) for r in rows}
    for t in tasks:  # rows lost to --timeout
        if (Path(t["path"]).stem, t["config"]) not in done:
            rows.append(_row(t, status="error", note=f"not finished: a row exceeded --timeout {args.timeout:.0f} s"))
    order = {p.stem: k for k, p in enumerate(paths)}
    rows.sort(key=lambda r: (order[r["kernel"]], configs.index(r["config"])))
    summary = summarize(rows, configs)
    meta = {"command": f"{prog} " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M"), "jobs": args.jobs, "backend": backend.describe(),
            "configs": configs, "kernels": len(paths),
            "rtl": not args.no_rtl, "estimate": args.estimate, "yosys": yosys,
            "estimate_configs": [c for c in configs if c in est_configs], "local_words": args.local_words,
            "seconds": round(time.perf_counter() - t0, 1), "memory": "latency 4, interval 1 (one word per cycle "
            "per array port)", "plots": [], "plot_note": ""}
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.no_plots:
        meta["plots"], meta["plot_note"] = plots(rows, args.out)
        if meta["plot_note"]:
            print(f"bench: note: {meta['plot_note']}", file=sys.stderr)
    write_results(rows, summary, meta, args.out)
    print((args.out / "bench.md").read_text().split("## All rows")[0])
    print(f"bench: wrote {args.out}/bench.csv, bench.json, bench.md"
          + "".join(f", {p}" for p in meta["plots"]), file=sys.stderr)
    return 0
