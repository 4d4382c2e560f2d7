"""Throughput at scale (issue 21): speed-up of `--parallel P` over `--parallel 1` on the PolyBench-like
examples at the PolyBench/C 4.2 SMALL sizes, beside the Stream-HLS (FPGA'25) cycle counts.

Run: `python -m bench.parallel_scaling [--kernels a,b] [--parallel 1,16,64] [--sim] [--stall P]
[--mem-width BITS] [--estimate] [--own-sizes] [--timeout S] [--out NAME] [--no-plot]`.
Writes bench/results/NAME.{csv,json,md} (default NAME `parallel-scaling`; a NAME with a `/` is a path
stem, e.g. `--out /tmp/ps-test`) and, with matplotlib and without --no-plot, NAME.png: speed-up against
P per kernel, log-log, with the ideal line (speed-up = P) and the issue's targets.

Each (kernel, P) is one child process from the repository root, one at a time (the figures are cycles,
but the CPU seconds are only comparable on a machine that is not shared further):
  without --sim  `python -m hls.cli compile EXAMPLE --tile auto --parallel P ARGS -o TMP -q`, figures from
                 TMP/report.json `summary`;
  with --sim     `python -m hls.cli sim EXAMPLE --tile auto --parallel P ARGS [--stall S] --json`: the same
                 compile, then Verilator against gcc on random inputs (exit 0 = bit-exact, 1 = mismatch or
                 deadlock, 2 = refused);
  --estimate     also `python -m hls.cli estimate ... --target xc7 --json` (Yosys synth_xilinx: minutes);
  --mem-width    passed to every command.
ARGS are the SMALL sizes written in the example's own knobs (`SMALL_SIZES`: `-DNI=60` for an
overridable macro, `--param n=90` for a `// dpn-synth-args:` parameter), or with --own-sizes the
example's own sizes (a check that runs in a minute; the Stream-HLS columns are then left empty).
A row that fails, is refused or passes --timeout (wall seconds, default 1800; the child's process group
is killed) is recorded with its status and the last line of its stderr; the run goes on.

Columns (NAME.csv, NAME.json `rows`):
  kernel, size, dtype     the example, its knob values, the element type of its arrays (ours are mostly
                          double; Stream-HLS measured float32)
  parallel                P, the `--parallel` value
  status, note            ok / fail (mismatch or deadlock) / refused (exit 2) / timeout / error; why not ok
  compute_processes       compute processes of the network (slabs x statements after merging)
  instances               statement instances (`summary.statement_instances`)
  model_cycles            the compiler's cycle model (`estimated_cycles`)
  sim_cycles              Verilator cycles from start to done (--sim)
  bit_exact, mismatches   every output word equal to gcc's (--sim); differing words
  cycles, basis           the row's cycles: simulated when the simulation was bit-exact, else modelled
  speedup, speedup_basis  P = 1's cycles / this row's, simulated when both rows have bit-exact simulated
                          cycles, else modelled on both sides (`sim` / `model`); empty without a P = 1 row
  efficiency              instances / (cycles x compute processes): 1.0 = every compute process busy
                          every cycle
  roofline_cycles         `hls.metrics.traffic`: max(instances / compute processes, the busiest array's
                          compulsory words through its memory channels)
  cycles_per_roofline     cycles / roofline_cycles
  streamhls_cycles, streamhls_dsp, ours_per_streamhls
                          Stream-HLS's published float32 cycles (and DSPs where given) at the SMALL size;
                          our cycles / theirs (below 1: fewer cycles than Stream-HLS)
  dsp, lut, ff, bram      Yosys xc7 estimate (--estimate): DSP48E1, LUTs, flip-flops, BRAM18
  cpu_s, wall_s           the child's CPU seconds (user + sys, os.wait4: Python start-up included; with
                          --sim also gcc, the Verilator build, when not cached, and the run) and wall seconds
  compile_s, sim_s        wall seconds of the compile (the compile child; with --sim the compile step inside
                          `sim`, start-up excluded) and of the gcc reference + Verilator build and run
  estimate_cpu_s          CPU seconds of the estimate child
  tiling                  the tile sizes and point order `--tile auto` chose
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from bench.scaling import child_env, git_output, out_stem, run_measured, size_knobs, warm_bytecode
from bench.stall import kernel_args

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = "parallel-scaling"
DEFAULT_PARALLEL = (1, 16, 64)
DEFAULT_TIMEOUT = 1800.0

# PolyBench/C 4.2 SMALL_DATASET sizes written in each example's own knob names (macros become -DNAME=V,
# `// dpn-synth-args:` parameters --param name=V; which is which is read from the example). The
# examples keep PolyBench's array shapes, so the names map one to one:
#   gemm, 2mm, 3mm: NI, NJ, NK (NL, NM) as in PolyBench;
#   syrk:    C is N x N, A is N x M, as PolyBench (M=60, N=80);
#   atax:    A is m x n, PolyBench's A[M][N] (M=116, N=124), as run-time parameters;
#   bicg:    A is n x m, PolyBench's A[N][M] (M=116, N=124), as run-time parameters;
#   gesummv: n = PolyBench N (90), a run-time parameter; mvt: N (120);
#   conv2d:  no PolyBench kernel: H = W = 82 gives (H-2) x (W-2) x (1 + 9) = 64,000 instances, about those
#            of the small matrix kernels.
SMALL_SIZES: dict[str, dict[str, int]] = {
    "gemm": {"NI": 60, "NJ": 70, "NK": 80},
    "2mm": {"NI": 40, "NJ": 50, "NK": 70, "NL": 80},
    "3mm": {"NI": 40, "NJ": 50, "NK": 60, "NL": 70, "NM": 80},
    "syrk": {"M": 60, "N": 80},
    "atax": {"m": 116, "n": 124},
    "bicg": {"m": 116, "n": 124},
    "gesummv": {"n": 90},
    "mvt": {"N": 120},
    "conv2d": {"H": 82, "W": 82},
}
SIZE_NOTES = {"conv2d": "size chosen here (no PolyBench kernel), 64,000 instances"}

# Stream-HLS (FPGA'25) at the SMALL sizes, float32: cycles, and DSPs where the paper's table gives them.
STREAM_HLS_CYCLES = {"gemm": 24051, "2mm": 36352, "3mm": 49092, "atax": 2180, "bicg": 1112, "gesummv": 673,
                     "mvt": 667}
STREAM_HLS_DSP = {"gemm": 2552}

# The speed-up figures hold for the compute-bound kernels (O(n^3) work on O(n^2) words, and the
# convolution's nine multiplies per input word); the matrix-vector kernels are bounded by their memory.
COMPUTE_BOUND = ("gemm", "2mm", "3mm", "syrk", "conv2d")
TARGETS = {16: 12.0, 64: 40.0}  # P -> the least speed-up over P = 1

FIELDS = (
    "kernel", "size", "dtype", "parallel", "status", "note", "compute_processes", "instances", "model_cycles",
    "sim_cycles", "bit_exact", "mismatches", "cycles", "basis", "speedup", "speedup_basis", "efficiency",
    "roofline_cycles", "cycles_per_roofline", "streamhls_cycles", "streamhls_dsp", "ours_per_streamhls", "dsp",
    "lut", "ff", "bram", "estimate_status", "estimate_note", "cpu_s", "wall_s", "compile_s", "sim_s",
    "estimate_cpu_s", "tiling", "args",
)
TYPE_RE = re.compile(r"\b((?:unsigned\s+|signed\s+)?(?:long\s+long|long|int|short|char)|float|double|"
                     r"_Float16|u?int(?:8|16|32|64)_t)\s+\w+\s*\[")


# --------------------------------------------------------------------------------------------------
# kernels and their sizes


def kernel_plan(name: str, path: Path, own_sizes: bool) -> dict:
    """The example's size arguments and their text, or why the SMALL size cannot be written in its knobs:
    a knob name that is neither a `--param` nor an overridable macro of the file would be silently
    ignored by the compiler, and the row would measure the example's own size under the SMALL label."""
    knobs = size_knobs(path)
    own = kernel_args(path)
    if own_sizes:
        vals = {**knobs["macros"], **knobs["params"]}
        shown = [n for n in SMALL_SIZES.get(name, {}) if n in vals] or knobs["scaled"]
        return {"args": own, "size": " ".join(f"{n}={vals[n]}" for n in shown) or "(own)", "why_not": ""}
    sizes = SMALL_SIZES[name]
    missing = [n for n in sizes if n not in knobs["params"] and n not in knobs["macros"]]
    if missing:
        return {"args": [], "size": "", "why_not": f"examples/{path.name} has no knob {', '.join(missing)}"}
    args = _with_params(own, {n: v for n, v in sizes.items() if n in knobs["params"]})
    args += [f"-D{n}={v}" for n, v in sizes.items() if n not in knobs["params"]]
    return {"args": args, "size": " ".join(f"{n}={v}" for n, v in sizes.items()), "why_not": ""}


