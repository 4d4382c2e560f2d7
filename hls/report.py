"""`report.md` and `report.json` for `compile`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

from .dpn.network import ChannelKind, ProcessKind, ProcessNetwork
from .dpn.tables import NetworkTables
from .poly.program import PolyProgram


def _why_not_fifo(c) -> str:
    if c.kind == ChannelKind.FIFO:
        return ""
    if c.kind == ChannelKind.FIFO_MULT:
        return "values are read several times (in order): FIFO + register"
    reasons = []
    if not c.in_order:
        reasons.append("the consumer reads values in a different order than they are produced")
    if not c.unicity:
        reasons.append("values are read several times")
    return "; ".join(reasons)


def report_json(program: PolyProgram, net: ProcessNetwork, summary: dict) -> dict:
    tables = NetworkTables(net)
    procs = []
    for p in net.processes:
        st = program.statement(p.statement) if p.statement else None
        procs.append({
            "name": p.name, "kind": p.kind.value, "iterations": len(tables.process(p.name).iterations),
            "schedule": str(p.schedule), "statement": st.text if st else None, "loc": str(st.loc if st else p.loc),
            "array": p.array,
        })
    chans = [{
        "name": c.name, "producer": c.producer, "consumer": c.consumer, "source_port": c.source_port,
        "sink_port": c.sink_port, "kind": c.kind.value, "depth": c.depth, "width": c.width, "words": c.words,
        "max_live": c.max_live, "moduli": list(c.moduli), "why_not_fifo": _why_not_fifo(c), "role": c.role,
    } for c in net.channels]
    t = net.tiling
    tiling = {"description": "none", "reason": "tiling not requested"} if t is None or not t.is_tiled else {
        "description": t.describe(), "reason": t.reason, "sizes": list(t.sizes), "point_order": t.point_order,
        "band_dims": t.band_dims}
    if t is not None and not t.is_tiled:
        tiling["reason"] = t.reason
    return {"kernel": program.name, "file": program.file, "params": program.param_values(), "tiling": tiling,
            "summary": summary, "processes": procs, "channels": chans, "notes": list(program.notes) + net.notes}


def write_reports(outdir: Path, program: PolyProgram, net: ProcessNetwork, summary: dict,
                  extra_md: Sequence[str] = (), extra_json: Optional[dict] = None) -> None:
    """`extra_md`: more report.md lines (a section, e.g. the AXI4 register map) before the notes;
    `extra_json`: more top-level keys of report.json."""
    data = report_json(program, net, summary)
    data.update(extra_json or {})
    (outdir / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [f"# dpn-synth report: `{program.name}`", "", f"Source: `{program.file}`", ""]
    if data["params"]:
        lines += ["Parameters: " + ", ".join(f"`{k}={v}`" for k, v in data["params"].items()), ""]
    tiling = data["tiling"]
    if tiling["description"] == "none":
        lines += [f"Tiling: none (untiled process network; {tiling['reason']})", ""]
    else:
        lines += [f"Tiling: {tiling['description']}", "", f"Why: {tiling['reason']}", ""]
    lines += ["## Summary", ""]
    lines += [f"- {k.replace('_', ' ')}: {v}" for k, v in summary.items()]
    lines += ["", "## Processes", "", "| process | kind | iterations | statement | source |", "|---|---|---|---|---|"]
    for p in data["processes"]:
        lines.append(f"| {p['name']} | {p['kind']} | {p['iterations']} | `{p['statement'] or p['array']}` | {p['loc']} |")
    lines += ["", "## Channels", "", "| channel | from | to | kind | depth | width | words | why not a FIFO |",
              "|---|---|---|---|---|---|---|---|"]
    for c in data["channels"]:
        lines.append(f"| {c['name']} | {c['producer']} ({c['source_port']}) | {c['consumer']} ({c['sink_port']}) | "
                     f"{c['kind']} | {c['depth']} | {c['width']} | {c['words']} | {c['why_not_fifo']} |")
    if extra_md:
        lines += ["", *extra_md]
    if data["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in data["notes"]]
    (outdir / "report.md").write_text("\n".join(lines) + "\n")
