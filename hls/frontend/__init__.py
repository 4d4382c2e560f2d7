"""C frontend: preprocessing, parsing, affine extraction, bounds checks, dataflow.

Input: a C file.  Output: a `PolyProgram` (hls.poly.program), optionally with bound parameters and
its exact dataflow.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..poly.program import PolyProgram
from .dataflow import analyze_dataflow
from .extract import extract
from .params import bind_params, check_bounds, restrict_params
from .parse import ParsedKernel, parse_kernel

__all__ = ["ParsedKernel", "PolyProgram", "analyze_dataflow", "bind_params", "check_bounds", "extract",
           "load_kernel", "parse_kernel"]


def load_kernel(path: str, *, include_dirs: Sequence[str] = (), defines: Sequence[str] = (),
                function: str | None = None, params: Mapping[str, int] | None = None,
                bind: bool = True) -> tuple[ParsedKernel, PolyProgram]:
    """Parse, extract, check bounds, optionally bind parameters, and run the dataflow analysis."""
    kernel = parse_kernel(path, include_dirs=include_dirs, defines=defines, function=function)
    program = check_bounds(extract(kernel.model, kernel.typedefs, kernel.path, kernel.scop, kernel.file_scope))
    if bind:
        program = bind_params(program, dict(params or {}))
    elif params:
        program = restrict_params(program, dict(params))
    return kernel, analyze_dataflow(program)
