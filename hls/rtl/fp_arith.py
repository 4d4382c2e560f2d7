"""Pipelined IEEE-754 binary32/binary64 operators (x86-64 SSE semantics) for the operator library.

`OPERATORS` maps registry keys such as ``"fadd.f32"`` or ``"flt.f64"`` to `OperatorSpec`s.  One
template per operator family serves both precisions; everything that depends on the format (the
field widths, the widths of shift amounts and leading-zero counts, the multiplier pipeline depth)
is computed here and handed to the template.

Semantics (checked bit for bit against numpy and glibc in ``tests/rtl/fp``):

* ``fadd``/``fsub``/``fmul``: round to nearest even, subnormals kept, overflow to +-inf; a NaN
  operand gives the first NaN operand quieted (``fsub``: b as given, not negated), an invalid
  operation (inf - inf, 0 * inf) the x86 default NaN (sign 1, quiet, zero payload).
* ``flt``/``fle``/``fgt``/``fge``/``feq``/``fne``: C comparisons, 1-bit result; false when either
  operand is NaN except ``fne``, which is true; -0 == +0.
* ``fmin``/``fmax``: glibc's fmin/fmax on x86-64: a quiet NaN operand is ignored (the other operand
  is returned), two NaNs or a signalling NaN give the first NaN operand quieted; equal operands
  (including -0 and +0) give b.
* ``fneg``/``fabs``: sign-bit operations only (NaN payloads kept, fneg flips a NaN's sign, fabs
  clears it), combinational.
"""

from __future__ import annotations

from dataclasses import dataclass

from .operators import OperatorSpec
from .render import render

__all__ = [
    "FpFormat",
    "FORMATS",
    "OPERATORS",
    "FADD_LATENCY",
    "FMUL_PRODUCT_STAGES",
    "FCMP_LATENCY",
    "FMINMAX_LATENCY",
    "FNEG_ABS_LATENCY",
    "CMP_PREDICATES",
]


@dataclass(frozen=True)
class FpFormat:
    """An IEEE-754 binary interchange format."""

    name: str  # "f32", "f64"
    exp_bits: int
    frac_bits: int

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.frac_bits

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1


FORMATS: dict[str, FpFormat] = {
    "f32": FpFormat("f32", 8, 23),
    "f64": FpFormat("f64", 11, 52),
}

# Register stages per family.  fadd: unpack/compare, order/align, add, count, normalize, round (one each).
FADD_LATENCY = 6
# fmul: unpack + count leading zeros of subnormal significands, normalize them, the product on the
# pipelined multiplier of `int_arith.multiplier` (its stages depend on the clock target: at 150 MHz
# 3 for binary32, 5 for binary64), then normalize/exponent, subnormal shift, round.
FMUL_PRODUCT_STAGES = {"f32": 2, "f64": 3}  # the fewest stages the product gets (slow clock targets)
FCMP_LATENCY = 1
FMINMAX_LATENCY = 1
FNEG_ABS_LATENCY = 0

#: Comparison predicate -> result for (unordered, greater, equal, less), as a 4-bit mask.
CMP_PREDICATES: dict[str, int] = {
    "lt": 0b0001,
    "le": 0b0011,
    "gt": 0b0100,
    "ge": 0b0110,
    "eq": 0b0010,
    "ne": 0b1101,
}


def _clog2(n: int) -> int:
    """Bits needed to count 0 .. n - 1 (at least 1)."""
    return max(1, (n - 1).bit_length())


def _product(fmt: FpFormat, constant_operand: bool = False):
    from .int_arith import multiplier

    sig = fmt.frac_bits + 1
    return multiplier(sig, sig, 2 * sig, constant_operand)


def product_stages(fmt: FpFormat) -> int:
    """Register stages of the significand product at the current clock target (`clock.py`)."""
    return max(FMUL_PRODUCT_STAGES[fmt.name], _product(fmt).latency)


def fmul_latency(fmt: FpFormat) -> int:
    return 5 + product_stages(fmt)


def _base_context(fmt: FpFormat) -> dict:
    return {"exp_bits": fmt.exp_bits, "frac_bits": fmt.frac_bits, "width": fmt.width}


def _fadd_context(fmt: FpFormat, subtract: bool) -> dict:
    work = fmt.frac_bits + 4  # hidden + fraction + guard, round, sticky
    lzc_bits = _clog2(work + 2)  # count 0 .. work + 1 over work + 1 bits and a stop bit
    return _base_context(fmt) | {
        "subtract": int(subtract),
        "align_bits": work.bit_length(),  # the shift saturates at `work`
        "lzc_bits": lzc_bits,
        "lzc_pad_bits": 1 << lzc_bits,
        "latency": FADD_LATENCY,
    }