def _with_params(args: list[str], params: dict[str, int]) -> list[str]:
    """The example's own arguments with its `--param` values replaced (other options kept as they are)."""
    out, k = [], 0
    while k < len(args):
        if args[k] == "--param" and k + 1 < len(args) and args[k + 1].split("=")[0] in params:
            name = args[k + 1].split("=")[0]
            out += ["--param", f"{name}={params[name]}"]
            k += 2
            continue
        out.append(args[k])
        k += 1
    return out


def element_types(path: Path) -> str:
    """The element types of the example's array parameters: the Stream-HLS figures are float32, and a
    double datapath is deeper and uses more DSPs, which the comparison should not hide."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
    types = [" ".join(t.split()) for t in TYPE_RE.findall(code)]
    return "/".join(dict.fromkeys(types)) or "?"


# --------------------------------------------------------------------------------------------------
# one (kernel, P)


def tool_argv(command: str, path: Path, args: list[str], parallel: int, opts: argparse.Namespace) -> list[str]:
    """`python -m hls.cli COMMAND ...` with the options every row shares, so that compile, sim and estimate
    measure the same network."""
    argv = [sys.executable, "-m", "hls.cli", command, str(path.relative_to(ROOT)), "--tile", "auto",
            "--parallel", str(parallel), *args]
    if opts.mem_width:
        argv += ["--mem-width", str(opts.mem_width)]
    return argv


def run_child(argv: list[str], timeout: float) -> dict:
    """run_measured (bench.scaling): its own process group, killed past `timeout` wall seconds; CPU of the
    child and its waited-for descendants from os.wait4."""
    tmp = Path(tempfile.mkdtemp(prefix="dpn-pscale-"))
    try:
        return run_measured(argv, ROOT, child_env(ROOT), timeout, "wall", timeout, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def last_line(text: str, n: int = 300) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:n] if lines else ""


def failed_status(r: dict, timeout: float) -> Optional[tuple[str, str]]:
    """(status, note) of a child that did not end with exit 0 or 1, else None."""
    if r["timed_out"]:
        return "timeout", f"> {timeout:g} s wall: process group killed after {r['cpu_s']:.1f} s CPU"
    if r["exit"] == 2:
        return "refused", last_line(r["stderr"]) or "exit 2"
    if r["exit"] not in (0, 1):
        return "error", last_line(r["stderr"]) or f"exit {r['exit']}"
    return None


def _tile_text(tiling: object) -> str:
    if isinstance(tiling, dict):
        sizes = "x".join(map(str, tiling.get("sizes") or [])) or "untiled"
        return f"{sizes} {tiling.get('point_order', '')}".strip()
    m = re.search(r"tiles ([0-9x]+)", str(tiling or ""))
    order = re.search(r"\((\w+) point order\)", str(tiling or ""))
    return " ".join(x.group(1) for x in (m, order) if x) or str(tiling or "")


def compile_fields(path: Path, args: list[str], parallel: int, opts: argparse.Namespace) -> dict:
    """The figures of `compile`'s report.json."""
    with tempfile.TemporaryDirectory(prefix="dpn-pscale-out-") as tmp:
        r = run_child(tool_argv("compile", path, args, parallel, opts) + ["-o", tmp, "-q"], opts.timeout)
        row = {"cpu_s": round(r["cpu_s"], 2), "wall_s": round(r["wall_s"], 1), "compile_s": round(r["wall_s"], 1)}
        bad = failed_status(r, opts.timeout) or (("error", last_line(r["stderr"]) or "exit 1") if r["exit"] else None)
        report = Path(tmp) / "report.json"
        if bad is None and not report.exists():
            bad = ("error", "no report.json")
        if bad is not None:
            return {**row, "status": bad[0], "note": bad[1]}
        rep = json.loads(report.read_text())
    s = rep.get("summary", {})
    return {**row, "status": "ok", "note": "", "compute_processes": s.get("compute_processes"),
            "instances": s.get("statement_instances"), "model_cycles": s.get("estimated_cycles"),
            "roofline_cycles": s.get("roofline_cycles"), "tiling": _tile_text(rep.get("tiling"))}


