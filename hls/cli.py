"""`dpn-synth`: the command line.

Exit status: 0 success, 1 verification mismatch or deadlock, 2 bad input or usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Optional, Sequence

from . import __version__
from .diagnostics import CompileError, SourceLoc, UsageError
from .executors import add_backend_options

EXAMPLES = """examples:
  dpn-synth analyze examples/gemm.c
  dpn-synth analyze gemm.c -I utilities -DMINI_DATASET -DPOLYBENCH_USE_SCALAR_LB --json
  dpn-synth compile examples/atax.c --param m=12 --param n=16 -o out/atax
  dpn-synth sim examples/jacobi-2d.c --dpn-only --seed 3 --json
  dpn-synth estimate examples/fir-int.c -D N=16 --target xc7
  dpn-synth explore examples/gemm-int.c --tile-sizes 'none;auto;4,4' --parallel 1,2 -o out/gemm-explore
"""

EXPLORE_EXAMPLES = """examples:
  dpn-synth explore examples/gemm-int.c --tile-sizes 'none;auto;4,4;8,8' --parallel 1,2,4
  dpn-synth explore examples/jacobi-1d-int.c -D T=4 -D N=16 --tile-sizes auto --tile-sizes 2,8 --parallel 1,2 --sim
  dpn-synth explore examples/atax.c --param m=12 --param n=16 --tile-sizes 'auto;4,4' --parallel 1 --estimate --json
  dpn-synth explore examples/gemm-int.c --tile-sizes 'auto;4,4;8,8' --parallel 1,2,4 --scheduler tcp://HOST:8786

Each configuration is one `compile` (--tile T --parallel P); rows the compiler refuses are `skipped`
with its message.  Cycles are the compiler's cycle model, or with --sim the Verilator cycles (checked
bit for bit against gcc).  The Pareto front (`*`) minimizes cycles and channel words, and LUTs with
--estimate (needs Yosys; without it the resource columns are skipped with a note).
With --closed-forms, rows of fixed tile sizes also give the words loaded/stored as polynomials in
the tile scale b (monoparametric tiling).
Writes OUTDIR/explore.csv, explore.json, explore.md and roofline.png (needs matplotlib:
pip install 'dpn-synth[bench]'; skipped with a note otherwise).
Configurations run in --jobs local worker processes, or on Dask distributed (pip install
'dpn-synth[dask]'): --dask starts a local cluster for the run, --scheduler uses a running one.
Exit status: 0 done, 1 a simulated configuration disagrees with gcc or deadlocks, 2 bad usage,
3 a configuration crashed the compiler (an `error` row).
"""

ESTIMATE_EXAMPLES = """examples:
  dpn-synth estimate examples/fir-int.c -D N=16                 # xc7 LUT/FF/BRAM18/DSP, total and per module
  dpn-synth estimate examples/gemm-int.c --target ice40 --json  # one JSON object: lut, ff, bram, dsp, modules
  dpn-synth estimate examples/atax.c --param m=12 --param n=16 --tile auto --timeout 600
  dpn-synth estimate examples/gemm-int.c --tile auto --target ecp5 --pnr --json  # post-route Fmax, time in us

Needs Yosys: a native `yosys` on PATH, or pip install 'dpn-synth[estimate]' (YoWASP build).
--target ecp5 --pnr also needs nextpnr-ecp5 (a native one on PATH, or pip install 'dpn-synth[pnr]').
Results are cached by content (~/.cache/dpn-synth/yosys and .../pnr, or under $DPN_SYNTH_CACHE).
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, our format; argparse's exit status 2
        print(f"dpn-synth: error: {message} (see `dpn-synth --help`)", file=sys.stderr)
        sys.exit(2)


def _source(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", metavar="KERNEL.c", help="C file holding the kernel")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR", help="include directory")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]", help="preprocessor macro")
    p.add_argument("--function", help="kernel function (default: the one holding #pragma scop)")
    p.add_argument("--param", action="append", default=[], metavar="N=V", help="value of an integer parameter")


