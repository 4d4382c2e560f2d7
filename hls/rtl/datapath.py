"""Expression trees to pipelined Verilog datapaths with exact C semantics.

Every node becomes a signal of its C type (`signed [W-1:0]` or `[W-1:0]`) valid at a pipeline
*stage* (0 = the cycle the iteration is issued).  Integer operators other than `*`, `/` and `%` are
combinational: Verilog's sized arithmetic wraps like two's-complement C, `>>` on signed values is
`>>>`, shift counts are masked to the width as x86 does, and casts extend or truncate explicitly.
Integer `/` and `%` use the pipelined divider of the operator library (`int_arith.py`), except by a
positive power-of-two constant, which is a shift and a mask (with the round-toward-zero bias for
signed operands), and by other constants, a reciprocal multiply.  Integer `*` is the pipelined
multiplier of `int_arith.multiplier` (DSP-sized partial products, registered, then an adder tree),
except by a constant with at most two bits set (shifts and an add).  Floating-point operators, the
divider and the multiplier are pipelined modules from the operator library (`operators.py`) with a
declared latency: their operands are first delayed to a common stage, and their result is valid
`latency` stages later.

**Clock target.**  Every signal also has an *arrival* (`delay.py`): nanoseconds after its stage's
clock edge.  A combinational operator whose result would arrive after `delay.budget()` (the clock
target of `clock.py`) is moved to the next stage, its operands registered; an operator module whose
operands arrive after its `in_budget` starts one stage later.  So no register-to-register path of
the datapath exceeds the period in the delay model, and the extra stages are part of the depth that
`generate.process_latencies` gives the cycle model.  Registers arrive at `delay.REG`; read ports at
`delay.PORT` (a FIFO's output register through the channel multiplexer, which selects on guards
computed a cycle ahead, `control.py`; a pipelined operator takes them through a register) at whatever
stage they are taken, so a port read late
(`late_reads`) schedules exactly like one read at issue and delayed.

Equal subexpressions of a statement are one signal (`expression_key`): an expression function
inlined three times, or `(a - b) * (a - b)`, gets one operator per distinct computation; a later
use takes the signal through delay registers like any operand.

Delay registers and operators advance on the enable of their pipeline segment: one segment unless
some operand is read after issue (`late_reads`), and then the segments before such a read stall while
it waits and the ones after it drain.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..diagnostics import CompileError, SourceLoc
from ..poly import expr as E
from ..poly.types import INT32, UINT8, UINT16, UINT32, UINT64, ScalarType
from . import delay, int_arith
from .int_arith import reciprocal
from .operators import OperatorSpec

UNSIGNED = {8: UINT8, 16: UINT16, 32: UINT32, 64: UINT64}
CMP_NAMES = {"<": "flt", "<=": "fle", ">": "fgt", ">=": "fge", "==": "feq", "!=": "fne"}
ARITH_NAMES = {"+": "fadd", "-": "fsub", "*": "fmul", "/": "fdiv"}
CALL_NAMES = {"sqrt": "fsqrt", "fabs": "fabs", "fmin": "fmin", "fmax": "fmax"}


def decl(t: ScalarType, name: str, kind: str = "wire") -> str:
    return f"{kind} {'signed ' if t.signed else ''}[{t.bits - 1}:0] {name}"


def literal(v: int, t: ScalarType) -> str:
    bits = v & ((1 << t.bits) - 1)
    return f"{'$signed(' if t.signed else ''}{t.bits}'h{bits:x}{')' if t.signed else ''}"


def fmt(t: ScalarType) -> str:
    return f"f{t.bits}"


def const_value(e: E.Expr) -> int | None:
    """The value of an integer constant operand (possibly under casts), as its own type reads it."""
    if isinstance(e, E.Cast) and e.type.is_int and e.operand.type.is_int:
        inner = const_value(e.operand)
        return None if inner is None else e.type.wrap(inner)
    if isinstance(e, E.Const) and e.type.is_int:
        return e.type.wrap(int(e.value))
    return None


def power_of_two_significand(e: E.Expr) -> bool:
    """Whether `e` is a floating-point constant whose significand is a power of two (or zero):
    `0.5f`, `2.0`, `0.125`.  Its product folds to wiring in synthesis, which the multiplier of
    `fmul.<fmt>.k` leaves it free to do (`library.MULT18_CONST_MODULE`)."""
    while isinstance(e, E.Cast) and e.type.is_float and e.operand.type.is_float:
        e = e.operand
    if not (isinstance(e, E.Const) and e.type.is_float):
        return False
    v = float(e.value)
    return v == 0.0 or (math.isfinite(v) and math.frexp(abs(v))[0] == 0.5)


def int_key(t: ScalarType) -> str:
    return f"{'i' if t.signed else 'u'}{max(32, t.bits)}"


@dataclass
class Datapath:
    """Generated lines, the operator modules used, and the stage of every signal."""

    lines: list[str] = field(default_factory=list)
    regs: list[tuple[str, str, str]] = field(default_factory=list)  # (target, source, enable) delay registers
    modules: dict[str, OperatorSpec] = field(default_factory=dict)
    stage: dict[str, int] = field(default_factory=dict)
    types: dict[str, ScalarType] = field(default_factory=dict)
    count: int = 0
    cuts: tuple[int, ...] = ()  # stages where the pipeline splits (late operand reads): see `segment`
    first_use: dict[str, int] = field(default_factory=dict)  # signal -> earliest stage a consumer takes it
    spans: list[tuple[int, int]] = field(default_factory=list)  # (start, end) stages of each operator instance
    operators: list[OperatorSpec] = field(default_factory=list)  # the spec of each operator instance
    narrow_products: int = 0  # in-line signed products of narrow operands, one DSP block each

    @property
    def dsp(self) -> int:
        """Multiplier blocks of the pipeline (`OperatorSpec.dsp`): what `--dsp-budget` counts."""
        return sum(op.dsp for op in self.operators) + self.narrow_products
    arrival: dict[str, float] = field(default_factory=dict)  # signal -> ns after its stage's clock edge
    ports: set[str] = field(default_factory=set)  # read ports and scalar inputs: `delay.PORT` at every stage
    port_arrival: dict[str, float] = field(default_factory=dict)  # a slower read port (a buffer's): its arrival
    stable: set[str] = field(default_factory=set)  # constants and scalar arguments: the same at every stage
    boolean: set[str] = field(default_factory=set)  # results of comparisons and logic operators: 0 or 1
    loop: set[str] = field(default_factory=set)  # signals computed from a recurrence's read port (see `schedule`)
    narrow: dict[str, int] = field(default_factory=dict)  # integer signal -> bits of a signed value holding it
    enables: dict[str, int] = field(default_factory=dict)  # clock-enable copy -> the segment it enables
    _delayed: dict[tuple[str, int], str] = field(default_factory=dict)

    def segment(self, k: int) -> int:
        """The pipeline segment holding the transition from stage k to k + 1: one per cut, counted from
        the issue stage.  Segments stall separately (an operand read late holds only the stages before it)."""
        return sum(1 for c in self.cuts if c <= k)

    def enable(self, k: int, instance: str = "") -> str:
        """The clock enable of registers taking stage k to k + 1: a copy of their segment's enable of
        its own, one for the delay registers of each stage and one per operator instance, so no net
        carries the stall to every register of the process (`process.v.j2`, docs/rtl-timing.md);
        an operator with `OperatorSpec.enables` > 1 has one per register stage (`instance`)."""
        name = f"ce_{instance}" if instance else f"ce_s{k}"
        self.enables[name] = self.segment(k)
        return name

    def use(self, name: str, stage: int) -> str:
        """`name` taken by a consumer at `stage`: records the earliest such stage (`late_reads`)."""
        self.first_use[name] = min(stage, self.first_use.get(name, stage))
        return self.at(name, stage)

    def wire(self, t: ScalarType, expr: str, stage: int, arrival: float = delay.REG) -> str:
        name = f"n{self.count}"
        self.count += 1
        self.lines.append(f"{decl(t, name)} = {expr};")
        self.stage[name] = stage
        self.types[name] = t
        self.arrival[name] = arrival
        return name

    def arrives(self, name: str, stage: int) -> float:
        """When `name` is valid in `stage` (a delayed copy is a register output; a read port
        arrives through its channel multiplexer whether it is read at issue or late)."""
        if name in self.stable:
            return 0.0 if name not in self.ports else delay.REG
        if name in self.ports:
            return self.port_arrival.get(name, delay.PORT)
        if self.stage[name] < stage:
            return delay.REG
        return self.arrival.get(name, delay.REG)

    def schedule(self, args: list[str], cost: float) -> tuple[int, float]:
        """(stage, arrival of the result) of an operation of `cost` ns on `args`: at the stage of
        the latest operand, or one stage later (operands registered) when it would arrive after the
        budget there and registering helps."""
        s = max((self.stage[a] for a in args), default=0)
        arr = max((self.arrives(a, s) for a in args), default=delay.REG)
        # logic on a recurrence (an accumulator read from the process's own output) is not cut by
        # registers up to the relaxed `loop_budget`: a stage there would add a cycle to every trip
        # around the loop (prefix-max's 64-bit compare and select), a longer path only lowers Fmax
        budget = delay.loop_budget() if any(a in self.loop for a in args) else delay.budget()
        if cost and arr + cost > budget and arr > delay.REG:
            for a in args:  # registered at the end of stage s: a port read late is read at s, not s + 1
                self.use(a, s)
            return s + 1, delay.REG + cost
        return s, arr + cost

    def at(self, name: str, stage: int) -> str:
        """`name` delayed to `stage` through enabled registers."""
        have = self.stage[name]
        assert stage >= have, (name, stage, have)
        if stage == have or name in self.stable:  # a constant needs no delay registers
            return name
        key = (name, stage)
        if key not in self._delayed:
            prev = self.at(name, stage - 1)
            reg = f"{name}_s{stage}"
            self.lines.append(f"{decl(self.types[name], reg, 'reg')};")
            self.regs.append((reg, prev, self.enable(stage - 1)))
            self.stage[reg] = stage
            self.types[reg] = self.types[name]
            self._delayed[key] = reg
        return self._delayed[key]

    def instance(self, spec: OperatorSpec, operands: list[str], out_t: ScalarType | None,
                 constants: Mapping[str, str] | None = None) -> str:
        """An operator module on `operands` (signals, in port order; `constants` gives literal
        operands by port name instead).  A result as wide as `out_t` is returned as a signal of
        that type; a 1-bit result becomes a C int; with `out_t` None (a product wider than any C
        type) the raw `_y` wire, to be sliced in its own stage."""
        start = max((self.stage[o] for o in operands), default=0)
        if spec.in_budget is not None:
            in_budget = spec.in_budget
        elif spec.latency == 0:  # combinational (fneg, fabs): a LUT level
            in_budget = delay.budget() - delay.lut_levels(1)
        else:  # the first stage of a pipelined operator is a full stage of logic: operands from a register
            in_budget = delay.REG + delay.lut_levels(1)  # or an operator's output multiplexer, not a read port
        if operands and max(self.arrives(o, start) for o in operands) > max(in_budget, delay.REG):
            for o in operands:  # registered at the end of this stage (a port read late is read here)
                self.use(o, start)
            start += 1  # the operator's first stage does not fit behind this logic: register its operands
        args = iter([self.use(o, start) for o in operands])
        name = f"n{self.count}"
        self.count += 1
        self.modules[spec.module] = spec
        self.spans.append((start, start + spec.latency))
        self.operators.append(spec)
        self.lines.append(f"wire [{spec.output_width - 1}:0] {name}_y;")
        ports = ", ".join(f".{p}({(constants or {}).get(p) or next(args)})" for p, _w in spec.inputs)
        if spec.enables == 1:
            en = self.enable(start, "u_" + name)
        else:  # a copy per register stage of the operator, all on the segment of its first stage
            en = "{" + ", ".join(self.enable(start, f"u_{name}_{k}") for k in reversed(range(spec.enables))) + "}"
        self.lines.append(f"{spec.module} u_{name} (.clk(clk), .en({en}), {ports}, .y({name}_y));")
        end = start + spec.latency
        if spec.latency:  # `y` after the last register (and maybe an output multiplexer)
            out_arr = delay.REG + delay.lut_levels(1) if spec.out_arrival is None else spec.out_arrival
        else:
            out_arr = max((self.arrives(o, start) for o in operands), default=delay.REG) + delay.lut_levels(1)
        self.stage[f"{name}_y"] = end
        self.arrival[f"{name}_y"] = out_arr
        if out_t is None:
            return f"{name}_y"
        self.types[f"{name}_y"] = out_t if spec.output_width == out_t.bits else INT32
        if spec.output_width == out_t.bits:
            if out_t.is_int and out_t.signed:  # module ports are unsigned; C comparisons need the sign
                return self.wire(out_t, f"$signed({name}_y)", end, self.arrival[f"{name}_y"])
            return f"{name}_y"
        # a 1-bit comparison result becomes a C int
        return self.wire(out_t, f"{{{out_t.bits - 1}'b0, {name}_y}}", end, self.arrival[f"{name}_y"])

    @property
    def depth(self) -> int:
        return max(self.stage.values(), default=0)


def late_reads(dp: Datapath, ports: list[str]) -> dict[str, int]:
    """The stage at which each read port is best read, from a datapath built with every port at stage 0.

    An operand that a consumer takes only at stage s (the accumulator of `s + a * b` after the
    multiplier) can be read from its channel at s instead of at issue: on a recurrence through that
    operand the chain then waits for the consumer's operator only, not for the whole pipeline.  The
    stage must be a clean cut, one that no multi-cycle operator straddles, since the stages on either
    side of it stall separately; a port is read at the latest clean cut at or before its first use."""
    inside = {k for a, b in dp.spans for k in range(a + 1, b)}
    out = {}
    for p in ports:
        s = dp.first_use.get(p, 0)
        while s > 0 and s in inside:
            s -= 1
        out[p] = s
    return out


def naf(c: int) -> list[tuple[int, int]]:
    """Non-adjacent form of c >= 0: [(bit, +1 or -1)], the fewest nonzero signed digits."""
    out, k = [], 0
    while c:
        if c & 1:
            d = 2 - (c & 3)  # +1 when c = 1 mod 4, -1 when c = 3 mod 4
            out.append((k, d))
            c -= d
        c >>= 1
        k += 1
    return out


def affine_arrival(text: str) -> float:
    """When an affine value of the iteration registers (`affine.py` text) is valid: an adder per
    term, a comparison and a select per piece, a constant division as a divider of its width."""
    adds = text.count(" + ") + text.count(" - ") + text.count("(-")
    arr = delay.REG + adds * delay.add(32) + text.count("?") * (delay.compare(32) + delay.select())
    return arr + (text.count("/") + text.count("%")) * 32 * delay.add(32)


def expression_key(e: E.Expr) -> tuple:
    """Equal keys for expressions computing the same value the same way (common subexpressions).

    Constants are told apart by their text, so -0.0 and 0.0 (equal as numbers) stay two values."""
    if isinstance(e, E.Const):
        return ("const", e.type.name, repr(e.value))
    if isinstance(e, E.ArrayRead):
        return ("read", e.access)
    if isinstance(e, E.ScalarArg):
        return ("scalar", e.name, e.type.name)
    if isinstance(e, E.AffineValue):
        return ("affine", str(e.expr), e.type.name)
    if isinstance(e, E.Cast):
        return ("cast", e.type.name, expression_key(e.operand))
    if isinstance(e, E.Unary):
        return ("unary", e.op, e.type.name, expression_key(e.operand))
    if isinstance(e, E.Binary):
        return ("binary", e.op, e.type.name, expression_key(e.lhs), expression_key(e.rhs))
    if isinstance(e, E.Select):
        return ("select", e.type.name, *(expression_key(x) for x in (e.cond, e.if_true, e.if_false)))
    if isinstance(e, E.Call):
        return ("call", e.func, e.type.name, *(expression_key(a) for a in e.args))
    raise AssertionError(e)


def build(e: E.Expr, reads: Mapping[str, str], scalars: Mapping[str, str], affine: Callable[[E.AffineValue], str],
          loc: SourceLoc, library: Mapping[str, OperatorSpec], dp: Datapath | None = None,
          read_stage: Mapping[str, int] | None = None) -> tuple[Datapath, str]:
    """Lines computing `e`; `reads` maps read access ids to port signals, valid at the stage
    `read_stage` gives them (default 0: read at issue), `scalars` args to inputs (stage 0).
    Passing the `dp` of an earlier call adds `e` to it: a process running several statements has one
    pipeline, so every statement's result is taken at the same (deepest) stage."""
    dp = dp if dp is not None else Datapath()
    for sig in list(reads.values()) + list(scalars.values()):
        dp.stage[sig] = (read_stage or {}).get(sig, 0)
        dp.arrival[sig] = delay.PORT
        dp.ports.add(sig)
    dp.stable.update(scalars.values())  # held from start to done (docs/rtl-interface.md)

    def op(key: str) -> OperatorSpec:
        spec = library.get(key)
        if spec is None:
            raise CompileError(loc, f"no hardware operator `{key}` in the operator library")
        return spec

    def constant(name: str) -> str:
        dp.stable.add(name)
        return name

    def flag(name: str) -> str:
        dp.boolean.add(name)
        return name

    def combine(t: ScalarType, args: list[str], text: Callable[..., str], cost: float = 0.0) -> str:
        s, arr = dp.schedule(args, cost)
        xs = [dp.use(a, s) for a in args]
        out = dp.wire(t, text(*xs), s, arr)
        if any(a in dp.loop for a in args):
            dp.loop.add(out)
        return out

    def signed_bits(x: str) -> int:
        """k such that the bit pattern of `x` is the sign extension of its low k bits (its type's
        width, one more for an unsigned type, or fewer for a widened narrow value: the int16
        operands of a 64-bit product)."""
        tx = dp.types.get(x)
        full = tx.bits + (0 if tx.signed else 1) if tx is not None and tx.is_int else 65
        return min(full, dp.narrow.get(x, full))

    def multiply(a: str, b: str | None, t: ScalarType, a_bits: int, b_bits: int, y_bits: int,
                 b_const: int | None = None) -> str:
        """`a * b` (or `a * b_const`) mod 2**y_bits on the pipelined multiplier; the raw product
        wire when `t` is None.  Two operands that are narrow values (at most 18 bits as signed
        numbers: a widened int16, say) make one signed DSP product instead, registered once."""
        if b is not None and t is not None and t.is_int:
            wa, wb = signed_bits(a), signed_bits(b)
            if wa <= delay.DSP_CHUNK and wb <= delay.DSP_CHUNK:
                s, arr = dp.schedule([a, b], delay.mult18())
                xa, xb = dp.use(a, s), dp.use(b, s)
                # the signed narrow operands extend to the C width: the product is C's, mod 2**W
                name = dp.wire(t, f"$signed({xa}[{wa - 1}:0]) * $signed({xb}[{wb - 1}:0])", s, arr)
                dp.narrow_products += 1
                dp.lines[-1] = f"/* verilator lint_off WIDTHEXPAND */ {dp.lines[-1]} /* verilator lint_on WIDTHEXPAND */"
                if wa + wb < t.bits:
                    dp.narrow[name] = wa + wb
                return name
        spec = int_arith.multiplier(a_bits, b_bits, y_bits)
        if b_const is not None:
            return dp.instance(spec, [a], t, constants={"b": f"{b_bits}'h{b_const:x}"})
        return dp.instance(spec, [a, b], t)

    def times_const(a: str, c: int, t: ScalarType) -> str:
        """`a * c` for an integer constant c (mod 2**W): shifts and at most two adds or subtractions
        when c has at most three nonzero digits in non-adjacent form (3 = 4 - 1, 7 = 8 - 1, 10 = 8 + 2),
        else the pipelined multiplier."""
        w = t.bits
        digits = [(k, d) for k, d in naf(c & ((1 << w) - 1)) if k < w]
        if not digits:
            return combine(t, [a], lambda x: literal(0, t))
        if len(digits) <= 3:
            def text(x: str) -> str:
                out = ""
                for k, d in sorted(digits, key=lambda kd: -kd[1]):  # a positive term first when there is one
                    term = f"({x} <<< {k})" if k else x
                    out = (f"-{term}" if d < 0 else term) if not out else f"{out} {'-' if d < 0 else '+'} {term}"
                return out
            adds = len(digits) - 1 + (1 if all(d < 0 for _, d in digits) else 0)
            return combine(t, [a], text, adds * delay.add(w))
        # the constant at its own width: no partial products of its zero chunks
        cm = c & ((1 << w) - 1)
        return multiply(a, None, t, w, max(1, cm.bit_length()), w, b_const=cm)

    def conv(src: str, s: ScalarType, t: ScalarType) -> str:
        if s == t:
            return src
        if s.is_float or t.is_float:
            if s.is_float and t.is_float:
                return dp.instance(op(f"cvt.{fmt(s)}.{fmt(t)}"), [src], t)
            if t.is_float:  # integer to floating point, through a 32/64-bit integer
                wide = ScalarType("int", max(32, s.bits), s.signed)
                return dp.instance(op(f"cvt.{int_key(s)}.{fmt(t)}"), [conv(src, s, wide)], t)
            # gcc converts to types narrower than 32 bits through a signed 32-bit conversion, then truncates
            wide = ScalarType("int", t.bits, t.signed) if t.bits >= 32 else INT32
            return conv(dp.instance(op(f"cvt.{fmt(s)}.{int_key(wide)}"), [src], wide), wide, t)
        held = signed_bits(src)  # the value, as a two's-complement number of this many bits
        if t.bits == s.bits:
            out = combine(t, [src], lambda a: a)
        elif t.bits < s.bits:
            out = combine(t, [src], lambda a: f"{a}[{t.bits - 1}:0]")
        elif s.signed:
            out = combine(t, [src], lambda a: f"{{{{{t.bits - s.bits}{{{a}[{s.bits - 1}]}}}}, {a}}}")
        else:
            out = combine(t, [src], lambda a: f"{{{{{t.bits - s.bits}{{1'b0}}}}, {a}}}")
        if held < t.bits:  # the bit pattern is still the sign extension of its low `held` bits
            dp.narrow[out] = held
        return out

    def const_divide(o: str, a: str, divisor: int, t: ScalarType) -> str:
        """`a / divisor` or `a % divisor` by a multiply with the reciprocal (`int_arith.reciprocal`):
        no pipeline stages on a recurrence like a stencil's `/ 3`.  Mirrors `int_arith.const_divide`."""
        w = t.bits
        m, sh = reciprocal(abs(divisor), w)
        wide = sh + w  # holds x * m (< 2**(2w+1)) and the slice [sh + w - 1 : sh]
        if t.signed:  # magnitude of the dividend as a W-bit unsigned value (INT_MIN's is 2**(W-1))
            mag = combine(UNSIGNED[w], [a], lambda x: f"{x}[{w - 1}] ? -{x} : {x}", delay.add(w) + delay.select())
        else:
            mag = a
        prod = multiply(mag, None, None, w, m.bit_length(), wide, b_const=m)
        uq = dp.wire(UNSIGNED[w], f"{prod}[{sh + w - 1}:{sh}]", dp.stage[prod], dp.arrival[prod])
        if t.signed:
            flip = "~" if divisor < 0 else ""
            q = combine(t, [a, uq], lambda x, y: f"$signed(({flip}{x}[{w - 1}]) ? -{y} : {y})",
                        delay.add(w) + delay.select())
        else:
            q = uq
        if o == "/":
            return q
        qd = times_const(q, divisor, t)
        return combine(t, [a, qd], lambda x, y: f"{x} - {y}", delay.add(w))

    def divide(o: str, lhs: E.Expr, rhs: E.Expr, t: ScalarType) -> str:
        a = go(lhs)
        divisor = const_value(rhs)
        if divisor is not None and divisor > 0 and divisor & (divisor - 1) == 0:
            k = divisor.bit_length() - 1
            mask = literal(divisor - 1, t)
            if not t.signed:
                return combine(t, [a], lambda x: f"{x} >> {k}" if o == "/" else f"{x} & {mask}")
            # truncation toward zero: a negative dividend is biased by divisor - 1 before the shift
            q = combine(t, [a], lambda x: f"({x} + ($signed({{{t.bits}{{{x}[{t.bits - 1}]}}}}) & {mask})) >>> {k}",
                        delay.add(t.bits) + delay.logic())
            if o == "/":
                return q
            return combine(t, [a, q], lambda x, y: f"{x} - ({y} <<< {k})", delay.add(t.bits))
        if divisor is not None and divisor != 0 and (not t.signed or divisor not in (-1, -(1 << (t.bits - 1)))):
            return const_divide(o, a, divisor, t)
        kind = "div" if o == "/" else "rem"
        return dp.instance(op(f"{kind}.{'i' if t.signed else 'u'}{t.bits}"), [a, go(rhs)], t)

    built: dict[tuple, str] = {}  # an expression's structure -> its signal: equal subexpressions built once

    def go(e: E.Expr) -> str:
        key = expression_key(e)
        if key not in built:
            built[key] = node(e)
        return built[key]

    def node(e: E.Expr) -> str:
        t = e.type
        if isinstance(e, E.Const):
            if t.is_float:
                import numpy as np

                bits = int(np.array([e.value], dtype=t.dtype).view(f"u{t.bits // 8}")[0])
                return constant(dp.wire(t, f"{t.bits}'h{bits:x}", 0, 0.0))
            return constant(dp.wire(t, literal(int(e.value), t), 0, 0.0))
        if isinstance(e, E.ArrayRead):
            dp.types.setdefault(reads[e.access], t)
            return reads[e.access]
        if isinstance(e, E.ScalarArg):
            dp.types.setdefault(scalars[e.name], t)
            return scalars[e.name]
        if isinstance(e, E.AffineValue):
            text = affine(e)
            return conv(dp.wire(INT32, text, 0, affine_arrival(text)), INT32, t)
        if isinstance(e, E.Cast):
            return conv(go(e.operand), e.operand.type, t)
        if isinstance(e, E.Unary):
            a = go(e.operand)
            if t.is_float:
                return dp.instance(op(f"fneg.{fmt(t)}"), [a], t)
            if e.op == "!":
                cost = delay.logic() if a in dp.boolean else delay.equal(e.operand.type.bits)
                return flag(combine(t, [a], lambda x: f"{e.op}{x}", cost))
            cost = {"-": delay.add(t.bits)}.get(e.op, delay.logic())
            return combine(t, [a], lambda x: f"{e.op}{x}", cost)
        if isinstance(e, E.Binary) and e.op in ("/", "%") and t.is_int:
            return divide(e.op, e.lhs, e.rhs, t)
        if isinstance(e, E.Binary):
            a, b = go(e.lhs), go(e.rhs)
            o = e.op
            if e.lhs.type.is_float and o in E.COMPARE_OPS:
                return dp.instance(op(f"{CMP_NAMES[o]}.{fmt(e.lhs.type)}"), [a, b], t)
            if t.is_float:
                by_power = o == "*" and (power_of_two_significand(e.lhs) or power_of_two_significand(e.rhs))
                folded = ".k" if by_power else ""
                return dp.instance(op(f"{ARITH_NAMES[o]}.{fmt(t)}{folded}"), [a, b], t)
            w = e.lhs.type.bits
            if o in E.COMPARE_OPS:
                cost = delay.equal(w) if o in ("==", "!=") else delay.compare(w)
                return flag(combine(t, [a, b], lambda x, y: f"{{31'b0, ({x} {o} {y})}}", cost))
            if o in E.LOGIC_OPS:  # `x != 0` of a 0/1 value is its bit: no comparator
                cost = delay.logic() + (0.0 if a in dp.boolean and b in dp.boolean
                                        else delay.equal(max(w, e.rhs.type.bits)))
                return flag(combine(t, [a, b], lambda x, y: f"{{31'b0, (({x} != 0) {o} ({y} != 0))}}", cost))
            if o in E.SHIFT_OPS:
                width = (t.bits - 1).bit_length()
                arith = ">>>" if (o == ">>" and t.signed) else o
                cost = 0.0 if const_value(e.rhs) is not None else delay.shift(t.bits)
                return combine(t, [a, b], lambda x, y: f"{x} {arith} {y}[{width - 1}:0]", cost)
            if o == "*":
                ca, cb = const_value(e.lhs), const_value(e.rhs)
                if cb is not None:
                    return times_const(a, cb, t)
                if ca is not None:
                    return times_const(b, ca, t)
                return multiply(a, b, t, t.bits, t.bits, t.bits)
            cost = delay.add(t.bits) if o in ("+", "-") else delay.logic()
            return combine(t, [a, b], lambda x, y: f"{x} {o} {y}", cost)
        if isinstance(e, E.Select):
            c, x, y = go(e.cond), go(e.if_true), go(e.if_false)
            cost = delay.select() + (0.0 if c in dp.boolean else delay.equal(e.cond.type.bits))
            return combine(t, [c, x, y], lambda cc, xx, yy: f"({cc} != 0) ? {xx} : {yy}", cost)
        if isinstance(e, E.Call):
            args = [go(a) for a in e.args]
            return dp.instance(op(f"{CALL_NAMES[e.func]}.{fmt(t)}"), args, t)
        raise AssertionError(e)

    return dp, go(e)