def sim_fields(path: Path, args: list[str], parallel: int, opts: argparse.Namespace) -> dict:
    """The figures of `sim --json`: the compile's and Verilator's, and whether gcc agreed."""
    argv = tool_argv("sim", path, args, parallel, opts) + ["--json", "-q"]
    if opts.stall:
        argv += ["--stall", str(opts.stall)]
    r = run_child(argv, opts.timeout)
    row = {"cpu_s": round(r["cpu_s"], 2), "wall_s": round(r["wall_s"], 1)}
    bad = failed_status(r, opts.timeout)
    if bad is not None:
        return {**row, "status": bad[0], "note": bad[1]}
    try:
        d = json.loads(r["stdout"])
    except ValueError:
        return {**row, "status": "error", "note": last_line(r["stderr"]) or "no JSON on stdout"}
    ok = bool(d.get("ok")) and r["exit"] == 0
    note = "" if ok else (last_line(d.get("deadlock") or "") or f"{d.get('mismatches')} mismatches")
    return {**row, "status": "ok" if ok else "fail", "note": note, "bit_exact": ok,
            "mismatches": d.get("mismatches"), "sim_cycles": d.get("cycles"),
            "compute_processes": d.get("compute_processes"), "instances": d.get("statement_instances"),
            "model_cycles": d.get("estimated_cycles"), "roofline_cycles": d.get("roofline_cycles"),
            "compile_s": d.get("seconds_compile"),
            "sim_s": round((d.get("seconds_reference") or 0) + (d.get("seconds_sim") or 0), 1),
            "tiling": _tile_text(d.get("tiling"))}


