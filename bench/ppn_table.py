"""Untiled process networks of the example suite: channels, FIFOs and channel words per kernel.

Run: `python -m bench.ppn_table`.  Writes bench/results/ppn.{csv,json,md}.  The size sweep shows why
untiled networks do not scale: their channel storage grows with the problem size.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from hls.dpn.network import ChannelKind
from hls.pipeline import Options, run
from tests.kernels import EXAMPLES, example_params

RESULTS = Path(__file__).resolve().parent / "results"
SWEEP = {"gemm.c": ("NI", "NJ", "NK"), "jacobi-2d.c": ("N",), "cholesky.c": ("N",), "seidel-2d.c": ("N",)}


def row(path: Path, defines: tuple[str, ...] = ()) -> dict:
    t0 = time.perf_counter()
    res = run(Options(str(path), defines=defines, params=example_params(path)))
    chans = res.network.channels
    return {
        "kernel": path.stem,
        "defines": " ".join(defines),
        "params": " ".join(f"{k}={v}" for k, v in res.program.param_values().items()),
        "processes": len(res.network.processes),
        "channels": len(chans),
        "fifos": sum(c.kind == ChannelKind.FIFO for c in chans),
        "fifos_mult": sum(c.kind == ChannelKind.FIFO_MULT for c in chans),
        "buffers": sum(c.kind == ChannelKind.BUFFER for c in chans),
        "fifo_words": sum(c.words for c in chans if c.kind != ChannelKind.BUFFER),
        "channel_words": sum(c.words for c in chans),
        "compile_s": round(time.perf_counter() - t0, 2),
    }


def main() -> None:
    rows = [row(p) for p in EXAMPLES]
    for name, macros in SWEEP.items():
        for n in (8, 16, 32):
            rows.append(row(Path("examples") / name, tuple(f"{m}={n}" for m in macros)))
    RESULTS.mkdir(exist_ok=True)
    keys = list(rows[0])
    with open(RESULTS / "ppn.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    (RESULTS / "ppn.json").write_text(json.dumps(rows, indent=1) + "\n")
    md = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    md += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    (RESULTS / "ppn.md").write_text("# Untiled process networks (PPN)\n\n" + "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
