"""The example kernels the tests run, with the arguments each needs."""

from __future__ import annotations

import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.c"))
POLYBENCH = ROOT / "tests" / "polybench_like"
POLYBENCH_KERNELS = sorted(p for p in POLYBENCH.rglob("*.c") if p.parent.name != "utilities")
POLYBENCH_FLAGS = ["-I", str(POLYBENCH / "utilities"), "-DMINI_DATASET", "-DPOLYBENCH_USE_SCALAR_LB"]


# Kernels that cover C constructs (compound assignments, strided and decrementing loops, MIN/MAX
# bounds, unsigned and 64-bit arithmetic, casts, literal suffixes).
CONSTRUCT_EXAMPLES = {"band-trsv-minmax", "box-blur-clamp", "cubic-upsample-f32", "decimate-f32", "fwd-bwd-smooth",
                      "hash-mix-u32", "horner-u64", "lifting-53", "q15-fir-i64", "quantize-i8"}

# The per-example sweeps that build and simulate many networks each (RTL under Verilator, `--parallel`,
# FIFO recovery) run this subset by default and every example under `-m slow`, so that the default
# run stays within its time budget.  It has each network shape: rectangular and multi-statement
# reductions, triangular domains, skewed stencils, a convolution, integer, float and mixed widths, a
# hoisted call, and a construct kernel.
DEFAULT_SWEEP = {"gemm", "gemm-int", "atax", "mvt", "syrk", "trisolv", "trmm", "jacobi-2d", "jacobi-1d-int",
                 "seidel-int", "conv2d", "mixed-width", "fir-int", "checksum-u8", "prefix-max-i64", "hoisted-exp",
                 "q15-fir-i64"}
# Each RTL test builds a Verilator model of its own (about a minute): fewer still.
RTL_SWEEP = {"gemm-int", "jacobi-1d-int", "mixed-width"}  # checksum-u8 (70 s): u8 arrays are in mixed-width


def sweep(paths, default: set[str] = DEFAULT_SWEEP) -> list:
    """Parameters for a per-example sweep: the kernels outside `default` marked slow."""
    import pytest

    return [pytest.param(p, id=p.stem, marks=() if p.stem in default else pytest.mark.slow) for p in paths]


def example_params(path: Path) -> dict[str, int]:
    """Parameters from the file's `// dpn-synth-args: --param n=16` first line."""
    first = path.read_text().splitlines()[0]
    params: dict[str, int] = {}
    if first.startswith("// dpn-synth-args:"):
        words = shlex.split(first.split(":", 1)[1])
        for k, w in enumerate(words):
            if w == "--param":
                name, value = words[k + 1].split("=")
                params[name] = int(value)
    return params


def cli_args(path: Path) -> list[str]:
    return [a for k, v in example_params(path).items() for a in ("--param", f"{k}={v}")]


def ids(paths) -> list[str]:
    return [p.stem for p in paths]


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`dpn-synth argv` in-process: (exit status, stdout, stderr), usage errors included."""
    from hls.cli import main

    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return rc, out, err


#: `u` is loaded, each element for one row slab, and stored; every row reads all of `w`, which the
#: second nest then overwrites; `v` goes from the first nest to the second (through memory when the
#: local words do not hold it).  Which of them get a read channel per slab: tests/dpn/test_read_ports.py;
#: the RTL under back-pressure: tests/rtl/test_throughput.py.
STORED_READS = """
#define N {n}
void stored_reads(float A[N][N], float u[N], float v[N], float w[N])
{{
  int i, j;
#pragma scop
  for (i = 0; i < N; i++) {{
    v[i] = u[i];
    for (j = 0; j < N; j++)
      u[i] = u[i] + A[i][j] * w[j];
  }}
  for (j = 0; j < N; j++)
    w[j] = w[j] * v[N - 1 - j];
#pragma endscop
}}
"""