def _fmul_context(fmt: FpFormat, constant_operand: bool = False) -> dict:
    sig = fmt.frac_bits + 1
    lzc_bits = _clog2(sig + 2)  # count 0 .. sig over sig bits and a stop bit
    shift_max = sig + 1  # a larger subnormal shift leaves nothing at or above the round bit
    prod = _product(fmt, constant_operand)
    stages = product_stages(fmt)
    body = list(prod.context["body"])
    if stages > prod.latency:  # a slow clock target: the product gets at least FMUL_PRODUCT_STAGES
        body = _delayed(body, prod.latency, stages - prod.latency, 2 * sig)
    return _base_context(fmt) | {
        "bias": fmt.bias,
        "exp_calc_bits": fmt.exp_bits + 2,  # signed exponent before normalization
        "lzc_bits": lzc_bits,
        "lzc_pad_bits": 1 << lzc_bits,
        "shift_bits": shift_max.bit_length(),
        "shift_max": shift_max,
        "sticky_groups": (2 * sig + 7) // 8,
        "product_stages": stages,
        "product_module": "",  # filled in by `_build_operators` with the module name
        "product_context": {**prod.context, "latency": stages, "body": body},
        "latency": fmul_latency(fmt),
    }


def _delayed(body: list[str], latency: int, extra: int, width: int) -> list[str]:
    """A multiplier body of `latency` stages whose output goes through `extra` more registers (stage
    latency + k on its enable copy en[latency + k])."""
    out, regs = [], []
    for line in body:
        if line.startswith("assign y = "):
            prev = line[len("assign y = "):-1]
            for k in range(extra):
                out.append(f"reg [{width - 1}:0] yd{k};")
                regs.append(f"  if (en[{latency + k}]) yd{k} <= {prev};")
                prev = f"yd{k}"
            out.append(f"assign y = {prev};")
        else:
            out.append(line)
    return out + ["always @(posedge clk) begin", *regs, "end"]


def _spec(key: str, template: str, module: str, latency: int, n_inputs: int, out_width: int,
          context: dict, width: int, enables: int = 1, dsp: int = 0,
          uses: tuple[str, ...] = ()) -> OperatorSpec:
    inputs = (("a", width), ("b", width))[:n_inputs]
    return OperatorSpec(
        name=key, template=template, module=module, latency=latency, inputs=inputs,
        output_width=out_width, context=context, enables=enables, dsp=dsp, uses=uses,
    )


def _build_operators() -> dict[str, OperatorSpec]:
    ops: dict[str, OperatorSpec] = {}
    for fname, fmt in FORMATS.items():
        w = fmt.width
        for op, sub in (("fadd", False), ("fsub", True)):
            ops[f"{op}.{fname}"] = _spec(
                f"{op}.{fname}", "fp/fadd.v.j2", f"dpn_{op}_{fname}", FADD_LATENCY, 2, w,
                _fadd_context(fmt, sub), w, enables=FADD_LATENCY,
            )
        # `fmul.<fmt>.k`: by a constant whose significand is a power of two (`0.5f * y`), which
        # synthesis folds into the product (`library.MULT18_CONST_MODULE`); the same module otherwise
        for key, const in ((f"fmul.{fname}", False), (f"fmul.{fname}.k", True)):
            ctx = _fmul_context(fmt, const)
            module = f"dpn_fmul_{fname}" + ("_k" if const else "")
            product = ctx.pop("product_context")
            ctx["product_module"] = render("int/multiply.v.j2", module_name=f"{module}_prod", **product)
            prod = _product(fmt, const)
            ops[key] = _spec(key, "fp/fmul.v.j2", module, fmul_latency(fmt), 2, w, ctx, w,
                             enables=fmul_latency(fmt), dsp=0 if const else prod.dsp, uses=prod.uses)
        for pred, mask in CMP_PREDICATES.items():
            ops[f"f{pred}.{fname}"] = _spec(
                f"f{pred}.{fname}", "fp/fcmp.v.j2", f"dpn_f{pred}_{fname}", FCMP_LATENCY, 2, 1,
                _base_context(fmt) | {"predicate": pred, "pred_mask": f"{mask:04b}"}, w,
            )
        for op in ("fmin", "fmax"):
            ops[f"{op}.{fname}"] = _spec(
                f"{op}.{fname}", "fp/fminmax.v.j2", f"dpn_{op}_{fname}", FMINMAX_LATENCY, 2, w,
                _base_context(fmt) | {"is_max": int(op == "fmax")}, w,
            )
        for op in ("fneg", "fabs"):
            ops[f"{op}.{fname}"] = _spec(
                f"{op}.{fname}", "fp/fneg_abs.v.j2", f"dpn_{op}_{fname}", FNEG_ABS_LATENCY, 1, w,
                _base_context(fmt) | {"is_abs": int(op == "fabs")}, w,
            )
    return ops


_BY_CLOCK: dict[float, dict[str, OperatorSpec]] = {}


def operators() -> dict[str, OperatorSpec]:
    """The operators for the current clock target (`clock.py`: the product stages of fmul follow it)."""
    from .clock import clock_mhz

    key = clock_mhz()
    if key not in _BY_CLOCK:
        _BY_CLOCK[key] = _build_operators()
    return _BY_CLOCK[key]


OPERATORS: dict[str, OperatorSpec] = operators()
