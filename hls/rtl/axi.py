"""`--interface axi4`: a vendor-style AXI4 wrapper `<kernel>_axi` around the generated `<kernel>_top`.

The wrapper has the interface Vitis HLS users know:

* `s_axi_control`, an AXI4-Lite slave with `AP_CTRL` (ap_start / ap_done / ap_idle / ap_ready /
  auto_restart), `GIE`, `IER`, `ISR`, then one 8-byte slot per kernel argument in declaration order:
  a scalar argument (`arg_<name>` of the core; a 64-bit one takes both words) or the 64-bit byte base
  address of an array;
* `interrupt`, high while `GIE` and some enabled `ISR` bit are set;
* one AXI4 master `m_axi_<A>` per array, or one shared `m_axi_gmem` with `bundle=True`.

Each array's read and write channels go through a port adapter (`hw_templates/axi/port.v.j2`: bursts
of consecutive requests per direction, in-order read data, a write answered once its B response came)
and a master (`hw_templates/axi/master.v.j2`: round-robin AR/AW, W in AW order, R/B routed by ID).
`docs/rtl-interface.md` documents ports, registers, burst and ordering behaviour.

Everything is computed here; the templates only place names and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from .generate import RtlDesign, clog2
from .render import render

BUNDLE = "gmem"
FIFO_MODULE = "dpn_axi_fifo"
PORT_MODULE = "dpn_axi_port"
MASTER_MODULE = "dpn_axi_master"
ARG_BASE = 0x10
#: Port adapter queues: read data / write data (elements, log2), and the master's W order queue (bursts).
READ_QUEUE_LOG2 = 5
WRITE_QUEUE_LOG2 = 5
W_ORDER_LOG2 = 2
#: An open write burst is issued after this many cycles without a request from the design.
FLUSH_IDLE = 15
MAX_BURST = 16

#: Bits of AP_CTRL, and of IER / ISR (the events that can interrupt): the control slave's template,
#: the C header (`hls/rtl/vendor.py`) and the cocotb host (`sim/cocotb_axi.py`) all take them from here.
AP_CTRL_BITS = {"ap_start": 0, "ap_done": 1, "ap_idle": 2, "ap_ready": 3, "auto_restart": 7}
INTERRUPT_BITS = {"ap_done": 0, "ap_ready": 1}

CONTROL_REGISTERS = [
    {"offset": 0x00, "name": "AP_CTRL", "access": "R/W",
     "bits": "0 ap_start (R/W; cleared at ap_ready unless auto_restart), 1 ap_done (R/COR), 2 ap_idle (R), "
             "3 ap_ready (R/COR), 7 auto_restart (R/W)",
     "description": "start the kernel and watch it"},
    {"offset": 0x04, "name": "GIE", "access": "R/W", "bits": "0 global interrupt enable",
     "description": "interrupt = GIE && (ISR != 0)"},
    {"offset": 0x08, "name": "IER", "access": "R/W", "bits": "0 ap_done, 1 ap_ready",
     "description": "interrupt enable"},
    {"offset": 0x0C, "name": "ISR", "access": "R/TOW", "bits": "0 ap_done, 1 ap_ready",
     "description": "interrupt status; writing 1 toggles a bit"},
]

# (signal, direction seen from the wrapper, width kind): the full AXI4 master signal set.
MASTER_SIGNALS = [
    ("AWID", "output", "id"), ("AWADDR", "output", 64), ("AWLEN", "output", 8), ("AWSIZE", "output", 3),
    ("AWBURST", "output", 2), ("AWLOCK", "output", 1), ("AWCACHE", "output", 4), ("AWPROT", "output", 3),
    ("AWQOS", "output", 4), ("AWREGION", "output", 4), ("AWVALID", "output", 1), ("AWREADY", "input", 1),
    ("WDATA", "output", "data"), ("WSTRB", "output", "strb"), ("WLAST", "output", 1), ("WVALID", "output", 1),
    ("WREADY", "input", 1),
    ("BID", "input", "id"), ("BRESP", "input", 2), ("BVALID", "input", 1), ("BREADY", "output", 1),
    ("ARID", "output", "id"), ("ARADDR", "output", 64), ("ARLEN", "output", 8), ("ARSIZE", "output", 3),
    ("ARBURST", "output", 2), ("ARLOCK", "output", 1), ("ARCACHE", "output", 4), ("ARPROT", "output", 3),
    ("ARQOS", "output", 4), ("ARREGION", "output", 4), ("ARVALID", "output", 1), ("ARREADY", "input", 1),
    ("RID", "input", "id"), ("RDATA", "input", "data"), ("RRESP", "input", 2), ("RLAST", "input", 1),
    ("RVALID", "input", 1), ("RREADY", "output", 1),
]

# The AXI4-Lite slave `s_axi_control` (signal, direction seen from the wrapper, width; "addr": address width).
CONTROL_SIGNALS = [
    ("AWADDR", "input", "addr"), ("AWVALID", "input", 1), ("AWREADY", "output", 1), ("WDATA", "input", 32),
    ("WSTRB", "input", 4), ("WVALID", "input", 1), ("WREADY", "output", 1), ("BRESP", "output", 2),
    ("BVALID", "output", 1), ("BREADY", "input", 1), ("ARADDR", "input", "addr"), ("ARVALID", "input", 1),
    ("ARREADY", "output", 1), ("RDATA", "output", 32), ("RRESP", "output", 2), ("RVALID", "output", 1),
    ("RREADY", "input", 1),
]
# Per-port signals between the port adapters and a master (the master's p_* vectors).
PORT_VECTORS = ["ar_valid", "ar_ready", "ar_addr", "ar_len", "ar_size", "aw_valid", "aw_ready", "aw_addr",
                "aw_len", "aw_size", "w_data", "w_strb", "w_pop", "r_valid", "b_valid"]


@dataclass
class AxiWrapper:
    """The wrapper's Verilog files (`rtl/` names), its register map and its masters."""

    top: str
    core: str
    files: dict[str, str] = field(default_factory=dict)
    register_map: list[dict] = field(default_factory=list)
    masters: list[dict] = field(default_factory=list)
    control_addr_width: int = 6
    bundle: bool = False

    def to_json(self) -> dict:
        return {"top": self.top, "core": self.core, "bundle": self.bundle,
                "control_addr_width": self.control_addr_width,
                "masters": [{k: m[k] for k in ("name", "prefix", "data_width", "id_width", "arrays", "ports")}
                            for m in self.masters],
                "register_map": [dict(r) for r in self.register_map]}


