"""The vendor kit `compile` writes (hls/rtl/vendor.py): rtl/files.f, vivado/, quartus/, ecp5/, <kernel>_regs.h.

The vendor tools cannot run here, so what can be checked is checked against independent sources:
- files.f lists every RTL file once, in an order where each module is defined before the modules
  that instantiate it, judged by Verilator's own elaboration (`--json-only`: which file defines each
  module, which modules each one instantiates), not by the kit's parser;
- vivado/build.tcl, the .qsf and the .qip run under `tclsh` (when it is installed) with the tool
  commands stubbed: the files they add are files.f's, in its order, and exist;
- `<kernel>_regs.h` compiles with gcc, and the values of its macros are the offsets and bits the cocotb
  AXI host uses (`sim/cocotb_axi.py` for the control registers, the register map of report.json for
  the arguments, as `tests/rtl/test_axi.py` does).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hls import pnr
from hls.cli import main
from hls.rtl.vendor import ECP5_NEXTPNR, dependency_order, instantiated_modules, module_ports
from hls.toolchain import verilator_executable
from tests.kernels import ROOT

EXAMPLES = ROOT / "examples"

#: A 64-bit scalar (two words), arrays whose names differ only in case, narrow elements.
MIXED = r"""
#include <stdint.h>
#define N 12