def estimate_fields(path: Path, args: list[str], parallel: int, opts: argparse.Namespace) -> dict:
    """Yosys xc7 resources; a failure here leaves the row's own status alone."""
    argv = tool_argv("estimate", path, args, parallel, opts) + ["--target", "xc7", "--json",
                                                                "--timeout", f"{opts.timeout:g}"]
    r = run_child(argv, opts.timeout + 60)  # the estimate's own --timeout ends Yosys first
    row: dict = {"estimate_cpu_s": round(r["cpu_s"], 2)}
    bad = failed_status(r, opts.timeout) or (("error", last_line(r["stderr"])) if r["exit"] else None)
    if bad is not None:
        return {**row, "estimate_status": bad[0], "estimate_note": bad[1]}
    try:
        d = json.loads(r["stdout"])
    except ValueError:
        return {**row, "estimate_status": "error", "estimate_note": "no JSON on stdout"}
    return {**row, "estimate_status": "ok", "estimate_note": "", **{k: d.get(k) for k in ("dsp", "lut", "ff", "bram")}}


def measure(name: str, path: Path, plan: dict, parallel: int, opts: argparse.Namespace) -> dict:
    row: dict = {"kernel": name, "size": plan["size"], "dtype": element_types(path), "parallel": parallel,
                 "args": " ".join(shlex.quote(a) for a in plan["args"])}
    fields = sim_fields if opts.sim else compile_fields
    row.update(fields(path, plan["args"], parallel, opts))
    if opts.estimate and row["status"] in ("ok", "fail"):
        row.update(estimate_fields(path, plan["args"], parallel, opts))
    return row


# --------------------------------------------------------------------------------------------------
# derived columns


def _ratio(a: Optional[float], b: Optional[float], digits: int = 3) -> Optional[float]:
    return round(a / b, digits) if a and b else None


