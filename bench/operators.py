"""Every operator of the RTL operator library: declared latency and, with Yosys, its standalone FPGA cost.

Run: `python -m bench.operators [--target xc7|ice40] [--budget SECONDS] [--only TEXT] [--no-synth]`.
Writes bench/results/operators.{csv,json,md} (target xc7, the full list); `--only` or another target
prints the table without writing the results files.

Each registry entry (`hls.rtl.generate.operator_library()`: `fp_arith.py`, `fp_convert.py`, and any
operator added there later) is rendered on its own and synthesized with `hls.estimate` (hierarchy
kept, `-noiopad`: the operands and result are plain ports, so only the operator's own registers count).
The datapath does integer `*` in-line (combinational Verilog, `datapath.py`), not through the
registry; rows marked `inline` synthesize that Verilog (`y = a * b`) for 32 and 64 bits as a reference.
Integer `/` and `%` by a run-time divisor go through the pipelined divider (`div.*`, `rem.*` rows).
A synthesis that takes longer than `--budget` seconds is recorded as `timeout`.
Results are cached by `hls.estimate`, so a second run only synthesizes what changed.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from hls import estimate as est
from hls.rtl.generate import operator_library

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_BUDGET = 300.0
FIELDS = ("operator", "source", "module", "latency", "lut", "lutram", "ff", "carry", "dsp", "dsp_model", "bram",
          "status", "synth_s")

_INLINE = """// {module}: the datapath's in-line {what} (combinational), for reference.
module {module} (
    input  wire clk,
    input  wire en,
    input  wire signed [{msb}:0] a,
    input  wire signed [{msb}:0] b,
    output wire signed [{msb}:0] y
);
    assign y = a {op} b;
