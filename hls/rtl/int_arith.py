"""Pipelined integer division and remainder (C semantics) for the operator library.

`OPERATORS` maps ``"div.i32"``, ``"rem.u64"``, ... (``i``/``u`` = signed/unsigned, widths 8, 16,
32, 64) to `OperatorSpec`s rendered from ``hw_templates/int/divide.v.j2``.  A combinational W-bit
divider is a W-deep chain of W-bit subtractors, far too slow for one clock cycle; here each
subtractor gets its own pipeline stage instead, so the operator accepts one operation per cycle.
One template serves both results (``remainder`` selects which one reaches ``y``) so that quotient
and remainder can never disagree on the sign or corner rules.

Semantics (checked against `c_divide` in ``tests/rtl/int``):

* the quotient truncates toward zero, the remainder has the sign of the dividend (C99 6.5.5);
* ``a / 0`` and ``a % 0`` (undefined in C, a trap on x86) give all ones (-1 signed, 2^W - 1
  unsigned) and ``a``; ``INT_MIN / -1`` gives ``INT_MIN`` and ``INT_MIN % -1`` gives 0.  These
  are the RISC-V M-extension results, which restoring division on magnitudes produces with one
  gate of help (no negation of the all-ones quotient when the divisor is 0).
"""

from __future__ import annotations

from .operators import OperatorSpec

__all__ = ["WIDTHS", "OPERATORS", "divide_latency", "c_divide"]

WIDTHS = (8, 16, 32, 64)


def divide_latency(width: int) -> int:
    """Magnitudes (1 stage), one stage per quotient bit, the sign fix (1 stage)."""
    return width + 2


def c_divide(a: int, b: int, width: int, signed: bool) -> tuple[int, int]:
    """The (quotient, remainder) the operator computes, as W-bit patterns, for W-bit patterns a, b.

    The reference model of the tests, kept beside the hardware so that the documented
    division-by-zero and overflow results live in one place."""
    mask = (1 << width) - 1
    a &= mask
    b &= mask
    if signed:
        a = a - (1 << width) if a >> (width - 1) else a
        b = b - (1 << width) if b >> (width - 1) else b
    if b == 0:
        return mask, a & mask
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    r = a - q * b
    return q & mask, r & mask


def _spec(op: str, width: int, signed: bool) -> OperatorSpec:
    key = f"{op}.{'i' if signed else 'u'}{width}"
    module = f"dpn_{op}_{'i' if signed else 'u'}{width}"
    latency = divide_latency(width)
    return OperatorSpec(
        name=key, template="int/divide.v.j2", module=module, latency=latency,
        inputs=(("a", width), ("b", width)), output_width=width,
        context={"width": width, "is_signed": int(signed), "remainder": int(op == "rem"), "latency": latency},
    )


OPERATORS: dict[str, OperatorSpec] = {
    spec.name: spec
    for width in WIDTHS
    for signed in (True, False)
    for op in ("div", "rem")
    for spec in [_spec(op, width, signed)]
}


def reciprocal(divisor: int, width: int) -> tuple[int, int]:
    """(m, s) with floor(x / d) == (x * m) >> s for every 0 <= x < 2**width, d = `divisor` > 0.

    Division by a constant needs no divider: with l = ceil(log2 d) and m = ceil(2**(width + l) / d)
    (at most width + 1 bits), m * d lies in [2**(width+l), 2**(width+l) + 2**l], which makes the
    truncated product exact over the whole range (Granlund and Montgomery, PLDI 1994, Theorem 4.2).
    The hardware is one constant multiplier, so the quotient costs no pipeline stages."""
    assert divisor > 0
    shift = width + (divisor - 1).bit_length()
    return -(-(1 << shift) // divisor), shift


def const_divide(x: int, divisor: int, width: int, signed: bool) -> tuple[int, int]:
    """(quotient, remainder) as W-bit patterns, computed exactly the way the datapath's constant
    division does (`datapath.build`): the magnitude through `reciprocal`, then the C signs."""
    mask = (1 << width) - 1
    x &= mask
    neg_x = signed and x >> (width - 1) == 1
    neg_d = signed and divisor < 0
    ax = (-x) & mask if neg_x else x
    m, s = reciprocal(abs(divisor), width)
    q = ((ax * m) >> s) & mask
    if neg_x != neg_d:
        q = (-q) & mask
    r = (x - q * divisor) & mask
    return q, r