def _parallel_count(text: str):
    """`--parallel`: a positive integer or `auto`."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or `auto`, got `{text}`")
    return value


def _parallel_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parallel", type=_parallel_count, default=1, metavar="P|auto",
                   help="parallel compute processes per tile band; auto: as many as the cycle model, the memory "
                        "roof and --dsp-budget call for (report.md says why)")
    p.add_argument("--dsp-budget", type=int, default=None, metavar="N",
                   help="with --parallel auto: the most DSP blocks (multiplier partial products) the compute "
                        "processes may use; default: no limit")


def _memory_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mem-width", type=int, default=None, metavar="BITS",
                   help="bits a memory read port moves per beat (a power of two up to 1024, e.g. 512): an array the "
                        "kernel only reads gets one port of that width, shared by its load units, which fetch "
                        "whole lines (docs/rtl-interface.md); default: 512 with --interface axi4 (an AXI port's "
                        "usual width), else 0: one word per beat")
    p.add_argument("--mem-latency", type=int, default=4, metavar="L",
                   help="cycles from a memory request to its response (default 4; DDR behind an interconnect: about "
                        "20): the load and store units keep that many requests in flight, the cycle model waits "
                        "that long, and `sim` runs its memory models with it")


def _clock_mhz_arg(p: argparse.ArgumentParser) -> None:
    """`--clock-mhz`, shared by `compile` and `estimate` (`hls/rtl/clock.py`)."""
    p.add_argument("--clock-mhz", type=float, default=None, metavar="F",
                   help="clock target in MHz: the datapath is pipelined so that no register-to-register path "
                        "exceeds the period (default 150), and the place-and-route constraint")


def _common(p: argparse.ArgumentParser) -> None:
    _source(p)
    p.add_argument("--dump-after", metavar="PASS", help="print the IR after PASS (see docs/architecture.md)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors and the result")
    p.add_argument("-v", "--verbose", action="store_true", help="print notes and timings")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpn-synth", description="Affine C kernels to data-aware process networks and Verilog.",
                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpn-synth {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    a = sub.add_parser("analyze", help="print the polyhedral model and its dataflow", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(a)
    a.add_argument("--json", action="store_true", help="print one JSON object")
    for name, helptext in (("compile", "build the process network and write OUTDIR"),
                           ("sim", "compile, run against gcc on random inputs, compare bit for bit")):
        c = sub.add_parser(name, help=helptext, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
        _common(c)
        c.add_argument("--tile", default="auto",
                       help="auto | none | T1,T2,...: tile the outer loops (default auto: tile sizes that fit "
                            "--local-words, the untiled network where nothing can be tiled; none: untiled)")
        c.add_argument("--local-words", type=int, default=8192, metavar="W",
                       help="local memory budget for --tile auto, in words (default 8192)")
        c.add_argument("--point-order", choices=("latency", "original", "inner", "wavefront", "interleaved"), default="latency",
                       help="order of the iterations inside a tile: latency (default: of the orders below, the one the cycle model finds fastest), "
                            "original (every FIFO tiling breaks is recoverable), inner (coincident hyperplanes innermost), wavefront, "
                            "interleaved (inner, and the coincident loops below the tiled band innermost too)")
        _parallel_args(c)
        c.add_argument("--read-ports", choices=("per-part", "shared"), default="per-part",
                       help="with --parallel P > 1: per-part (default): an array the kernel only reads, or reads "
                            "for one slab per element and never reads back, gets a read channel per parallel "
                            "slab, each with its own load unit, so P processes get P words per cycle; shared: one "
                            "read channel per array")
        c.add_argument("--write-ports", choices=("per-part", "shared"), default="per-part",
                       help="with --parallel P > 1: per-part (default): an array whose elements are each stored by "
                            "one parallel slab gets a write channel per slab, each with its own store unit, so P "
                            "processes store P results per cycle; shared: one write channel per array")
        c.add_argument("--load-order", choices=("auto", "first-read", "band-start"), default="auto",
                       help="when a tiled band's load unit reads each element: first-read (just before its first "
                            "read, in the readers' order: the smallest buffers), band-start (before the band's "
                            "first instance, in row-major order: a simpler load control, larger buffers), or auto "
                            "(default: band-start where the first reads' order has many pieces)")
        c.add_argument("--memory-order", choices=("auto", "element", "band"), default="auto",
                       help="how an array's load and store units wait for each other across tile bands: element "
                            "(each access waits for the last access of its element: a token per element alive "
                            "between bands), band (a band's first access waits for the last access of the latest "
                            "earlier band it depends on: a token per band), or auto (default: band for a unit "
                            "of more than 8192 iterations)")
        _memory_args(c)
        c.add_argument("--merge", choices=("auto", "none"), default="auto",
                       help="auto (default): with tiling, light compute processes share a process, or each tile "
                            "band is cut into slabs of all its statements, when the cycle model shows no slowdown "
                            "beyond 20%% (fewer processes, balanced); none: one per statement")
        c.add_argument("--directives", metavar="FILE", help="directives file")
        c.add_argument("--interface", choices=("native", "axi4"), default="native",
                       help="native: the memory ports of docs/rtl-interface.md (default); axi4: also a wrapper "
                            "<kernel>_axi with AXI4 masters and an AXI4-Lite control slave")
        c.add_argument("--axi-bundle", action="store_true",
                       help="with --interface axi4: one shared master m_axi_gmem instead of one per array")
        if name == "compile":
            c.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="output directory")
            _clock_mhz_arg(c)
            c.add_argument("--closed-forms", action="store_true",
                           help="report words moved and channel sizes as closed forms in the tile scale b "
                                "(monoparametric tiling; re-compiles the kernel along its size family, slower)")
        else:
            c.add_argument("--simulator", choices=("verilator", "icarus"), default="verilator",
                           help="RTL simulator: verilator (default) or icarus (needs iverilog installed)")
            c.add_argument("--dpn-only", action="store_true", help="run only the Python DPN simulator")
            c.add_argument("--seed", type=int, default=0, help="random inputs and interleaving")
            c.add_argument("--stall", type=float, default=0.0, metavar="P", help="random back-pressure probability")
            c.add_argument("--trace", metavar="FILE",
                           help="write the waveform of the RTL run to FILE: FILE.fst (needs the lz4 headers, e.g. "
                                "apt-get install liblz4-dev) or FILE.vcd")
            c.add_argument("--json", action="store_true", help="print one JSON object")
    e = sub.add_parser("estimate", help="compile, synthesize the RTL with Yosys, print FPGA resources",
                       epilog=ESTIMATE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(e)
    e.add_argument("--tile", default="auto",
                   help="auto | none | T1,T2,...: tile the outer loops (default auto, as compile)")
    e.add_argument("--local-words", type=int, default=8192, metavar="W",
                   help="local memory budget for --tile auto, in words (default 8192)")
    _parallel_args(e)
    _memory_args(e)
    e.add_argument("--merge", choices=("auto", "none"), default="auto",
                   help="balance compute processes: merge light ones or cut bands into slabs (auto, default), "
                        "or keep one per statement (none)")
    e.add_argument("--target", choices=("xc7", "ice40", "ecp5"), default="xc7",
                   help="xc7: Xilinx 7 series, synth_xilinx (default); ice40: iCE40 HX/LP, synth_ice40; "
                        "ecp5: Lattice ECP5 LFE5U-85F, synth_ecp5 (with --pnr: placed and routed by nextpnr-ecp5)")
    e.add_argument("--pnr", action="store_true",
                   help="with --target ecp5: place and route (nextpnr-ecp5): post-route Fmax, utilisation, the "
                        "critical path, and time = modelled cycles / Fmax")
    _clock_mhz_arg(e)
    e.add_argument("--timeout", type=float, default=1800.0, metavar="S",
                   help="give up when synthesis (or place and route) takes longer than S seconds (default 1800)")
    e.add_argument("--no-cache", action="store_true", help="synthesize again even if the result is cached")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    x = sub.add_parser("explore",
                       help="sweep tilings x --parallel, mark the Pareto front (cycles, channel words, LUTs)",
                       epilog=EXPLORE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _source(x)
    x.add_argument("--tile-sizes", action="append", metavar="SPEC",
                   help="tilings to try, separated by `;` or given by repeating the option; each none, auto or "
                        "T1,T2,... (default 'none;auto')")
    x.add_argument("--parallel", action="append", metavar="LIST",
                   help="parallel compute processes per band to try, e.g. 1,2,4 (default 1)")
    x.add_argument("--local-words", type=int, default=8192, metavar="W",
                   help="local memory budget for --tile auto, in words (default 8192)")
    x.add_argument("--sim", action="store_true",
                   help="cycles from Verilator (each configuration checked against gcc) instead of the cycle model")
    x.add_argument("--seed", type=int, default=0, help="with --sim: random inputs (default 0)")
    x.add_argument("--estimate", action="store_true",
                   help="add Yosys xc7 LUT/FF/BRAM18/DSP (skipped with a note when Yosys is missing)")
    x.add_argument("--estimate-timeout", type=float, default=600.0, metavar="S",
                   help="with --estimate: seconds per synthesis (default 600)")
    x.add_argument("--closed-forms", action="store_true",
                   help="for fixed tile sizes: words loaded/stored as polynomials in the tile scale b "
                        "(monoparametric tiling; re-compiles along the family, slower)")
    add_backend_options(x, "configurations", "dpn-synth")
    x.add_argument("-o", "--output", metavar="OUTDIR",
                   help="where explore.csv/.json/.md and roofline.png go (default explore-<kernel file stem>)")
    x.add_argument("--no-plot", action="store_true", help="do not write roofline.png")
    x.add_argument("--json", action="store_true", help="print explore.json instead of the table")
    x.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar and notes; only errors and the result")
    x.add_argument("-v", "--verbose", action="store_true", help="print notes")
    sub.add_parser("bench", add_help=False,
                   help="run the benchmark suite: cycles and traffic against the roofline (`dpn-synth bench --help`)")
    k = sub.add_parser("cache", help="show or empty the build caches (Verilator/Icarus builds, Yosys and nextpnr "
                                     "results, gcc objects)",
                       description="The build caches under $DPN_SYNTH_CACHE (default ~/.cache/dpn-synth), bounded "
                                   "by $DPN_SYNTH_CACHE_MAX (bytes or 500M, 2G, ...; default 2G): least recently "
                                   "used entries are evicted, never one in use.")
    k_what = k.add_mutually_exclusive_group(required=True)
    k_what.add_argument("--info", action="store_true", help="print the root, size and entries per kind, budget")
    k_what.add_argument("--clear", action="store_true", help="remove every entry that is not in use")
    return parser


def _params(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--param expects NAME=VALUE, got `{item}`")
        try:
            v = int(value, 0)
        except ValueError:
            raise UsageError(f"--param {name}: `{value}` is not an integer") from None
        if name in out and out[name] != v:
            raise UsageError(f"--param {name} given twice with different values")
        out[name] = v
    return out


def _options(args: argparse.Namespace):
    from .pipeline import Options

    if not os.path.exists(args.kernel):
        raise CompileError(SourceLoc(args.kernel), "no such file")
    directives = getattr(args, "directives", None)
    if directives is not None:
        if not os.path.isfile(directives):
            raise UsageError(f"--directives {directives}: no such file")
        raise UsageError("--directives: directive files are not supported yet")
    return Options(args.kernel, tuple(args.include_dirs), tuple(args.defines), args.function, _params(args.param),
                   getattr(args, "tile", "none"), getattr(args, "parallel", 1), getattr(args, "local_words", 8192),
                   getattr(args, "point_order", "latency"), getattr(args, "merge", "auto"),
                   getattr(args, "read_ports", "per-part"), _mem_width(args),
                   getattr(args, "mem_latency", 4), getattr(args, "dsp_budget", None),
                   getattr(args, "write_ports", "per-part"), getattr(args, "load_order", "auto"),
                   getattr(args, "memory_order", "auto"))


#: --mem-width's default with --interface axi4: the data width AXI memory ports of FPGA shells have
AXI_MEM_WIDTH = 512


def _mem_width(args: argparse.Namespace) -> int:
    width = getattr(args, "mem_width", None)
    if width is not None:
        return width
    return AXI_MEM_WIDTH if getattr(args, "interface", "native") == "axi4" else 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from .pipeline import run
    from .poly.dump import program_to_json, program_to_text

    res = run(_options(args), symbolic=True, dump_after=args.dump_after)
    if args.json:
        print(json.dumps(program_to_json(res.program), indent=2))
    else:
        sys.stdout.write(program_to_text(res.program))
    return 0


def _generate(res):
    """The RTL of the compiled network, or (None, why not) when an operator has no hardware yet."""
    from .rtl.generate import generate

    try:
        return generate(res.network), None
    except CompileError as e:
        if "floating-point" not in e.message and "no hardware operator" not in e.message:
            raise
        note = f"RTL not generated: {e.message} ({e.loc})"
        print(f"dpn-synth: warning: {note}", file=sys.stderr)
        return None, note


TESTBENCH_MAX_INSTANCES = 10_000_000  # the testbench's own cycle limit: beyond it, no test data is written


def _write_rtl(outdir: Path, res, args: argparse.Namespace, design) -> None:
    """`rtl/*.v` and a standalone cocotb testbench `tb/` with inputs and gcc's expected outputs."""
    import numpy as np

    from .metrics import traffic

    from sim.gcc_ref import GccReference
    from sim.hoisted import write_host_files
    from sim.inputs import random_inputs
    from sim.rtl_sim import scalar_bits, to_hex, write_design

    rtl_files, tb_files = write_design(design, outdir)
    tb = outdir / "tb"
    instances = traffic(res.program, res.network)["statement_instances"]
    if instances > TESTBENCH_MAX_INSTANCES:  # gcc's reference alone would take minutes: no test data
        (tb / "README.md").write_text(
            f"No test data: the kernel runs {instances} statement instances, more than a simulation can cover "
            f"({TESTBENCH_MAX_INSTANCES}). Compile it at a smaller size to get a runnable testbench.\n")
        print(f"dpn-synth: note: tb/ has no test data ({instances} statement instances, more than "
              f"{TESTBENCH_MAX_INSTANCES} simulated): compile a smaller size for a runnable testbench", file=sys.stderr)
        return
    data = tb / "data"
    data.mkdir()
    inputs = random_inputs(res.program, 0)
    expected = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel, defines=tuple(args.defines)).run({**inputs, **expected})
    for m in design.interface["arrays"]:
        (data / f"{m['name']}.init.hex").write_text(to_hex(np.asarray(inputs[m["name"]]), m["width"]))
        (data / f"{m['name']}.expected.hex").write_text(to_hex(expected[m["name"]], m["width"]))
    cfg = {
        "tb_top": design.tb_top, "top": design.top,
        "rtl_files": [f.name for f in rtl_files], "tb_files": [f.name for f in tb_files],
        "arrays": design.interface["arrays"], "memory_latency": res.network.mem_latency,
        "test": {"scalars": {s["port"]: scalar_bits(inputs[s["name"]], s["type"]) for s in design.interface["scalars"]},
                 "processes": design.interface["processes"], "quiet_limit": 5000, "max_cycles": 10_000_000},
    }
    (tb / "config.json").write_text(json.dumps(cfg, indent=1) + "\n")
    write_host_files(res.program, tb)  # the testbench recomputes hoisted scalars with gcc (sim/hoisted.py)
    sim_dir = Path(__file__).resolve().parent.parent / "sim"
    shutil.copyfile(sim_dir / "cocotb_top.py", tb / "test_top.py")
    shutil.copyfile(sim_dir / "tb_standalone.py", tb / "run.py")


