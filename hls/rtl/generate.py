"""The RTL back end: a typed, sized `ProcessNetwork` to Verilog files.

Each process becomes a module (control from `control.py`, input multiplexers, datapath from
`datapath.py`, output stage), load/store processes become memory units, channels become instances
of the FIFO / FIFO-with-multiplicity / buffer templates, and a top wires them to the arrays' memory
channels: a read channel per loaded array (its load unit's), a write channel per stored array (its
store unit's).  Templates are logic-free: this module computes every name, width and expression.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

import islpy as isl

from ..diagnostics import CompileError
from ..dpn.memports import line_slots, words_per_beat
from ..dpn.network import Channel, ChannelKind, Process, ProcessKind, ProcessNetwork, Stage
from ..dpn.timing import BUFFER_INREG_SLOTS
from ..poly.expr import AffineValue, walk
from ..poly.types import ScalarType
from . import datapath, delay
from .affine import drop_params, pw_aff_expr
from .control import Control, control, dim_names, first_reads, last_reads, wide_names
from .render import render

FIFO_MODULE = "dpn_fifo"
FIFO_MULT_MODULE = "dpn_fifo_mult"
BUFFER_MODULE = "dpn_buffer"
MEM_MODULE = "dpn_mem"
# Reads a load unit keeps without a response: a round trip at the network's memory latency and more
# (`load_tags`), so that a unit asks for a word every cycle
LOAD_TAGS = 8
# Cycles a line reader (hw_templates/line_reader.v.j2) adds to a load's round trip: its request queue,
# its response register and its line queue; a load unit behind one keeps that many more requests in flight
LINE_READER_DELAY = 3
# Writes a store unit keeps without a response.  Behind the AXI4 port a write is answered after its burst
# gathered up to 16 writes, went out as 16 W beats and got its B response, and the answers of a burst
# then come one per cycle: about 50 cycles, so 64 keep a stream of writes going at one per cycle
STORE_TAGS = 64


def clog2(n: int) -> int:
    return max(1, (max(1, n) - 1).bit_length())


@dataclass
class RtlDesign:
    """Generated Verilog: `rtl` files for the design, `tb` files for simulation, and what a testbench needs."""

    top: str
    tb_top: str
    rtl: dict[str, str] = field(default_factory=dict)
    tb: dict[str, str] = field(default_factory=dict)
    interface: dict = field(default_factory=dict)


def _chan_view(c: Channel) -> dict:
    aw = clog2(c.depth) if c.kind == ChannelKind.BUFFER else 0
    return {"name": c.name, "kind": c.kind.value, "width": c.width, "depth": c.depth, "aw": aw,
            "count_width": count_width(c)}


def count_width(c: Channel) -> int:
    """Bits of a channel's fill count: a FIFO counts its input register's word too (up to DEPTH + 1,
    hw_templates/fifo.v.j2), a buffer its full slots."""
    return clog2(c.depth + 1) if c.kind == ChannelKind.BUFFER else clog2(c.depth + 2)


def _in_ports(net: ProcessNetwork, proc: Process, values: dict[str, int], groups: list[tuple[str, str, bool]],
              ctl: Control):
    """Input port groups: (port id, description, optional) -> channels feeding that port."""
    ports, decls, conns = [], [], []
    for k, (port, what, optional) in enumerate(groups):
        chans = [c for c in net.inputs(proc.name) if c.sink_port == port]
        if not chans:
            continue
        width = max(c.width for c in chans)
        t = chans[0].type
        # a port reading FIFOs only (with multiplicity or not) keeps its operand flag in a register
        # computed a cycle ahead from the FIFOs' look-ahead (out_vk, out_vt; a FIFO with multiplicity's
        # out_held too): no path from a channel's flags through the fire.  A port reading a buffer and
        # FIFOs (a stencil's value from memory or from its own earlier write) keeps the FIFOs' part of
        # the flag in such a register, the buffer's part combinational: every FIFO channel is flagged
        registered = all(c.kind in (ChannelKind.FIFO, ChannelKind.FIFO_MULT) for c in chans)
        views = []
        for c in chans:
            ch = f"{c.name}_r"
            v = {"chan": ch, "kind": c.kind.value, "sel": ctl.predicate(c.relation.range(), values),
                 "first": None, "addr": None, "last": None, "aw": 0}
            v["sel_nx"] = ahead_guard(v["sel"])
            decls += [f"input {ch}_valid", f"output {ch}_ready", f"input [{c.width - 1}:0] {ch}_data"]
            conns += [(f"{ch}_valid", f"{ch}_valid"), (f"{ch}_ready", f"{ch}_ready"), (f"{ch}_data", f"{ch}_data")]
            if c.kind != ChannelKind.BUFFER:
                decls += [f"input {ch}_vk", f"input {ch}_vt"]
                conns += [(f"{ch}_vk", f"{ch}_vk"), (f"{ch}_vt", f"{ch}_vt")]
            if c.kind == ChannelKind.FIFO_MULT:
                v["first"] = ctl.predicate(first_reads(c, proc), values)
                v["first_nx"] = ahead_guard(v["first"])
                decls.append(f"output {ch}_first")
                conns.append((f"{ch}_first", f"{ch}_first"))
                decls.append(f"input {ch}_held")
                conns.append((f"{ch}_held", f"{ch}_held"))
            if c.kind == ChannelKind.BUFFER:
                v["aw"] = clog2(c.depth)
                v["addr"] = ctl.slot(c, c.relation.reverse(), values)
                v["addr_nx"] = ahead(v["addr"])
                v["addr_nd"] = ahead_next(v["addr_nx"])
                v["last"] = ctl.predicate(last_reads(c, proc), values)
                decls += [f"output [{v['aw'] - 1}:0] {ch}_addr", f"output {ch}_last",
                          f"output [{v['aw'] - 1}:0] {ch}_addr_nx", f"output [{v['aw'] - 1}:0] {ch}_addr_nd",
                          f"output {ch}_step"]
                conns += [(f"{ch}_addr", f"{ch}_addr"), (f"{ch}_last", f"{ch}_last"),
                          (f"{ch}_addr_nx", f"{ch}_addr_nx"), (f"{ch}_addr_nd", f"{ch}_addr_nd"),
                          (f"{ch}_step", f"{ch}_step")]
            views.append(v)
        name = f"p{k}"
        ports.append({"name": name, "what": what, "optional": optional, "channels": views, "registered": registered,
                      "decl": f"{datapath.decl(t, 'pv_' + name) if width == t.bits else f'wire [{width - 1}:0] pv_{name}'}",
                      "signal": f"pv_{name}"})
    return ports, decls, conns


def ahead(expr: str) -> str:
    """A slot expression of the value registers (`control.Control.slot`) in the next cycle: each
    register `v<k>` replaced by its load value, the register copy `ldq_v<k>` (`_control.v.j2`; see
    `announced`)."""
    return re.sub(r"\bv(\d+)\b", r"ldq_v\1", expr)


def ahead_next(expr: str) -> str:
    """An announced slot expression (`ahead`) in the next cycle, which a big buffer loads into its
    own copies of the announced slot (hw_templates/buffer_sync.v.j2): each register copy `ldq_v<k>`
    replaced by its D input `ldqn_v<k>` (`_control.v.j2`)."""
    return re.sub(r"\bldq_v(\d+)\b", r"ldqn_v\1", expr)


def stepped(ports: list[dict]) -> list[str]:
    """The value registers whose value in the next cycle (`vn_v<k>`, `_control.v.j2`) a buffer read
    one stage after issue is told: its announced slot is the issue stage's slot (`_carry`)."""
    names = {f"v{k}" for p in ports if p.get("carry") for u in p["carry"]["unpack"]
             for k in re.findall(r"\bvn_v(\d+)\b", u)}
    return sorted(names)


