"""The benchmark (`python -m bench`, bench/suite.py) on a small integer kernel.

The Verilator builds are cached by content (sim.rtl_runner), so after a first run this takes seconds.
"""

from __future__ import annotations

import csv
import json
import statistics

import pytest

from bench import suite
from hls import cli

KERNELS = ("fir-int",)  # one kernel, two configurations: four Verilator builds took minutes


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    rc = suite.main(["--kernels", ",".join(KERNELS), "--configs", "none,auto", "--jobs", "1", "--out", str(out)])
    assert rc == 0
    return out


@pytest.mark.slow  # with the next one: the module's bench run, 47 s
def test_csv_and_json_rows(results):
    with open(results / "bench.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == suite.FIELDS
        csv_rows = list(reader)
    data = json.loads((results / "bench.json").read_text())
    rows = data["rows"]
    assert {(r["kernel"], r["config"]) for r in rows} == {(k, c) for k in KERNELS for c in ("none", "auto")}
    assert len(csv_rows) == len(rows) == 2 * len(KERNELS)
    for r in rows:
        assert set(suite.FIELDS) <= set(r)
        assert r["status"] == "ok" and r["ok"] is True and r["mismatches"] == 0, r
        assert r["cycles"] >= r["roofline_cycles"] > 0
        assert r["cycles"] >= r["bound_cycles"] >= r["roofline_cycles"]
        assert r["cycles_per_roofline"] == pytest.approx(r["cycles"] / r["roofline_cycles"], abs=1e-3)
        assert r["words_moved"] == r["words_loaded"] + r["words_stored"]
        assert r["traffic_per_compulsory"] >= 1.0
        assert r["words_moved"] >= r["compulsory_words"] > 0
        assert r["channel_words"] > 0 and r["compile_cpu_s"] > 0 and r["compile_s"] > 0
        assert r["sim_cycles_per_s"] > 0
        if r["cycles_per_roofline"] > suite.ABOVE:
            assert r["reason"]
    auto = {r["kernel"]: r for r in rows if r["config"] == "auto"}
    assert all(r["band_fits"] is True and r["tiling"] != "none" for r in auto.values())
    by_csv = {(r["kernel"], r["config"]): r for r in csv_rows}
    for r in rows:
        assert int(by_csv[r["kernel"], r["config"]]["cycles"]) == r["cycles"]
    med = data["summary"]["median_cycles_per_roofline_auto"]
    assert med == pytest.approx(statistics.median(r["cycles_per_roofline"] for r in auto.values()), abs=1e-3)


@pytest.mark.slow
def test_markdown_summary(results):
    md = (results / "bench.md").read_text()
    assert "Median cycles/roofline (`--tile auto`): **" in md
    assert "| kernel | options | ok | cycles | roofline | cycles/roofline |" in md
    for k in KERNELS:
        assert f"| {k} | --tile auto |" in md


def test_explain_names_the_bounds():
    row = {"roofline_cycles": 100, "cycles": 400, "statement_instances": 300, "compute_processes": 3,
           "max_process_instances": 250, "max_process": "S1", "_max_statement": "S1", "port_words": 120,
           "ideal_cycles": 260, "latency_cycles": 300, "model_cycles": 300, "max_compute_latency": 8,
           "busiest_port": "A", "_port_loads": 120, "_port_stores": 0, "traffic_per_compulsory": 1.0,
           "bound_cycles": 250, "recurrence_stalls": None}
    text = suite.explain(row)
    assert text.startswith("one statement holds 83% of the instances")
    assert "bounds cycles/roofline at 2.50" in text and "memory-bound: array A moves 120 words" in text
    assert "start-up: the RTL takes 100 cycles more than the cycle model" in text


def test_configs_and_cli_delegation(capsys):
    assert suite.parse_config("p4") == {"tile": "auto", "parallel": 4, "read_ports": "per-part", "mem_width": 0}
    assert suite.parse_config("p4s") == {"tile": "auto", "parallel": 4, "read_ports": "shared", "mem_width": 0}
    assert suite.parse_config("p16w") == {"tile": "auto", "parallel": 16, "read_ports": "per-part", "mem_width": 512}
    assert suite.config_options("p2") == "--tile auto --parallel 2"
    assert suite.config_options("p2s") == "--tile auto --parallel 2 --read-ports shared"
    assert suite.config_options("autow") == "--tile auto --mem-width 512"
    with pytest.raises(ValueError):
        suite.parse_config("fast")
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 0
    assert "dpn-synth bench" in capsys.readouterr().out
    assert cli.main(["bench", "--configs", "nope"]) == 2