def cmd_compile(args: argparse.Namespace) -> int:
    from .metrics import network_stats
    from .pipeline import run
    from .rtl.clock import check_clock, target_clock

    _check_interface(args)
    if args.clock_mhz is not None:
        try:
            check_clock(args.clock_mhz)
        except ValueError as e:
            raise UsageError(f"--clock-mhz: {e}") from None
    opts = _options(args)
    with target_clock(args.clock_mhz) as clock:  # the datapath is pipelined for it (hls/rtl/clock.py)
        res = run(opts, dump_after=args.dump_after)
        design, rtl_note = _generate(res)
        kit = _write_outputs(args, opts, res, design, rtl_note, clock)
    if not args.quiet:
        s = network_stats(res.network)
        cycles = (res.timing or {}).get("estimated_cycles")
        out = Path(args.output)
        print(f"wrote {out}/: {s['processes']} processes, {s['channels']} channels "
              f"({s['fifos']} FIFOs), {s['channel_words']} channel words"
              + (f"; about {cycles} cycles" if cycles else ""))
        if kit is not None:
            print(f"top: {kit.top} (rtl/, {len(kit.files)} files in order in rtl/files.f); "
                  f"testbench: python {out}/tb/run.py")
            print(f"vendor kit: vivado/build.tcl, quartus/{kit.top}.qsf, ecp5/build.sh"
                  + (f", {res.program.name}_regs.h" if kit.axi_masters else "") + f" (clock {clock:g} MHz)")
        print("report: report.md, report.json; pictures: dpn.svg, schedule.svg (and dpn.dot for Graphviz)")
        if args.verbose:
            for n in res.program.notes:
                print(f"note: {n}", file=sys.stderr)
    return 0