def announced(ports: list[dict]) -> list[str]:
    """The value registers whose load value a buffer read at issue is told (`ahead`): the control
    keeps a register copy `ldq_v<k>` of each."""
    names = {f"v{k}" for p in ports if not p.get("stage") for c in p["channels"] if c["kind"] == "buffer"
             for k in re.findall(r"\bldq_v(\d+)\b", c["addr_nx"])}
    return sorted(names)


def ahead_guard(expr: str) -> str:
    """A channel selection (`control.Control.predicate`: a constant or a guard register `g<k>`) at
    the iteration after a step: each `g<k>` replaced by its load value `ld_g<k>` (`_control.v.j2`)."""
    return re.sub(r"\bg(\d+)\b", r"ld_g\1", expr)


def _carry(port: dict, step: str) -> dict:
    """What a port read late needs from its iteration's issue stage (channel selects, FIFO-with-
    multiplicity first reads, buffer slots and last reads), packed to travel down the pipeline.
    A buffer's announced slot is the carry register a stage before its read's, and the slot's next
    value (`_addr_nd`) that register's D input: the register a stage before it when that one's
    enable is high (`process.v.j2`), or, a stage after issue, the issue stage's slot of the next
    cycle's iteration registers (`vn_v<k>`)."""
    name = f"lc_{port['name']}"
    fields, unpack, bit = [], [], 0
    at = f"{name}_{port['stage']}"
    before = f"{name}_{port['stage'] - 1}"  # what the last carry register takes when its segment advances
    for c in port["channels"]:
        ch = c["chan"]
        parts = [(f"sel0_{ch}", 1, f"wire sel_{ch}")]
        if c["kind"] == "fifo_mult":
            parts.append((f"first0_{ch}", 1, f"assign {ch}_first"))
        if c["kind"] == "buffer":
            parts.append((f"slot0_{ch}[{c['aw'] - 1}:0]", c["aw"], f"assign {ch}_addr"))
            parts.append((f"last0_{ch}", 1, f"assign {ch}_last"))
            unpack.append(f"assign {ch}_step = {step}")
        for expr, width, target in parts:
            fields.append(expr)
            unpack.append(f"{target} = {at}[{bit + width - 1}:{bit}]" if width > 1 else f"{target} = {at}[{bit}]")
            flagged = c["kind"] != "buffer"  # a FIFO's flag is a register (`_in_ports`)
            if target == f"wire sel_{ch}" and flagged:  # the selection a stage before
                unpack.append(f"wire selp_{ch} = {before}[{bit}]")
            if target == f"assign {ch}_first" and flagged:  # the first read a stage before
                unpack.append(f"wire firstp_{ch} = {before}[{bit}]")
            if target == f"assign {ch}_addr":
                unpack.append(f"assign {ch}_addr_nx = {before}[{bit + width - 1}:{bit}]")
                if port["stage"] >= 2:
                    earlier = f"{name}_{port['stage'] - 2}"
                    unpack.append(f"assign {ch}_addr_nd = ce_c{port['stage'] - 2} ? "
                                  f"{earlier}[{bit + width - 1}:{bit}] : {before}[{bit + width - 1}:{bit}]")
                else:
                    slot = re.sub(r"\bv(\d+)\b", r"vn_v\1", c["addr"])
                    unpack.append(f"wire signed [31:0] slot_nd_{ch} = {slot}")
                    unpack.append(f"assign {ch}_addr_nd = slot_nd_{ch}[{width - 1}:0]")
            bit += width
    return {"name": name, "width": bit, "fields": list(reversed(fields)), "unpack": unpack}