def derive(rows: list[dict], own_sizes: bool) -> None:
    """Fill the columns that compare rows (speed-up over P = 1) or compare with Stream-HLS."""
    for r in rows:
        sim_ok = r.get("bit_exact") and r.get("sim_cycles")
        r["cycles"] = r.get("sim_cycles") if sim_ok else r.get("model_cycles")
        r["basis"] = ("sim" if sim_ok else "model") if r["cycles"] else None
        r["efficiency"] = (round(r["instances"] / (r["cycles"] * r["compute_processes"]), 4)
                           if r["cycles"] and r.get("instances") and r.get("compute_processes") else None)
        r["cycles_per_roofline"] = _ratio(r["cycles"], r.get("roofline_cycles"))
        if not own_sizes:
            r["streamhls_cycles"] = STREAM_HLS_CYCLES.get(r["kernel"])
            r["streamhls_dsp"] = STREAM_HLS_DSP.get(r["kernel"])
            r["ours_per_streamhls"] = _ratio(r["cycles"], r["streamhls_cycles"])
    for r in rows:
        one = next((q for q in rows if q["kernel"] == r["kernel"] and q["parallel"] == 1), None)
        r["speedup"] = r["speedup_basis"] = None
        if one is None:
            continue
        both_sim = r["basis"] == "sim" and one["basis"] == "sim"
        key = "sim_cycles" if both_sim else "model_cycles"
        r["speedup"] = _ratio(one.get(key), r.get(key), 2)
        r["speedup_basis"] = ("sim" if both_sim else "model") if r["speedup"] else None


def target_lines(rows: list[dict], own_sizes: bool) -> list[str]:
    """Per compute-bound kernel measured, the issue's speed-up figures at the P values measured; a row whose
    simulation was not bit-exact does not meet them, whatever its modelled speed-up."""
    ps = sorted({r["parallel"] for r in rows} & set(TARGETS))
    if not ps:
        return [f"Speed-up targets (>= {TARGETS[16]:g}x at P = 16, >= {TARGETS[64]:g}x at P = 64): "
                "neither P measured."]
    out = []
    for k in [k for k in COMPUTE_BOUND if any(r["kernel"] == k for r in rows)]:
        cells = []
        for p in ps:
            r = next((q for q in rows if q["kernel"] == k and q["parallel"] == p), None)
            if r is None or r.get("speedup") is None:
                cells.append(f"P = {p}: no speed-up ({'not measured' if r is None else r['status']}"
                             f"{'' if r is None or r['status'] != 'ok' else ', no P = 1 row'})")
                continue
            met = r["speedup"] >= TARGETS[p] and r["status"] == "ok"
            flaw = "" if r["status"] == "ok" else f", {r['status']}: {r.get('note') or ''}"
            cells.append(f"P = {p}: {r['speedup']:g}x ({r['speedup_basis']}{flaw}), >= {TARGETS[p]:g}: "
                         f"**{'met' if met else 'not met'}**")
        out.append(f"- {k}: " + "; ".join(cells))
    head = "Speed-up over P = 1, compute-bound kernels" + (" (own sizes, not the SMALL sizes the targets are "
                                                          "stated at)" if own_sizes else "") + ":"
    return [head, ""] + (out or ["- none measured"])


def bit_exact_line(rows: list[dict], sim: bool, stall: float) -> str:
    if not sim:
        return "Bit-exact: not simulated (no --sim): modelled cycles only."
    sims = [r for r in rows if r["status"] in ("ok", "fail")]
    exact = sum(1 for r in sims if r.get("bit_exact"))
    others = len(rows) - len(sims)
    return (f"Bit-exact against gcc in Verilator{f' under --stall {stall:g}' if stall else ''}: "
            f"**{exact} of {len(sims)}** simulated rows" + (f"; not simulated (refused, timeout or error): {others}"
                                                            if others else "") + ".")


# --------------------------------------------------------------------------------------------------
# output


def _fmt(v: object, digits: int = 2) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "**NO**"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.{digits}f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return str(v).replace("|", "/")


