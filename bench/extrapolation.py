"""How good the cycle estimate of a network chosen on a reduced instance is.

Run: `python -m bench.extrapolation [--level L] [--kernels a,b] [--out DIR] [--name NAME]`.  Writes
DIR/NAME.{json,md} (default bench/results/extrapolation.*).

Above `reduced.REDUCE_ABOVE` statement instances the pipeline chooses the network on the corner
instance and builds it once at full size without modelling it: its estimate is the corner's model
plus each process's further iterations at its fastest issue rate in the corner, for the process
that needs longest (`pipeline.extrapolated_cycles`).  This
benchmark compiles each example at level L of `bench.scaling` (its size knobs times 4^(L/d), about
4^L times its instances), then runs the cycle model once on the full-size network (what compile no
longer does: that run grows with the problem) and compares.  Two former estimates are shown for
comparison: *ratio*, the corner's cycles times the busiest process's iteration ratio, and *unit*,
the corner's cycles plus one cycle per further iteration of the busiest compute process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from bench.scaling import growth_degree, knob_args, knob_values, size_knobs
from hls.dpn.tables import NetworkTables
from hls.dpn.timing import simulate_timing
from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from hls.rtl.generate import process_latencies, read_stages

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_KERNELS = ("gemm", "2mm", "jacobi-2d", "seidel-2d", "conv2d", "atax", "lu", "cholesky", "fir-int",
                   "trisolv", "symm", "syrk")


def _options(path: Path, args: list[str]) -> Options:
    defines, params, it = [], {}, iter(args)
    for a in it:
        if a.startswith("-D"):
            defines.append(a[2:])
        elif a == "--param":
            name, value = next(it).split("=")
            params[name] = int(value)
    return Options(str(path), defines=tuple(defines), params=params, tile="auto")


def measure(kernel: str, level: int) -> dict:
    path = ROOT / "examples" / f"{kernel}.c"
    knobs = size_knobs(path)
    degree, _, _ = growth_degree(ROOT, path, knobs)
    args = knob_args(knobs, knob_values(knobs, 4 ** (level / degree)))
    t0 = time.process_time()
    res = run(_options(path, args))
    compile_s = time.process_time() - t0
    row = {"kernel": kernel, "level": level, "args": " ".join(args),
           "instances": sum(iu.card(s.domain) for s in res.program.statements),
           "estimate": res.timing["estimated_cycles"], "compile_cpu_s": round(compile_s, 2)}
    red = res.timing.get("reduced_instance")
    if red is None:
        row["note"] = "chosen at full size (below REDUCE_ABOVE): the estimate is the model's"
        return row
    net = res.network
    t0 = time.process_time()
    exact = simulate_timing(net, NetworkTables(net), process_latencies(net),
                            read_stage=read_stages(net) if net.late_reads else None).cycles
    small_work, full_work = red["busiest_iterations"]
    ratio = round(red["estimated_cycles"] * full_work / max(1, small_work))
    unit = red["estimated_cycles"] + max(0, full_work - small_work)
    row.update(corner=red["instances"], corner_cycles=red["estimated_cycles"], modelled=exact,
               model_cpu_s=round(time.process_time() - t0, 2), error=_error(row["estimate"], exact),
               ratio_estimate=ratio, ratio_error=_error(ratio, exact),
               unit_estimate=unit, unit_error=_error(unit, exact))
    return row


def _error(estimate: Optional[int], exact: Optional[int]) -> Optional[float]:
    if estimate is None or not exact:
        return None
    return round(100.0 * (estimate - exact) / exact, 2)


def markdown(rows: list[dict], meta: dict) -> str:
    out = ["# Cycle estimate of networks chosen on a reduced instance", "",
           f"`{meta['command']}` on {meta['date']}. *estimate*: what compile reports (the corner's model plus each "
           "process's further iterations at its fastest issue rate in the corner, the longest); *modelled*: the cycle model run "
           "once on the full-size network; *unit*: the former estimate (one cycle per further iteration of the busiest "
           "compute process); *ratio*: the one before (the corner's cycles times the iteration ratio).", "",
           "| kernel | size | instances | corner | estimate | modelled | error % | unit | its error % | ratio | its error % | compile CPU s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" not in r:
            out.append(f"| {r['kernel']} | {r['args']} | {r['instances']:,} | - | {r['estimate']} | - | - | - | - | - | "
                       f"- | {r['compile_cpu_s']} |")
            continue
        out.append(f"| {r['kernel']} | {r['args']} | {r['instances']:,} | {r['corner']:,} | {r['estimate']} | "
                   f"{r['modelled']} | {r['error']} | {r['unit_estimate']} | {r['unit_error']} | {r['ratio_estimate']} | "
                   f"{r['ratio_error']} | {r['compile_cpu_s']} |")
    errs = [abs(r["error"]) for r in rows if r.get("error") is not None]
    if errs:
        units = [abs(r["unit_error"]) for r in rows if r.get("unit_error") is not None]
        olds = [abs(r["ratio_error"]) for r in rows if r.get("ratio_error") is not None]
        within = sum(e <= 2 for e in errs)
        out += ["", f"Largest error: {max(errs):.2f}% (unit: {max(units):.2f}%, ratio: {max(olds):.2f}%), over "
                f"{len(errs)} networks; within 2%: {within} (unit: {sum(e <= 2 for e in units)}, "
                f"ratio: {sum(e <= 2 for e in olds)})."]
    return "\n".join(out) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.extrapolation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help="comma-separated examples, or all")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--name", default="extrapolation")
    a = ap.parse_args(argv)
    rows = []
    kernels = (sorted(p.stem for p in (ROOT / "examples").glob("*.c")) if a.kernels == "all"
               else a.kernels.split(","))
    for k in kernels:
        rows.append(measure(k, a.level))
        print(json.dumps(rows[-1]), flush=True)
    meta = {"command": "python -m bench.extrapolation " + " ".join(sys.argv[1:] if argv is None else argv),
            "date": time.strftime("%Y-%m-%d %H:%M")}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{a.name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / f"{a.name}.md").write_text(markdown(rows, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