def _out_ports(net: ProcessNetwork, proc: Process, values: dict[str, int], ctl: Control):
    outs, decls, conns = [], [], []
    dom = drop_params(proc.domain, values)
    ident = isl.Map.identity(isl.Space.map_from_set(dom.get_space())).intersect_domain(dom)
    for c in net.outputs(proc.name):
        ch = f"{c.name}_w"
        o = {"chan": ch, "kind": c.kind.value, "width": c.width, "when": ctl.predicate(c.relation.domain(), values),
             "addr": None, "aw": 0}
        decls += [f"output {ch}_valid", f"input {ch}_ready", f"output [{c.width - 1}:0] {ch}_data"]
        conns += [(f"{ch}_valid", f"{ch}_valid"), (f"{ch}_ready", f"{ch}_ready"), (f"{ch}_data", f"{ch}_data")]
        if c.kind == ChannelKind.BUFFER:
            o["aw"] = clog2(c.depth)
            o["addr"] = ctl.slot(c, ident, values)
            decls.append(f"output [{o['aw'] - 1}:0] {ch}_addr")
            conns.append((f"{ch}_addr", f"{ch}_addr"))
        outs.append(o)
    return outs, decls, conns


def _route(outs: list[dict], source: str = "out_route") -> tuple[list[str], list[str]]:
    """Pack, per iteration, which output channels get the value and at which buffer slots; and unpack it."""
    fields, unpack, bit = [], [], 0
    for o in outs:
        if o["kind"] == "buffer":
            fields.append(f"slot_{o['chan']}[{o['aw'] - 1}:0]")
            unpack.append(f"[{o['aw'] - 1}:0] oa_{o['chan']} = {source}[{bit + o['aw'] - 1}:{bit}]")
            bit += o["aw"]
        fields.append(f"when_{o['chan']}")
        unpack.append(f"om_{o['chan']} = {source}[{bit}]")
        o["route_bit"] = bit  # where the channel's `om_` bit is in a packed route
        bit += 1
    if not fields:
        fields.append("1'b0")
    fields.reverse()  # a concatenation lists the most significant field first
    return fields, unpack


def _route_width(outs: list[dict]) -> int:
    return sum(1 + (o["aw"] if o["kind"] == "buffer" else 0) for o in outs)