def _write_outputs(args: argparse.Namespace, opts, res, design, rtl_note: Optional[str], clock: float):
    """Everything `compile` writes, into a temporary directory renamed to OUTDIR at the end (a failed
    compile leaves the previous OUTDIR); returns the vendor kit's `KitInfo` (None without RTL)."""
    from .metrics import efficiency, network_stats, traffic
    from .dpn.serialize import network_to_dot, network_to_json
    from .dpn.svg import network_svg
    from .schedule import compiled_schedule_svg
    from .report import top_interface, write_reports
    from .rtl import vendor

    out = Path(args.output)
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    except OSError as e:
        raise UsageError(f"cannot create output directory `{out}`: {e.strerror or e}") from None
    kit = None
    try:
        (tmp / "dpn.json").write_text(json.dumps(network_to_json(res.network), indent=2) + "\n")
        (tmp / "dpn.dot").write_text(network_to_dot(res.network))
        (tmp / "dpn.svg").write_text(network_svg(res.network))
        (tmp / "schedule.svg").write_text(compiled_schedule_svg(res))  # the cycle model's Gantt chart
        summary = {**network_stats(res.network), **traffic(res.program, res.network),
                   **(res.timing or {})}
        summary["efficiency"] = efficiency(summary["statement_instances"], summary.get("estimated_cycles"),
                                           summary["compute_processes"])
        if rtl_note:
            res.network.notes.append(rtl_note)
        axi = top = None
        if design is not None:
            _write_rtl(tmp, res, args, design)
            axi = _write_axi(tmp, res, args, design) if args.interface == "axi4" else None
            rtl = {**design.rtl, **(axi.files if axi else {})}
            kit = vendor.write_kit(tmp, rtl, res.program.name, axi.top if axi else design.top, clock_mhz=clock,
                                   axi=axi)
            top = top_interface(design, rtl, axi, clock)
        elif args.interface == "axi4":
            res.network.notes.append("AXI4 wrapper not generated: there is no RTL to wrap")
        extra_md: list[str] = []
        extra_json: dict = {}
        if axi is not None:
            from .rtl.axi import report_markdown

            extra_md += report_markdown(axi) + [""]
            extra_json["axi4"] = axi.to_json()
        if kit is not None:
            extra_md += vendor.report_markdown(kit)
            extra_json["vendor_kit"] = {"top": kit.top, "clock": kit.clock, "clock_mhz": kit.clock_mhz,
                                        "part": kit.part, "files": list(kit.written), "rtl_order": kit.files}
        write_reports(tmp, res.program, res.network, summary, extra_md=extra_md, extra_json=extra_json or None,
                      options=opts, closed_forms=args.closed_forms, top=top)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return kit


