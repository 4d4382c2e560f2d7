"""Timing closure benchmark: post-route Fmax on ECP5 per kernel and configuration.

Run: `python -m bench.timing [--configs auto,p4] [--kernels a,b] [--designs K/C,...] [--jobs N]
[--clock-mhz F] [--out DIR] [--name NAME] [--sim] [--seed S] [--no-cache] [--rev REV]`.  Writes
DIR/NAME.{csv,json,md} and DIR/NAME.png (default bench/results/timing.*; the plot needs matplotlib).
`python -m bench.timing --compare BEFORE AFTER [--out DIR]` writes DIR/timing-compare.md from two
such runs' NAME.json.

Each (kernel, configuration) is compiled through the Python API for the clock target (parameters
from the kernel's `// dpn-synth-args:` line; configurations `none`, `auto` = --tile auto, `pN` =
--tile auto --parallel N, as in `python -m bench`), then synthesized and placed and routed by
`hls.pnr.place_and_route` (synth_ecp5, nextpnr-ecp5 on LFE5U-85F, out of context, router2).
Figures: post-route Fmax, LUT4 (TRELLIS_COMB), FF, MULT18X18D, DP16KD, the modelled cycles (the
compiler's cycle model, `estimated_cycles`) and time = cycles / Fmax in microseconds, with the
critical path named by process and kind (operator, control counter, channel FIFO, memory port,
handshake).  `--sim` adds the Verilator cycles (checked bit for bit against gcc).
Place and route takes 1-2 minutes per design: `--jobs` runs that many at once (default 1).

`--rev REV` measures the RTL of an older revision (e.g. the one before the clock target and the
pipelined multipliers, to measure their gain rather than claim it): that revision may predate
`hls.pnr` and the Python API used here, so each kernel is compiled by REV's own CLI (`python -m
hls.cli compile`, in a detached `git worktree` of REV, with cwd and PYTHONPATH there so its code is
imported), and the RTL it wrote is placed and routed by *this* checkout's `place_and_route`, so both
sides go through one flow.  Cycles are REV's modelled cycles (its report.json `estimated_cycles`).
"""

from __future__ import annotations

import argparse
import csv
import json
import contextlib
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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
    from hls import pnr

    path = Path(job["path"])
    row = {k: None for k in FIELDS}
    row.update(kernel=path.stem, config=job["config"], clock_mhz=job["clock_mhz"], status="ok", note="")
    t0 = time.perf_counter()
    got = _compile_rev(job, row) if job.get("rev_src") else _compile_here(job, row)
    if got is None:
        return row
    files, top = got
    row["compile_s"] = round(time.perf_counter() - t0, 2)
    try:
        r = pnr.place_and_route(files, top, job["clock_mhz"], use_cache=not job.get("no_cache"),
                                timeout=job["timeout"], seed=job.get("seed", 1))
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


def _compile_here(job: dict, row: dict) -> Optional[tuple[dict, str]]:
    """This checkout's compiler for the clock target: (RTL files, top), or None (row says why)."""
    from bench.suite import parse_config
    from hls.diagnostics import CompileError
    from hls.pipeline import Options, run
    from hls.rtl.clock import target_clock
    from hls.rtl.generate import generate
    from tests.kernels import example_params

    path = Path(job["path"])
    cfg = parse_config(job["config"])
    try:
        with target_clock(job["clock_mhz"]):
            res = run(Options(str(path), params=example_params(path), tile=cfg["tile"], parallel=cfg["parallel"],
                              read_ports=cfg["read_ports"], mem_width=cfg["mem_width"]))
            design = generate(res.network)
    except CompileError as e:
        row.update(status="skipped", note=str(e.message)[:200])
        return None
    row["cycles"] = (res.timing or {}).get("estimated_cycles")
    if job.get("sim"):
        try:
            row["sim_cycles"], row["sim_ok"] = _simulate(res, design)
        except Exception as e:  # noqa: BLE001 - reported in the row
            row["note"] = f"sim: {e!r}"[:200]
    return dict(design.rtl), design.top