def _log2(n: int) -> int:
    assert n > 0 and n & (n - 1) == 0, n
    return n.bit_length() - 1


def _element_bits(width: int) -> int:
    """Bits an element occupies in memory: a power of two number of bytes."""
    b = 8
    while b < width:
        b *= 2
    return b


def _port_element(array: dict) -> tuple[int, int]:
    """(index bits, data bits) of what an array's port adapter moves per beat: a line of its wide
    read port (`--mem-width`, `dpn.memports`), else one element."""
    return (array["raw"], array["rd_width"]) if array.get("line", 1) > 1 else (array["aw"], array["width"])


def register_map(scalars: Sequence[dict], arrays: Sequence[dict],
                 arg_order: Optional[Sequence[str]] = None) -> list[dict]:
    """Every 32-bit register of `s_axi_control`, as data (one dict per register, by offset).

    Arguments get 8-byte slots from 0x10 in `arg_order` (default: scalars, then arrays); a scalar of at
    most 32 bits uses the first word of its slot (the second is reserved and reads 0), a 64-bit scalar
    and a base address use both (low word first).
    """
    by_name = {s["name"]: ("scalar", s) for s in scalars}
    by_name.update({a["name"]: ("array", a) for a in arrays})
    order = list(arg_order) if arg_order is not None else [s["name"] for s in scalars] + [a["name"] for a in arrays]
    order = [n for n in order if n in by_name]
    order += [n for n in by_name if n not in order]
    regs = [dict(r, kind="control", arg=None, type=None, word=None, width=32) for r in CONTROL_REGISTERS]
    offset = ARG_BASE
    for name in order:
        kind, info = by_name[name]
        if kind == "scalar":
            width = info["width"]
            what = f"scalar argument `{info['type']} {name}`"
        else:
            width = 64
            dims = "".join(f"[{s}]" for s in info["shape"])
            what = f"byte base address of `{info['type']} {name}{dims}`"
            if info.get("line", 1) > 1:  # read a line per beat (`--mem-width`): aligned beats
                what += f", a multiple of {info['rd_width'] // 8} bytes"
        words = 2 if width > 32 else 1
        for w in range(words):
            lo = 32 * w
            hi = min(width, lo + 32) - 1
            part = f"{name}[{hi}:{lo}]" if words == 2 else name
            regs.append({"offset": offset + 4 * w, "name": part, "access": "R/W", "bits": f"{hi - lo}:0",
                         "description": what + (" (low word)" if words == 2 and w == 0 else
                                                " (high word)" if words == 2 else ""),
                         "kind": kind, "arg": name, "type": info["type"], "word": w, "width": hi - lo + 1})
        offset += 8
    return regs