def _check_interface(args: argparse.Namespace) -> None:
    if args.axi_bundle and args.interface != "axi4":
        raise UsageError("--axi-bundle needs --interface axi4")
    if args.interface == "axi4" and args.command == "sim":
        raise UsageError("sim --interface axi4 is not supported: `sim` runs the native design; compile with "
                         "--interface axi4 to get the wrapper (tests/rtl/test_axi.py simulates it)")


def _write_axi(outdir: Path, res, args: argparse.Namespace, design):
    """`rtl/<kernel>_axi.v` and its modules; returns the `AxiWrapper` (register map, masters)."""
    from .rtl.axi import generate_axi

    axi = generate_axi(design, bundle=args.axi_bundle,
                       arg_order=[a.name for a in res.program.args if a.kind in ("scalar", "array")])
    for name, text in sorted(axi.files.items()):
        (outdir / "rtl" / name).write_text(text)
    return axi


def _trace_format(args: argparse.Namespace) -> Optional[str]:
    """`sim --trace FILE`: "fst" or "vcd" from FILE's suffix, checked before anything is compiled."""
    if args.trace is None:
        return None
    if args.dpn_only:
        raise UsageError("--trace records the RTL simulation; it does nothing with --dpn-only")
    fmt = Path(args.trace).suffix.lower().lstrip(".")
    if fmt not in ("fst", "vcd"):
        raise UsageError(f"--trace {args.trace}: the file name must end in .fst or .vcd")
    if fmt == "vcd" and args.simulator == "icarus":
        raise UsageError("--trace with --simulator icarus records FST only (use FILE.fst)")
    if fmt == "fst" and args.simulator == "verilator":
        from sim.tb_standalone import fst_available

        if not fst_available():
            raise UsageError("--trace FILE.fst: Verilator's FST writer needs the lz4 headers, which are not "
                             "installed (apt-get install liblz4-dev), or use FILE.vcd")
    return fmt