def table_columns(meta: dict) -> list[tuple[str, Callable[[dict], str]]]:
    """The markdown table's columns: the simulation, estimate and Stream-HLS columns only when they hold
    figures."""
    o = meta["options"]
    cols: list[tuple[str, Callable[[dict], str]]] = [
        ("kernel", lambda r: r["kernel"]), ("size", lambda r: _fmt(r["size"])), ("dtype", lambda r: r["dtype"]),
        ("P", lambda r: str(r["parallel"])), ("compute procs", lambda r: _fmt(r.get("compute_processes"))),
        ("instances", lambda r: _fmt(r.get("instances"))), ("modelled cycles", lambda r: _fmt(r.get("model_cycles")))]
    if o["sim"]:
        cols += [("simulated cycles", lambda r: _fmt(r.get("sim_cycles"))),
                 ("bit-exact", lambda r: _fmt(r.get("bit_exact")))]
    cols += [("speed-up", lambda r: _fmt(r.get("speedup"))),
             ("basis", lambda r: r.get("speedup_basis") or ""),
             ("efficiency", lambda r: _fmt(r.get("efficiency"), 3)),
             ("roofline", lambda r: _fmt(r.get("roofline_cycles"))),
             ("cycles / roofline", lambda r: _fmt(r.get("cycles_per_roofline")))]
    if not o["own_sizes"]:
        cols += [("Stream-HLS cycles", lambda r: _fmt(r.get("streamhls_cycles"))),
                 ("ours / Stream-HLS", lambda r: _fmt(r.get("ours_per_streamhls")))]
    if o["estimate"]:
        cols.append(("DSP", lambda r: _fmt(r.get("dsp")) if r.get("estimate_status") == "ok"
                     else _fmt(r.get("estimate_status"))))
    cols += [("CPU s", lambda r: _fmt(r.get("cpu_s"), 1)), ("compile s", lambda r: _fmt(r.get("compile_s"), 1))]
    if o["sim"]:
        cols.append(("sim s", lambda r: _fmt(r.get("sim_s"), 1)))
    cols += [("tiles", lambda r: _fmt(r.get("tiling"))),
             ("status", lambda r: r["status"] + (f": {_fmt(r['note'])}" if r.get("note") else ""))]
    return cols


def streamhls_table(rows: list[dict]) -> list[str]:
    """Our cycles at each P beside Stream-HLS's, one line per kernel it reports."""
    ps = sorted({r["parallel"] for r in rows})
    kernels = [k for k in dict.fromkeys(r["kernel"] for r in rows) if k in STREAM_HLS_CYCLES]
    if not kernels:
        return []
    md = ["## Beside Stream-HLS (FPGA'25), SMALL sizes", "",
          "Stream-HLS: float32, its own clock and DSP count (gemm: 2,552 DSPs); ours: the element type shown, "
          "cycles at the row's basis (simulated when bit-exact, else modelled), our / their cycles in parentheses "
          "(below 1: fewer cycles).", "",
          "| kernel | size | dtype | Stream-HLS cycles | " + " | ".join(f"ours P = {p}" for p in ps) + " |",
          "|---|---|---|---:|" + "---:|" * len(ps)]
    for k in kernels:
        rs = {r["parallel"]: r for r in rows if r["kernel"] == k}
        first = next(iter(rs.values()))
        cells = [f"{_fmt(rs[p].get('cycles'))} ({_fmt(rs[p].get('ours_per_streamhls'))}, {rs[p].get('basis')})"
                 if p in rs and rs[p].get("cycles") else "" for p in ps]
        theirs = _fmt(STREAM_HLS_CYCLES[k]) + (f" ({_fmt(STREAM_HLS_DSP[k])} DSP)" if k in STREAM_HLS_DSP else "")
        md.append(f"| {k} | {first['size']} | {first['dtype']} | {theirs} | " + " | ".join(cells) + " |")
    return md + [""]


