"""Expression trees to pipelined Verilog datapaths with exact C semantics.

Every node becomes a signal of its C type (`signed [W-1:0]` or `[W-1:0]`) valid at a pipeline
*stage* (0 = the cycle the iteration is issued).  Integer operators are combinational: Verilog's sized
arithmetic wraps like two's-complement C, `>>` on signed values is `>>>`, shift counts are masked to
the width as x86 does, and casts extend or truncate explicitly.  Integer `/` and `%` are the
exception: a combinational divider is a W-deep chain of subtractors, so they use the pipelined
divider of the operator library (`int_arith.py`), except by a positive power-of-two constant, which
is a shift and a mask (with the round-toward-zero bias for signed operands).  Floating-point
operators and the divider are pipelined modules from the operator library (`operators.py`) with a
declared latency: their operands are first delayed to a common stage, and their result is valid
`latency` stages later.  Delay registers and operators advance on the enable of their pipeline
segment: one segment unless some operand is read after issue (`late_reads`), and then the segments
before such a read stall while it waits and the ones after it drain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..diagnostics import CompileError, SourceLoc
from ..poly import expr as E
from ..poly.types import INT32, UINT8, UINT16, UINT32, UINT64, ScalarType
from . import int_arith
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
    _delayed: dict[tuple[str, int], str] = field(default_factory=dict)

    def segment(self, k: int) -> int:
        """The pipeline segment holding the transition from stage k to k + 1: one per cut, counted from
        the issue stage.  Segments stall separately (an operand read late holds only the stages before it)."""
        return sum(1 for c in self.cuts if c <= k)

    def enable(self, k: int) -> str:
        return f"en_seg{self.segment(k)}"

    def use(self, name: str, stage: int) -> str:
        """`name` taken by a consumer at `stage`: records the earliest such stage (`late_reads`)."""
        self.first_use[name] = min(stage, self.first_use.get(name, stage))
        return self.at(name, stage)

    def wire(self, t: ScalarType, expr: str, stage: int) -> str:
        name = f"n{self.count}"
        self.count += 1
        self.lines.append(f"{decl(t, name)} = {expr};")
        self.stage[name] = stage
        self.types[name] = t
        return name

    def wide_wire(self, bits: int, expr: str, stage: int) -> str:
        """An intermediate wider than any C type (a reciprocal product): only read in its own stage."""
        name = f"n{self.count}"
        self.count += 1
        self.lines.append(f"wire [{bits - 1}:0] {name} = {expr};")
        self.stage[name] = stage
        return name

    def at(self, name: str, stage: int) -> str:
        """`name` delayed to `stage` through enabled registers."""
        have = self.stage[name]
        assert stage >= have, (name, stage, have)
        if stage == have:
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

    def instance(self, spec: OperatorSpec, operands: list[str], out_t: ScalarType) -> str:
        start = max(self.stage[o] for o in operands)
        args = [self.use(o, start) for o in operands]
        name = f"n{self.count}"
        self.count += 1
        self.modules[spec.module] = spec
        self.spans.append((start, start + spec.latency))
        self.lines.append(f"wire [{spec.output_width - 1}:0] {name}_y;")
        ports = ", ".join(f".{p}({a})" for (p, _w), a in zip(spec.inputs, args))
        self.lines.append(f"{spec.module} u_{name} (.clk(clk), .en({self.enable(start)}), {ports}, .y({name}_y));")
        self.stage[f"{name}_y"] = start + spec.latency
        self.types[f"{name}_y"] = out_t if spec.output_width == out_t.bits else INT32
        if spec.output_width == out_t.bits:
            if out_t.is_int and out_t.signed:  # module ports are unsigned; C comparisons need the sign
                return self.wire(out_t, f"$signed({name}_y)", start + spec.latency)
            return f"{name}_y"
        # a 1-bit comparison result becomes a C int
        return self.wire(out_t, f"{{{out_t.bits - 1}'b0, {name}_y}}", start + spec.latency)

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

    def op(key: str) -> OperatorSpec:
        spec = library.get(key)
        if spec is None:
            raise CompileError(loc, f"no hardware operator `{key}` in the operator library")
        return spec

    def combine(t: ScalarType, args: list[str], text: Callable[..., str]) -> str:
        s = max(dp.stage[a] for a in args)
        xs = [dp.use(a, s) for a in args]
        return dp.wire(t, text(*xs), s)

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
        if t.bits == s.bits:
            return combine(t, [src], lambda a: a)
        if t.bits < s.bits:
            return combine(t, [src], lambda a: f"{a}[{t.bits - 1}:0]")
        if s.signed:
            return combine(t, [src], lambda a: f"{{{{{t.bits - s.bits}{{{a}[{s.bits - 1}]}}}}, {a}}}")
        return combine(t, [src], lambda a: f"{{{{{t.bits - s.bits}{{1'b0}}}}, {a}}}")

    def const_divide(o: str, a: str, divisor: int, t: ScalarType) -> str:
        """`a / divisor` or `a % divisor` by a multiply with the reciprocal (`int_arith.reciprocal`):
        no pipeline stages on a recurrence like a stencil's `/ 3`.  Mirrors `int_arith.const_divide`."""
        w = t.bits
        m, sh = reciprocal(abs(divisor), w)
        wide = sh + w  # holds x * m (< 2**(2w+1)) and the slice [sh + w - 1 : sh]
        if t.signed:  # magnitude of the dividend as a W-bit unsigned value (INT_MIN's is 2**(W-1))
            mag = combine(UNSIGNED[w], [a], lambda x: f"{x}[{w - 1}] ? -{x} : {x}")
        else:
            mag = a
        dp.use(mag, dp.stage[mag])
        prod = dp.wide_wire(wide, f"{{{{{wide - w}{{1'b0}}}}, {mag}}} * {wide}'h{m:x}", dp.stage[mag])
        uq = combine(UNSIGNED[w], [prod], lambda p: f"{p}[{sh + w - 1}:{sh}]")
        if t.signed:
            flip = "~" if divisor < 0 else ""
            q = combine(t, [a, uq], lambda x, y: f"$signed(({flip}{x}[{w - 1}]) ? -{y} : {y})")
        else:
            q = uq
        if o == "/":
            return q
        return combine(t, [a, q], lambda x, y: f"{x} - {y} * {literal(divisor, t)}")

    def divide(o: str, lhs: E.Expr, rhs: E.Expr, t: ScalarType) -> str:
        a = go(lhs)
        divisor = const_value(rhs)
        if divisor is not None and divisor > 0 and divisor & (divisor - 1) == 0:
            k = divisor.bit_length() - 1
            mask = literal(divisor - 1, t)
            if not t.signed:
                return combine(t, [a], lambda x: f"{x} >> {k}" if o == "/" else f"{x} & {mask}")
            # truncation toward zero: a negative dividend is biased by divisor - 1 before the shift
            q = combine(t, [a], lambda x: f"({x} + ($signed({{{t.bits}{{{x}[{t.bits - 1}]}}}}) & {mask})) >>> {k}")
            if o == "/":
                return q
            return combine(t, [a, q], lambda x, y: f"{x} - ({y} <<< {k})")
        if divisor is not None and divisor != 0 and (not t.signed or divisor not in (-1, -(1 << (t.bits - 1)))):
            return const_divide(o, a, divisor, t)
        kind = "div" if o == "/" else "rem"
        return dp.instance(op(f"{kind}.{'i' if t.signed else 'u'}{t.bits}"), [a, go(rhs)], t)

    def go(e: E.Expr) -> str:
        t = e.type
        if isinstance(e, E.Const):
            if t.is_float:
                import numpy as np

                bits = int(np.array([e.value], dtype=t.dtype).view(f"u{t.bits // 8}")[0])
                return dp.wire(t, f"{t.bits}'h{bits:x}", 0)
            return dp.wire(t, literal(int(e.value), t), 0)
        if isinstance(e, E.ArrayRead):
            dp.types.setdefault(reads[e.access], t)
            return reads[e.access]
        if isinstance(e, E.ScalarArg):
            dp.types.setdefault(scalars[e.name], t)
            return scalars[e.name]
        if isinstance(e, E.AffineValue):
            return conv(dp.wire(INT32, affine(e), 0), INT32, t)
        if isinstance(e, E.Cast):
            return conv(go(e.operand), e.operand.type, t)
        if isinstance(e, E.Unary):
            a = go(e.operand)
            if t.is_float:
                return dp.instance(op(f"fneg.{fmt(t)}"), [a], t)
            return combine(t, [a], lambda x: f"{e.op}{x}")
        if isinstance(e, E.Binary) and e.op in ("/", "%") and t.is_int:
            return divide(e.op, e.lhs, e.rhs, t)
        if isinstance(e, E.Binary):
            a, b = go(e.lhs), go(e.rhs)
            o = e.op
            if e.lhs.type.is_float and o in E.COMPARE_OPS:
                return dp.instance(op(f"{CMP_NAMES[o]}.{fmt(e.lhs.type)}"), [a, b], t)
            if t.is_float:
                return dp.instance(op(f"{ARITH_NAMES[o]}.{fmt(t)}"), [a, b], t)
            if o in E.COMPARE_OPS:
                return combine(t, [a, b], lambda x, y: f"{{31'b0, ({x} {o} {y})}}")
            if o in E.LOGIC_OPS:
                return combine(t, [a, b], lambda x, y: f"{{31'b0, (({x} != 0) {o} ({y} != 0))}}")
            if o in E.SHIFT_OPS:
                width = (t.bits - 1).bit_length()
                arith = ">>>" if (o == ">>" and t.signed) else o
                return combine(t, [a, b], lambda x, y: f"{x} {arith} {y}[{width - 1}:0]")
            return combine(t, [a, b], lambda x, y: f"{x} {o} {y}")
        if isinstance(e, E.Select):
            c, x, y = go(e.cond), go(e.if_true), go(e.if_false)
            return combine(t, [c, x, y], lambda cc, xx, yy: f"({cc} != 0) ? {xx} : {yy}")
        if isinstance(e, E.Call):
            args = [go(a) for a in e.args]
            return dp.instance(op(f"{CALL_NAMES[e.func]}.{fmt(t)}"), args, t)
        raise AssertionError(e)

    return dp, go(e)
