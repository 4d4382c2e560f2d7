"""`dpn.json` (round-trips through `network_from_json`) and `dpn.dot` (`hls/dpn/svg.py` draws `dpn.svg`)."""

from __future__ import annotations


import islpy as isl

from ..diagnostics import SourceLoc
from ..poly.program import PolyProgram
from ..poly.types import BY_NAME
from .network import MEMORY_LATENCY, Channel, ChannelKind, Member, Process, ProcessKind, ProcessNetwork, Stage

FORMAT_VERSION = 2  # 2: compute processes list their member statements


def network_to_json(net: ProcessNetwork) -> dict:
    return {
        "format": FORMAT_VERSION,
        "kernel": net.program.name,
        "stage": net.stage.name,
        "time_dims": net.time_dims,
        "tiling": None if net.tiling is None else {
            "sizes": list(net.tiling.sizes), "bands": [b.describe() for b in net.tiling.bands if b.depth],
            "point_order": net.tiling.point_order,
            "band_dims": net.tiling.band_dims, "schedule": str(net.tiling.schedule), "reason": net.tiling.reason},
        "params": net.program.param_values(),
        "processes": [
            {
                "name": p.name, "kind": p.kind.value, "domain": str(p.domain), "schedule": str(p.schedule),
                "members": [{"statement": m.statement, "instance": str(m.instance)} for m in p.members],
                "array": p.array, "loc": str(p.loc), "band_dims": p.band_dims, "port": p.port,
                "slab": p.slab,
            }
            for p in net.processes
        ],
        "channels": [
            {
                "name": c.name, "producer": c.producer, "consumer": c.consumer, "relation": str(c.relation),
                "array": c.array, "type": c.type.name, "width": c.width, "source_port": c.source_port,
                "sink_port": c.sink_port, "ppn_channel": c.ppn_channel, "role": c.role,
                "kind": None if c.kind is None else c.kind.value, "in_order": c.in_order, "unicity": c.unicity,
                "depth": c.depth, "moduli": list(c.moduli), "max_live": c.max_live, "sized_by": c.sized_by,
            }
            for c in net.channels
        ],
        "notes": list(net.notes),
        "late_reads": net.late_reads,
        "mem_width": net.mem_width,
        "mem_latency": net.mem_latency,
    }


def _loc(text: str) -> SourceLoc:
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return SourceLoc(parts[0], int(parts[1]), int(parts[2]))
    return SourceLoc(text)


def network_from_json(data: dict, program: PolyProgram) -> ProcessNetwork:
    """Rebuild a network from `network_to_json` output (the program supplies the statements)."""
    assert data["format"] == FORMAT_VERSION
    net = ProcessNetwork(program, data["time_dims"], Stage[data["stage"]])
    for p in data["processes"]:
        net.add_process(Process(
            p["name"], ProcessKind(p["kind"]), isl.Set(p["domain"]), isl.Map(p["schedule"]), _loc(p["loc"]),
            tuple(Member(m["statement"], isl.Map(m["instance"])) for m in p["members"]), p["array"],
            p.get("band_dims", 0), p.get("port", 0), p.get("slab"),
        ))
    for c in data["channels"]:
        net.add_channel(Channel(
            c["name"], c["producer"], c["consumer"], isl.Map(c["relation"]), c["array"], BY_NAME[c["type"]],
            c["source_port"], c["sink_port"], c["ppn_channel"], c["role"],
            None if c["kind"] is None else ChannelKind(c["kind"]), c["in_order"], c["unicity"], c["depth"],
            tuple(c["moduli"]), c["max_live"], c.get("sized_by", "exact"),
        ))
    net.notes = list(data.get("notes", []))
    net.late_reads = bool(data.get("late_reads", True))
    net.mem_width = int(data.get("mem_width", 0))
    net.mem_latency = int(data.get("mem_latency", MEMORY_LATENCY))
    return net


def network_to_dot(net: ProcessNetwork) -> str:
    lines = [f'digraph "{net.program.name}" {{', "  rankdir=LR;", '  node [shape=box, fontname="monospace"];']
    for p in net.processes:
        shape = {"compute": "box", "load": "invhouse", "store": "house"}[p.kind.value]
        label = "\\n".join([p.name] + [net.program.statement(s).text for s in p.statements])
        label = label.replace('"', '\\"')
        lines.append(f'  "{p.name}" [shape={shape}, label="{label}"];')
    for c in net.channels:
        kind = c.kind.value if c.kind else "untyped"
        depth = "?" if c.depth is None else c.depth
        style = ", style=dashed" if c.kind == ChannelKind.BUFFER else ""
        lines.append(f'  "{c.producer}" -> "{c.consumer}" [label="{c.name}: {kind} d={depth} w={c.width}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
