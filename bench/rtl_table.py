"""RTL cycles against the roofline, and simulation speed, for every example the RTL back end covers.

Run: `python -m bench.rtl_table`.  Writes bench/results/rtl.{csv,json,md}.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path

from hls.metrics import network_stats, traffic
from hls.diagnostics import CompileError
from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.inputs import random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import EXAMPLES, example_params

RESULTS = Path(__file__).resolve().parent / "results"


def measure(path: Path) -> dict | None:
    t0 = time.perf_counter()
    res = run(Options(str(path), params=example_params(path)))
    try:
        design = generate(res.network)
    except CompileError:
        return None
    compile_s = time.perf_counter() - t0
    inputs = random_inputs(res.program, 0)
    with tempfile.TemporaryDirectory() as work:
        out = run_rtl(design, inputs, Path(work))
    traffic_figures = traffic(res.program, res.network)
    stats = network_stats(res.network)
    return {
        "kernel": path.stem, "options": "--tile none", "cycles": out.cycles,
        "roofline_cycles": traffic_figures["roofline_cycles"],
        "cycles_per_roofline": round(out.cycles / max(1, traffic_figures["roofline_cycles"]), 2),
        "compulsory_words": traffic_figures["compulsory_words"], "channel_words": stats["channel_words"],
        "processes": stats["processes"], "compile_s": round(compile_s, 2),
        "sim_cycles_per_s": round(out.cycles / max(1e-9, out.seconds_sim)),
        "completed": out.completed,
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rows = [r for r in (measure(p) for p in EXAMPLES) if r is not None]
    RESULTS.mkdir(exist_ok=True)
    keys = list(rows[0])
    with open(RESULTS / "rtl.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    (RESULTS / "rtl.json").write_text(json.dumps(rows, indent=1) + "\n")
    md = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    md += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    (RESULTS / "rtl.md").write_text("# RTL (untiled networks, Verilator)\n\n" + "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
