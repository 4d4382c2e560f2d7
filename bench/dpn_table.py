"""Table 5.4 of the reference for our example suite under `--tile auto`, beside the untiled figures.

Run: `python -m bench.dpn_table`.  Writes bench/results/dpn.{csv,json,md}.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from hls.dpn.network import ChannelKind, ProcessKind
from hls.pipeline import Options, run
from tests.kernels import EXAMPLES, example_params

RESULTS = Path(__file__).resolve().parent / "results"


def row(path: Path) -> dict:
    t0 = time.perf_counter()
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    secs = time.perf_counter() - t0
    base = run(Options(str(path), params=example_params(path)))
    chans = res.network.channels
    fifo = [c for c in chans if c.kind == ChannelKind.FIFO]
    st = res.fifo_stats or {"ppn_fifos": sum(c.kind == ChannelKind.FIFO and c.role != "order" for c in base.network.channels),
                            "fifos_broken": 0, "fifos_restored": 0, "fifos_passed": None}

    def moved(r):
        return sum(len(r.tables.process(p.name).iterations) for p in r.network.processes
                   if p.kind in (ProcessKind.LOAD, ProcessKind.STORE))

    return {
        "kernel": path.stem, "tiling": res.network.tiling.describe(),
        "buffers": len(chans), "fifos": len(fifo), "fifo_words": sum(c.words for c in fifo),
        "channel_words": sum(c.words for c in chans), "fifo_basic": st["ppn_fifos"],
        "fifo_fail": st["fifos_broken"], "fifo_restored": st["fifos_restored"],
        "pct_fail": 0 if not st["fifos_broken"] else round(100 * (st["fifos_broken"] - st["fifos_restored"]) /
                                                           st["fifos_broken"]),
        "words_moved": moved(res), "words_moved_untiled": moved(base),
        "channel_words_untiled": sum(c.words for c in base.network.channels), "compile_s": round(secs, 2),
    }


def main() -> None:
    rows = [row(p) for p in EXAMPLES]
    RESULTS.mkdir(exist_ok=True)
    keys = list(rows[0])
    with open(RESULTS / "dpn.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    (RESULTS / "dpn.json").write_text(json.dumps(rows, indent=1) + "\n")
    md = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    md += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    (RESULTS / "dpn.md").write_text("# Tiled DPN (`--tile auto`) against the untiled network\n\n" + "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
