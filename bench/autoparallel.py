"""`--parallel auto` on every example (issue 21): the parts chosen, what bounded them, the DSP blocks,
the modelled speed-up over one part, and the compile time.

Run: `python -m bench.autoparallel [--kernels a,b] [--dsp-budget N] [--sim] [--jobs 2] [--out NAME]`.
Writes bench/results/NAME.{json,md} (default NAME: autoparallel).

Each kernel is `dpn-synth compile KERNEL --parallel auto` at its own `// dpn-synth-args:` sizes;
the figures come from its report.json (`parallel_auto`: predicted and modelled cycles per P tried).
With `--sim`, `dpn-synth sim --parallel auto --json` runs the chosen design in Verilator against gcc
as well: its cycles and whether every word matched.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from bench.stall import kernel_args

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], timeout: float) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"over {timeout:g} s", time.perf_counter() - t0
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def run_one(path: Path, budget: Optional[int], sim: bool, timeout: float) -> dict:
    extra = ["--parallel", "auto"] + (["--dsp-budget", str(budget)] if budget is not None else [])
    row: dict = {"kernel": path.stem}
    with tempfile.TemporaryDirectory() as tmp:
        code, _out, err, secs = _run([sys.executable, "-m", "hls.cli", "compile", str(path), *kernel_args(path),
                                      *extra, "-o", f"{tmp}/o", "-q"], timeout)
        row["compile_s"] = round(secs, 1)
        if code != 0:
            row.update(status="error" if code in (1, 3, -1) else "skipped", note=err.strip().splitlines()[-1:])
            return row
        summary = json.loads(Path(f"{tmp}/o/report.json").read_text())["summary"]
    auto = summary.get("parallel_auto") or {}
    modelled = {int(k): v for k, v in (auto.get("modelled_cycles") or {}).items()}
    p = auto.get("parallel", 1)
    one = modelled.get(1)
    row.update(status="ok", parallel=p, bound=auto.get("bound"), dsp_per_part=auto.get("dsp_per_part"),
               dsp=(auto.get("dsp_per_part") or 0) * p, cycles_p1=one, cycles=summary.get("estimated_cycles"),
               roofline_cycles=summary.get("roofline_cycles"), compute_processes=summary.get("compute_processes"),
               instances=summary.get("statement_instances"), efficiency=summary.get("efficiency"),
               tried=sorted(modelled))
    row["speedup"] = round(one / row["cycles"], 2) if one and row["cycles"] else None
    if sim:
        code, out, err, secs = _run([sys.executable, "-m", "hls.cli", "sim", str(path), *kernel_args(path), *extra,
                                     "--json", "-q"], timeout)
        row["sim_s"] = round(secs, 1)
        try:
            data = json.loads(out)
            row.update(sim_ok=bool(data["ok"]), sim_cycles=data["cycles"], mismatches=data["mismatches"])
        except (ValueError, KeyError):
            row.update(sim_ok=False, note=err.strip().splitlines()[-1:])
    return row


def markdown(rows: list[dict], args: argparse.Namespace, seconds: float) -> str:
    ok = [r for r in rows if r["status"] == "ok"]
    speed = [r["speedup"] for r in ok if r.get("speedup")]
    lines = [
        "# `--parallel auto` on the examples (issue 21)", "",
        f"`python -m bench.autoparallel{' --dsp-budget ' + str(args.dsp_budget) if args.dsp_budget is not None else ''}"
        f"{' --sim' if args.sim else ''}` on {time.strftime('%Y-%m-%d %H:%M')}, {len(rows)} kernels, "
        f"{seconds:.0f} s in all.", "",
        "*P*: parts per band chosen; *bound*: what stopped the doubling (`model`: twice as many parts gained "
        "under 10% in the cycle model; `work`: the tiles are narrower than twice as many slabs; `dsp`: the "
        "budget; `memory`: the predicted memory roof; `fixed`: the predicted cycles beyond the busiest process's "
        "iterations (fill, drain, recurrence stalls), which more parts do not shrink; `limit`: 64). *DSP*: DSP48E1 blocks of the compute "
        "processes at P (`rtl.generate.dsp_blocks`). *cycles*: modelled, at P = 1 and at the chosen P. "
        "*efficiency*: instances / (cycles x compute processes). *compile s*: wall seconds of the whole "
        "`compile --parallel auto` (every P the model tried).", "",
        f"{len(ok)} of {len(rows)} compiled; median modelled speed-up over P = 1: "
        f"{statistics.median(speed) if speed else '-'}x; median compile: "
        f"{statistics.median([r['compile_s'] for r in ok]) if ok else '-'} s.", "",
        "| kernel | P | bound | P tried | DSP | cycles P=1 | cycles | speed-up | roofline | efficiency | compile s |"
        + (" Verilator | bit-exact |" if args.sim else ""),
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---|" if args.sim else ""),
    ]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['kernel']} | {r['status']}: {' '.join(r.get('note') or [])} |")
            continue
        row = (f"| {r['kernel']} | {r['parallel']} | {r['bound']} | {','.join(map(str, r['tried']))} | {r['dsp']} | "
               f"{r['cycles_p1']} | {r['cycles']} | {r['speedup']} | {r['roofline_cycles']} | {r['efficiency']} | "
               f"{r['compile_s']} |")
        if args.sim:
            row += f" {r.get('sim_cycles')} | {'yes' if r.get('sim_ok') else 'NO'} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.autoparallel", description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="comma-separated example names (default: every examples/*.c)")
    ap.add_argument("--dsp-budget", type=int, default=None)
    ap.add_argument("--sim", action="store_true", help="also run the chosen design in Verilator against gcc")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0, help="per command, wall seconds")
    ap.add_argument("--out", default="autoparallel")
    args = ap.parse_args(argv)
    paths = sorted((ROOT / "examples").glob("*.c"))
    if args.kernels:
        wanted = args.kernels.split(",")
        paths = [p for p in paths if p.stem in wanted]
    t0 = time.perf_counter()
    RESULTS.mkdir(exist_ok=True)
    rows: list[dict] = []
    with ThreadPoolExecutor(args.jobs) as pool:  # the files are rewritten after every row: a run cut short keeps its rows
        for row in pool.map(lambda p: run_one(p, args.dsp_budget, args.sim, args.timeout), paths):
            rows.append(row)
            seconds = time.perf_counter() - t0
            (RESULTS / f"{args.out}.json").write_text(json.dumps(rows, indent=1) + "\n")
            (RESULTS / f"{args.out}.md").write_text(markdown(rows, args, seconds))
    print(f"wrote bench/results/{args.out}.md ({len(rows)} kernels, {time.perf_counter() - t0:.0f} s)")
    return 0 if all(r["status"] != "error" and r.get("sim_ok", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