def _control_view(regmap: list[dict], scalars: Sequence[dict], arrays: Sequence[dict]) -> dict:
    regs, outputs = [], []
    for r in regmap:
        if r["kind"] == "control":
            continue
        reg = f"reg_{r['arg']}_{r['word']}"
        bits = r["width"]
        mask = f"wmask[{bits - 1}:0]"
        write = f"({reg} & ~{mask}) | (WDATA[{bits - 1}:0] & {mask})"
        read = reg if bits == 32 else f"{{{32 - bits}'d0, {reg}}}"
        regs.append({"reg": reg, "const": f"A_{reg}", "bits": bits, "offset": r["offset"], "write": write,
                     "read": read})
    for s in scalars:
        words = [r for r in regs if r["reg"].startswith(f"reg_{s['name']}_")]
        expr = words[0]["reg"] if len(words) == 1 else f"{{{words[1]['reg']}, {words[0]['reg']}}}"
        outputs.append({"port": s["port"], "width": s["width"], "expr": expr})
    for a in arrays:
        outputs.append({"port": f"base_{a['name']}", "width": 64,
                        "expr": f"{{reg_{a['name']}_1, reg_{a['name']}_0}}"})
    return {"regs": regs, "outputs": outputs}


def _register_table(regmap: list[dict]) -> list[str]:
    return [f"0x{r['offset']:02x}  {r['name']:<16} {r['access']:<6} {r['bits']}  {r['description']}".rstrip()
            for r in regmap]


def _bit_pack(bits: dict[str, int], width: int) -> str:
    """A `width`-bit Verilog concatenation with signal s at bit bits[s], zeros elsewhere."""
    at = {b: s for s, b in bits.items()}
    parts, zeros = [], 0
    for b in reversed(range(width)):
        if b in at:
            if zeros:
                parts.append(f"{zeros}'d0")
                zeros = 0
            parts.append(at[b])
        else:
            zeros += 1
    if zeros:
        parts.append(f"{zeros}'d0")
    return "{" + ", ".join(parts) + "}"


def _adapters(array: dict) -> int:
    """Port adapters of an array (`RtlDesign.interface["arrays"]` entry): one per read channel or
    write channel of the core, whichever it has more of."""
    return max(1, len(array.get("reads") or []), len(array.get("writes") or []))


def _flat(items: list[str]) -> str:
    """Verilog concatenation with items[0] in the least significant position."""
    return items[0] if len(items) == 1 else "{" + ", ".join(reversed(items)) + "}"


