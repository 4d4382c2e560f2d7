"""Bit-exact evaluation of expression trees, compiled once to Python closures.

Shared by the reference interpreter and the DPN simulator so that both agree with each other by
construction; both are checked against gcc.  Integers are Python ints wrapped to their C type;
floating-point values are numpy float32/float64 scalars, whose arithmetic is IEEE-754 with
round-to-nearest-even, as SSE on x86-64 computes it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import islpy as isl
import numpy as np

from . import expr as E
from .types import ScalarType

if TYPE_CHECKING:
    from .program import PolyProgram

Value = object
Evaluator = Callable[[Sequence[int], Sequence[Value]], Value]


class EvaluationError(Exception):
    """A runtime fault of the kernel itself (e.g. integer division by zero)."""


def to_value(v: object, t: ScalarType) -> Value:
    """A Python/numpy scalar of type `t` (what `compile_expr` closures produce and consume)."""
    if t.is_int:
        return t.wrap(int(v))
    return t.dtype.type(v)


def _linear_form(pa: isl.PwAff, params: Mapping[str, int]) -> tuple[list[int], int]:
    pieces = pa.get_pieces()
    if len(pieces) != 1:
        raise NotImplementedError(f"piecewise affine value {pa}")
    aff = pieces[0][1]
    if not aff.get_denominator_val().is_one():
        raise NotImplementedError(f"affine value with a division: {aff}")
    n = aff.dim(isl.dim_type.in_)
    coefs = [int(aff.get_coefficient_val(isl.dim_type.in_, k).to_python()) for k in range(n)]
    c0 = int(aff.get_constant_val().to_python())
    for k in range(aff.dim(isl.dim_type.param)):
        c = int(aff.get_coefficient_val(isl.dim_type.param, k).to_python())
        if c:
            c0 += c * params[aff.get_dim_name(isl.dim_type.param, k)]
    return coefs, c0


def _cvtt(f: float, bits: int) -> int:
    """x86 cvttsd2si/cvttss2si: truncation; NaN and out-of-range give the "integer indefinite" value."""
    if math.isnan(f) or math.isinf(f) or not (-(2.0 ** (bits - 1)) <= math.trunc(f) < 2.0 ** (bits - 1)):
        return -(1 << (bits - 1))
    return int(f)


def _int_cast(v: Value, src: ScalarType, dst: ScalarType) -> int:
    if src.is_int:
        return dst.wrap(int(v))
    f = float(v)
    if dst.bits == 64 and not dst.signed:
        # gcc: below 2^63 convert directly, else convert x - 2^63 and flip the top bit
        if not f >= 2.0 ** 63:  # NaN takes this branch too
            return dst.wrap(_cvtt(f, 64))
        return dst.wrap(_cvtt(f - 2.0 ** 63, 64) ^ (1 << 63))
    if dst.bits == 64 or (dst.bits == 32 and not dst.signed):
        return dst.wrap(_cvtt(f, 64))  # uint32 goes through a 64-bit conversion
    return dst.wrap(_cvtt(f, 32))  # 32-bit and narrower: a 32-bit conversion, then truncation


def _float_cast(v: Value, src: ScalarType, dst: ScalarType) -> Value:
    if src.is_int:
        # Convert with one correct rounding (a detour through double would round twice).
        return np.array([int(v)], dtype=src.dtype).astype(dst.dtype)[0]
    return dst.dtype.type(v)


def _div(a: int, b: int, t: ScalarType) -> int:
    if b == 0:
        raise EvaluationError("integer division by zero")
    q = abs(a) // abs(b)
    return t.wrap(q if (a >= 0) == (b >= 0) else -q)


def _mod(a: int, b: int, t: ScalarType) -> int:
    if b == 0:
        raise EvaluationError("integer modulo by zero")
    return t.wrap(a - _div(a, b, t) * b) if t.signed else a % b


def _shift(op: str, a: int, b: int, t: ScalarType) -> int:
    b &= t.bits - 1  # x86 masks the count, which is what gcc -O0 code does
    if op == "<<":
        return t.wrap(a << b)
    if t.signed:
        return t.wrap(a >> b)
    return t.wrap((a & ((1 << t.bits) - 1)) >> b)


_FLOAT_BIN = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
}
_INT_BIN = {
    "+": lambda a, b, t: t.wrap(a + b), "-": lambda a, b, t: t.wrap(a - b), "*": lambda a, b, t: t.wrap(a * b),
    "/": _div, "%": _mod, "&": lambda a, b, t: t.wrap(a & b), "|": lambda a, b, t: t.wrap(a | b),
    "^": lambda a, b, t: t.wrap(a ^ b),
}
_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def compile_expr(
    e: E.Expr, read_slots: Mapping[str, int], scalars: Mapping[str, Value], params: Mapping[str, int]
) -> Evaluator:
    """Compile `e` to `f(iteration, read_values) -> value`.

    `read_slots` gives the position of each read access's value in `read_values`; `scalars` the
    values of scalar arguments; `params` the bound structure parameters."""

    def comp(e: E.Expr) -> Evaluator:
        t = e.type
        if isinstance(e, E.Const):
            v = to_value(e.value, t)
            return lambda it, rv: v
        if isinstance(e, E.ArrayRead):
            slot = read_slots[e.access]
            return lambda it, rv: rv[slot]
        if isinstance(e, E.ScalarArg):
            v = to_value(scalars[e.name], t)
            return lambda it, rv: v
        if isinstance(e, E.AffineValue):
            coefs, c0 = _linear_form(e.expr, params)
            nz = [(k, c) for k, c in enumerate(coefs) if c]
            return lambda it, rv: t.wrap(c0 + sum(c * it[k] for k, c in nz))
        if isinstance(e, E.Cast):
            src = e.operand.type
            f = comp(e.operand)
            if t.is_int:
                return lambda it, rv: _int_cast(f(it, rv), src, t)
            return lambda it, rv: _float_cast(f(it, rv), src, t)
        if isinstance(e, E.Unary):
            f = comp(e.operand)
            if e.op == "-":
                return (lambda it, rv: -f(it, rv)) if t.is_float else (lambda it, rv: t.wrap(-f(it, rv)))
            if e.op == "~":
                return lambda it, rv: t.wrap(~f(it, rv))
            raise AssertionError(e.op)
        if isinstance(e, E.Binary):
            fa, fb = comp(e.lhs), comp(e.rhs)
            op = e.op
            if op in E.COMPARE_OPS:
                cmp = _CMP[op]
                return lambda it, rv: int(bool(cmp(fa(it, rv), fb(it, rv))))
            if op == "&&":
                return lambda it, rv: int(bool(fa(it, rv)) and bool(fb(it, rv)))
            if op == "||":
                return lambda it, rv: int(bool(fa(it, rv)) or bool(fb(it, rv)))
            if op in E.SHIFT_OPS:
                return lambda it, rv: _shift(op, fa(it, rv), fb(it, rv), t)
            if t.is_float:
                g = _FLOAT_BIN[op]
                return lambda it, rv: g(fa(it, rv), fb(it, rv))
            h = _INT_BIN[op]
            return lambda it, rv: h(fa(it, rv), fb(it, rv), t)
        if isinstance(e, E.Select):
            fc, ft, ff = comp(e.cond), comp(e.if_true), comp(e.if_false)
            return lambda it, rv: ft(it, rv) if fc(it, rv) else ff(it, rv)
        if isinstance(e, E.Call):
            fs = [comp(a) for a in e.args]
            dt = t.dtype.type
            if e.func == "sqrt":
                return lambda it, rv: dt(np.sqrt(fs[0](it, rv)))
            if e.func == "fabs":
                return lambda it, rv: dt(np.abs(fs[0](it, rv)))
            if e.func == "fmin":
                return lambda it, rv: dt(np.fmin(fs[0](it, rv), fs[1](it, rv)))
            if e.func == "fmax":
                return lambda it, rv: dt(np.fmax(fs[0](it, rv), fs[1](it, rv)))
        raise AssertionError(f"cannot evaluate {e!r}")

    return comp(e)


def scalar_values(program: "PolyProgram", inputs: Mapping[str, object]) -> dict[str, Value]:
    """The value of every scalar input of the hardware: the kernel's scalar arguments from `inputs`, and
    its hoisted scalars (`PolyProgram.hoisted`) from `inputs` when it supplies them (`sim.inputs.KernelInputs`
    does), else computed by gcc, since only gcc's own evaluation of `exp(-alpha)` is bit-exact."""
    out: dict[str, Value] = {}
    missing: list[str] = []
    for a in program.args:
        if a.kind != "scalar":
            continue
        try:
            out[a.name] = inputs[a.name]
        except KeyError:
            if not a.hoisted:
                raise
            missing.append(a.name)
    if missing:
        from sim.hoisted import hoisted_values  # the oracle's gcc build; imported only when needed

        computed = hoisted_values(program, inputs)
        out.update((n, computed[n]) for n in missing)
    return out
