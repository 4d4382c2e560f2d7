"""Timing closure benchmark: post-route Fmax on ECP5 per kernel and configuration.

Run: `python -m bench.timing [--configs auto,p4] [--kernels a,b] [--jobs N] [--clock-mhz F]
[--out DIR] [--name NAME] [--sim] [--no-cache]`.  Writes DIR/NAME.{csv,json,md} and DIR/NAME.png
(default bench/results/timing.*; the plot needs matplotlib).

Each (kernel, configuration) is compiled through the Python API for the clock target (parameters
from the kernel's `// dpn-synth-args:` line; configurations `none`, `auto` = --tile auto, `pN` =
--tile auto --parallel N, as in `python -m bench`), then synthesized and placed and routed by
`hls.pnr.place_and_route` (synth_ecp5, nextpnr-ecp5 on LFE5U-85F, out of context, router2).
Figures: post-route Fmax, LUT4 (TRELLIS_COMB), FF, MULT18X18D, DP16KD, the modelled cycles (the
compiler's cycle model, `estimated_cycles`) and time = cycles / Fmax in microseconds, with the
critical path named by process and kind (operator, control counter, channel FIFO, memory port,
handshake).  `--sim` adds the Verilator cycles (checked bit for bit against gcc).
Place and route takes 1-2 minutes per design: `--jobs` runs that many at once (default 1).
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_KERNELS = ("gemm-int", "gemv-float", "gemm", "jacobi-2d", "fir-int", "conv2d", "heat-3d", "int-divmod",
                   "atax", "seidel-2d")
TARGET_MIN_MHZ = 100.0
TARGET_MEDIAN_MHZ = 125.0

FIELDS = ("kernel", "config", "status", "clock_mhz", "fmax_mhz", "fmax_place_mhz", "lut4", "ff", "mult18", "dp16kd",
          "cycles", "time_us", "sim_cycles", "sim_ok", "critical_process", "critical_kind", "critical_path",
          "compile_s", "synth_s", "pnr_s", "cached", "note")


def _examples(names: Optional[Sequence[str]]) -> list[Path]:
    ex = {p.stem: p for p in sorted((ROOT / "examples").glob("*.c"))}
    if not names:
        return list(ex.values())
    missing = [n for n in names if n not in ex]
    if missing:
        raise SystemExit(f"unknown kernels: {', '.join(missing)} (see examples/)")
    return [ex[n] for n in names]


def run_one(job: dict) -> dict:
    """One row (runs in a worker process)."""
    sys.path.insert(0, str(ROOT))
    from bench.suite import parse_config
    from hls import pnr
    from hls.diagnostics import CompileError
    from hls.pipeline import Options, run
    from hls.rtl.clock import target_clock
    from hls.rtl.generate import generate
    from tests.kernels import example_params

    path = Path(job["path"])
    row = {k: None for k in FIELDS}
    row.update(kernel=path.stem, config=job["config"], clock_mhz=job["clock_mhz"], status="ok", note="")
    cfg = parse_config(job["config"])
    t0 = time.perf_counter()
    try:
        with target_clock(job["clock_mhz"]):
            res = run(Options(str(path), params=example_params(path), tile=cfg["tile"], parallel=cfg["parallel"]))
            design = generate(res.network)
    except CompileError as e:
        row.update(status="skipped", note=str(e.message)[:200])
        return row
    row["compile_s"] = round(time.perf_counter() - t0, 2)
    row["cycles"] = (res.timing or {}).get("estimated_cycles")
    if job.get("sim"):
        try:
            row["sim_cycles"], row["sim_ok"] = _simulate(res, design)
        except Exception as e:  # noqa: BLE001 - reported in the row
            row["note"] = f"sim: {e!r}"[:200]
    try:
        r = pnr.pnr_design(design, job["clock_mhz"], use_cache=not job.get("no_cache"), timeout=job["timeout"])
    except pnr.PnrError as e:
        row.update(status="error", note=str(e)[:300])
        return row
    cp = r.critical_path or {}
    row.update(fmax_mhz=r.fmax_mhz, fmax_place_mhz=r.fmax_place_mhz, lut4=r.lut4, ff=r.ff, mult18=r.mult18,
               dp16kd=r.dp16kd, critical_process=cp.get("process"), critical_kind=cp.get("kind"),
               critical_path=cp.get("summary"), synth_s=r.seconds_synth, pnr_s=r.seconds_pnr, cached=r.cached)
    if row["cycles"] and r.fmax_mhz:
        row["time_us"] = round(row["cycles"] / r.fmax_mhz, 3)
    return row


def _simulate(res, design) -> tuple[int, bool]:
    import tempfile

    import numpy as np

    from sim.gcc_ref import GccReference
    from sim.inputs import compare, random_inputs
    from sim.rtl_sim import run_rtl

    inputs = random_inputs(res.program, 0)
    expected = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    with tempfile.TemporaryDirectory(prefix="dpn-synth-timing-") as work:
        rtl = run_rtl(design, inputs, Path(work))
    ok = rtl.problem is None and not compare(expected, rtl.outputs)
    return rtl.cycles, ok


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return str(v)


def write_results(rows: list[dict], out: Path, name: str, clock: float) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in FIELDS})
    ok = [r for r in rows if r["status"] == "ok" and r["fmax_mhz"]]
    summary: dict = {"clock_mhz": clock, "rows": len(rows), "placed": len(ok)}
    if ok:
        fmax = [r["fmax_mhz"] for r in ok]
        summary.update(median_fmax_mhz=round(statistics.median(fmax), 1), min_fmax_mhz=min(fmax),
                       below_100=[f"{r['kernel']}/{r['config']}" for r in ok if r["fmax_mhz"] < TARGET_MIN_MHZ])
        us = [r["time_us"] for r in ok if r["time_us"]]
        if us:
            summary["median_time_us"] = round(statistics.median(us), 3)
    (out / f"{name}.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    cols = [("kernel", "kernel"), ("config", "config"), ("Fmax MHz", "fmax_mhz"), ("LUT4", "lut4"), ("FF", "ff"),
            ("MULT18", "mult18"), ("DP16KD", "dp16kd"), ("cycles", "cycles"), ("µs", "time_us")]
    if any(r.get("sim_cycles") for r in rows):
        cols.append(("sim cycles", "sim_cycles"))
    cols.append(("critical path", "critical_path"))
    lines = [f"# Post-route timing on ECP5 LFE5U-85F (target {clock:g} MHz)", "",
             "`python -m bench.timing`: synth_ecp5, nextpnr-ecp5 --85k --package CABGA381 --out-of-context "
             f"--freq {clock:g} --router router2; Fmax after routing; LUT4 = TRELLIS_COMB; cycles = the compiler's "
             "cycle model; µs = cycles / Fmax.", ""]
    if ok:
        lines.append(f"Median Fmax {summary['median_fmax_mhz']} MHz, minimum {summary['min_fmax_mhz']} MHz"
                     + (f", median time {summary['median_time_us']} µs" if "median_time_us" in summary else "")
                     + f"; below {TARGET_MIN_MHZ:g} MHz: {len(summary['below_100'])} of {len(ok)}.")
        lines.append("")
    lines.append("| " + " | ".join(c for c, _ in cols) + " |")
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['kernel']} | {r['config']} | {r['status']}: {r['note']} |" + " |" * (len(cols) - 3))
            continue
        cells = []
        for _, k in cols:
            v = r.get(k)
            if k == "critical_path" and v:
                v = v.replace("|", "\\|")
            cells.append(_fmt(v))
        lines.append("| " + " | ".join(cells) + " |")
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    _plot(ok, out / f"{name}.png", clock)
    return summary


def _plot(rows: list[dict], path: Path, clock: float) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: matplotlib is not installed; no plot (pip install 'dpn-synth[bench]')", file=sys.stderr)
        return
    if not rows:
        return
    configs = sorted({r["config"] for r in rows})
    kernels = sorted({r["kernel"] for r in rows})
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.8 * len(kernels)), 8), sharex=True)
    width = 0.8 / len(configs)
    for j, c in enumerate(configs):
        by = {r["kernel"]: r for r in rows if r["config"] == c}
        xs = [k + j * width for k in range(len(kernels))]
        axes[0].bar(xs, [by[k]["fmax_mhz"] if k in by else 0 for k in kernels], width, label=c)
        axes[1].bar(xs, [by[k]["time_us"] or 0 if k in by else 0 for k in kernels], width, label=c)
    for y, style in ((TARGET_MIN_MHZ, ":"), (TARGET_MEDIAN_MHZ, "--"), (clock, "-")):
        axes[0].axhline(y, color="grey", linestyle=style, linewidth=0.8)
    axes[0].set_ylabel("post-route Fmax (MHz)")
    axes[1].set_ylabel("time = cycles / Fmax (µs)")
    axes[1].set_yscale("log")
    axes[1].set_xticks([k + 0.4 - width / 2 for k in range(len(kernels))])
    axes[1].set_xticklabels(kernels, rotation=45, ha="right")
    axes[0].legend()
    axes[0].set_title(f"ECP5 LFE5U-85F, nextpnr-ecp5, target {clock:g} MHz")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.timing", description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", help="comma-separated example stems (default: a representative subset of 10; "
                                      "`all` for every example)")
    ap.add_argument("--configs", default="auto", help="comma-separated: none, auto, pN (default auto)")
    ap.add_argument("--jobs", type=int, default=1, help="place-and-route runs at once (default 1)")
    ap.add_argument("--clock-mhz", type=float, default=None, help="clock target (default 150)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per tool run (default 1800)")
    ap.add_argument("--sim", action="store_true", help="also simulate under Verilator (cycles, bit-exact check)")
    ap.add_argument("--no-cache", action="store_true", help="place and route again even when cached")
    ap.add_argument("--out", default=str(RESULTS), help="output directory (default bench/results)")
    ap.add_argument("--name", default="timing", help="file name stem (default timing)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from hls import pnr
    from hls.rtl.clock import DEFAULT_CLOCK_MHZ, check_clock

    if pnr.find_yosys() is None or pnr.find_nextpnr() is None:
        print(f"error: {pnr.NEXTPNR_NOT_FOUND if pnr.find_yosys() else pnr.YOSYS_NOT_FOUND}", file=sys.stderr)
        return 2
    clock = check_clock(args.clock_mhz if args.clock_mhz is not None else DEFAULT_CLOCK_MHZ)
    names = None if args.kernels == "all" else (args.kernels.split(",") if args.kernels else list(DEFAULT_KERNELS))
    paths = _examples(names)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    jobs = [{"path": str(p), "config": c, "clock_mhz": clock, "sim": args.sim, "no_cache": args.no_cache,
             "timeout": args.timeout} for p in paths for c in configs]
    rows: list[dict] = []
    t0 = time.perf_counter()

    def report(r: dict) -> None:
        rows.append(r)
        fm = f"{r['fmax_mhz']:.1f} MHz" if r.get("fmax_mhz") else r["status"]
        print(f"[{len(rows)}/{len(jobs)}] {r['kernel']} {r['config']}: {fm}"
              + (f", {r['cycles']} cycles, {r['time_us']} us" if r.get("time_us") else "")
              + (f"; {r['critical_path']}" if r.get("critical_path") else (f"; {r['note']}" if r.get("note") else "")),
              flush=True)

    if args.jobs <= 1:
        for j in jobs:
            report(run_one(j))
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            for r in pool.imap_unordered(run_one, jobs):
                report(r)
    order = {(Path(j["path"]).stem, j["config"]): k for k, j in enumerate(jobs)}
    rows.sort(key=lambda r: order[(r["kernel"], r["config"])])
    summary = write_results(rows, Path(args.out), args.name, clock)
    print(f"wrote {Path(args.out) / args.name}.{{csv,json,md}} in {time.perf_counter() - t0:.0f} s: "
          + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