#: The signals of an array's read channel (its load unit's) and write channel (its store unit's), as
#: `<array>_<signal>` on the top and `<signal>` on the unit.
READ_SIGNALS = ("rd_req_valid", "rd_req_ready", "rd_req_addr", "rd_rsp_valid", "rd_rsp_ready", "rd_rsp_rdata")
WRITE_SIGNALS = ("wr_req_valid", "wr_req_ready", "wr_req_addr", "wr_req_wdata", "wr_rsp_valid", "wr_rsp_ready")


def read_channel(port: int) -> str:
    """The name of an array's read channel `port` on the top (`<array>_<name>_req_valid`, ...): `rd`,
    then `rd1`, `rd2`, .. for the load units of further parallel slabs (`partition.READ_PORTS`)."""
    return "rd" if port == 0 else f"rd{port}"


def write_channel(port: int) -> str:
    """The name of an array's write channel `port` on the top: `wr`, then `wr1`, `wr2`, .. for the
    store units of further parallel slabs (`partition.WRITE_PORTS`)."""
    return "wr" if port == 0 else f"wr{port}"


def _mem_conns(array: str, signals: tuple[str, ...], channel: str = "") -> list[tuple[str, str]]:
    """A memory unit's channel wired straight to the top's ports: one unit per channel, no arbiter
    (`channel`: the top's name of the channel, `read_channel` or `write_channel`)."""
    return [(n, f"{array}_{channel + n[2:] if channel else n}") for n in signals]