void kernel_mixed(int64_t s, int16_t k, int8_t a[N], int32_t A[N])
{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    A[i] = (int32_t)(s * a[i] + k + A[i]);
#pragma endscop
}
"""

CASES = [
    pytest.param(EXAMPLES / "gemm-int.c", [], id="gemm-int-native"),
    pytest.param(EXAMPLES / "gemm-int.c", ["--interface", "axi4"], id="gemm-int-axi4"),
    pytest.param(EXAMPLES / "jacobi-1d.c", ["--interface", "axi4", "--axi-bundle", "--clock-mhz", "200"],
                 id="jacobi-1d-float-axi4-bundle"),
]


def _compile(src: Path, out: Path, *extra: str) -> dict:
    assert main(["compile", str(src), "-o", str(out), "-q", *extra]) == 0
    return json.loads((out / "report.json").read_text())


def _elaborated(rtl: Path, files: list[str], top: str, tmp: Path) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Verilator's view of the design: module -> file defining it, module -> modules it instantiates."""
    mdir = tmp / "json"
    proc = subprocess.run([verilator_executable(), "--json-only", "-Wno-fatal", "--top-module", top, "--Mdir",
                           str(mdir), *files], cwd=rtl, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tree = json.loads(next(mdir.glob("*.tree.json")).read_text())
    meta = json.loads(next(mdir.glob("*.tree.meta.json")).read_text())
    file_of_letter = {k: Path(v["filename"]).name for k, v in meta["files"].items()}
    modules, defined, cells = {}, {}, {}

    def walk(node, module=None):
        if isinstance(node, dict):
            if node.get("type") == "MODULE" and node.get("origName") != "@CONST-POOL@":
                module = node["origName"]
                modules[node["addr"]] = module
                defined[module] = file_of_letter[node["loc"].split(",")[0]]
                cells.setdefault(module, [])
            elif node.get("type") == "CELL" and module is not None:
                cells[module].append(node["modp"])
            for v in node.values():
                walk(v, module)
        elif isinstance(node, list):
            for v in node:
                walk(v, module)

    walk(tree)
    uses = {m: {modules[a] for a in addrs} for m, addrs in cells.items()}
    return defined, uses


@pytest.mark.parametrize("src, flags", CASES)
def test_files_f_lists_every_file_once_in_dependency_order(src, flags, tmp_path):
    out = tmp_path / "out"
    rep = _compile(src, out, *flags)
    kit = rep["vendor_kit"]
    rtl = out / "rtl"
    listed = (rtl / "files.f").read_text().split()
    assert sorted(listed) == sorted(p.name for p in rtl.glob("*.v"))  # every file, once
    assert len(set(listed)) == len(listed)
    top = rep["top"]["module"]
    assert kit["top"] == top and listed[-1] == f"{top}.v" and kit["rtl_order"] == listed
    defined, uses = _elaborated(rtl, listed, top, tmp_path)
    position = {f: k for k, f in enumerate(listed)}
    assert set(defined.values()) <= set(listed)
    for module, children in uses.items():
        for child in children:  # a file may hold a module and the helper module it uses (fmul's product)
            if defined[child] != defined[module]:
                assert position[defined[child]] < position[defined[module]], (child, module)
    # the other kit files
    clock = 200.0 if "200" in flags else 150.0
    assert kit["clock_mhz"] == clock
    period = f"{1000 / clock:.3f}".rstrip("0").rstrip(".")  # ns, to the picosecond
    xdc = (out / "vivado" / "clock.xdc").read_text()
    clk = "ap_clk" if "axi4" in flags else "clk"
    assert f"create_clock -period {period} -name {clk} [get_ports {clk}]" in xdc
    sdc = (out / "quartus" / f"{top}.sdc").read_text()
    assert f"-period {period} [get_ports {{{clk}}}]" in sdc
    for name in (f"{top}.qsf", f"{top}.qpf", f"{top}.qip"):
        assert (out / "quartus" / name).is_file()
    header = out / f"{rep['kernel']}_regs.h"
    assert header.is_file() == ("axi4" in flags)
    md = (out / "report.md").read_text()
    assert "## Vendor kit" in md and "vivado/build.tcl" in md and "ecp5/build.sh" in md
    _check_ecp5_kit(out, listed, top, clock)


def _check_ecp5_kit(out: Path, listed: list[str], top: str, clock: float) -> None:
    """ecp5/: the same files in the same order, the library modules ECP5 implements taken from ecp5/
    (gemm-int multiplies: its partial products), and the nextpnr options of `hls/pnr.py`."""
    ecp5 = out / "ecp5"
    own = {p.name for p in ecp5.glob("*.v")}
    assert own == ({"dpn_mult18.v"} if "dpn_mult18.v" in listed else set())
    order = (ecp5 / "files.f").read_text().split()
    assert order == [name if name in own else f"../rtl/{name}" for name in listed]
    assert all((ecp5 / name).is_file() for name in order)
    for name in own:
        assert "MULT18X18D #(" in (ecp5 / name).read_text()
    script = (ecp5 / "build.sh").read_text()
    reads = re.findall(r"read_verilog (\S+);", script)
    assert reads == [f"ecp5/{n}" if n in own else f"rtl/{n}" for n in listed]  # run from OUTDIR
    assert f"synth_ecp5 -top {top} " in script and f"FREQ=${{1:-{clock:g}}}" in script
    args = pnr.nextpnr_args(clock)
    for flag in ("--freq", "--seed"):  # the options but the clock (the script's argument) and the seed
        k = args.index(flag)
        del args[k:k + 2]
    args.remove("--timing-allow-fail")  # in the script too, on its own line
    assert ECP5_NEXTPNR.split() == args and f"{ECP5_NEXTPNR} --freq \"$FREQ\"" in script
    if shutil.which("sh"):
        assert subprocess.run(["sh", "-n", str(ecp5 / "build.sh")]).returncode == 0


def test_dependency_order_unit():
    files = {"top.v": "module top; mid u_m (); leaf #(.W(2)) u_l (); endmodule",
             "mid.v": "// module fake; \nmodule mid; leaf u_a (.x(1)); endmodule",
             "leaf.v": "module leaf #(parameter W = 1) (input x); endmodule",
             "a_unused.v": "module a_unused; endmodule"}
    assert dependency_order(files, "top") == ["a_unused.v", "leaf.v", "mid.v", "top.v"]
    with pytest.raises(ValueError, match="cycle"):
        dependency_order({"a.v": "module a; b u (); endmodule", "b.v": "module b; a u (); endmodule"})
    # a name is a whole identifier: `leafy` and `u_leaf` instantiate no `leaf`
    assert instantiated_modules("module m; leafy u (); wire u_leaf (x); leaf#(1) u2 (); endmodule",
                                ["leaf", "leafy", "m"]) == {"leaf", "leafy"}
    assert instantiated_modules("module m; leafy u (); endmodule", ["leaf"]) == set()
    ports = module_ports("module t #(parameter A = 1) (\n  input clk, // c\n  output reg [7:0] q,\n"
                         "  input signed [3:0] s, d\n);\nendmodule", "t")
    assert [(p.name, p.direction, p.width, p.signed) for p in ports] == [
        ("clk", "input", 1, False), ("q", "output", 8, False), ("s", "input", 4, True), ("d", "input", 4, True)]


# --------------------------------------------------------------------------------------------------
# Tcl: vivado/build.tcl, the .qsf and .qip under tclsh with the tool commands recorded

TCLSH = shutil.which("tclsh")
STUBS = r"""
set ::calls {}
proc unknown {args} { lappend ::calls [join [concat {*}$args] " "]; return "" }
# A .qsf is Tcl-like, not Tcl: it names buses `port[*]`, which tclsh would run as a command `*`.
proc * {} { return {[*]} }
proc current_fileset {args} { return sources_1 }
proc get_runs {args} { return [lindex $args end] }
array set ::quartus [list qip_path [file dirname [file normalize [lindex $::argv 0]]]]
set script [lindex $::argv 0]
set ::argv [lrange $::argv 1 end]
set ::argc [llength $::argv]
source $script
set fd [open [lindex $::env(DPN_CALLS) 0] w]
foreach c $::calls { puts $fd $c }
close $fd
"""


def _run_tcl(script: Path, tmp: Path, *args: str) -> list[str]:
    """Source `script` under tclsh with every unknown command recorded; returns the calls, one per line."""
    stub = tmp / "stubs.tcl"
    stub.write_text(STUBS)
    calls = tmp / f"calls-{script.name}.txt"
    proc = subprocess.run([TCLSH, str(stub), str(script), *args], capture_output=True, text=True, timeout=60,
                          env={"DPN_CALLS": str(calls), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return calls.read_text().splitlines()


@pytest.mark.skipif(TCLSH is None, reason="tclsh is not installed (Debian: apt-get install tcl)")
@pytest.mark.parametrize("interface", ["native", "axi4"])
def test_vivado_and_quartus_scripts_run_under_tclsh(interface, tmp_path):
    out = tmp_path / "out"
    rep = _compile(EXAMPLES / "gemm-int.c", out, "--interface", interface)
    top = rep["top"]["module"]
    listed = (out / "rtl" / "files.f").read_text().split()
    rtl = (out / "rtl").resolve()
    calls = _run_tcl(out / "vivado" / "build.tcl", tmp_path)
    (create,) = [c for c in calls if c.startswith("create_project")]
    assert f"create_project -force {top}" in create and create.endswith("-part xc7a200tsbg484-1")
    (add,) = [c for c in calls if c.startswith("add_files -norecurse")]
    added = add.split()[2:]
    assert added == [str(rtl / f) for f in listed] and all(Path(f).is_file() for f in added)
    assert f"set_property top {top} sources_1" in calls
    assert any(c.startswith("add_files -fileset constrs_1") and c.endswith("vivado/clock.xdc") for c in calls)
    for step in ("launch_runs synth_1", "launch_runs impl_1", "report_timing_summary", "report_utilization"):
        assert any(c.startswith(step) for c in calls), step
    packaged = [c for c in calls if c.startswith("ipx::")]
    if interface == "axi4":
        assert any(c.startswith("ipx::package_project") for c in packaged)
        masters = [m["prefix"] for m in rep["axi4"]["masters"]]
        for busif in ["s_axi_control", *masters]:
            assert f"ipx::associate_bus_interfaces -busif {busif} -clock ap_clk" in packaged, busif
        assert "ipx::save_core" in packaged
    else:
        assert packaged == []
    # PART and CLOCK_MHZ given on the command line (-tclargs): another part, a new clock constraint
    calls = _run_tcl(out / "vivado" / "build.tcl", tmp_path, "xc7k325tffg900-2", "250")
    assert any(c.startswith("create_project") and c.endswith("-part xc7k325tffg900-2") for c in calls)
    xdc = out / "vivado" / "project" / "clock.xdc"
    clk = "ap_clk" if interface == "axi4" else "clk"
    assert f"create_clock -period 4.000 -name {clk} [get_ports {clk}]" in xdc.read_text()
    # Quartus: the .qsf and the .qip add the same files, in the same order
    for name in (f"{top}.qsf", f"{top}.qip"):
        calls = _run_tcl(out / "quartus" / name, tmp_path)
        files = [c.split()[-1] for c in calls if "-name VERILOG_FILE" in c]
        assert [Path(f).name for f in files] == listed, name
        assert all((out / "quartus" / f).resolve().is_file() for f in files), name
        assert any("-name SDC_FILE" in c and c.endswith(f"{top}.sdc") for c in calls), name
        if name.endswith(".qsf"):
            assert f"set_global_assignment -name TOP_LEVEL_ENTITY {top}" in calls
            pins = {c.split()[-1] for c in calls if "VIRTUAL_PIN" in c}
            ports = {p["name"] for g in rep["top"]["groups"] for p in g["ports"]}
            assert {p.split("[")[0] for p in pins} == ports - {clk}


# --------------------------------------------------------------------------------------------------
# <kernel>_regs.h


def _macro_values(header: Path, tmp: Path) -> dict[str, int]:
    """Every object-like macro of `header`, as gcc computes it."""
    names = re.findall(r"^#define (\w+) ", header.read_text(), re.M)
    names = [n for n in names if not n.endswith("_REGS_H")]
    prog = tmp / "values.c"
    prog.write_text(f'#include <stdio.h>\n#include "{header.resolve()}"\nint main(void) {{\n'
                    + "".join(f'  printf("{n} %lu\\n", (unsigned long)({n}));\n' for n in names) + "  return 0;\n}\n")
    exe = tmp / "values"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-o", str(exe), str(prog)], check=True, timeout=120)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    return {n: int(v) for n, v in (ln.split() for ln in lines if ln)}


@pytest.mark.parametrize("case", ["gemm-int", "mixed"])
def test_register_header_matches_the_cocotb_host(case, tmp_path):
    from sim import cocotb_axi as host

    if case == "gemm-int":
        src = EXAMPLES / "gemm-int.c"
    else:
        src = tmp_path / "mixed.c"
        src.write_text(MIXED)
    out = tmp_path / "out"
    rep = _compile(src, out, "--interface", "axi4", *(["--axi-bundle"] if case == "mixed" else []))
    kernel = rep["kernel"]
    prefix = kernel.upper()
    values = _macro_values(out / f"{kernel}_regs.h", tmp_path)
    # control registers and bits: the constants the cocotb host drives the wrapper with
    assert values[f"{prefix}_AP_CTRL"] == host.AP_CTRL and values[f"{prefix}_GIE"] == host.GIE
    assert values[f"{prefix}_IER"] == host.IER and values[f"{prefix}_ISR"] == host.ISR
    assert values[f"{prefix}_AP_CTRL_AP_START"] == host.AP_START
    assert values[f"{prefix}_AP_CTRL_AP_DONE"] == host.AP_DONE
    assert values[f"{prefix}_IRQ_AP_DONE"] == host.IRQ_DONE
    assert values[f"{prefix}_CONTROL_ADDR_WIDTH"] == rep["axi4"]["control_addr_width"]
    # arguments: the register map of report.json, from which tests/rtl/test_axi.py writes them
    args = [r for r in rep["axi4"]["register_map"] if r["kind"] != "control"]
    got = {}
    for name, v in values.items():
        m = re.fullmatch(rf"{prefix}_ARG_(\w+?)(_LO|_HI)?", name)
        if m:
            got[(m.group(1), {None: 0, "_LO": 0, "_HI": 1}[m.group(2)])] = v
    names = {r["arg"] for r in args}
    upper = len({n.upper() for n in names}) == len(names)
    want = {((r["arg"].upper() if upper else r["arg"]), r["word"]): r["offset"] for r in args}
    assert got == want
    if case == "mixed":  # `a` and `A`: the C names keep their case; `s` is 64-bit: two words
        assert not upper and (("s", 1) in got) and got[("s", 1)] == got[("s", 0)] + 4
