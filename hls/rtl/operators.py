"""The operator library interface: pipelined datapath operators that the datapath generator instantiates.

Every operator is a Verilog module rendered from a template in `hw_templates/`, with the ports
`clk`, `en` (the pipeline advances only when `en` is 1: the whole process stalls together), the
operand inputs and one output `y`.  An operator with `enables` > 1 takes `en` as a vector of that
many copies of the same enable, one per register stage (`en[k]` loads the registers of stage k + 1),
so that no single net drives the enables of the whole pipeline: the process gives each bit a
register of its own, placed beside its stage (docs/rtl-timing.md).  The result for operands presented on an enabled cycle appears
on `y` after exactly `latency` further enabled cycles (latency 0 = combinational).  Results are
bit-exact with x86-64 SSE (round to nearest even, subnormals kept; any NaN is accepted where a NaN
is due) for floating point (`fp_arith.py`, `fp_convert.py`), and with C for the integer divider
(`int_arith.py`; division by zero and INT_MIN / -1, which trap on x86, give documented results).
Ports are unsigned vectors: the datapath reinterprets a signed result with `$signed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OperatorSpec:
    name: str  # registry key, e.g. "fadd.f64"
    template: str  # template path under hw_templates/, e.g. "fp/fadd.v.j2"
    module: str  # module name the template is rendered with
    latency: int
    inputs: tuple[tuple[str, int], ...]  # (port, width)
    output_width: int
    context: dict = field(default_factory=dict, compare=False)  # extra template context
    # timing (`delay.py`): the latest arrival (ns after the clock edge) of the operands at which the
    # operator's first stage still meets the clock target (None: operands straight from registers),
    # and the arrival of `y` after its last register
    in_budget: float | None = field(default=None, compare=False)
    out_arrival: float | None = field(default=None, compare=False)
    enables: int = field(default=1, compare=False)  # width of `en`: copies of the enable, one per stage
    # DSP48E1 blocks (xc7) of its partial products (`int_arith.dsp_blocks`): what `--dsp-budget` counts
    dsp: int = field(default=0, compare=False)
    # library modules it instantiates (the multiplier's partial product, `library.MULT18_MODULE`),
    # each written once per design beside the operators (`library.py`)
    uses: tuple[str, ...] = field(default=(), compare=False)

    def render(self) -> str:
        from .render import render

        return render(self.template, module_name=self.module, **self.context)

    def files(self, target: str = "generic") -> dict[str, str]:
        """File name -> Verilog: the operator's module and the library modules it instantiates."""
        from .library import library_files

        return {f"{self.module}.v": self.render(), **library_files(self.uses, target)}