def generate_axi(design: RtlDesign, *, bundle: bool = False,
                 arg_order: Optional[Sequence[str]] = None) -> AxiWrapper:
    """The AXI4 wrapper of `design` (its `interface` describes scalars and arrays).

    Returns the extra `rtl/` files and the register map; `arg_order` lists the kernel's scalar and
    array arguments in declaration order (the order of the argument registers).
    """
    iface = design.interface
    kernel = iface["kernel"]
    scalars, arrays = list(iface["scalars"]), list(iface["arrays"])
    top = f"{kernel}_axi"
    regmap = register_map(scalars, arrays, arg_order)
    end = max(r["offset"] for r in regmap) + 4
    caw = max(5, clog2(end))

    groups = [(BUNDLE, arrays)] if bundle and arrays else [(a["name"], [a]) for a in arrays]
    masters, array_views = [], []
    for name, members in groups:
        dw = max(_port_element(a)[1] for a in members)
        n = sum(_adapters(a) for a in members)  # port adapters
        pw = clog2(n)
        idw = pw
        prefix = f"m_axi_{name}"
        wire = f"mx_{name}"
        ports = []
        for a in members:
            assert _element_bits(a["width"]) == a["width"], "elements are 8, 16, 32 or 64 bits wide"
            reads, writes = a.get("reads") or [], a.get("writes") or []
            # a port adapter per read channel and write channel of the core (the k-th of each, those of
            # one parallel slab, share one); the first has the base register
            for k in range(_adapters(a)):
                rd = reads[k] if k < len(reads) else "rd"
                wr = writes[k] if k < len(writes) else "wr"
                tag = reads[k] if k < len(reads) else wr
                iw, ew = _port_element(a)
                view = {"name": a["name"], "prefix": f"a_{a['name']}" if k == 0 else f"a_{a['name']}_{tag}",
                        "iw": iw, "ew": ew, "load": k < len(reads), "store": k < len(writes),
                        "primary": k == 0, "core_rd": rd, "core_wr": wr,
                        "inst": a["name"] if k == 0 else f"{a['name']}_{tag}", "base": f"a_{a['name']}_base",
                        "esz": _log2(ew // 8), "dw": dw, "dsz": _log2(dw // 8), "master_prefix": wire}
                array_views.append(view)
                ports.append(view["prefix"])
        sig_width = {"id": idw, "data": dw, "strb": dw // 8}
        signals = []
        for sig, direction, kind in MASTER_SIGNALS:
            width = sig_width[kind] if isinstance(kind, str) else kind
            signals.append({"name": sig, "dir": direction + (" " if direction == "input" else ""),
                            "width": f"[{width - 1}:0] " if width > 1 else ""})
        # Port k of the master sits at bits [k*w +: w] of each flattened port-side vector.
        conns = [(f"p_{x}", _flat([f"{p}_{x}" for p in ports])) for x in PORT_VECTORS]
        conns += [("p_r_data", f"{wire}_r_data"), ("p_r_last", f"{wire}_r_last")]
        conns += [(sig, f"{prefix}_{sig}") for sig, _, _ in MASTER_SIGNALS]
        masters.append({"name": name, "prefix": prefix, "wire_prefix": wire, "dw": dw, "idw": idw,
                        "data_width": dw, "id_width": idw, "arrays": [a["name"] for a in members], "ports": n,
                        "params": [("N", n), ("PW", pw), ("IDW", idw), ("DW", dw), ("WQ_LOG2", W_ORDER_LOG2)],
                        "signals": signals, "connections": conns})

    control_ports = [{"name": sig, "dir": "input " if direction == "input" else "output",
                      "width": f"[{(caw if width == 'addr' else width) - 1}:0] " if width != 1 else ""}
                     for sig, direction, width in CONTROL_SIGNALS]
    control_module = f"{kernel}_control_s_axi"
    ctl = _control_view(regmap, scalars, arrays)
    ctl["ctrl_bits"] = AP_CTRL_BITS
    ctl["ctrl_read"] = _bit_pack({"ap_start_q": AP_CTRL_BITS["ap_start"], "ap_done_q": AP_CTRL_BITS["ap_done"],
                                  "ap_idle": AP_CTRL_BITS["ap_idle"], "ap_ready_q": AP_CTRL_BITS["ap_ready"],
                                  "auto_restart_q": AP_CTRL_BITS["auto_restart"]}, 32)
    assert INTERRUPT_BITS == {"ap_done": 0, "ap_ready": 1}, "the template packs {ap_ready, ap_done} into IER/ISR"
    files = {
        f"{FIFO_MODULE}.v": render("axi/fifo.v.j2", module_name=FIFO_MODULE),
        f"{PORT_MODULE}.v": render("axi/port.v.j2", module_name=PORT_MODULE, fifo_module=FIFO_MODULE),
        f"{MASTER_MODULE}.v": render("axi/master.v.j2", module_name=MASTER_MODULE, fifo_module=FIFO_MODULE),
        f"{control_module}.v": render("axi/control.v.j2", module_name=control_module, kernel=kernel,
                                      addr_width=caw, ctrl={r["name"]: r["offset"] for r in CONTROL_REGISTERS},
                                      register_table=_register_table(regmap), **ctl),
    }
    idle = " && ".join(f"{a['prefix']}_idle" for a in array_views) or "1'b1"
    files[f"{top}.v"] = render(
        "axi/top.v.j2", module_name=top, kernel=kernel, core=design.top, control_module=control_module,
        port_module=PORT_MODULE, master_module=MASTER_MODULE, control_ports=control_ports,
        scalars=[{"port": s["port"], "wire": f"s_{s['name']}_reg", "latched": f"s_{s['name']}", "width": s["width"]}
                 for s in scalars],
        arrays=array_views, masters=masters, idle_expr=idle, nproc=len(iface["processes"]),
        read_queue_log2=READ_QUEUE_LOG2, write_queue_log2=WRITE_QUEUE_LOG2, flush_idle=FLUSH_IDLE)
    return AxiWrapper(top=top, core=design.top, files=files, register_map=regmap, masters=masters,
                      control_addr_width=caw, bundle=bundle)


def report_markdown(axi: AxiWrapper) -> list[str]:
    """The `## AXI4 interface` section of report.md (lines)."""
    lines = ["## AXI4 interface", "",
             f"Top `{axi.top}` (wraps `{axi.core}`): clock `ap_clk`, active-low reset `ap_rst_n`, "
             f"AXI4-Lite slave `s_axi_control` ({axi.control_addr_width}-bit address, 32-bit data), `interrupt`.", ""]
    for m in axi.masters:
        lines.append(f"- `{m['prefix']}`: AXI4 master, {m['data_width']}-bit data, {m['id_width']}-bit ID, "
                     f"64-bit address; arrays {', '.join(f'`{a}`' for a in m['arrays'])}")
    lines += ["", f"Bursts: INCR, up to {MAX_BURST} beats, never across 4 KiB; reads (AR/R) and writes (AW/W/B) "
                  "of an array go concurrently; a write is answered to the core once its B response came, "
                  "which is what the core waits for before reading the element back (docs/rtl-interface.md).", "",
              "| offset | register | access | bits | description |", "|---|---|---|---|---|"]
    for r in axi.register_map:
        lines.append(f"| 0x{r['offset']:02x} | {r['name']} | {r['access']} | {r['bits']} | {r['description']} |")
    return lines