#: how many times the cycle model's estimate a Verilog simulation runs before it is stopped as a livelock
#: (handshakes that never finish the run; a deadlock stops sooner, when no handshake happens at all)
RTL_CYCLES_OVER_ESTIMATE = 20


def rtl_cycle_limit(estimate: Optional[int], stall: float) -> int:
    """The cycles a Verilog simulation may take: `RTL_CYCLES_OVER_ESTIMATE` times the model's estimate,
    slowed by the memory's stalls, at least 200,000 and at most 10 M (the limit without an estimate)."""
    if not estimate:
        return 10_000_000
    return min(10_000_000, max(200_000, int(RTL_CYCLES_OVER_ESTIMATE * estimate / max(0.05, 1.0 - stall))))


def _run_rtl(res, inputs, args: argparse.Namespace, trace: Optional[str] = None):
    from sim.rtl_sim import run_rtl

    from .rtl.generate import generate

    design = generate(res.network)
    with tempfile.TemporaryDirectory(prefix="dpn-synth-sim-") as work:
        out = run_rtl(design, inputs, Path(work), stall=args.stall, seed=args.seed, simulator=args.simulator,
                      progress=not args.quiet, trace=trace, latency=res.network.mem_latency,
                      max_cycles=rtl_cycle_limit((res.timing or {}).get("estimated_cycles"), args.stall))
        if trace is not None:
            dumps = sorted(Path(work).rglob(f"*.{trace}"))
            if not dumps:
                raise UsageError(f"--trace: the simulation wrote no .{trace} waveform")
            Path(args.trace).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dumps[0], args.trace)
        return out


def cmd_sim(args: argparse.Namespace) -> int:
    from .metrics import efficiency, network_stats, traffic, traffic_words
    import numpy as np

    from sim.gcc_ref import GccReference
    from sim.inputs import compare, random_inputs

    from .dpn.simulate import simulate
    from .pipeline import run

    if not 0.0 <= args.stall < 1.0:
        raise UsageError("--stall must be a probability in [0, 1)")
    _check_interface(args)
    if args.simulator == "icarus" and not args.dpn_only:
        from .toolchain import find_iverilog

        if find_iverilog() is None:
            raise UsageError("--simulator icarus needs Icarus Verilog, and `iverilog` is not on PATH "
                             "(install it, e.g. `apt-get install iverilog`, or use --simulator verilator)")
    trace = _trace_format(args)
    res = run(_options(args), dump_after=args.dump_after)
    inputs = random_inputs(res.program, args.seed)
    expected = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    t0 = time.perf_counter()
    GccReference(res.kernel, defines=tuple(args.defines)).run({**inputs, **expected})
    t1 = time.perf_counter()
    if args.dpn_only:
        result = simulate(res.network, inputs, seed=args.seed, tables=res.tables)
        problem = None if result.deadlock is None else result.deadlock.format()
        outputs, cycles, steps = result.outputs, None, result.steps
        loaded, stored = result.words_loaded, result.words_stored
    else:
        rtl = _run_rtl(res, inputs, args, trace)
        if args.verbose and rtl.log:  # the simulator's output (the build log stays in the cache)
            print(rtl.log, file=sys.stderr)
        problem, outputs, cycles, steps = rtl.problem, rtl.outputs, rtl.cycles, None
        loaded, stored = traffic_words(res.network)
    t2 = time.perf_counter()
    mismatches = [] if problem else compare(expected, outputs)
    ok = problem is None and not mismatches
    stats = network_stats(res.network)
    summary = {
        "ok": ok,
        "mismatches": len(mismatches),
        "deadlock": problem,
        "cycles": cycles,
        "steps": steps,
        "words_loaded": loaded,
        "words_stored": stored,
        **traffic(res.program, res.network),
        **stats,
        **(res.fifo_stats or {}),
        **(res.timing or {}),
        "tiling": res.network.tiling.describe() if res.network.tiling is not None else "none",
        "seconds_compile": round(res.seconds, 3),
        "seconds_reference": round(t1 - t0, 3),
        "seconds_sim": round(t2 - t1, 3),
        "simulator": "dpn" if args.dpn_only else args.simulator,
        "stall": args.stall,
        "seed": args.seed,
    }
    summary["efficiency"] = efficiency(summary["statement_instances"], cycles, stats["compute_processes"])
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        if problem is not None:
            print(problem, file=sys.stderr)
        for m in mismatches[:20]:
            print(f"mismatch: {m}", file=sys.stderr)
        if not args.quiet:
            verdict = "PASS" if ok else "FAIL"
            work = f"{cycles} cycles" if cycles is not None else f"{steps} process steps"
            print(f"{verdict}: {res.program.name}: {len(mismatches)} mismatches, {work}, "
                  f"{stats['channels']} channels ({stats['fifos']} FIFOs), {stats['channel_words']} channel words")
            if trace is not None:
                print(f"waveform: {args.trace}")
    return 0 if ok else 1


