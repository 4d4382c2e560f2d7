"""Expression trees to Verilog datapaths with exact C integer semantics.

Every node becomes one wire of its C type (`signed [W-1:0]` or `[W-1:0]`).  Verilog's sized
arithmetic wraps like two's-complement C; `/` and `%` on signed operands truncate toward zero like C;
`>>` on signed values is `>>>`; shift counts are masked to the width as x86 does.  Casts extend
(sign or zero, by the source type) or truncate explicitly.  Operators here are combinational
(latency 0) and the process registers the result; floating-point operators will plug in as modules
with a declared latency (`Operator.latency`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..diagnostics import CompileError, SourceLoc
from ..poly import expr as E
from ..poly.types import ScalarType


def decl(t: ScalarType, name: str) -> str:
    return f"wire {'signed ' if t.signed else ''}[{t.bits - 1}:0] {name}"


def literal(v: int, t: ScalarType) -> str:
    bits = v & ((1 << t.bits) - 1)
    return f"{'$signed(' if t.signed else ''}{t.bits}'h{bits:x}{')' if t.signed else ''}"


@dataclass
class Datapath:
    lines: list[str] = field(default_factory=list)
    count: int = 0

    def wire(self, t: ScalarType, expr: str) -> str:
        name = f"n{self.count}"
        self.count += 1
        self.lines.append(f"{decl(t, name)} = {expr};")
        return name


def build(e: E.Expr, reads: Mapping[str, str], scalars: Mapping[str, str], affine: Callable[[E.AffineValue], str],
          loc: SourceLoc) -> tuple[Datapath, str]:
    """Lines computing `e`; `reads` maps read access ids to port signals, `scalars` args to inputs."""
    dp = Datapath()

    def conv(src: str, s: ScalarType, t: ScalarType) -> str:
        if s == t:
            return src
        if s.is_float or t.is_float:
            raise CompileError(loc, "floating-point arithmetic has no RTL implementation yet "
                                    "(use `sim --dpn-only`)")
        if t.bits == s.bits:
            return dp.wire(t, f"{src}")
        if t.bits < s.bits:
            return dp.wire(t, f"{src}[{t.bits - 1}:0]")
        fill = f"{{{t.bits - s.bits}{{{src}[{s.bits - 1}]}}}}" if s.signed else f"{{{t.bits - s.bits}{{1'b0}}}}"
        return dp.wire(t, f"{{{fill}, {src}}}")

    def go(e: E.Expr) -> str:
        t = e.type
        if t.is_float:
            raise CompileError(loc, "floating-point arithmetic has no RTL implementation yet (use `sim --dpn-only`)")
        if isinstance(e, E.Const):
            return dp.wire(t, literal(int(e.value), t))
        if isinstance(e, E.ArrayRead):
            return reads[e.access]
        if isinstance(e, E.ScalarArg):
            return scalars[e.name]
        if isinstance(e, E.AffineValue):
            ctl = dp.wire(ScalarType("int", 32, True), affine(e))
            return conv(ctl, ScalarType("int", 32, True), t)
        if isinstance(e, E.Cast):
            return conv(go(e.operand), e.operand.type, t)
        if isinstance(e, E.Unary):
            a = go(e.operand)
            return dp.wire(t, f"{e.op}{a}")
        if isinstance(e, E.Binary):
            a, b = go(e.lhs), go(e.rhs)
            op = e.op
            if op in E.COMPARE_OPS:
                return dp.wire(t, f"{{31'b0, ({a} {op} {b})}}")
            if op in E.LOGIC_OPS:
                return dp.wire(t, f"{{31'b0, (({a} != 0) {op} ({b} != 0))}}")
            if op in E.SHIFT_OPS:
                mask = t.bits - 1
                count = f"{b}[{mask.bit_length() - 1}:0]"
                if op == "<<":
                    return dp.wire(t, f"{a} << {count}")
                return dp.wire(t, f"{a} {'>>>' if t.signed else '>>'} {count}")
            return dp.wire(t, f"{a} {op} {b}")
        if isinstance(e, E.Select):
            c, x, y = go(e.cond), go(e.if_true), go(e.if_false)
            return dp.wire(t, f"({c} != 0) ? {x} : {y}")
        if isinstance(e, E.Call):
            raise CompileError(loc, f"`{e.func}` has no RTL implementation yet")
        raise AssertionError(e)

    out = go(e)
    return dp, out