def markdown(rows: list[dict], meta: dict) -> str:
    o = meta["options"]
    md = ["# Throughput at scale: `--parallel P` against P = 1 (issue 21)", "",
          f"`{meta['command']}` at {meta['revision'] or '?'}{' (with uncommitted changes)' if meta['dirty'] else ''}"
          f", {meta['date']}; {meta['seconds']} s in all.", ""]
    md += target_lines(rows, o["own_sizes"]) + ["", bit_exact_line(rows, o["sim"], o["stall"]), ""]
    flags = "--tile auto" + (f" --mem-width {o['mem_width']}" if o["mem_width"] else "")
    flags += f" --stall {o['stall']:g}" if o["stall"] else ""
    sizes = ("Sizes: the examples' own (`--own-sizes`)." if o["own_sizes"] else
             "Sizes: PolyBench/C 4.2 SMALL, in each example's own knobs (`SMALL_SIZES` in the script).")
    notes = [f"{k}: {v}." for k, v in SIZE_NOTES.items() if any(r["kernel"] == k for r in rows)]
    md += [" ".join([sizes, *notes, f"Options: `{flags}`; timeout {o['timeout']:g} s per command."]), ""]
    if meta["left_out"]:
        md += ["Left out: " + "; ".join(f"{k} ({why})" for k, why in meta["left_out"].items()) + ".", ""]
    md += ["*speed-up*: P = 1's cycles / the row's; *basis*: `sim` when both rows have bit-exact simulated cycles, "
           "else `model` (the compiler's cycle model on both sides). *efficiency*, *cycles / roofline*, "
           "*ours / Stream-HLS*: on the row's own cycles (simulated when bit-exact, else modelled). *efficiency* = "
           "instances / (cycles x compute processes). *CPU s*: the child process's user + sys"
           + (" (compile, gcc, Verilator build when not cached, and run)" if o["sim"] else "")
           + "; *compile s*, *sim s*: wall seconds."
           + (" *DSP*: DSP48E1 blocks, Yosys `synth_xilinx` (`estimate --target xc7`; LUT, FF, BRAM18 in the CSV)."
              if o["estimate"] else "") + " bench/README.md describes the columns.", ""]
    cols = table_columns(meta)
    md += ["| " + " | ".join(h for h, _ in cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(f(r) for _, f in cols) + " |" for r in rows]
    md += [""] + ([] if o["own_sizes"] else streamhls_table(rows))
    if meta.get("plot"):
        md += [f"Plot: `{meta['plot']}`.", ""]
    elif meta.get("plot_note"):
        md += [f"Plot: {meta['plot_note']}", ""]
    return "\n".join(md).rstrip("\n") + "\n"


def plot(rows: list[dict], path: Path) -> str:
    """Speed-up against P, log-log, one line per kernel, with the ideal line; '' or why there is none."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return "matplotlib is not installed (pip install 'dpn-synth[bench]'); no plot"
    pts = [r for r in rows if r.get("speedup")]
    if not pts:
        return "no speed-ups to plot (a P = 1 row and one more P per kernel are needed)"
    ps = sorted({r["parallel"] for r in rows})
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    ax.plot(ps, ps, ls="--", color="grey", lw=1, label="ideal (speed-up = P)")
    for k in dict.fromkeys(r["kernel"] for r in pts):
        rs = sorted((r for r in pts if r["kernel"] == k), key=lambda r: r["parallel"])
        style = "-" if k in COMPUTE_BOUND else ":"
        ax.plot([r["parallel"] for r in rs], [r["speedup"] for r in rs], style, marker="o", ms=4, label=k)
    targets = [(p, s) for p, s in TARGETS.items() if p in ps]
    if targets:
        ax.plot([p for p, _ in targets], [s for _, s in targets], "k*", ms=10, ls="none",
                label="issue 21 target (compute-bound)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ps, [str(p) for p in ps])
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _pos: f"{y:g}"))
    ax.set_xlabel("--parallel P")
    ax.set_ylabel("speed-up over P = 1 (cycles)")
    basis = sorted({r["speedup_basis"] for r in pts})
    ax.set_title(f"Speed-up against P ({' / '.join(basis)} cycles; dotted: memory-bound kernels)", fontsize=9)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return ""


def write_results(rows: list[dict], meta: dict, stem: Path) -> None:
    """All three files after every row, so that a run cut short keeps what it measured."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    with open(stem.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    ordered = [{k: r.get(k) for k in FIELDS} for r in rows]
    summary = {"targets": target_lines(rows, meta["options"]["own_sizes"]),
               "bit_exact": bit_exact_line(rows, meta["options"]["sim"], meta["options"]["stall"])}
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": ordered}, indent=1)
                                         + "\n")
    stem.with_suffix(".md").write_text(markdown(rows, meta))


# --------------------------------------------------------------------------------------------------
# driver


def _int_list(text: str) -> list[int]:
    try:
        vals = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got `{text}`") from None
    if not vals or vals[0] < 1:
        raise argparse.ArgumentTypeError("P values must be positive integers")
    return vals


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.parallel_scaling", description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", metavar="A,B", help=f"kernels (default: {','.join(SMALL_SIZES)})")
    p.add_argument("--parallel", type=_int_list, default=list(DEFAULT_PARALLEL), metavar="1,16,64",
                   help="P values (default 1,16,64; P = 1 is the speed-ups' base)")
    p.add_argument("--sim", action="store_true", help="simulate in Verilator against gcc (`sim --json`)")
    p.add_argument("--stall", type=float, default=0.0, metavar="P",
                   help="with --sim: random back-pressure on every memory port, probability P")
    p.add_argument("--mem-width", type=int, default=0, metavar="BITS", help="passed to every command")
    p.add_argument("--estimate", action="store_true", help="also Yosys xc7 resources (`estimate --json`)")
    p.add_argument("--own-sizes", action="store_true",
                   help="the examples' own sizes instead of SMALL (a quick check; no Stream-HLS columns)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help="wall seconds per command (default 1800); the process group is then killed")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="NAME",
                   help="results basename under bench/results, or a path stem with a / (default parallel-scaling)")
    p.add_argument("--no-plot", action="store_true", help="write no NAME.png")
    return p


