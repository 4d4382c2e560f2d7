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

from .library import MULT18_CONST_MODULE, MULT18_MODULE
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
        enables=latency,
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


# ------------------------------------------------------------------------------------------------
# pipelined multiplier


def _mul_body(a_width: int, b_width: int, y_width: int, chunk: int, budget: float,
              registered_inputs: bool, part: str) -> tuple[list[str], int, tuple[tuple[int, int], ...], float]:
    """Verilog lines of `multiplier`, its latency, its partial products' operand widths and the
    arrival of `y`.  `part`: the library module of a partial product."""
    from . import delay

    lines: list[str] = []
    terms: list[tuple[str, int, int]] = []  # (signal, width, offset): the sum is sum(signal << offset)
    shapes: list[tuple[int, int]] = []
    ce_in, ce_out = ("en[0]", "en[1]") if registered_inputs else ("1'b0", "en[0]")
    for i in range(-(-a_width // chunk)):
        a_lo, a_hi = i * chunk, min(a_width, (i + 1) * chunk)
        for j in range(-(-b_width // chunk)):
            b_lo, b_hi = j * chunk, min(b_width, (j + 1) * chunk)
            off = a_lo + b_lo
            if off >= y_width:
                continue
            w = min(a_hi - a_lo + b_hi - b_lo, y_width - off)
            # one library module a partial product: its operand registers (at fast clock targets,
            # where the route into the DSP column and the multiplier do not fit one stage) and its
            # product register, which the ECP5 flow puts inside the MULT18X18D (`library.py`)
            lines.append(f"wire [{w - 1}:0] p{i}_{j};")
            lines.append(f"{part} #(.AW({a_hi - a_lo}), .BW({b_hi - b_lo}), .PW({w}), "
                         f".IN_REGS({int(registered_inputs)})) u_p{i}_{j} (.clk(clk), .ce_in({ce_in}), "
                         f".ce_out({ce_out}), .a(a[{a_hi - 1}:{a_lo}]), .b(b[{b_hi - 1}:{b_lo}]), .p(p{i}_{j}));")
            terms.append((f"p{i}_{j}", w, off))
            shapes.append((a_hi - a_lo, b_hi - b_lo))
    stage_regs: list[list[tuple[str, str]]] = [[], []] if registered_inputs else [[]]
    # the products leave the DSPs' output registers: later than a fabric register's output
    latency, arrival, count, logic_since_reg = len(stage_regs), delay.DSP_REG, 0, False
    while len(terms) > 1:
        terms.sort(key=lambda t: (t[2], -t[1]))
        widest = 0
        pairs = [(terms[k], terms[k + 1]) for k in range(0, len(terms) - 1, 2)]
        rest = terms[len(pairs) * 2:]
        plan = []
        for (n1, w1, o1), (n2, w2, o2) in pairs:
            d = o2 - o1
            if d >= w1:  # no overlap: a concatenation
                w = min(y_width - o1, d + w2)
                gap = f"{d - w1}'b0, " if d > w1 else ""
                plan.append((w, o1, (f"{{{n2}, {gap}{n1}}}", None), 0))
                continue
            hi_w = min(y_width - o2, max(w1 - d, w2) + 1)
            top = f"{n1}[{w1 - 1}:{d}]" if d else n1
            # the sum is its own wire: inside a concatenation it would be self-determined, losing the carry
            plan.append((d + hi_w, o1, (f"{top} + {n2}", f"{n1}[{d - 1}:0]" if d else None), hi_w))
            widest = max(widest, hi_w)
        if widest and arrival + delay.add(widest) > budget and logic_since_reg:
            # register the terms of this level first
            latency += 1
            stage_regs.append([])
            for k, (n, w, o) in enumerate(terms):
                r = f"q{count}_{k}"
                lines.append(f"reg [{w - 1}:0] {r};")
                stage_regs[-1].append((r, n))
            renamed = {n: f"q{count}_{k}" for k, (n, w, o) in enumerate(terms)}
            count += 1
            arrival, logic_since_reg = delay.REG, False
            terms = [(renamed[n], w, o) for n, w, o in terms]
            continue
        new_terms = []
        for k, (w, o, (expr, low), hi_w) in enumerate(plan):
            s = f"s{count}_{k}"
            if low is None:  # a concatenation or a plain sum, truncated to the term width
                lines.append(f"wire [{w - 1}:0] {s} = {expr};")
            else:
                lines.append(f"wire [{hi_w - 1}:0] h{count}_{k} = {expr};")
                lines.append(f"wire [{w - 1}:0] {s} = {{h{count}_{k}, {low}}};")
            new_terms.append((s, w, o))
        count += 1
        if widest:
            arrival += delay.add(widest)
            logic_since_reg = True
        terms = new_terms + rest
    name, w, off = terms[0]
    if logic_since_reg:
        latency += 1
        stage_regs.append([])
        lines.append(f"reg [{w - 1}:0] y_q;")
        stage_regs[-1].append(("y_q", name))
        name, arrival = "y_q", delay.REG
    out = name if off == 0 else f"{{{name}, {off}'b0}}"
    lines.append(f"assign y = {out};")
    groups = [(k, group) for k, group in enumerate(stage_regs) if group]
    if groups:
        lines.append("always @(posedge clk) begin")
        for k, group in groups:  # stage k on its own copy of the enable, en[k]
            lines.append(f"  if (en[{k}]) begin")
            for tgt, src in group:
                lines.append(f"    {tgt} <= {src};")
            lines.append("  end")
        lines.append("end")
    return lines, latency, tuple(shapes), arrival


_MULTIPLIERS: dict = {}


def dsp_blocks(shapes: tuple[tuple[int, int], ...]) -> int:
    """DSP48E1 blocks (xc7) of unsigned partial products of these operand widths, as Yosys maps them:
    one where the product fits the block's signed 25 x 18 multiplier (24 x 17 unsigned bits), two for
    an 18 x 18 chunk.  ECP5's MULT18X18D takes every chunk in one; the budget counts the larger."""
    return sum(1 if (a <= 24 and b <= 17) or (a <= 17 and b <= 24) else 2 for a, b in shapes)


def multiplier(a_width: int, b_width: int, y_width: int, constant_operand: bool = False) -> OperatorSpec:
    """The pipelined unsigned multiplier y = (a * b) mod 2**y_width for the current clock target
    (`clock.clock_mhz`): one DSP-sized partial product per pair of 18-bit operand chunks, registered,
    then an adder tree with as many levels per stage as `delay.budget` allows.  Where the route into
    the DSP column and the multiplier do not fit one stage (`delay.mult18_registered_inputs`), each
    DSP first takes its operand chunks into registers of its own, one stage more.  The operands
    must arrive within `OperatorSpec.in_budget` (the datapath registers them when they do not).
    `constant_operand`: `b` is a constant at every instance, so the partial products are the library
    module that synthesis folds the constant into (`library.MULT18_CONST_MODULE`)."""
    from . import delay

    budget = round(delay.budget(), 2)
    registered = delay.mult18_registered_inputs()
    key = (a_width, b_width, y_width, budget, constant_operand)
    part = MULT18_CONST_MODULE if constant_operand else MULT18_MODULE
    if key not in _MULTIPLIERS:
        body, latency, shapes, arrival = _mul_body(a_width, b_width, y_width, delay.DSP_CHUNK, budget, registered,
                                                   part)
        # operands into the DSPs' own registers, spread over the DSP column; or straight into the DSPs
        in_budget = budget - (delay.DSP_ROUTE - delay.ROUTE) if registered else budget - delay.mult18()
        module = f"dpn_mul_{a_width}x{b_width}_{y_width}_l{latency}" + ("_k" if constant_operand else "")
        _MULTIPLIERS[key] = OperatorSpec(
            name=f"mul.{a_width}x{b_width}.{y_width}" + (".k" if constant_operand else ""),
            template="int/multiply.v.j2", module=module, latency=latency,
            inputs=(("a", a_width), ("b", b_width)), output_width=y_width,
            context={"a_width": a_width, "b_width": b_width, "y_width": y_width, "latency": latency,
                     "chunk": delay.DSP_CHUNK, "products": len(shapes), "shapes": shapes, "body": body},
            in_budget=round(in_budget, 2), out_arrival=arrival, enables=latency, dsp=dsp_blocks(shapes),
            uses=(part,))
    return _MULTIPLIERS[key]
