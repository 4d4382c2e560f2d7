"""Bit-exact at scale: every example simulated in Verilator at a larger size (issue 18: x16 instances).

Run: `python -m bench.sim_scaling [--sizes SCALING.json] [--level 2] [--kernels a,b] [--timeout S]
[--name NAME]`.  Writes bench/results/NAME.{json,md} (default sim-scaling-level2), and NAME.jsonl
row by row as the runs finish, so a sweep cut short keeps what it measured.

The sizes are those a `python -m bench.scaling` run compiled at that level (its JSON's `args`: level k
is about 4^k times the example's own instances), so both benchmarks talk about the same problems.
Each kernel is `dpn-synth sim KERNEL ARGS --seed 1 --json` with the default `--tile auto`: random
inputs, the generated Verilog under Verilator, every output word compared with gcc's.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def sizes_of(scaling_json: Path, level: int) -> dict[str, list[str]]:
    """kernel -> the size arguments a scaling run used at `level`: those it compiled, or ran out of its
    time limit on (heat-3d at level 2), not those the kernel refuses."""
    rows = json.loads(scaling_json.read_text())["rows"]
    return {r["kernel"]: shlex.split(r["args"] or "") for r in rows
            if r["level"] == level and r.get("config", "auto") == "auto" and r["status"] in ("ok", "timeout")}


def run_one(kernel: str, args: list[str], timeout: float) -> dict:
    path = ROOT / "examples" / f"{kernel}.c"
    cmd = [sys.executable, "-m", "hls.cli", "sim", str(path), *args, "--seed", "1", "--json", "-q"]
    t0 = time.perf_counter()
    row = {"kernel": kernel, "args": " ".join(args)}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {**row, "status": "timeout", "seconds": round(time.perf_counter() - t0, 1)}
    row.update(exit=proc.returncode, seconds=round(time.perf_counter() - t0, 1))
    try:
        d = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {**row, "status": "error", "error": (proc.stderr or proc.stdout)[-300:]}
    row.update(status="ok" if d["ok"] else "mismatch", mismatches=d["mismatches"], cycles=d["cycles"],
               estimated_cycles=d.get("estimated_cycles"), instances=d["statement_instances"],
               efficiency=d.get("efficiency"), seconds_compile=d["seconds_compile"], seconds_sim=d["seconds_sim"])
    return row


def markdown(rows: list[dict], meta: dict) -> str:
    ok = sum(1 for r in rows if r["status"] == "ok")
    lines = [f"# Bit-exact at scale: Verilator at level {meta['level']} sizes", "",
             f"`{meta['command']}` on {meta['date']}; sizes from `{meta['sizes']}` (level {meta['level']}: about "
             f"{4 ** meta['level']}x each example's own instances); {len(rows)} kernels run, **{ok} bit-exact "
             f"against gcc**, {len(rows) - ok} not ({meta['seconds']} s).", "",
             "| kernel | size | instances | status | Verilator cycles | modelled cycles | model / sim | efficiency | "
             "compile s | sim s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = (f"{r['estimated_cycles'] / r['cycles']:.3f}" if r.get("cycles") and r.get("estimated_cycles")
                 else "")
        lines.append(f"| {r['kernel']} | {r['args']} | {r.get('instances', '')} | {r['status']} | "
                     f"{r.get('cycles', '')} | {r.get('estimated_cycles', '')} | {ratio} | {r.get('efficiency', '')} | "
                     f"{r.get('seconds_compile', '')} | {r.get('seconds_sim', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.sim_scaling", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=Path, default=RESULTS / "scaling-session16-before.json",
                   help="a bench.scaling JSON whose sizes are simulated")
    p.add_argument("--level", type=int, default=2)
    p.add_argument("--kernels", help="comma-separated example names (default: every one the sizes give)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per kernel (default 900)")
    p.add_argument("--name", help="output stem (default sim-scaling-levelL)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    sizes = sizes_of(a.sizes, a.level)
    kernels = sorted(sizes) if not a.kernels else [k for k in a.kernels.split(",") if k in sizes]
    name = a.name or f"sim-scaling-level{a.level}"
    a.out.mkdir(parents=True, exist_ok=True)
    partial = a.out / f"{name}.jsonl"
    partial.write_text("")
    t0 = time.perf_counter()
    rows = []
    for k in kernels:
        rows.append(run_one(k, sizes[k], a.timeout))
        with partial.open("a") as f:
            f.write(json.dumps(rows[-1]) + "\n")
        print(f"{k:20s} {rows[-1]['status']} {rows[-1].get('cycles')}", file=sys.stderr, flush=True)
    meta = {"command": "python -m bench.sim_scaling " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M"), "sizes": str(a.sizes.relative_to(ROOT) if a.sizes.is_absolute()
                                                                    and ROOT in a.sizes.parents else a.sizes),
            "level": a.level, "seconds": round(time.perf_counter() - t0, 1)}
    (a.out / f"{name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (a.out / f"{name}.md").write_text(markdown(rows, meta))
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