def _compile_rev(job: dict, row: dict) -> Optional[tuple[dict, str]]:
    """`--rev`: the worktree's CLI compiles its own copy of the kernel (parameters as this checkout
    reads them); (RTL files of OUT/rtl, top of OUT/tb/config.json or the `*_top.v` file), or None."""
    from bench.suite import parse_config
    from tests.kernels import cli_args

    src = Path(job["rev_src"])
    path = src / "examples" / Path(job["path"]).name
    if not path.is_file():
        row.update(status="skipped", note=f"not in {job['rev']}")
        return None
    cfg = parse_config(job["config"])
    with tempfile.TemporaryDirectory(prefix="dpn-synth-timing-rev-") as work:
        out = Path(work) / "out"
        cmd = [sys.executable, "-m", "hls.cli", "compile", str(path), "--tile", cfg["tile"],
               *(["--parallel", str(cfg["parallel"])] if cfg["parallel"] > 1 else []),
               *(["--read-ports", "shared"] if cfg["read_ports"] == "shared" and cfg["parallel"] > 1 else []),
               *(["--mem-width", str(cfg["mem_width"])] if cfg["mem_width"] else []),
               *cli_args(path),
               "-q", "-o", str(out)]
        try:
            proc = subprocess.run(cmd, cwd=src, env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True,
                                  text=True, timeout=job["timeout"])
        except subprocess.TimeoutExpired:
            row.update(status="error", note=f"{job['rev']} compile did not finish in {job['timeout']:g} s")
            return None
        if proc.returncode != 0 or not (out / "rtl").is_dir():
            row.update(status="skipped" if proc.returncode == 2 else "error",
                       note=f"{job['rev']} compile (exit {proc.returncode}): {proc.stderr.strip()[-200:]}")
            return None
        # the Verilog sources only: a revision's CLI also writes its file list (`files.f`) there
        files = {f.name: f.read_text() for f in sorted((out / "rtl").iterdir()) if f.is_file() and f.suffix in (".v", ".sv")}
        tb = out / "tb" / "config.json"
        tops = [n[:-2] for n in files if n.endswith("_top.v")]
        top = json.loads(tb.read_text())["top"] if tb.is_file() else (tops[0] if len(tops) == 1 else None)
        if top is None:
            row.update(status="error", note=f"no top module among {sorted(files)}"[:200])
            return None
        row["cycles"] = json.loads((out / "report.json").read_text()).get("summary", {}).get("estimated_cycles")
    return files, top


