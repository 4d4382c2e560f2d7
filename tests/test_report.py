"""What `compile` tells a hardware engineer first (hls/report.py), and the network picture (hls/dpn/svg.py).

report.md opens with the top module, the latency estimate and the resources line, then the ports of
the top (read back from the generated Verilog by an independent parse here: every port is listed),
the II and depth of every process, and the map from C source lines to processes; report.json carries
the same.  dpn.svg is drawn without Graphviz (the test runs on a PATH with no `dot`): one box per
process, one arrow per channel, valid XML, the same bytes on every compile.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hls.cli import main
from tests.kernels import ROOT

EXAMPLES = ROOT / "examples"
SVG = "{http://www.w3.org/2000/svg}"


def _ports_of(verilog: str, module: str) -> list[str]:
    """Port names of an ANSI module header, by a plain regex (independent of hls.rtl.vendor)."""
    header = re.search(rf"module\s+{module}\s*\((.*?)\);", re.sub(r"/\*.*?\*/|//[^\n]*", "", verilog, flags=re.S),
                       re.S).group(1)
    return [re.findall(r"(\w+)\s*$", decl.strip())[0] for decl in header.split(",") if decl.strip()]


@pytest.fixture
def no_dot_path(monkeypatch):
    """PATH without any directory holding Graphviz's `dot`."""
    dirs = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "dot").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(dirs))


@pytest.mark.parametrize("interface", ["native", "axi4"])
def test_report_opens_with_the_top_module_and_its_ports(interface, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["compile", str(EXAMPLES / "gemm-int.c"), "--tile", "none", "-o", str(out), "--interface",
                 interface]) == 0  # the untiled network
    printed = capsys.readouterr().out
    md = (out / "report.md").read_text()
    rep = json.loads((out / "report.json").read_text())
    top = "kernel_gemm_int_top" if interface == "native" else "kernel_gemm_int_axi"
    lines = md.splitlines()
    assert lines[0] == "# dpn-synth report: `kernel_gemm_int`"
    assert lines[2].startswith(f"Top module: `{top}` in `rtl/{top}.v`")
    assert f"top: {top}" in printed
    # latency: the cycle model's estimate, in cycles and at the clock target
    cycles = rep["summary"]["estimated_cycles"]
    assert rep["latency"]["cycles"] == cycles > 0
    assert lines[4].startswith(f"Estimated latency: {cycles} cycles") and "150 MHz clock target" in lines[4]
    assert rep["latency"]["us_at_clock_target"] == round(cycles / 150, 3)
    assert lines[6].startswith("Resources and Fmax: not estimated")
    # every port of the generated top, listed in the Ports section before the processes
    ports = _ports_of((out / "rtl" / f"{top}.v").read_text(), top)
    section = md[md.index("## Ports"):md.index("## Processes")]
    assert md.index("## Ports") < md.index("## Processes") < md.index("## Summary")
    if interface == "native":
        assert {"clk", "rst", "start", "ready", "idle", "done", "arg_alpha", "C_wr_req_valid", "C_wr_rsp_ready",
                "B_rd_rsp_rdata"} <= set(ports)
        assert not any(p.startswith(("A_wr_", "B_wr_")) for p in ports)  # A and B are only read
        assert {"C read channel", "C write channel", "A read channel"} <= {g["name"] for g in rep["top"]["groups"]}
        for p in ports:
            assert re.search(rf"`{p}(\[\d+:0\])?`", section), p
    else:
        for p in ("ap_clk", "ap_rst_n", "interrupt", "s_axi_control", "m_axi_C", "m_axi_A", "m_axi_B"):
            assert f"`{p}" in section, p
        groups = {g["name"] for g in rep["top"]["groups"]}
        assert {"s_axi_control", "m_axi_C", "ap_clk", "interrupt"} <= groups
    listed = [p["name"] for g in rep["top"]["groups"] for p in g["ports"]]
    assert listed == ports  # report.json: every port, in declaration order
    assert rep["top"]["module"] == top and rep["top"]["interface"] == interface
    # II and depth of every process, and the source map
    assert all(p["ii"] == 1 and p["pipeline_depth"] >= 1 for p in rep["processes"])
    src = (EXAMPLES / "gemm-int.c").read_text().splitlines()
    rows = {r["statement"]: r for r in rep["source_map"]}
    assert set(rows) == {"S0", "S1"}
    for r in rows.values():
        assert r["processes"] and r["text"].split("=")[0].strip() in src[r["line"] - 1]
    assert rows["S1"]["memory_units"] == ["LOAD_A", "LOAD_B", "STORE_C"]
    assert "## Source lines and processes" in md and f"| {rows['S1']['line']} | `C[i][j] +=" in md


def test_report_without_rtl_has_no_top(tmp_path):
    """A library call without the RTL (tests/dpn, bench): the report still opens with the latency."""
    from hls.pipeline import Options, run
    from hls.report import write_reports

    res = run(Options(str(EXAMPLES / "gemm-int.c")))
    write_reports(tmp_path, res.program, res.network, dict(res.timing))
    md = (tmp_path / "report.md").read_text()
    assert "Top module" not in md and md.splitlines()[2].startswith("Estimated latency:")
    assert "top" not in json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize("name, tile", [("gemm-int", "none"), ("jacobi-2d", "auto"),
                                        pytest.param("2mm", "auto", marks=pytest.mark.slow)])
def test_dpn_svg_without_graphviz(name, tile, tmp_path, capsys, no_dot_path):
    outs = []
    for k in range(2):
        out = tmp_path / f"o{k}"
        assert main(["compile", str(EXAMPLES / f"{name}.c"), "--tile", tile, "-o", str(out)]) == 0
        cap = capsys.readouterr()
        assert cap.out.count("dpn.svg") == 1 and "dpn.svg" not in cap.err and "Graphviz" not in cap.err
        outs.append(out)
    svg = (outs[0] / "dpn.svg").read_bytes()
    assert svg == (outs[1] / "dpn.svg").read_bytes()  # deterministic
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    net = json.loads((outs[0] / "dpn.json").read_text())
    groups = root.iter(f"{SVG}g")
    boxes = {}
    arrows = set()
    for g in groups:
        cls = g.get("class", "").split()
        if "process" in cls:
            assert g.find(f"{SVG}rect") is not None
            boxes[g.get("id")] = cls
        if "channel" in cls:
            assert g.find(f"{SVG}path") is not None
            arrows.add(g.get("id"))
    assert sorted(boxes) == sorted(f"p-{p['name']}" for p in net["processes"])  # one box per process
    kinds = {f"p-{p['name']}": f"kind-{p['kind']}" for p in net["processes"]}
    assert all(kinds[b] in cls for b, cls in boxes.items())  # load / compute / store told apart
    assert arrows == {f"ch-{c['name']}" for c in net["channels"]}
    text = svg.decode()
    for c in net["channels"]:  # labelled with kind and depth
        kind = "order" if c["role"] == "order" else c["kind"]
        assert f">{c['name']} {kind} {c['depth']}<" in text
