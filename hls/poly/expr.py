"""Typed expression trees: the right-hand side of every statement.

Nodes are frozen dataclasses whose `type` is the C type of the value *after* the usual arithmetic
conversions; every implicit conversion is an explicit `Cast`.  Binary arithmetic therefore always
has operands of its own type (comparisons: of a common type, giving `int`; shifts: each operand
promoted on its own).  The interpreter and the RTL datapath implement each node literally, which is
what keeps them bit-exact with gcc: no stage re-derives C's typing rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

import islpy as isl

from .types import INT32, ScalarType

ARITH_OPS = ("+", "-", "*", "/", "%", "&", "|", "^")
SHIFT_OPS = ("<<", ">>")
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
LOGIC_OPS = ("&&", "||")
UNARY_OPS = ("-", "~", "!")
CALLS = {"sqrt": 1, "fabs": 1, "fmin": 2, "fmax": 2}
# Functions no datapath implements: accepted only inside hoisted scalars (`HoistedScalar`), whose value
# gcc computes once on the host, so they never reach the interpreter's evaluator or the RTL.
HOST_CALLS = {"exp": 1, "log": 1, "pow": 2, "sin": 1, "cos": 1, "tan": 1, "exp2": 1, "log2": 1, "log10": 1,
              "cbrt": 1}


@dataclass(frozen=True)
class Const:
    value: Union[int, float]
    type: ScalarType

    def __str__(self) -> str:
        if self.type.is_float:
            return repr(float(self.value)) + ("f" if self.type.bits == 32 else "")
        return str(self.value)


@dataclass(frozen=True)
class ArrayRead:
    """The value read by one read access of the statement (see `Statement.reads`)."""

    access: str
    type: ScalarType
    text: str = ""

    def __str__(self) -> str:
        return self.text or self.access


@dataclass(frozen=True)
class ScalarArg:
    """A read-only scalar argument of the kernel that is not a structure parameter (e.g. `alpha`)."""

    name: str
    type: ScalarType

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class AffineValue:
    """An integer value affine in loop counters and structure parameters (e.g. `i`, `n - 1 - i`).

    `expr` is an isl piecewise affine function on the statement's iteration space."""

    expr: isl.PwAff
    type: ScalarType = INT32
    text: str = ""

    def __str__(self) -> str:
        return self.text or str(self.expr)


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Expr"
    type: ScalarType

    def __post_init__(self) -> None:
        assert self.op in UNARY_OPS
        assert self.op == "!" or self.operand.type == self.type

    def __str__(self) -> str:
        return f"{self.op}({self.operand})"


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: "Expr"
    rhs: "Expr"
    type: ScalarType

    def __post_init__(self) -> None:
        if self.op in ARITH_OPS:
            assert self.lhs.type == self.rhs.type == self.type, (self.op, self.lhs.type, self.rhs.type, self.type)
        elif self.op in SHIFT_OPS:
            assert self.lhs.type == self.type and self.type.is_int and self.rhs.type.is_int
        elif self.op in COMPARE_OPS:
            assert self.lhs.type == self.rhs.type and self.type == INT32
        elif self.op in LOGIC_OPS:
            assert self.lhs.type == self.rhs.type == self.type == INT32
        else:
            raise AssertionError(self.op)

    def __str__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"


@dataclass(frozen=True)
class Select:
    cond: "Expr"  # int, nonzero means true
    if_true: "Expr"
    if_false: "Expr"
    type: ScalarType

    def __post_init__(self) -> None:
        assert self.if_true.type == self.if_false.type == self.type

    def __str__(self) -> str:
        return f"({self.cond} ? {self.if_true} : {self.if_false})"


@dataclass(frozen=True)
class Cast:
    operand: "Expr"
    type: ScalarType

    def __str__(self) -> str:
        return f"({self.type}){self.operand}"


@dataclass(frozen=True)
class Call:
    """A call to a pure math function, at the precision of `type` (`sqrtf` is `sqrt` on float)."""

    func: str
    args: tuple["Expr", ...]
    type: ScalarType

    def __post_init__(self) -> None:
        assert self.func in CALLS or self.func in HOST_CALLS, self.func
        assert len(self.args) == {**CALLS, **HOST_CALLS}[self.func]
        assert self.type.is_float and all(a.type == self.type for a in self.args)

    def __str__(self) -> str:
        suffix = "f" if self.type.bits == 32 else ""
        return f"{self.func}{suffix}({', '.join(map(str, self.args))})"


Expr = Union[Const, ArrayRead, ScalarArg, AffineValue, Unary, Binary, Select, Cast, Call]


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Unary):
        return (e.operand,)
    if isinstance(e, Binary):
        return (e.lhs, e.rhs)
    if isinstance(e, Select):
        return (e.cond, e.if_true, e.if_false)
    if isinstance(e, Cast):
        return (e.operand,)
    if isinstance(e, Call):
        return e.args
    return ()


def walk(e: Expr) -> Iterator[Expr]:
    """Pre-order traversal."""
    yield e
    for c in children(e):
        yield from walk(c)


def cast(e: Expr, t: ScalarType) -> Expr:
    """Convert `e` to type `t` (no node when it already has that type; constants fold)."""
    if e.type == t:
        return e
    if isinstance(e, Const):
        return Const(convert_value(e.value, t), t)
    return Cast(e, t)


def convert_value(v: Union[int, float], t: ScalarType) -> Union[int, float]:
    """C conversion of a scalar value to type `t` (integers wrap; float to int truncates)."""
    if t.is_int:
        if isinstance(v, float):
            return t.wrap(int(v))  # truncation toward zero; out-of-range is undefined in C
        return t.wrap(int(v))
    return float(t.dtype.type(v))


def to_json(e: Expr) -> object:
    """A JSON-friendly form of an expression (for `analyze --json` and IR dumps)."""
    base: dict[str, object] = {"type": e.type.name}
    if isinstance(e, Const):
        base.update(node="const", value=e.value)
    elif isinstance(e, ArrayRead):
        base.update(node="read", access=e.access)
    elif isinstance(e, ScalarArg):
        base.update(node="scalar_arg", name=e.name)
    elif isinstance(e, AffineValue):
        base.update(node="affine", expr=str(e.expr))
    elif isinstance(e, Unary):
        base.update(node="unary", op=e.op, operand=to_json(e.operand))
    elif isinstance(e, Binary):
        base.update(node="binary", op=e.op, lhs=to_json(e.lhs), rhs=to_json(e.rhs))
    elif isinstance(e, Select):
        base.update(node="select", cond=to_json(e.cond), if_true=to_json(e.if_true), if_false=to_json(e.if_false))
    elif isinstance(e, Cast):
        base.update(node="cast", operand=to_json(e.operand))
    elif isinstance(e, Call):
        base.update(node="call", func=e.func, args=[to_json(a) for a in e.args])
    return base