def generate(net: ProcessNetwork) -> RtlDesign:
    """Verilog for a typed and sized network whose parameters are bound."""
    assert net.stage >= Stage.SIZED, "channels must be typed and sized before RTL generation"
    _check_float(net)
    program = net.program
    values = program.param_values()
    kernel = program.name
    top = f"{kernel}_top"
    design = RtlDesign(top=top, tb_top=f"{kernel}_tb")
    scalars = [{"name": a.name, "port": f"arg_{a.name}", "width": a.type.bits, "signed": a.type.signed,
                "type": a.type.name} for a in program.args if a.kind == "scalar"]
    scalar_ports = {s["name"]: s["port"] for s in scalars}
    reads: dict[str, list[str]] = {}  # array -> its read channels
    for p in sorted((p for p in net.processes if p.kind == ProcessKind.LOAD), key=lambda p: p.port):
        reads.setdefault(p.array, []).append(read_channel(p.port))
    writes: dict[str, list[str]] = {}  # array -> its write channels
    for p in sorted((p for p in net.processes if p.kind == ProcessKind.STORE), key=lambda p: p.port):
        writes.setdefault(p.array, []).append(write_channel(p.port))
    wide = words_per_beat(net)
    mems = []
    for a in program.args:
        if a.kind != "array":
            continue
        arr = program.arrays[a.name]
        shape = list(arr.bound_shape)
        words = 1
        for s in shape:
            words *= s
        m = {"name": a.name, "width": arr.type.bits, "aw": clog2(words), "words": words, "shape": shape,
             "type": arr.type.name, "load": a.name in reads, "reads": reads.get(a.name, []),
             "store": a.name in writes, "writes": writes.get(a.name, []), "line": 1, "raw": clog2(words), "rd_width": arr.type.bits}
        # the channels of its load units: the top's read channels, or a line reader's units
        m["units"] = m["reads"]
        if a.name in wide:
            w = wide[a.name]
            m.update(line=w, raw=clog2(-(-words // w)), rd_width=w * arr.type.bits, reads=["rd"],
                     units=[f"u{k}" for k in range(len(m["reads"]))], reader=f"{kernel}_{a.name}_lines".lower())
        mems.append(m)
    mem_by_name = {m["name"]: m for m in mems}

    procs = []
    operators: dict = {}
    for proc in net.processes:
        module = f"{kernel}_{proc.name}".lower()
        ctl = control(proc, values)
        ctx = {"name": module, "ctl": ctl, "loc": str(proc.loc)}
        if proc.kind == ProcessKind.COMPUTE:
            sts = [program.statement(m.statement) for m in proc.members]
            groups = [(r.id, r.text, proc.merged) for st in sts for r in st.reads]
            ports, in_decls, in_conns = _in_ports(net, proc, values, groups, ctl)
            outs, out_decls, out_conns = _out_ports(net, proc, values, ctl)
            dp, results, read_stage = member_datapaths(net, proc, scalar_ports)
            for p in ports:
                p["stage"] = read_stage.get(p["signal"], 0)
                if p["stage"]:
                    p["carry"] = _carry(p, f"hs_seg{dp.segment(p['stage'] - 1)}")
            operators.update(dp.modules)
            used = {e.name for st in sts for e in walk(st.expr) if hasattr(e, "name") and e.name in scalar_ports}
            sc = [s for s in scalars if s["name"] in used]
            values_out = []
            for k, (st, res) in enumerate(zip(sts, results)):
                t: ScalarType = program.arrays[st.write.array].type
                values_out.append({"reg": "out_value" if k == 0 else f"out_value_{k}", "width": t.bits,
                                   "signed": t.signed, "expr": dp.at(res, dp.depth), "statement": st.name})
            by_statement = {v["statement"]: v for v in values_out}
            for o, c in zip(outs, net.outputs(proc.name)):  # source port `S<k>.w`: statement S<k>'s result
                v = by_statement[c.source_port.split(".")[0]]
                o.update(value=v["reg"], vwidth=v["width"])
            decls = [f"input {'signed ' if s['signed'] else ''}[{s['width'] - 1}:0] {s['port']}" for s in sc]
            fields, unpack = _route(outs)
            ctx.update(text=" ; ".join(st.text.replace("\n", " ") for st in sts),
                       port_decls=decls + in_decls + out_decls, ports=ports, outs=outs,
                       datapath=dp.lines, regs=dp.regs, stages=dp.depth, values=values_out, width=values_out[0]["width"],
                       cuts=list(dp.cuts), segment=[dp.segment(k) for k in range(dp.depth + 1)],
                       enables=[(f"ce_c{k}", dp.segment(k)) for k in range(dp.depth)] + list(dp.enables.items()),
                       reg_cuts=[s for s in dp.cuts if all(p.get("registered") for p in ports if p["stage"] == s)],
                       ctl_fields=fields, ctl_width=max(1, _route_width(outs)), unpack=unpack,
                       announced=announced(ports), stepped=stepped(ports))
            text = render("process.v.j2", **ctx)
            conns = [(s["port"], s["port"]) for s in sc] + in_conns + out_conns
        else:
            m = mem_by_name[proc.array]
            address = ctl.address(proc.band_dims, m["shape"])
            if proc.kind == ProcessKind.LOAD:
                outs, out_decls, out_conns = _out_ports(net, proc, values, ctl)
                ports, in_decls, in_conns = _in_ports(net, proc, values, [("order", "memory order", True)], ctl)
                fields, unpack = _route(outs, source="out_route")
                bit = _route_width(outs)
                tags = load_tags(net, m["line"] > 1)
                ctx.update(array=proc.array, aw=m["aw"], width=m["width"], tags=tags, tag_width=bit,
                           tag_ptr_width=clog2(tags), tag_fields=fields, tag_unpack=unpack, outs=outs,
                           ports=ports, port_decls=in_decls + out_decls, address=address, announced=announced(ports))
                text = render("load_unit.v.j2", **ctx)
                conns = _mem_conns(proc.array, READ_SIGNALS, m["units"][proc.port]) + in_conns + out_conns
            else:
                ports, in_decls, in_conns = _in_ports(net, proc, values, [("mem", "data", False),
                                                                          ("order", "memory order", True)], ctl)
                tags = store_tags(net)
                outs, out_decls, out_conns = _out_ports(net, proc, values, ctl)
                fields, unpack = _route(outs, source="out_route")
                ctx.update(array=proc.array, aw=m["aw"], width=m["width"], ports=ports, outs=outs,
                           port_decls=in_decls + out_decls, address=address, data_port=ports[0]["signal"],
                           announced=announced(ports), tags=tags, tag_ptr_width=clog2(tags),
                           tag_width=max(1, _route_width(outs)), tag_fields=fields, tag_unpack=unpack)
                text = render("store_unit.v.j2", **ctx)
                conns = _mem_conns(proc.array, WRITE_SIGNALS, m["writes"][proc.port]) + in_conns + out_conns
        design.rtl[f"{module}.v"] = text
        procs.append({"name": proc.name, "module": module, "connections": conns})

    for spec in sorted(operators.values(), key=lambda s: s.module):
        design.rtl.update(spec.files())
    channels = [_chan_view(c) for c in net.channels]
    debug_fields, debug = debug_bus(net, mems, procs)
    kinds = {c.kind for c in net.channels}
    if kinds & {ChannelKind.FIFO, ChannelKind.FIFO_MULT}:
        design.rtl[f"{FIFO_MODULE}.v"] = render("fifo.v.j2", module_name=FIFO_MODULE, width=8, depth=2)
    if ChannelKind.FIFO_MULT in kinds:
        design.rtl[f"{FIFO_MULT_MODULE}.v"] = render("fifo_mult.v.j2", module_name=FIFO_MULT_MODULE, width=8, depth=2,
                                                     fifo_module_name=FIFO_MODULE)
    if ChannelKind.BUFFER in kinds:
        design.rtl[f"{BUFFER_MODULE}.v"] = render("buffer_sync.v.j2", module_name=BUFFER_MODULE, width=8, size=2,
                                                  addr_width=1, inreg_slots=BUFFER_INREG_SLOTS)
    for m in mems:
        if m["line"] > 1:
            design.rtl[f"{m['reader']}.v"] = line_reader(m, load_tags(net, True))
    design.rtl[f"{top}.v"] = render("top.v.j2", kernel=kernel, source=program.file, top=top, scalars=scalars, mems=mems,
                                    channels=channels, processes=procs, fifo_module=FIFO_MODULE,
                                    fifo_mult_module=FIFO_MULT_MODULE, buffer_module=BUFFER_MODULE,
                                    debug_fields=debug_fields, debug_width=debug["width"])
    for m in mems:
        design.tb[f"{MEM_MODULE}_{m['name']}.v"] = render(
            "mem_model.v.j2", module_name=f"{MEM_MODULE}_{m['name']}", name=m["name"], width=m["width"],
            addr_width=m["aw"], depth=m["words"], line=m["line"], read_addr_width=m["raw"],
            writes=m["writes"] or ["wr"])
    design.tb[f"{design.tb_top}.v"] = render("tb_top.v.j2", tb=design.tb_top, top=top, scalars=scalars, mems=mems,
                                             nproc=len(procs), mem_module=MEM_MODULE)
    design.interface = {"kernel": kernel, "top": top, "tb_top": design.tb_top, "scalars": scalars, "arrays": mems,
                        "processes": [p["name"] for p in procs], "params": values, "debug": debug}
    return design


def line_reader(m: dict, entries: int) -> str:
    """The line reader of array view `m` (hw_templates/line_reader.v.j2): its units' word requests
    onto the array's wide read port; `entries`: requests a unit keeps in flight."""
    units, words = len(m["units"]), m["line"]
    # as many lines as requests: a unit walking down a column needs a line for every word (gemv's A
    # in the point order that hides the accumulation's latency), one a cycle
    lines = entries
    ob = words.bit_length() - 1
    slots = line_slots(m["words"], words)
    return render("line_reader.v.j2", module_name=m["reader"], array=m["name"], units=units, words=words, ob=ob,
                  slots=slots, slot_width=clog2(slots),
                  width=m["width"], aw=m["aw"], law=m["raw"], pad=m["raw"] + ob - m["aw"],
                  entries=entries, entries_ptr=clog2(entries), lines=lines,
                  lines_ptr=clog2(lines), owners_ptr=clog2(units * lines), owner_width=clog2(units))


def debug_bus(net: ProcessNetwork, mems: list[dict], procs: list[dict]) -> tuple[list[str], dict]:
    """The top's `dbg_status` vector and its layout, for deadlock reports (`sim.rtl_sim.deadlock_report`).

    `dbg_status` concatenates signals the top already has: per channel both handshakes, the fill
    count (and the slot addresses of a buffer, the first-read flag of a FIFO with multiplicity), per
    memory unit the request and response handshakes of its channel (a load unit's read channel, a
    store unit's write channel), and every process's finished bit.  It
    drives nothing, so synthesis removes it; a simulator reads it once, when the watchdog fires.
    Returns the Verilog concatenation terms (most significant first) and the layout: per entry a
    field name -> [lsb, width].  `probes` are optional signals inside process instances (path
    relative to the top) that refine a report when the simulator can read them.
    """
    groups: list[list[str]] = []  # one per channel, memory port, process; least significant first
    width = 0

    def add(expr: str, bits: int = 1, new_group: bool = False) -> list[int]:
        nonlocal width
        if new_group or not groups:
            groups.append([])
        groups[-1].append(expr)
        width += bits
        return [width - bits, bits]

    chans = []
    for c in net.channels:
        n = c.name
        f = {"w_valid": add(f"{n}_w_valid", new_group=True), "w_ready": add(f"{n}_w_ready"),
             "r_valid": add(f"{n}_r_valid"), "r_ready": add(f"{n}_r_ready"),
             "count": add(f"{n}_count", count_width(c))}
        if c.kind == ChannelKind.FIFO_MULT:
            f["r_first"] = add(f"{n}_r_first")
        if c.kind == ChannelKind.BUFFER:
            f["w_addr"] = add(f"{n}_w_addr", clog2(c.depth))
            f["r_addr"] = add(f"{n}_r_addr", clog2(c.depth))
        chans.append({"name": n, "kind": c.kind.value, "depth": c.depth, "producer": c.producer,
                      "consumer": c.consumer, "fields": f, "probes": {"sel": f"u_{c.consumer}.sel_{n}_r"}})
    narrow = {m["name"]: m["units"] for m in mems}
    units = {(p.array, narrow[p.array][p.port] if p.kind == ProcessKind.LOAD else write_channel(p.port)): p
             for p in net.processes if p.kind in (ProcessKind.LOAD, ProcessKind.STORE)}
    ports = []
    for m in mems:
        a = m["name"]
        if not (m["load"] or m["store"]):
            continue
        entry: dict = {"name": a, "units": []}
        for ch in m["units"] + m["writes"]:
            f = {"req_valid": add(f"{a}_{ch}_req_valid", new_group=True), "req_ready": add(f"{a}_{ch}_req_ready"),
                 "rsp_valid": add(f"{a}_{ch}_rsp_valid"), "rsp_ready": add(f"{a}_{ch}_rsp_ready")}
            unit = units[(a, ch)]
            entry["units"].append({"process": unit.name, "kind": unit.kind.value, "channel": ch, "fields": f})
        ports.append(entry)
    finished, _ = add("proc_finished", len(procs), new_group=True)
    processes = []
    for k, p in enumerate(procs):
        proc = net.process(p["name"])
        dims = [f"u_{p['name']}.{d}" for d in dim_names(proc.domain.dim(isl.dim_type.set))]
        processes.append({"name": p["name"], "kind": proc.kind.value, "array": proc.array,
                          "fields": {"finished": [finished + k, 1]}, "probes": {"iteration": dims}})
    layout = {"signal": "dbg_status", "width": width, "channels": chans, "memories": ports, "processes": processes}
    return [", ".join(reversed(g)) for g in reversed(groups)], layout


def _builder(net: ProcessNetwork, proc: Process, scalar_ports: dict[str, str]):
    """Adds every member statement of a compute process to a datapath; returns each one's result.

    A member's affine values (loop counters used as data) are functions of the statement instance;
    in a merged process they are pulled back to the process iteration through the member's instance map."""
    values = net.program.param_values()
    names = wide_names(proc, values)
    library = operator_library()
    # read ports fed by the process itself: a recurrence (an accumulator), whose logic gets the
    # relaxed budget of `delay.loop_budget` rather than extra stages (`datapath.Datapath.loop`)
    loops = {c.sink_port for c in net.inputs(proc.name) if c.producer == proc.name}
    # read ports fed by a buffer: a read from distributed RAM at a slot address, slower than a FIFO's,
    # or a block RAM's read register (slower still: its clock to output)
    buffers: dict[str, float] = {}
    for c in net.inputs(proc.name):
        if c.kind == ChannelKind.BUFFER:
            arr = delay.bram_port() if c.depth * c.width > delay.LUTRAM_BITS else delay.buffer_port(c.depth)
            buffers[c.sink_port] = max(buffers.get(c.sink_port, 0.0), arr)

    def build(dp: datapath.Datapath, read_stage: dict[str, int]) -> list[str]:
        results, port = [], 0
        for m in proc.members:
            st = net.program.statement(m.statement)

            def affine(e: AffineValue, inst=m.instance) -> str:
                pa = e.expr
                if proc.merged:  # the value's own space may be anonymous: name the instance tuple like it
                    tup = pa.get_domain_space().get_tuple_name(isl.dim_type.set)
                    inst = inst.set_tuple_name(isl.dim_type.out, tup) if tup else inst.reset_tuple_id(isl.dim_type.out)
                    pa = pa.pullback_pw_multi_aff(isl.PwMultiAff.from_map(inst))
                return pw_aff_expr(drop_params(pa, values), names)

            reads = {r.id: f"pv_p{port + k}" for k, r in enumerate(st.reads)}
            port += len(st.reads)
            dp.port_arrival.update({reads[rid]: arr for rid, arr in buffers.items() if rid in reads})
            dp.loop.update(reads[rid] for rid in loops if rid in reads)
            _, res = datapath.build(st.expr, reads, scalar_ports, affine, st.loc, library, dp, read_stage)
            results.append(res)
        return results

    return build


_AT_ISSUE: "weakref.WeakKeyDictionary[Process, dict[float, datapath.Datapath]]" = weakref.WeakKeyDictionary()


def _at_issue(net: ProcessNetwork, proc: Process) -> datapath.Datapath:
    """The process's pipeline with every port read at issue, and the stage each signal is first used
    at (the cycle model asks for it for every candidate network; processes are shared between them)."""
    from .clock import clock_mhz

    per_clock = _AT_ISSUE.setdefault(proc, {})
    if clock_mhz() not in per_clock:  # the schedule depends on the clock target
        scalars = {a.name: f"arg_{a.name}" for a in net.program.args if a.kind == "scalar"}
        dp = datapath.Datapath()
        for res in _builder(net, proc, scalars)(dp, {}):
            dp.use(res, dp.depth)
        per_clock[clock_mhz()] = dp
    return per_clock[clock_mhz()]


def _late_stages(net: ProcessNetwork, proc: Process) -> dict[str, int]:
    """Read port signal -> the stage it is read at (`datapath.late_reads`; stage 0 for every port
    when `net.late_reads` is off, which the cycle model may prefer: a buffer frees a slot at its
    value's last read, so a later read may hold the producer back, `pipeline._deepened`)."""
    ports = [f"pv_p{k}" for k in range(sum(len(net.program.statement(m.statement).reads) for m in proc.members))]
    if not net.late_reads:
        return {p: 0 for p in ports}
    return datapath.late_reads(_at_issue(net, proc), ports)


def member_datapaths(net: ProcessNetwork, proc: Process, scalar_ports: dict[str, str]) -> tuple[datapath.Datapath,
                                                                                                 list[str], dict[str, int]]:
    """One pipeline computing every member statement of a compute process, each one's result signal,
    and the stage each read port is read at: built with the late ports and the segment cuts they
    make, after `_at_issue` found the stage each operand is first needed at."""
    stage = _late_stages(net, proc)
    dp = datapath.Datapath(cuts=tuple(sorted({s for s in stage.values() if s > 0})))
    results = _builder(net, proc, scalar_ports)(dp, stage)
    assert dp.depth == _at_issue(net, proc).depth, proc.name
    return dp, results, stage


def read_stages(net: ProcessNetwork) -> dict[str, dict[str, int]]:
    """Per compute process, the pipeline stage at which each read port (access id) takes its operand."""
    out = {}
    for proc in net.iter_compute():
        stage = _late_stages(net, proc)
        ids = [r.id for m in proc.members for r in net.program.statement(m.statement).reads]
        out[proc.name] = {rid: stage[f"pv_p{k}"] for k, rid in enumerate(ids)}
    return out


def store_tags(net: ProcessNetwork) -> int:
    """Writes a store unit keeps without a response: `STORE_TAGS`, or a round trip at a longer memory
    latency."""
    return max(STORE_TAGS, net.mem_latency + 8)


def load_tags(net: ProcessNetwork, wide: bool) -> int:
    """Requests a load unit keeps in flight: its round trip (request, memory, response into the output
    buffer, a line reader's cycles) and one more, at least `LOAD_TAGS`."""
    return max(LOAD_TAGS, net.mem_latency + 4) + (2 * LINE_READER_DELAY if wide else 0)


def process_latencies(net: ProcessNetwork) -> dict[str, int]:
    """Cycles from starting an iteration to its result being offered to its channels (the cycle
    model makes it readable one cycle later), per process: the datapath stages, whose last one
    drives the channels (a datapath without stages has an output register instead); a load adds the
    memory latency, and so does a store: its memory-order tokens wait for the write's response, and
    the run is over only once every write has its response."""
    out = {}
    wide = words_per_beat(net)
    for proc in net.processes:
        if proc.kind == ProcessKind.COMPUTE:
            out[proc.name] = max(1, _at_issue(net, proc).depth)
        else:  # request, memory, response into the output buffer (through a line reader)
            out[proc.name] = net.mem_latency + 3 + (LINE_READER_DELAY if proc.array in wide else 0)
    return out


def dsp_blocks(net: ProcessNetwork) -> int:
    """Multiplier blocks of the compute processes' pipelines (`Datapath.dsp`): what `--dsp-budget`
    counts.  Address arithmetic is shifts and adds (`affine.SizedPrinter`), so takes none."""
    return sum(_at_issue(net, p).dsp for p in net.iter_compute())


def operator_library() -> dict:
    """Every datapath operator available, by key (see datapath.py for the key scheme)."""
    lib: dict = {}
    for mod in ("fp_arith", "fp_convert", "int_arith"):
        try:
            m = __import__(f"hls.rtl.{mod}", fromlist=["OPERATORS"])
        except ImportError:
            continue
        lib.update(m.operators() if hasattr(m, "operators") else m.OPERATORS)  # clock-dependent stages
    return lib


def _check_float(net: ProcessNetwork) -> None:
    """Fail early, at the statement, when an operator the datapath needs is not in the library."""
    lib = operator_library()
    for st in net.program.statements:
        if any(e.type.is_float for e in walk(st.expr)) and not lib:
            raise CompileError(st.loc, "floating-point arithmetic has no RTL implementation yet (use `sim --dpn-only`)")
