"""`report.md` and `report.json` for `compile`."""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import islpy as isl

from .diagnostics import CompileError, UsageError
from .dpn.network import MEMORY_LATENCY, ChannelKind, ProcessKind, ProcessNetwork
from .dpn.tables import NetworkTables
from .poly import isl_utils as iu
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




class _Unavailable(Exception):
    """A closed form cannot be given; the message is the reason shown in the report."""


def _size_macros(text: str) -> dict[str, int]:
    """Integer macros the user can override with -D (`#ifndef X` / `#define X 10`) that size arrays
    or loops: the kernel's structure sizes.  Others (a shift amount) stay fixed in the family."""
    out = {}
    for m in re.finditer(r"#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+(\d+)\s*\n", text):
        name = m.group(1)
        if re.search(r"\[[^\]\n]*\b" + name + r"\b", text) or re.search(r"for\s*\([^)]*\b" + name + r"\b", text):
            out[name] = int(m.group(2))
    return out


def _defines(values: Sequence[str]) -> dict[str, str]:
    return dict((d.split("=", 1) + ["1"])[:2] for d in values)


def _measure(net: ProcessNetwork, tables: NetworkTables) -> dict:
    """The figures the closed forms stand for, as the compiler uses them: words the load and store
    units move (one per iteration), the largest per-band share, and each channel's sized storage
    (FIFO depth from the replay = `max_live`, buffer = product of the moduli; `deepen` may grow a
    FIFO later for speed, which is not a function of the tiling)."""
    out: dict[str, Any] = {"words_loaded": 0, "words_stored": 0}
    for kind, total, band in ((ProcessKind.LOAD, "words_loaded", "per_band_load"),
                              (ProcessKind.STORE, "words_stored", "per_band_store")):
        per_band: Counter = Counter()
        for p in net.processes:
            if p.kind != kind:
                continue
            its = tables.process(p.name).iterations
            out[total] += len(its)
            for x in its:
                per_band[tuple(x[:p.band_dims])] += 1
        out[band] = max(per_band.values(), default=0)
    sized = {c.name: c.max_live if c.kind != ChannelKind.BUFFER and c.max_live is not None else c.depth
             for c in net.channels}  # a FIFO sized by the bound (`max_live` None): its depth
    out["channels"] = {c.name: (sized[c.name], c.producer, c.consumer, c.ppn_channel) for c in net.channels}
    out["sized_channel_words"] = sum(sized[c.name] + (c.kind == ChannelKind.FIFO_MULT) for c in net.channels)
    return out


def monoparametric_report(program: PolyProgram, net: ProcessNetwork, *, options: Any = None,
                          budget_s: Optional[float] = None) -> dict:
    """Transfer volumes and channel sizes of the tiled network as closed forms in the tile scale b.

    The tile sizes of the cut hyperplanes are written T_k = r_k.b (b their gcd).  A count over a
    monoparametrically tiled set is a polynomial in b only when every structure size is in tiled
    form N = N_b.b + N_l with N_b, N_l fixed (Theorem 2.8), so the kernel is re-compiled along that
    family (sizes scaled, tiles r.b) and `monoparametric.fit_from` interpolates and verifies the
    figures.  Every formula is then evaluated at the compiled b and compared with the network that
    was actually compiled; a quantity that does not match, or does not fit, is reported as not
    available with the reason instead of a wrong formula.  `options`: the pipeline `Options` of
    the compile (defines, include dirs, parallel); without them the source defaults are assumed,
    which the comparison at the compiled b catches when they were overridden."""
    try:
        return _monoparametric(program, net, options, budget_s)
    except _Unavailable as e:
        return {"available": False, "reason": str(e)}
    except Exception as e:  # noqa: BLE001 - an analysis beside the compile must not fail the compile
        return {"available": False, "reason": f"re-compiling along the family failed: {type(e).__name__}: {e}"}