endmodule
"""


def inline_operators() -> dict[str, tuple[str, str]]:
    """Integer operators the datapath emits in-line: key -> (module, Verilog)."""
    out = {}
    for op, sym, what in (("mul", "*", "multiplication"),):  # division: the pipelined divider (int_arith)
        for bits in (32, 64):
            module = f"inline_{op}_i{bits}"
            out[f"{op}.i{bits}"] = (module, _INLINE.format(module=module, what=f"{bits}-bit {what}", msb=bits - 1,
                                                          op=sym))
    return out


def _sources() -> dict[str, str]:
    """Registry key -> the hls.rtl module that defines it."""
    import importlib

    out = {}
    for mod in ("fp_arith", "fp_convert", "int_arith"):
        try:
            out.update({k: mod for k in importlib.import_module(f"hls.rtl.{mod}").OPERATORS})
        except (ImportError, AttributeError):
            continue
    return out


FAMILY_ORDER = ("fadd", "fsub", "fmul", "fdiv", "fsqrt", "flt", "fle", "fgt", "fge", "feq", "fne", "fmin", "fmax",
                "fneg", "fabs", "cvt", "mul", "div")


def _order(key: str) -> tuple:
    """By operation family, then precision / conversion."""
    fam = key.split(".")[0]
    return (FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else len(FAMILY_ORDER), fam, key)


def measure(key: str, module: str, files: dict[str, str], latency: int, source: str, yosys, target: str,
            budget: float, dsp_model: int | str = "") -> dict:
    row = {"operator": key, "source": source, "module": module, "latency": latency, "lut": "", "lutram": "",
           "ff": "", "carry": "", "dsp": "", "dsp_model": dsp_model, "bram": "", "status": "", "synth_s": ""}
    if yosys is None:
        row["status"] = "no yosys"
        return row
    t0 = time.perf_counter()
    try:
        e = est.estimate_sources(files, module, target, timeout=budget, yosys=yosys)
    except est.EstimateTimeout:
        row.update(status="timeout", synth_s=f">{budget:g}")
        return row
    except est.EstimateError as err:
        row.update(status="error: " + str(err).splitlines()[0], synth_s=round(time.perf_counter() - t0, 1))
        return row
    t = e.total
    row.update(lut=t.lut, lutram=t.lutram, ff=t.ff, carry=t.carry, dsp=t.dsp, bram=t.bram, status="ok",
               synth_s=round(e.seconds, 1))
    return row


def collect(target: str, budget: float, only: str | None, synth: bool) -> tuple[list[dict], str]:
    yosys = est.find_yosys() if synth else None
    version = est.yosys_version(yosys) if yosys else ""
    jobs = []
    sources = _sources()
    for key, spec in operator_library().items():
        jobs.append((key, spec.module, spec.files(), spec.latency, sources.get(key, "registry"),
                     spec.dsp))
    for key, (module, text) in inline_operators().items():
        jobs.append((key, module, {f"{module}.v": text}, 0, "inline", ""))
    jobs.sort(key=lambda j: _order(j[0]))
    rows = []
    for key, module, files, latency, source, dsp_model in jobs:
        if only and only not in key:
            continue
        row = measure(key, module, files, latency, source, yosys, target, budget, dsp_model)
        print(f"{key:14} latency {latency:3}  {row['status']:8} LUT {row['lut']!s:>6} FF {row['ff']!s:>6} "
              f"DSP {row['dsp']!s:>3}  {row['synth_s']} s", file=sys.stderr, flush=True)
        rows.append(row)
    return rows, version


def markdown(rows: list[dict], target: str, version: str, budget: float) -> str:
    flow = est.FLOWS[target].format(top="<module>")
    md = [
        "# Operator library: latency and standalone resources",
        "",
        f"`python -m bench.operators` ({target}: `{flow}`, {version or 'no yosys'}; time budget {budget:g} s "
        "per operator).",
        "LUT includes LUTs used as distributed RAM (`lutram`); BRAM in " + est.BRAM_UNITS[target] + ".",
        "Latency: enabled cycles from operands to result, as declared in the registry (0 = combinational).",
        "`inline` rows are the datapath's in-line integer Verilog (not registry operators), for reference.",
        "DSP: what Yosys maps; DSP model: the operator's count in the registry (`OperatorSpec.dsp`, one DSP48E1 per "
        "partial product that fits 24x17, two per 18x18 chunk), which `--parallel auto --dsp-budget` counts.",
        "",
        "| operator | source | latency | LUT | LUTRAM | FF | CARRY4 | DSP | DSP model | BRAM | status | synth s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        md.append(f"| {r['operator']} | {r['source']} | {r['latency']} | {r['lut']} | {r['lutram']} | {r['ff']} | "
                  f"{r['carry']} | {r['dsp']} | {r['dsp_model']} | {r['bram']} | {r['status']} | {r['synth_s']} |")
    return "\n".join(md) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=est.TARGETS, default="xc7")
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET, metavar="S",
                    help=f"seconds of synthesis per operator before it is recorded as a timeout (default "
                         f"{DEFAULT_BUDGET:g})")
    ap.add_argument("--only", metavar="TEXT", help="only operators whose key contains TEXT (results not written)")
    ap.add_argument("--no-synth", action="store_true", help="latencies only, no Yosys")
    args = ap.parse_args(argv)
    if not 0 < args.budget <= 1e6:
        ap.error("--budget must be a positive number of seconds")
    rows, version = collect(args.target, args.budget, args.only, not args.no_synth)
    md = markdown(rows, args.target, version, args.budget)
    if args.only or args.target != "xc7":
        sys.stdout.write(md)
        return 0
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "operators.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    meta = {"target": args.target, "flow": est.FLOWS[args.target].format(top="<module>") + " (hierarchy kept)",
            "yosys": version, "budget_s": args.budget, "bram_unit": est.BRAM_UNITS[args.target]}
    (RESULTS / "operators.json").write_text(json.dumps({**meta, "operators": rows}, indent=1) + "\n")
    (RESULTS / "operators.md").write_text(md)
    print(f"wrote {RESULTS}/operators.{{csv,json,md}} ({len(rows)} operators)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