def cmd_estimate(args: argparse.Namespace) -> int:
    from . import estimate as est
    from .pipeline import run
    from .rtl.clock import DEFAULT_CLOCK_MHZ, check_clock, target_clock
    from .rtl.generate import generate

    if not 0 < args.timeout <= 1e6:
        raise UsageError("--timeout must be a positive number of seconds (at most 1e6)")
    if args.pnr and args.target != "ecp5":
        raise UsageError(f"--pnr needs --target ecp5 (place and route is not available for {args.target})")
    clock = DEFAULT_CLOCK_MHZ if args.clock_mhz is None else args.clock_mhz
    try:
        clock = check_clock(clock)
    except ValueError as e:
        raise UsageError(f"--clock-mhz: {e}") from None
    if args.target == "ecp5":
        return _estimate_ecp5(args, clock)
    yosys = est.find_yosys()
    if yosys is None:
        raise UsageError(est.NOT_FOUND_MESSAGE)
    with target_clock(clock):
        res = run(_options(args), dump_after=args.dump_after)
        design = generate(res.network)
    try:
        result = est.estimate_design(design, args.target, timeout=args.timeout, use_cache=not args.no_cache,
                                     yosys=yosys)
    except est.EstimateTimeout as e:
        print(f"dpn-synth: error: {e} (raise --timeout)", file=sys.stderr)
        return 2
    except est.EstimateError as e:
        print(f"dpn-synth: error: {e}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps({"kernel": res.program.name, **result.to_json()}, indent=2))
    else:
        sys.stdout.write(est.format_table(result))
    return 0


def _estimate_ecp5(args: argparse.Namespace, clock: float) -> int:
    """`estimate --target ecp5 [--pnr]`: synth_ecp5 resources, or place and route (`hls/pnr.py`)."""
    from . import pnr
    from .pipeline import run
    from .rtl.clock import target_clock
    from .rtl.generate import generate

    if pnr.find_yosys() is None:
        raise UsageError(pnr.YOSYS_NOT_FOUND)
    if args.pnr and pnr.find_nextpnr() is None:
        raise UsageError(pnr.NEXTPNR_NOT_FOUND)
    with target_clock(clock):
        res = run(_options(args), dump_after=args.dump_after)
        design = generate(res.network)
    cycles = (res.timing or {}).get("estimated_cycles")
    try:
        if args.pnr:
            result = pnr.pnr_design(design, clock, timeout=args.timeout, use_cache=not args.no_cache)
        else:
            result = pnr.synth_design(design, timeout=args.timeout, use_cache=not args.no_cache)
    except pnr.PnrTimeout as e:
        print(f"dpn-synth: error: {e} (raise --timeout)", file=sys.stderr)
        return 2
    except pnr.ToolNotFound as e:
        raise UsageError(str(e)) from None
    except pnr.PnrError as e:
        print(f"dpn-synth: error: {e}", file=sys.stderr)
        return 3
    if args.json:
        out = {"kernel": res.program.name, "target": "ecp5", "clock_mhz": clock, "cycles": cycles,
               **result.to_json()}
        if args.pnr:
            out["time_us"] = round(cycles / result.fmax_mhz, 3) if cycles and result.fmax_mhz > 0 else None
        print(json.dumps(out, indent=2))
    elif args.pnr:
        sys.stdout.write(pnr.format_result(result, cycles))
    else:
        sys.stdout.write(pnr.format_synth(result))
    return 0


def cmd_explore(args: argparse.Namespace) -> int:
    """Sweep the grid in worker processes; see `hls/explore.py` for why rows are what they are."""
    from . import explore as ex
    from .executors import Backend
    from .pipeline import Options, run
    from .progress import ProgressBar
    from sim.rtl_runner import default_cache_root

    tilings = ex.parse_tile_sizes(args.tile_sizes or ["none;auto"])
    parallels = ex.parse_parallel(args.parallel or ["1"])
    backend = Backend(jobs=args.jobs, scheduler=args.scheduler, local_cluster=args.dask)  # UsageError if bad
    if args.local_words < 1:
        raise UsageError(f"--local-words must be a positive integer, got {args.local_words}")
    if not 0 < args.estimate_timeout <= 1e6:
        raise UsageError("--estimate-timeout must be a positive number of seconds (at most 1e6)")
    if not os.path.exists(args.kernel):
        raise CompileError(SourceLoc(args.kernel), "no such file")
    params = _params(args.param)
    # The front end once, here: an error in the C file or a parameter is the user's, not a configuration's.
    front = run(Options(args.kernel, tuple(args.include_dirs), tuple(args.defines), args.function, params),
                until="dataflow")
    notes: list[str] = []
    estimate = False
    if args.estimate:
        from . import estimate as est

        estimate = est.find_yosys() is not None
        if not estimate:
            notes.append(f"--estimate: {est.NOT_FOUND_MESSAGE}; resource columns skipped")
    tasks = [{"path": args.kernel, "include_dirs": list(args.include_dirs), "defines": list(args.defines),
              "function": args.function, "params": params, "tile": t, "parallel": p, "local_words": args.local_words,
              "sim": args.sim, "seed": args.seed, "estimate": estimate, "closed_forms": args.closed_forms,
              "estimate_timeout": args.estimate_timeout,
              "cache_root": str(default_cache_root())} for t in tilings for p in parallels]
    out = Path(args.output) if args.output else Path(f"explore-{Path(args.kernel).stem}")
    t0 = time.perf_counter()
    with ProgressBar(len(tasks), "explore", quiet=args.quiet) as bar:
        rows = ex.sweep(tasks, backend, on_row=lambda r: bar.advance(note=f"{r['config']}: {r['status']}"))
    ex.note_equal_rows(rows)
    keys = ex.mark_pareto(rows)
    meta = {"command": "dpn-synth " + " ".join(shlex.quote(a) for a in args.argv),
            "kernel": front.program.name, "file": args.kernel, "params": front.program.param_values(),
            "tilings": tilings, "parallel": parallels, "local_words": args.local_words, "sim": args.sim,
            "seed": args.seed, "estimate": args.estimate, "resources": estimate, "closed_forms": args.closed_forms,
            "objectives": list(keys),
            "jobs": args.jobs, "backend": backend.describe(), "seconds": round(time.perf_counter() - t0, 1),
            "plots": [],
            "notes": list(front.program.notes) + notes}
    ex.write_outputs(rows, meta, out, plots=not args.no_plot)
    if args.json:
        print(json.dumps({"meta": meta, "rows": [{k: r.get(k) for k in ex.FIELDS} for r in rows]}, indent=1))
    else:
        sys.stdout.write(ex.format_table(rows, meta))
        if not args.quiet:
            front_rows = ", ".join(r["config"] for r in rows if r["pareto"]) or "none"
            print(f"Pareto front ({', '.join(keys)}): {front_rows}")
            print(f"wrote {out}/: explore.csv, explore.json, explore.md" + "".join(f", {p}" for p in meta["plots"]))
    if not args.quiet:  # the front end's notes (inferred parameters) only with -v, as for `compile`
        shown = meta["notes"] if args.verbose else meta["notes"][len(front.program.notes):]
        for n in shown:
            print(f"dpn-synth: note: {n}", file=sys.stderr)
    if any(r["status"] == "error" for r in rows):
        return 3
    return 1 if any(r["status"] == "fail" for r in rows) else 0


def cmd_cache(args: argparse.Namespace) -> int:
    """`dpn-synth cache --info | --clear` (`hls/cache.py`; a bad $DPN_SYNTH_CACHE_MAX is a usage error)."""
    from . import cache

    sys.stdout.write(cache.format_info() if args.info else cache.format_clear(cache.clear()))
    return 0


def cmd_bench(argv: Sequence[str]) -> int:
    """`dpn-synth bench ...`: `python -m bench ...` (bench/suite.py parses its own options)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "bench" / "suite.py").is_file() or not (root / "tests" / "kernels.py").is_file():
        print("dpn-synth: error: `bench` needs the source checkout (bench/ and tests/ next to hls/)", file=sys.stderr)
        return 2
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from bench.suite import main as bench_main

    return bench_main(list(argv), prog="dpn-synth bench")


def main(argv: Optional[Sequence[str]] = None) -> int:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))  # long C expressions are deep trees
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # its options are bench/suite.py's
        try:
            return cmd_bench(argv[1:])
        except KeyboardInterrupt:
            return 130
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return {"analyze": cmd_analyze, "compile": cmd_compile, "sim": cmd_sim,
                "estimate": cmd_estimate, "explore": cmd_explore, "cache": cmd_cache}[args.command](args)
    except CompileError as e:
        print(e.format(), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `dpn-synth analyze ... | head`
        sys.stderr.close()
        return 0
    except Exception:  # a bug in dpn-synth, not in the user's input
        log = Path(tempfile.gettempdir()) / "dpn-synth-crash.txt"
        log.write_text(traceback.format_exc())
        print(f"dpn-synth: internal error: {sys.exc_info()[1]!r}\n"
              f"This is a bug in dpn-synth; please report it with the input file and {log}.", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