@contextlib.contextmanager
def _worktree(rev: str):
    """A detached worktree of `rev` in a temporary directory, removed (and pruned) afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="dpn-synth-rev-"))
    wt = tmp / "src"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(wt), rev], check=True)
    try:
        yield wt
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], check=False)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


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


def write_results(rows: list[dict], out: Path, name: str, clock: float, rev: Optional[str] = None,
                  seed: int = 1) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in FIELDS})
    ok = [r for r in rows if r["status"] == "ok" and r["fmax_mhz"]]
    summary: dict = {"clock_mhz": clock, "rows": len(rows), "placed": len(ok), **({"rev": rev} if rev else {}),
                     **({"seed": seed} if seed != 1 else {})}
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
    if rev:
        lines[2:2] = [f"RTL and cycles of revision {rev} (`--rev`: compiled by that revision's CLI), placed and "
                      "routed by this checkout's flow.", ""]
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


def write_compare(out: Path, before: str, after: str) -> Path:
    """OUT/timing-compare.md: per kernel and configuration of both runs, Fmax, cycles and µs before ->
    after and the critical path after; medians over the rows placed in both."""
    runs = [json.loads((out / f"{n}.json").read_text()) for n in (before, after)]
    by = [{(r["kernel"], r["config"]): r for r in run["rows"]} for run in runs]
    keys = [k for k in by[1] if k in by[0]]
    both = [k for k in keys if all(b[k]["status"] == "ok" and b[k]["fmax_mhz"] for b in by)]

    def arrow(k, f):
        return " -> ".join(_fmt(b[k].get(f)) or "-" for b in by)

    lines = [f"# Post-route timing on ECP5: `{before}` -> `{after}`", "",
             f"`python -m bench.timing --compare {before} {after}`; before: "
             + (f"revision {runs[0]['summary']['rev']}" if runs[0]["summary"].get("rev") else "this checkout")
             + ", after: " + (f"revision {runs[1]['summary']['rev']}" if runs[1]["summary"].get("rev")
                               else "this checkout")
             + f"; target {runs[1]['summary']['clock_mhz']:g} MHz; µs = modelled cycles / post-route Fmax.", ""]
    if both:
        lines += ["| | before | after |", "|---|---|---|"]
        for label, f in (("median Fmax MHz", lambda v: round(statistics.median(v), 1)), ("min Fmax MHz", min),
                         (f"below {TARGET_MIN_MHZ:g} MHz", lambda v: sum(x < TARGET_MIN_MHZ for x in v))):
            lines.append(f"| {label} | " + " | ".join(_fmt(f([b[k]["fmax_mhz"] for k in both])) for b in by) + " |")
        ratios = {f: [by[1][k][f] / by[0][k][f] for k in both if by[0][k].get(f) and by[1][k].get(f)]
                  for f in ("fmax_mhz", "cycles", "time_us")}
        lines += ["", f"Over the {len(both)} designs placed in both runs, after / before: median Fmax ratio "
                  f"{statistics.median(ratios['fmax_mhz']):.2f}, median cycles ratio "
                  f"{statistics.median(ratios['cycles']):.2f}, median time (µs) ratio "
                  f"{statistics.median(ratios['time_us']):.2f} (min {min(ratios['time_us']):.2f}, "
                  f"max {max(ratios['time_us']):.2f}).", ""]
    lines += ["| kernel | config | Fmax MHz | cycles | µs | µs after/before | LUT4 | MULT18 | critical path after |",
              "|---|---|---|---|---|---|---|---|---|"]
    for k in keys:
        ratio = (by[1][k]["time_us"] / by[0][k]["time_us"]) if k in both and by[0][k].get("time_us") \
            and by[1][k].get("time_us") else None
        cp = by[1][k].get("critical_path") or "; ".join(f"{b[k]['status']}: {b[k]['note']}" for b in by
                                                        if b[k]["status"] != "ok")
        lines.append(f"| {k[0]} | {k[1]} | {arrow(k, 'fmax_mhz')} | {arrow(k, 'cycles')} | {arrow(k, 'time_us')} | "
                     f"{_fmt(ratio)} | {arrow(k, 'lut4')} | {arrow(k, 'mult18')} | {cp.replace('|', chr(92) + '|')} |")
    missing = [f"{k[0]}/{k[1]}" for k in by[0] if k not in by[1]] + [f"{k[0]}/{k[1]}" for k in by[1] if k not in by[0]]
    if missing:
        lines += ["", "In one run only: " + ", ".join(missing) + "."]
    path = out / "timing-compare.md"
    path.write_text("\n".join(lines) + "\n")
    return path


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
    ap.add_argument("--designs", help="comma-separated KERNEL/CONFIG pairs instead of --kernels x --configs "
                                      "(e.g. a subset measured in full on both sides of a --compare)")
    ap.add_argument("--jobs", type=int, default=1, help="place-and-route runs at once (default 1)")
    ap.add_argument("--clock-mhz", type=float, default=None, help="clock target (default 150)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per tool run (default 1800)")
    ap.add_argument("--sim", action="store_true", help="also simulate under Verilator (cycles, bit-exact check)")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr placement seed (default 1; another seed "
                    "shows how much of a difference between two runs is placement noise)")
    ap.add_argument("--no-cache", action="store_true", help="place and route again even when cached")
    ap.add_argument("--out", default=str(RESULTS), help="output directory (default bench/results)")
    ap.add_argument("--name", default="timing", help="file name stem (default timing)")
    ap.add_argument("--rev", help="measure the RTL of this git revision, compiled by its own CLI in a temporary "
                                  "worktree (cycles: its cycle model)")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                    help="only write OUT/timing-compare.md from OUT/BEFORE.json and OUT/AFTER.json")
    args = ap.parse_args(argv)
    if args.compare:
        path = write_compare(Path(args.out), *args.compare)
        print(f"wrote {path}")
        return 0
    if args.rev and args.sim:
        ap.error("--sim is not available with --rev")
    sys.path.insert(0, str(ROOT))
    from hls import pnr
    from hls.rtl.clock import DEFAULT_CLOCK_MHZ, check_clock

    if pnr.find_yosys() is None or pnr.find_nextpnr() is None:
        print(f"error: {pnr.NEXTPNR_NOT_FOUND if pnr.find_yosys() else pnr.YOSYS_NOT_FOUND}", file=sys.stderr)
        return 2
    clock = check_clock(args.clock_mhz if args.clock_mhz is not None else DEFAULT_CLOCK_MHZ)
    if args.designs:
        pairs = [d.strip().split("/") for d in args.designs.split(",") if d.strip()]
        designs = [(p, c) for p, (_, c) in zip(_examples([k for k, _ in pairs]), pairs)]
    else:
        names = None if args.kernels == "all" else (args.kernels.split(",") if args.kernels else list(DEFAULT_KERNELS))
        configs = [c.strip() for c in args.configs.split(",") if c.strip()]
        designs = [(p, c) for p in _examples(names) for c in configs]
    jobs = [{"path": str(p), "config": c, "clock_mhz": clock, "sim": args.sim, "no_cache": args.no_cache,
             "timeout": args.timeout, "seed": args.seed} for p, c in designs]
    rev = None
    with contextlib.ExitStack() as stack:
        if args.rev:
            sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", f"{args.rev}^{{commit}}"],
                                 capture_output=True, text=True, check=False).stdout.strip()
            if not sha:
                print(f"error: unknown revision `{args.rev}`", file=sys.stderr)
                return 2
            rev = sha
            src = stack.enter_context(_worktree(sha))
            for j in jobs:
                j.update(rev=sha, rev_src=str(src))
        rows, seconds = _run_jobs(jobs, args.jobs)
    summary = write_results(rows, Path(args.out), args.name, clock, rev, args.seed)
    print(f"wrote {Path(args.out) / args.name}.{{csv,json,md}} in {seconds:.0f} s: " + json.dumps(summary))
    return 0


def _run_jobs(jobs: list[dict], n: int) -> tuple[list[dict], float]:
    rows: list[dict] = []
    t0 = time.perf_counter()

    def report(r: dict) -> None:
        rows.append(r)
        fm = f"{r['fmax_mhz']:.1f} MHz" if r.get("fmax_mhz") else r["status"]
        print(f"[{len(rows)}/{len(jobs)}] {r['kernel']} {r['config']}: {fm}"
              + (f", {r['cycles']} cycles, {r['time_us']} us" if r.get("time_us") else "")
              + (f"; {r['critical_path']}" if r.get("critical_path") else (f"; {r['note']}" if r.get("note") else "")),
              flush=True)

    if n <= 1:
        for j in jobs:
            report(run_one(j))
    else:
        with mp.get_context("spawn").Pool(n) as pool:
            for r in pool.imap_unordered(run_one, jobs):
                report(r)
    order = {(Path(j["path"]).stem, j["config"]): k for k, j in enumerate(jobs)}
    rows.sort(key=lambda r: order[(r["kernel"], r["config"])])
    return rows, time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
