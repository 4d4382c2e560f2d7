"""Values of hoisted scalars (`hls.poly.program.HoistedScalar`), computed by gcc on the host.

A hoisted scalar stands for a subexpression of the kernel that depends only on scalar arguments
(`exp(-alpha)`), so its value must be bit-identical to what the gcc-compiled kernel computes.  Python
cannot promise that for libm functions, hence a tiny C function evaluating the original source text,
compiled with the reference's flags and called through ctypes:

    void dpn_hoisted(double alpha, double beta, double *dpn_out0, double *dpn_out1)
    { *dpn_out0 = (exp(-alpha)); *dpn_out1 = ((alpha * beta) + 1.0); }

The same source is what a standalone testbench ships and compiles at run time (`write_host_files`).
"""

from __future__ import annotations

import ctypes
import functools
import json
from pathlib import Path
from typing import Mapping

from hls.poly.program import PolyProgram
from hls.shared_object import compile_shared_object, default_cache_dir

from .gcc_ref import _CTYPE_TO_CTYPES, GCC_FLAGS

ENTRY = "dpn_hoisted"


def host_inputs(program: PolyProgram) -> list[tuple[str, str]]:
    """(name, C type) of the arguments of `dpn_hoisted`: every scalar a hoisted expression reads, in
    the kernel's declaration order."""
    used = {n for h in program.hoisted for n in h.inputs}
    return [(a.name, a.type.name) for a in program.c_args if a.name in used]


def host_source(program: PolyProgram) -> str:
    """The C translation unit defining `dpn_hoisted` (deterministic for a given program)."""
    ins = host_inputs(program)
    params = [f"{t} {n}" for n, t in ins] + [f"{h.type.name} *dpn_out{k}" for k, h in enumerate(program.hoisted)]
    body = [f"  *dpn_out{k} = ({h.c_text});  /* {h.name}: {h.loc} */" for k, h in enumerate(program.hoisted)]
    return "\n".join([
        f"/* dpn-synth: parameter-only subexpressions of kernel '{program.name}', computed once on the host */",
        "#include <stdint.h>",
        "#include <math.h>",
        "",
        f"void {ENTRY}({', '.join(params) or 'void'})",
        "{",
        *body,
        "}",
        "",
    ])


@functools.lru_cache(maxsize=64)
def _library(source: str) -> ctypes.CDLL:
    so_path, _ = compile_shared_object(source, GCC_FLAGS, default_cache_dir())
    return ctypes.CDLL(so_path)


def call_host(source: str, inputs: list[tuple[str, str]], outputs: list[str], values: Mapping[str, object],
              library: ctypes.CDLL | None = None) -> list[int | float]:
    """Call `dpn_hoisted` of `source` (or of an already loaded `library`) on `values`; `outputs` are the
    C types of the results, in order."""
    lib = library if library is not None else _library(source)
    fn = getattr(lib, ENTRY)
    fn.restype = None
    cells = [_CTYPE_TO_CTYPES[t]() for t in outputs]
    fn.argtypes = [_CTYPE_TO_CTYPES[t] for _, t in inputs] + [ctypes.POINTER(type(c)) for c in cells]
    args = [_CTYPE_TO_CTYPES[t](float(values[n]) if t in ("float", "double") else int(values[n])) for n, t in inputs]
    fn(*args, *(ctypes.byref(c) for c in cells))
    return [c.value for c in cells]


def hoisted_values(program: PolyProgram, values: Mapping[str, object]) -> dict[str, int | float]:
    """The value of every hoisted scalar for the kernel arguments `values` (structure parameters may
    also come from the program's bound values)."""
    if not program.hoisted:
        return {}
    env: dict[str, object] = dict(program.param_values())
    for n, _ in host_inputs(program):
        if n not in env or n in values:
            env[n] = values[n]
    out = call_host(host_source(program), host_inputs(program), [h.type.name for h in program.hoisted], env)
    return {h.name: v for h, v in zip(program.hoisted, out)}


def write_host_files(program: PolyProgram, directory: Path) -> list[Path]:
    """`hoisted.c` and `hoisted.json` (which kernel arguments go in, which top ports come out) for a
    standalone testbench, which compiles the C with gcc at run time; nothing without hoisted scalars."""
    if not program.hoisted:
        return []
    directory = Path(directory)
    c_file, meta = directory / "hoisted.c", directory / "hoisted.json"
    c_file.write_text(host_source(program))
    bound = {p.name: p.value for p in program.params if p.value is not None}
    meta.write_text(json.dumps({
        "flags": list(GCC_FLAGS),
        # structure parameters are bound at compile time (no port): their value is given here
        "inputs": [{"name": n, "type": t, **({"value": bound[n]} if n in bound else {"port": f"arg_{n}"})}
                   for n, t in host_inputs(program)],
        "outputs": [{"name": h.name, "type": h.type.name, "port": f"arg_{h.name}", "text": h.text, "loc": str(h.loc)}
                    for h in program.hoisted],
    }, indent=1) + "\n")
    return [c_file, meta]
