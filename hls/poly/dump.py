"""Text and JSON views of a `PolyProgram` (for `analyze` and `--dump-after`)."""

from __future__ import annotations

from . import expr as E
from .program import PolyProgram


def program_to_json(p: PolyProgram) -> dict:
    flow = p.flow
    return {
        "kernel": p.name,
        "file": p.file,
        "params": [{"name": q.name, "type": q.type.name, "value": q.value, "inferred": q.inferred} for q in p.params],
        "context": str(p.context),
        "arrays": [
            {"name": a.name, "type": a.type.name, "shape": list(a.shape), "extent": str(a.extent),
             "kind": "argument" if a.is_arg else "local"}
            for a in p.arrays.values()
        ],
        "scalars": [{"name": a.name, "type": a.type.name} for a in p.args if a.kind == "scalar" and not a.hoisted],
        "hoisted": [{"name": h.name, "type": h.type.name, "text": h.text, "c_text": h.c_text, "loc": str(h.loc),
                     "inputs": list(h.inputs), "port": f"arg_{h.name}", "expr": E.to_json(h.expr)} for h in p.hoisted],
        "statements": [
            {
                "name": s.name, "text": s.text, "loc": str(s.loc), "domain": str(s.domain),
                "schedule": str(p.statement_schedule(s.name)),
                "write": {"id": s.write.id, "array": s.write.array, "relation": str(s.write.relation)},
                "reads": [{"id": r.id, "array": r.array, "text": r.text, "relation": str(r.relation)} for r in s.reads],
                "expr": E.to_json(s.expr),
            }
            for s in p.statements
        ],
        "dependences": [] if flow is None else [
            {"source": d.source, "sink": d.sink, "sink_access": d.sink_access, "relation": str(d.relation)}
            for d in flow.dependences
        ],
        "live_in": {} if flow is None else {k: str(v) for k, v in flow.live_in.items()},
        "live_out": {} if flow is None else {k: str(v) for k, v in flow.live_out.items()},
        "notes": list(p.notes),
    }


def program_to_text(p: PolyProgram) -> str:
    out = [f"kernel {p.name} ({p.loc})"]
    if p.params:
        out.append("params: " + ", ".join(
            f"{q.name}" + (f"={q.value}" + (" (inferred)" if q.inferred else "") if q.value is not None else "")
            for q in p.params))
        out.append(f"context: {p.context}")
    out.append("arrays:")
    for a in p.arrays.values():
        shape = "".join(f"[{s}]" for s in a.shape)
        out.append(f"  {a.type} {a.name}{shape}  ({'argument' if a.is_arg else 'local'})")
    if p.hoisted:
        out.append("hoisted scalars (computed once on the host before start, top inputs):")
        for h in p.hoisted:
            out.append(f"  {h.type} {h.name} = {h.text}    // {h.loc}, port arg_{h.name}")
    out.append("statements:")
    for s in p.statements:
        out.append(f"  {s.name}: {s.text}    // {s.loc}")
        out.append(f"    domain:   {s.domain}")
        out.append(f"    schedule: {p.statement_schedule(s.name)}")
        out.append(f"    value:    {s.expr}")
        for a in s.accesses:
            out.append(f"    {'write' if a.is_write else 'read '} {a.id}: {a.relation}")
    if p.flow is not None:
        out.append("dependences (source -> sink):")
        for d in p.flow.dependences:
            out.append(f"  {d.source} -> {d.sink_access}: {d.relation}")
        out.append("live-in reads (from memory):")
        for k, v in p.flow.live_in.items():
            out.append(f"  {k}: {v}")
        out.append("live-out writes (to memory):")
        for k, v in p.flow.live_out.items():
            out.append(f"  {k}: {v}")
    for n in p.notes:
        out.append(f"note: {n}")
    return "\n".join(out) + "\n"
