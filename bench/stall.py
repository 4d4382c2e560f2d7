"""Timing independence: every example kernel under random back-pressure, with several seeds.

Run: `python -m bench.stall [--seeds 1,2,3] [--stall 0.3] [--tile auto] [--jobs 2] [--kernels a,b]`.
Writes bench/results/stall.json and stall.md.

Each (kernel, seed) is `dpn-synth sim KERNEL --stall P --seed S --json` (the kernel's own
`// dpn-synth-args:` parameters): random inputs, Verilator with random stalls on every memory port,
every output word compared with gcc.  A design whose results depended on timing would show
mismatches or deadlocks on some seeds and not others.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def kernel_args(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    return shlex.split(first.split("dpn-synth-args:", 1)[1]) if "dpn-synth-args:" in first else []


def run_one(path: Path, seed: int, stall: float, tile: str) -> dict:
    cmd = [sys.executable, "-m", "hls.cli", "sim", str(path), *kernel_args(path), "--tile", tile,
           "--stall", str(stall), "--seed", str(seed), "--json", "-q"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    row = {"kernel": path.stem, "seed": seed, "exit": proc.returncode, "seconds": round(time.perf_counter() - t0, 1)}
    try:
        data = json.loads(proc.stdout)
        row.update(ok=data["ok"], mismatches=data["mismatches"], cycles=data["cycles"])
    except (json.JSONDecodeError, KeyError):
        row.update(ok=False, mismatches=None, cycles=None, error=(proc.stderr or proc.stdout)[-400:])
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.stall", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--stall", type=float, default=0.3)
    p.add_argument("--tile", default="auto")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--kernels", help="comma-separated example names (default: every example)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    paths = sorted((ROOT / "examples").glob("*.c"))
    if a.kernels:
        paths = [q for q in paths if q.stem in a.kernels.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    t0 = time.perf_counter()
    jobs = [(q, s) for q in paths for s in seeds]
    with ThreadPoolExecutor(a.jobs) as pool:
        rows = list(pool.map(lambda js: run_one(js[0], js[1], a.stall, a.tile), jobs))
    for r in rows:
        print(f"{r['kernel']:18s} seed {r['seed']}: {'ok' if r['ok'] else 'FAIL'} {r.get('cycles')}", file=sys.stderr)
    bad = [r for r in rows if not r["ok"]]
    meta = {"command": "python -m bench.stall " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M"), "stall": a.stall, "tile": a.tile, "seeds": seeds,
            "runs": len(rows), "ok": len(rows) - len(bad), "seconds": round(time.perf_counter() - t0, 1)}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "stall.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = ["# Timing independence: every example under random back-pressure", "",
             f"`{meta['command']}` on {meta['date']}: --tile {a.tile}, --stall {a.stall}, seeds {a.seeds}; "
             f"{meta['runs']} runs, **{meta['ok']} bit-exact against gcc**, {len(bad)} not; {meta['seconds']} s.", "",
             "| kernel | " + " | ".join(f"seed {s}: cycles" for s in seeds) + " |",
             "|---|" + "---|" * len(seeds)]
    for q in paths:
        cells = [next(r for r in rows if r["kernel"] == q.stem and r["seed"] == s) for s in seeds]
        lines.append(f"| {q.stem} | " + " | ".join(str(c["cycles"]) if c["ok"] else "**FAIL**" for c in cells) + " |")
    (a.out / "stall.md").write_text("\n".join(lines) + "\n")
    print(f"{meta['ok']}/{meta['runs']} bit-exact", file=sys.stderr)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
