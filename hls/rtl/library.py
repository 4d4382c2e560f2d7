"""Library modules: small modules that operator modules instantiate, written once per design.

The pipelined multiplier (`int_arith.multiplier`, and the significand product of `fmul`) is built
of partial products, one `dpn_mult18` each: a DSP-sized multiplier with its operand and product
registers.  The generic implementation (`hw_templates/int/mult18.v.j2`) is what `rtl/` holds and
what Verilator simulates; Vivado and Quartus pack its registers into their DSP blocks.  Yosys's ECP5
flow does not, and a MULT18X18D used combinationally between fabric registers in the DSP column
limited every design with a multiplier to about 107 MHz (docs/rtl-timing.md), so the ECP5 flow
(`hls/pnr.py`) and the `ecp5/` kit take the target's own implementation of the same module
(`for_target`): ports and cycle behaviour equal, the registers inside the block.

A floating-point multiply by a constant whose significand is a power of two (`0.5f * y`) has
partial products of `dpn_mult18k` instead: the same generic module under another name, which no
target replaces.  Synthesis flattens the design and folds the constant into it (the product becomes
wiring), which it cannot do through a MULT18X18D instance: heat-3d's `0.125 *` and `2.0 *` would
take nine blocks each.  (An integer constant multiplier is built at the constant's width instead,
`datapath.times_const`, so that none of its partial products multiplies a zero chunk.)
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .render import render

__all__ = ["MULT18_MODULE", "MULT18_CONST_MODULE", "TARGETS", "library_files", "target_files", "for_target"]

MULT18_MODULE = "dpn_mult18"
MULT18_CONST_MODULE = "dpn_mult18k"  # the partial products of a multiplier with a constant operand

#: module -> template, per target ("generic": the RTL of `rtl/`)
_TEMPLATES = {
    "generic": {MULT18_MODULE: "int/mult18.v.j2", MULT18_CONST_MODULE: "int/mult18.v.j2"},
    "ecp5": {MULT18_MODULE: "ecp5/mult18.v.j2"},
}
TARGETS = tuple(_TEMPLATES)


def library_files(modules: Iterable[str], target: str = "generic") -> dict[str, str]:
    """File name -> Verilog of the library `modules`, implemented for `target`."""
    table = _TEMPLATES[target]
    return {f"{m}.v": render(table[m], module_name=m) for m in sorted(set(modules))}


def target_files(files: Mapping[str, str], target: str) -> dict[str, str]:
    """The files among `files` that `target` implements differently: file name -> its Verilog."""
    mods = [m for m in _TEMPLATES[target] if f"{m}.v" in files]
    return library_files(mods, target) if target != "generic" else {}


def for_target(files: Mapping[str, str], target: str) -> dict[str, str]:
    """`files` (name -> Verilog) with each library module replaced by `target`'s implementation."""
    return {**files, **target_files(files, target)}
