"""bench.sim_scaling: the sizes it takes from a scaling run, and its table (no simulation here)."""

from __future__ import annotations

import json

from bench.sim_scaling import markdown, sizes_of


def test_sizes_come_from_the_finished_compiles_of_one_level(tmp_path):
    rows = [
        {"kernel": "gemm", "level": 2, "config": "auto", "status": "ok", "args": "-DNI=40 -DNJ=46"},
        {"kernel": "gemm", "level": 1, "config": "auto", "status": "ok", "args": "-DNI=26 -DNJ=29"},
        {"kernel": "atax", "level": 2, "config": "auto", "status": "ok", "args": "--param m=50 --param n=66"},
        {"kernel": "heat-3d", "level": 2, "config": "auto", "status": "timeout", "args": "-DT=7 -DN=18"},
        {"kernel": "decimate-f32", "level": 2, "config": "auto", "status": "refused", "args": "-DN=285"},
        {"kernel": "lu", "level": 2, "config": "p4", "status": "ok", "args": "-DN=50"},
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"meta": {}, "rows": rows}))
    assert sizes_of(path, 2) == {"gemm": ["-DNI=40", "-DNJ=46"], "atax": ["--param", "m=50", "--param", "n=66"],
                                 "heat-3d": ["-DT=7", "-DN=18"]}


def test_table_counts_only_bit_exact_runs():
    rows = [{"kernel": "a", "args": "-DN=8", "status": "ok", "cycles": 100, "estimated_cycles": 98, "instances": 90,
             "efficiency": 0.9, "seconds_compile": 1.0, "seconds_sim": 2.0},
            {"kernel": "b", "args": "", "status": "mismatch", "cycles": 10, "estimated_cycles": 10},
            {"kernel": "c", "args": "", "status": "timeout"}]
    text = markdown(rows, {"command": "x", "date": "d", "sizes": "s.json", "level": 2, "seconds": 3})
    assert "3 kernels run, **1 bit-exact against gcc**, 2 not" in text
    assert "| a | -DN=8 | 90 | ok | 100 | 98 | 0.980 | 0.9 | 1.0 | 2.0 |" in text
    assert "| c |  |  | timeout |" in text