def select_kernels(spec: Optional[str], own_sizes: bool) -> tuple[list[tuple[str, Path, dict]], dict[str, str]]:
    """The kernels to measure with their plans, in SMALL_SIZES's order, and those left out with why."""
    names = [k.strip() for k in spec.split(",") if k.strip()] if spec else list(SMALL_SIZES)
    unknown = [k for k in names if k not in SMALL_SIZES]
    if unknown:
        raise SystemExit(f"bench.parallel_scaling: no SMALL size for {', '.join(unknown)} "
                         f"(known: {', '.join(SMALL_SIZES)})")
    chosen, left_out = [], {}
    for k in [k for k in SMALL_SIZES if k in names]:
        path = ROOT / "examples" / f"{k}.c"
        if not path.exists():
            left_out[k] = f"no examples/{k}.c"
            continue
        plan = kernel_plan(k, path, own_sizes)
        if plan["why_not"]:
            left_out[k] = plan["why_not"]
        else:
            chosen.append((k, path, plan))
    return chosen, left_out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    opts = parser.parse_args(argv)
    if opts.stall and not opts.sim:
        parser.error("--stall needs --sim (back-pressure exists only in the simulation)")
    if not 0.0 <= opts.stall < 1.0:
        parser.error("--stall must be a probability in [0, 1)")
    kernels, left_out = select_kernels(opts.kernels, opts.own_sizes)
    stem = out_stem(opts.out)
    t0 = time.time()
    meta = {"command": "python -m bench.parallel_scaling " + " ".join(
                shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
            "revision": git_output(ROOT, "rev-parse", "--short", "HEAD"),
            "dirty": bool(git_output(ROOT, "status", "--porcelain", "--untracked-files=no")),
            "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(),
            "loadavg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            "options": {"kernels": [k for k, _, _ in kernels], "parallel": opts.parallel, "sim": opts.sim,
                        "stall": opts.stall, "mem_width": opts.mem_width, "estimate": opts.estimate,
                        "own_sizes": opts.own_sizes, "timeout": opts.timeout},
            "sizes": {k: plan["size"] for k, _, plan in kernels}, "left_out": left_out, "seconds": 0}
    for k, why in left_out.items():
        print(f"bench.parallel_scaling: leaving out {k}: {why}", file=sys.stderr)
    warm_bytecode(ROOT)
    rows: list[dict] = []
    for name, path, plan in kernels:
        for p in opts.parallel:
            row = measure(name, path, plan, p, opts)
            rows.append(row)
            derive(rows, opts.own_sizes)
            meta["seconds"] = round(time.time() - t0)
            write_results(rows, meta, stem)
            print(f"[{time.strftime('%H:%M:%S')}] {name:<8} P={p:<3} {row['status']:<8} model "
                  f"{_fmt(row.get('model_cycles')):>9} sim {_fmt(row.get('sim_cycles')):>9} speed-up "
                  f"{_fmt(row.get('speedup')):>6}  cpu {_fmt(row.get('cpu_s'), 1)} s  {row.get('note', '')[:100]}",
                  file=sys.stderr, flush=True)
    if not opts.no_plot:
        png = stem.with_suffix(".png")
        note = plot(rows, png)
        if note:
            meta["plot_note"] = note
        else:
            meta["plot"] = str(png.relative_to(ROOT)) if png.is_relative_to(ROOT) else str(png)
    meta["seconds"] = round(time.time() - t0)
    write_results(rows, meta, stem)
    print(markdown(rows, meta))
    print(f"bench.parallel_scaling: wrote {stem}.csv, .json, .md" + (f", {meta['plot']}" if meta.get("plot") else ""),
          file=sys.stderr)
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