def _monoparametric(program: PolyProgram, net: ProcessNetwork, options: Any, budget_s: Optional[float]) -> dict:
    from .dpn import monoparametric as mp
    from .dpn.channels import fifoize, size_channels, type_channels
    from .dpn.partition import build_network
    from .dpn.tiling import tile_program, with_fission
    from .frontend import analyze_dataflow, bind_params, check_bounds, extract, parse_kernel

    t = net.tiling
    if t is None or not t.is_tiled:
        raise _Unavailable("the network is not tiled")
    bands = [bd for bd in t.bands if bd.depth]
    first = bands[0]
    cut = [k for k in range(first.depth) if first.sizes[k] < first.extents[k]]
    if not cut:
        raise _Unavailable("no hyperplane is cut (every tile spans its whole band), so nothing scales with b")
    sizes = [first.sizes[k] for k in cut]
    b0 = math.gcd(*sizes)
    ratios = [s // b0 for s in sizes]
    # An outer hyperplane that is not cut keeps one tile at every b: a size no extent reaches says so.
    whole = 1 << 30
    ratio_of = {k: r for k, r in zip(cut, ratios)}

    def shape(tiling_bands) -> list:
        return [([s if s < e else None for s, e in zip(bd.sizes, bd.extents)], bd.extents, bd.point_order)
                for bd in tiling_bands if bd.depth]

    if budget_s is None:  # no limit by default: a wall-clock limit would make the report depend on the load
        budget_s = math.inf
    path = Path(program.file)
    try:
        text = path.read_text()
    except OSError as e:
        raise _Unavailable(f"cannot re-read the source to re-compile it at other sizes: {e}") from None
    defines = _defines(getattr(options, "defines", ()) or ())
    macros = {k: int(defines.get(k, v)) for k, v in _size_macros(text).items()}
    params = {k: int(v) for k, v in program.param_values().items()}
    sizes_now = {**macros, **params}
    family = {k: mp.scaled(v, b0) for k, v in sizes_now.items() if v >= b0}
    include_dirs = tuple(getattr(options, "include_dirs", ()) or ())
    parallel, uniform, read_ports, write_ports, load_order, memory_order_mode = getattr(
        net, "partition", (int(getattr(options, "parallel", 1) or 1), False, "shared", "shared", "auto", "auto"))
    fission = any(b.fission for b in t.bands)
    other = [f"{k}={v}" for k, v in defines.items() if k not in family]
    fusion = getattr(t, "fusion", "separate")
    t_start = time.perf_counter()
    cache: dict[int, dict] = {}
    slowest = [0.0]

    def sample(b: int) -> dict:
        if b in cache:
            return cache[b]
        if time.perf_counter() - t_start + slowest[0] > budget_s:
            raise _Unavailable(f"re-compiling along the family would take more than {budget_s:g} s "
                               "(budget_s)")
        t_sample = time.perf_counter()
        vals = {k: int(f(b)) for k, f in family.items()}
        try:
            kernel = parse_kernel(str(path), include_dirs=include_dirs, function=getattr(options, "function", None),
                                  defines=other + [f"{k}={v}" for k, v in vals.items() if k in macros])
            prog = check_bounds(extract(kernel.model, kernel.typedefs, kernel.path, kernel.scop, kernel.file_scope))
            prog = analyze_dataflow(bind_params(prog, {**params, **{k: v for k, v in vals.items() if k in params}}))
            tiling = tile_program(prog, [ratio_of[k] * b if k in ratio_of else whole for k in range(cut[-1] + 1)],
                                  point_order=t.point_order, fusion=fusion)
        except (CompileError, UsageError) as e:
            sizes_b = ", ".join(f"{k}={v}" for k, v in vals.items())
            raise _Unavailable(f"re-compiling at b = {b} ({sizes_b}) failed (sizes that do not scale with the "
                               f"kernel, e.g. macros of a header, are not supported): {e}") from None
        if not tiling.is_tiled:
            raise _Unavailable(f"at b = {b} the family is not tiled: {tiling.reason}")
        if fission:
            tiling = with_fission(prog, tiling) or tiling
        n = build_network(prog, tiling, parallel, uniform, read_ports=read_ports, write_ports=write_ports,
                          load_order=load_order, memory_order_mode=memory_order_mode)
        tables = NetworkTables(n)
        n = fifoize(type_channels(n))
        tables = tables.for_network(n)
        n = size_channels(n, tables)
        cache[b] = {**_measure(n, tables), "bands": shape(tiling.bands)}
        slowest[0] = max(slowest[0], time.perf_counter() - t_sample)  # larger b are not faster
        return cache[b]

    compiled = _measure(net, NetworkTables(net))
    at_b0 = sample(b0)
    degree = max(st.domain.dim(isl.dim_type.set) for st in program.statements)
    needed = (degree + 3) * (time.perf_counter() - t_start)  # the other samples are about as large as b0's
    if needed > budget_s:
        raise _Unavailable(f"re-compiling along the family would take more than {budget_s:g} s "
                           "(budget_s)")
    why = "re-compiling at the compiled sizes does not reproduce the compiled network (compiled with -D, " \
          "--param or --parallel values the report was not given?): "
    if at_b0["bands"] != shape(bands):
        raise _Unavailable(why + f"bands (sizes, extents, point order) {at_b0['bands']}, compiled {shape(bands)}")
    if set(at_b0["channels"]) != set(compiled["channels"]):
        raise _Unavailable(why + f"channels {sorted(at_b0['channels'])}, compiled {sorted(compiled['channels'])}")
    b_first = max([1] + [int(f.coeffs[0]) + 1 for f in family.values() if f.coeffs])
    b_first = min(b_first, b0)

    def fit(get: Callable[[dict], int], b_from: int) -> tuple[Any, int]:
        return mp.fit_from(lambda b: get(sample(b)), degree, b_from, b0, checks=2)

    try:
        words_loaded, b_min = fit(lambda s: s["words_loaded"], b_first)
    except mp.NotPolynomialError as e:
        raise _Unavailable(f"words loaded are not a polynomial in b of degree <= {degree} along the family: {e}")
    out: dict[str, Any] = {"available": True, "b": b0, "ratios": ratios, "cut_hyperplanes": [k + 1 for k in cut],
                           "tile_sizes": [f"{r}*b" if r != 1 else "b" for r in ratios],
                           "family": {k: str(f) for k, f in family.items()}}
    missing: dict[str, str] = {}
    later: dict[str, int] = {}  # quantities that are polynomials only from a larger b than words_loaded

    def record(key: str, poly, figure: int, b_from: int = b_min) -> Optional[str]:
        if b_from > b_min:
            later[key] = b_from
        if poly(b0) != figure:
            missing[key] = f"the fitted {poly} gives {poly(b0)} at b = {b0}, the compiled network {figure}"
            return None
        return str(poly)

    out["words_loaded"] = record("words_loaded", words_loaded, compiled["words_loaded"])
    for key in ("words_stored", "per_band_load", "per_band_store", "sized_channel_words"):
        try:
            poly, b_from = fit(lambda s, key=key: s[key], b_min)
            out[key] = record(key, poly, compiled[key], b_from)
        except mp.NotPolynomialError as e:
            out[key] = None
            missing[key] = str(e)
    chans = {}
    for name, (figure, producer, consumer, ppn) in compiled["channels"].items():
        def get(s: dict, name: str = name) -> int:
            if name not in s["channels"]:
                raise _Unavailable(f"channel {name} does not exist at every b")
            return s["channels"][name][0]
        try:
            poly, b_from = fit(get, b_min)
            f = record(f"channel {name}", poly, figure, b_from)
        except (mp.NotPolynomialError, _Unavailable) as e:
            f = None
            missing[f"channel {name}"] = str(e)
        chans[name] = {"size": f, "ppn_channel": ppn, "producer": producer, "consumer": consumer}
    out["channel_sizes"] = chans
    sampled = sorted(cache)
    fam = ", ".join(f"{k} = {v}" for k, v in out["family"].items()) or "no structure size scales"
    out["valid_for"] = (f"b >= {b_min} with {fam}; interpolated and verified on b = {sampled[0]}..{sampled[-1]}, "
                        f"checked at the compiled b = {b0} against the compiled network")
    out["valid_from"] = later
    out["not_available"] = missing
    return out


def monoparametric_md(data: dict) -> list[str]:
    """The report.md section for `monoparametric_report`."""
    lines = ["## Closed forms in the tile scale b (monoparametric tiling)", ""]
    if not data.get("available"):
        return lines + [f"Not available: {data.get('reason')}", ""]
    lines += [f"Cut hyperplanes {', '.join(map(str, data['cut_hyperplanes']))}: tile sizes "
              f"{' x '.join(data['tile_sizes'])} with b = {data['b']}; valid for {data['valid_for']}.", "",
              "| quantity | closed form | at b = " + str(data["b"]) + " |", "|---|---|---|"]
    b = data["b"]

    def at(f: Optional[str]) -> str:
        return "" if f is None else str(_eval_poly(f, b))

    for key in ("words_loaded", "words_stored", "per_band_load", "per_band_store", "sized_channel_words"):
        f = data.get(key)
        lines.append(f"| {key.replace('_', ' ')} | {f'`{f}`' if f else 'not available'} | {at(f)} |")
    for name, c in data["channel_sizes"].items():
        f = c["size"]
        lines.append(f"| channel {name} ({c['producer']} -> {c['consumer']}) size | "
                     f"{f'`{f}`' if f else 'not available'} | {at(f)} |")
    if data["valid_from"]:
        lines += ["", "Valid from a larger b: " + ", ".join(f"{k} (b >= {v})" for k, v in data["valid_from"].items())]
    if data["not_available"]:
        lines += ["", "Not available:"] + [f"- {k}: {v}" for k, v in data["not_available"].items()]
    return lines + [""]


def _eval_poly(text: str, b: int):
    """Value of a printed `Polynomial` (`2*b^2 + b/2 + 4`) at b, for the report and the tests."""
    from fractions import Fraction

    if not re.fullmatch(r"[0-9b+\-*/^ ]+", text):
        raise ValueError(f"not a polynomial in b: {text!r}")
    expr = text.replace("^", "**")
    value = eval(expr, {"__builtins__": {}}, {"b": Fraction(b)})  # only b, numbers and + - * / **
    return int(value) if Fraction(value).denominator == 1 else value


# --------------------------------------------------------------------------------------------------
# what an engineer needs first: the top module, its ports, the latency, the source map


def _port_text(p) -> str:
    return f"`{p.name}{p.range}`"


def top_interface(design, rtl: Mapping[str, str], axi=None, clock_mhz: Optional[float] = None) -> dict:
    """The module to instantiate (`<kernel>_top`, or the `<kernel>_axi` wrapper), its ports as read
    from the generated Verilog, grouped by interface with the protocol of each (report.md and
    report.json).  `rtl`: every rtl/ file name -> text; `axi`: the `AxiWrapper` when there is one."""
    from .rtl.vendor import module_ports

    module = axi.top if axi is not None else design.top
    ports = module_ports(rtl[f"{module}.v"], module)
    iface = design.interface
    scalars = {s["port"]: s for s in iface["scalars"]}
    arrays = {a["name"]: a for a in iface["arrays"]}
    groups: list[dict] = []
    by_key: dict[str, dict] = {}

    def group(key: str, protocol: str, bus: Optional[str] = None) -> dict:
        if key not in by_key:
            by_key[key] = {"name": key, "protocol": protocol, "bus": bus, "ports": []}
            groups.append(by_key[key])
        return by_key[key]

    def decl(a: dict) -> str:
        return f"`{a['type']} {a['name']}" + "".join(f"[{s}]" for s in a.get("shape", [])) + "`"

    clock = f" (target {clock_mhz:g} MHz)" if clock_mhz else ""
    masters = {m["prefix"]: m for m in (axi.masters if axi is not None else [])}
    for p in ports:
        n = p.name
        if axi is not None:
            if n == "ap_clk":
                g = group(n, f"the clock, rising edge{clock}")
            elif n == "ap_rst_n":
                g = group(n, "synchronous reset, active low")
            elif n.startswith("s_axi_control_"):
                g = group("s_axi_control", f"AXI4-Lite slave, 32-bit data, {axi.control_addr_width}-bit address: "
                                           "AP_CTRL (ap_start/ap_done/ap_idle/ap_ready), interrupts, arguments "
                                           "(register map below; C macros in the kernel's _regs.h)",
                          bus="s_axi_control")
            elif n == "interrupt":
                g = group(n, "level, active high: GIE && (ISR != 0)")
            else:
                prefix = next((m for m in masters if n.startswith(m + "_")), None)
                if prefix is None:
                    g = group(n, "")
                else:
                    m = masters[prefix]
                    arrs = ", ".join(decl(arrays[a]) for a in m["arrays"] if a in arrays)
                    g = group(prefix, f"AXI4 master, {m['data_width']}-bit data, 64-bit address, "
                                      f"{m['id_width']}-bit ID, INCR bursts up to 16 beats: {arrs}", bus=prefix)
        elif n == "clk":
            g = group(n, f"the clock, rising edge{clock}")
        elif n == "rst":
            g = group(n, "synchronous reset, active high (at least one cycle); not needed between runs")
        elif n in ("start", "ready", "idle", "done"):
            g = group("control", "block-level control like ap_ctrl_hs: `start` is taken in a cycle where `idle` "
                                 "is high; `done` rises when the run is over (every write has its response) and stays "
                                 "high until the next start; `ready` is high in the first cycle of `done`; the next "
                                 "run needs no reset")
        elif n in scalars:
            s = scalars[n]
            what = f"`{s['type']} {s['name']}`"
            g = group(n, f"scalar argument {what}: hold it from `start` to `done`")
        elif n == "heartbeat":
            g = group(n, "debug: a handshake happened somewhere this cycle (watchdogs)")
        elif n == "proc_finished":
            g = group(n, "debug: bit k high when process k (Processes table order) has finished")
        else:
            array, ch = next(((a, ch) for a in arrays
                              for ch in [*arrays[a].get("reads", []), *(arrays[a].get("writes") or ["wr"])]
                              if n.startswith(f"{a}_{ch}_")), (None, None))
            if array is None:
                g = group(n, "")
            elif ch.startswith("rd"):
                a = arrays[array]
                which = "" if len(a["reads"]) == 1 else f" (channel {a['reads'].index(ch) + 1} of {len(a['reads'])}, " \
                                                        "one per parallel slab: the load unit of its processes)"
                line = a.get("line", 1)
                what = (f"the row-major element index `addr`; one response per request, in request order, with "
                        f"the {a['width']}-bit word `rdata`" if line == 1 else
                        f"the line index `addr` (elements `addr*{line}` .. `addr*{line} + {line - 1}` in row-major "
                        f"order); one response per request, in request order, with the line `rdata`, element "
                        f"`addr*{line} + j` in bits `[j*{a['width']} +: {a['width']}]` (a wide read port, shared "
                        f"by {len(a.get('units', []))} load unit(s) through a line reader)")
                g = group(f"{array} read channel{'' if ch == 'rd' else ' ' + ch[2:]}",
                          f"reads of {decl(a)}{which}: requests `valid`/`ready` with {what}", bus=f"{array}_{ch}")
            else:
                a = arrays[array]
                writes = a.get("writes") or ["wr"]
                which = "" if len(writes) == 1 else f" (channel {writes.index(ch) + 1} of {len(writes)}, " \
                                                    "one per parallel slab: the store unit of its processes)"
                g = group(f"{array} write channel{'' if ch == 'wr' else ' ' + ch[2:]}",
                          f"writes of {decl(a)}{which}: requests `valid`/`ready` with the row-major element index "
                          f"`addr` and the {a['width']}-bit word `wdata`; one response per request, in request "
                          "order, once the write is in memory", bus=f"{array}_{ch}")
        g["ports"].append(p)
    out = []
    for g in groups:
        dirs = sorted({p.direction for p in g["ports"]})
        out.append({"name": g["name"], "bus": g["bus"], "direction": dirs[0] if len(dirs) == 1 else "both",
                    "protocol": g["protocol"],
                    "ports": [{"name": p.name, "direction": p.direction, "width": p.width} for p in g["ports"]]})
    clk, rst = ("ap_clk", "ap_rst_n") if axi is not None else ("clk", "rst")
    return {"module": module, "file": f"rtl/{module}.v", "interface": "axi4" if axi is not None else "native",
            "core": design.top if axi is not None else None, "clock": clk, "reset": rst, "clock_mhz": clock_mhz,
            "groups": out}


def _ports_md(top: dict) -> list[str]:
    lines = ["| ports | direction | protocol |", "|---|---|---|"]
    short = {"input": "in", "output": "out", "inout": "inout", "both": "in/out"}
    for g in top["groups"]:
        ps = g["ports"]
        if g["bus"] and len(ps) > 12:  # an AXI bus: the prefix and the widest signals
            wide = [p for p in ps if p["width"] > 8]
            names = f"`{g['bus']}_*` ({len(ps)} signals" + (", " + ", ".join(
                f"{p['name'][len(g['bus']) + 1:]}[{p['width'] - 1}:0]" for p in wide[:6]) if wide else "") + ")"
        else:
            names = ", ".join(f"`{p['name']}" + (f"[{p['width'] - 1}:0]" if p["width"] > 1 else "") + "`"
                              + (f" ({short[p['direction']]})" if g["direction"] == "both" else "") for p in ps)
        lines.append(f"| {names} | {short[g['direction']]} | {g['protocol']} |")
    return lines


def source_map(program: PolyProgram, net: ProcessNetwork) -> list[dict]:
    """Per statement (in source order): its C line, the compute processes that run it and the load /
    store units that feed them or take their results."""
    units: dict[str, set[str]] = {}
    for c in net.channels:
        for mine, other in ((c.consumer, c.producer), (c.producer, c.consumer)):
            if net.process(other).kind != ProcessKind.COMPUTE:
                units.setdefault(mine, set()).add(other)
    rows = []
    for st in sorted(program.statements, key=lambda s: (s.loc.line, s.loc.col, s.name)):
        procs = [p.name for p in net.processes if st.name in p.statements]
        mem = sorted({u for q in procs for u in units.get(q, ())})
        rows.append({"statement": st.name, "file": st.loc.file, "line": st.loc.line, "text": st.text,
                     "processes": procs, "memory_units": mem})
    return rows


def latency(summary: dict, clock_mhz: Optional[float], estimate: Optional[dict] = None,
            memory_latency: int = MEMORY_LATENCY) -> dict:
    """The kernel's modelled latency in cycles (`hls/dpn/timing.py`), and in µs at the clock target and,
    when an estimate gives one, at the estimated Fmax."""
    cycles = summary.get("estimated_cycles")
    out: dict[str, Any] = {"cycles": cycles, "source": "cycle model", "memory_latency": memory_latency}
    if cycles and clock_mhz:
        out["clock_mhz"] = clock_mhz
        out["us_at_clock_target"] = round(cycles / clock_mhz, 3)
    fmax = (estimate or {}).get("fmax_mhz")
    if cycles and fmax:
        out["fmax_mhz"] = fmax
        out["us_at_fmax"] = round(cycles / fmax, 3)
    return out


def report_json(program: PolyProgram, net: ProcessNetwork, summary: dict, *, top: Optional[dict] = None,
                estimate: Optional[dict] = None) -> dict:
    from .rtl.generate import process_latencies, read_stages

    depth = process_latencies(net)
    late = read_stages(net)
    procs = []
    for p in net.processes:
        sts = [program.statement(s) for s in p.statements]
        procs.append({
            "name": p.name, "kind": p.kind.value, "iterations": iu.card(p.domain),
            # every process is fully pipelined: it starts an iteration each cycle its operands are there
            "ii": 1, "pipeline_depth": depth[p.name],
            # operands taken from their channels after issue, at the stage that needs them
            "late_reads": {port: st for port, st in late.get(p.name, {}).items() if st},
            "schedule": str(p.schedule), "statement": "; ".join(s.text for s in sts) if sts else None,
            "statements": [s.name for s in sts], "loc": str(sts[0].loc if sts else p.loc),
            "array": p.array,
        })
    chans = [{
        "name": c.name, "producer": c.producer, "consumer": c.consumer, "source_port": c.source_port,
        "sink_port": c.sink_port, "kind": c.kind.value, "depth": c.depth, "width": c.width, "words": c.words,
        "max_live": c.max_live, "moduli": list(c.moduli), "sized_by": c.sized_by, "why_not_fifo": _why_not_fifo(c),
        "role": c.role,
    } for c in net.channels]
    t = net.tiling
    tiling = {"description": "none", "reason": "tiling not requested"} if t is None or not t.is_tiled else {
        "description": t.describe(), "reason": t.reason, "sizes": list(t.sizes), "point_order": t.point_order,
        "band_dims": t.band_dims}
    if t is not None and not t.is_tiled:
        tiling["reason"] = t.reason
    head: dict[str, Any] = {"kernel": program.name, "file": program.file}
    if top is not None:
        head["top"] = top
    head["latency"] = latency(summary, (top or {}).get("clock_mhz"), estimate, net.mem_latency)
    if estimate is not None:
        head["estimate"] = estimate
    return {**head, "params": program.param_values(), "tiling": tiling, "summary": summary, "processes": procs,
            "source_map": source_map(program, net), "channels": chans,
            "notes": list(program.notes) + net.notes}


def _estimate_md(est: dict) -> str:
    keys = [("lut", "LUT"), ("ff", "FF"), ("bram", "BRAM"), ("dsp", "DSP")]
    parts = [f"{label} {est[k]}" for k, label in keys if est.get(k) is not None]
    if est.get("fmax_mhz"):
        parts.append(f"Fmax {est['fmax_mhz']:g} MHz")
    where = f" ({est['target']})" if est.get("target") else ""
    return "Resources" + where + ": " + ", ".join(parts)


def write_reports(outdir: Path, program: PolyProgram, net: ProcessNetwork, summary: dict,
                  extra_md: Sequence[str] = (), extra_json: Optional[dict] = None, *, options: Any = None,
                  closed_forms: bool = False, top: Optional[dict] = None, estimate: Optional[dict] = None) -> None:
    """`extra_md`: more report.md lines (a section, e.g. the AXI4 register map) before the notes;
    `extra_json`: more top-level keys of report.json; `closed_forms` (`compile --closed-forms`): add the
    closed forms in b, which re-compile the kernel along its size family, hence opt-in; `options`: the
    compile's pipeline `Options`, so that re-compiling uses the same defines (`monoparametric_report`).
    `top` (`top_interface`): the module to instantiate and its ports, which the report opens with;
    `estimate`: resources (lut, ff, bram, dsp, target) and `fmax_mhz` when they were estimated."""
    data = report_json(program, net, summary, top=top, estimate=estimate)
    mono = monoparametric_report(program, net, options=options) \
        if closed_forms and net.tiling is not None and net.tiling.is_tiled else None
    if mono is not None:
        data["monoparametric"] = mono
    data.update(extra_json or {})
    (outdir / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [f"# dpn-synth report: `{program.name}`", ""]
    if top is not None:
        core = f", wrapping `{top['core']}`" if top.get("core") else ""
        lines += [f"Top module: `{top['module']}` in `{top['file']}` ({top['interface']} interface{core}; "
                  f"clock `{top['clock']}`, reset `{top['reset']}`; every RTL file in order: `rtl/files.f`)", ""]
    lat = data["latency"]
    if lat["cycles"]:
        text = (f"Estimated latency: {lat['cycles']} cycles from `start` to `done` (cycle model, memory latency "
                f"{lat['memory_latency']} cycles, one word per cycle per memory channel or a line per cycle per "
                "wide read port"
                + ("; of the core: AXI4 latency comes on top" if (top or {}).get("interface") == "axi4" else "")
                + ")")
        if "us_at_fmax" in lat:
            text += f"; {lat['us_at_fmax']:g} µs at the estimated Fmax of {lat['fmax_mhz']:g} MHz"
        if "us_at_clock_target" in lat:
            text += f"; {lat['us_at_clock_target']:g} µs at the {lat['clock_mhz']:g} MHz clock target"
        lines += [text, ""]
    else:
        lines += ["Estimated latency: not available (the cycle model did not finish)", ""]
    lines += [_estimate_md(estimate) if estimate else
              "Resources and Fmax: not estimated (`dpn-synth estimate` with the same options: Yosys resources; "
              "`--target ecp5 --pnr`: post-route Fmax)", "", f"Source: `{program.file}`", ""]
    if top is not None:
        lines += ["## Ports", "", *_ports_md(top), ""]
    lines += ["## Processes", "", "II: initiation interval (cycles between iterations when operands are there); "
              "depth: cycles from issuing an iteration to its results entering their channels; "
              "late reads: operands read from their channel at the pipeline stage that needs them (read port @ stage).",
              "", "| process | kind | iterations | II | depth | late reads | statement | source |",
              "|---|---|---|---|---|---|---|---|"]
    for p in data["processes"]:
        late = ", ".join(f"{port} @ {st}" for port, st in p.get("late_reads", {}).items())
        lines.append(f"| {p['name']} | {p['kind']} | {p['iterations']} | {p['ii']} | {p['pipeline_depth']} | "
                     f"{late} | `{p['statement'] or p['array']}` | {p['loc']} |")
    lines += ["", "## Source lines and processes", "", "| line | statement | compute processes | load / store units |",
              "|---|---|---|---|"]
    for r in data["source_map"]:
        text = " ".join(r["text"].split()).replace("|", "\\|")
        lines.append(f"| {r['line']} | `{text}` ({r['statement']}) | {', '.join(r['processes']) or '-'} | "
                     f"{', '.join(r['memory_units']) or '-'} |")
    lines.append("")
    if data["params"]:
        lines += ["Parameters: " + ", ".join(f"`{k}={v}`" for k, v in data["params"].items()), ""]
    tiling = data["tiling"]
    if tiling["description"] == "none":
        lines += [f"Tiling: none (untiled process network; {tiling['reason']})", ""]
    else:
        lines += [f"Tiling: {tiling['description']}", "", f"Why: {tiling['reason']}", ""]
    lines += ["## Summary", ""]
    lines += [f"- {k.replace('_', ' ')}: {v}" for k, v in summary.items()]
    lines += ["", "## Channels", "", "| channel | from | to | kind | depth | width | words | why not a FIFO |",
              "|---|---|---|---|---|---|---|---|"]
    for c in data["channels"]:
        lines.append(f"| {c['name']} | {c['producer']} ({c['source_port']}) | {c['consumer']} ({c['sink_port']}) | "
                     f"{c['kind']} | {c['depth']} | {c['width']} | {c['words']} | {c['why_not_fifo']} |")
    if mono is not None:
        lines += ["", *monoparametric_md(mono)]
    if extra_md:
        lines += ["", *extra_md]
    if data["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in data["notes"]]
    (outdir / "report.md").write_text("\n".join(lines) + "\n")
