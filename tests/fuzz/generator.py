"""Seeded random generator of affine C kernels inside dpn-synth's input language.

A program is a small IR (frozen dataclasses below) rendered to C by `render`.  The IR keeps array
subscripts *unshifted*: `layout` runs the control flow concretely (loops, guards) and computes, per
array dimension, the smallest and largest subscript any executed access uses; the renderer then adds
one offset per array dimension (so relative distances such as `A[i-1]` vs `A[i]` are kept) and sizes
each array to fit.  Every access is therefore in bounds by construction, whatever the bounds, guards
or steps, and the shrinker (`shrink.py`) can edit the IR freely and re-render.

Validity rules the IR keeps (checked by `layout`, enforced by construction in the generator):
* integer division, modulo and shifts only by constants (`Num(fixed=True)`: 2..16 or -3, never 0/-1),
  shift counts 0..7;
* a float value reaches an integer only through `Clamp` (`(T)fmax(fmin(x, hi), lo)`, in range and
  NaN-free), never through an implicit conversion; compound assignments to integers take integers;
* `sqrt` only as `sqrt(fabs(x))` (`Call("sqrtabs")`);
* every statement runs at least once, at most `max_domain` times, `max_total` instances in all;
  every read of a local scalar follows a write of it in execution order.

Entry points: `generate(seed, config) -> Program`, `generate_c(seed, config) -> str`,
`render(program) -> str`, `layout(program) -> Layout`, `features(program) -> Counter`.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterator, Optional, Sequence, Union

# ------------------------------------------------------------------------------------------------
# Types
# ------------------------------------------------------------------------------------------------

INT_TYPES = ("int32_t", "int16_t", "uint8_t", "int64_t")
FLOAT_TYPES = ("float", "double")
ALL_TYPES = INT_TYPES + FLOAT_TYPES

#: Clamp range of a float value converted to each integer type (well inside the type's range).
CLAMP_RANGE = {"int32_t": (-100000, 100000), "int16_t": (-20000, 20000), "uint8_t": (0, 255),
               "int64_t": (-1000000, 1000000)}


def kind_of_type(ctype: str) -> str:
    return "float" if ctype in FLOAT_TYPES else "int"


# ------------------------------------------------------------------------------------------------
# Affine expressions over loop counters
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Aff:
    """sum(coef * var) + const; `terms` keeps the generation order (rendered in that order)."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def var(v: str, coef: int = 1, const: int = 0) -> "Aff":
        return Aff(((v, coef),), const)

    @staticmethod
    def of(const: int) -> "Aff":
        return Aff((), const)

    def norm(self) -> "Aff":
        acc: dict[str, int] = {}
        for v, c in self.terms:
            acc[v] = acc.get(v, 0) + c
        return Aff(tuple((v, c) for v, c in acc.items() if c != 0), self.const)

    def __add__(self, other: Union["Aff", int]) -> "Aff":
        if isinstance(other, int):
            return Aff(self.terms, self.const + other)
        return Aff(self.terms + other.terms, self.const + other.const).norm()

    def vars(self) -> set[str]:
        return {v for v, c in self.terms if c != 0}

    def eval(self, env: dict[str, int]) -> int:
        return self.const + sum(c * env[v] for v, c in self.terms)

    def subst(self, var: str, value: int) -> "Aff":
        k = sum(c for v, c in self.terms if v == var)
        return Aff(tuple((v, c) for v, c in self.terms if v != var), self.const + k * value)

    def is_const(self) -> bool:
        return not self.terms

    def render(self) -> str:
        out = ""
        for v, c in self.terms:
            if c == 0:
                continue
            mag = abs(c)
            t = v if mag == 1 else f"{mag} * {v}"
            if not out:
                out = t if c > 0 else f"-{t}"
            else:
                out += f" + {t}" if c > 0 else f" - {t}"
        if not out:
            return str(self.const)
        if self.const > 0:
            out += f" + {self.const}"
        elif self.const < 0:
            out += f" - {-self.const}"
        return out


def c_mod(a: int, m: int) -> int:
    """C's `%` (truncating division)."""
    q = abs(a) // abs(m)
    if (a < 0) != (m < 0):
        q = -q
    return a - m * q


# ------------------------------------------------------------------------------------------------
# Value expressions
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    value: Union[int, float]
    ctype: str  # "int32_t" for integer literals, "float"/"double" for floating literals
    fixed: bool = False  # a divisor / shift count: the shrinker must not touch it


@dataclass(frozen=True)
class Idx:
    """A counter expression used as a value (type int)."""

    aff: Aff


@dataclass(frozen=True)
class Ref:
    """An array element (read or written)."""

    array: str
    idx: tuple[Aff, ...]


@dataclass(frozen=True)
class Var:
    """A scalar: a kernel scalar argument or a local scalar."""

    name: str


@dataclass(frozen=True)
class Bin:
    op: str
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Un:
    op: str  # "-" or "~"
    a: "Expr"


@dataclass(frozen=True)
class Call:
    fn: str  # fmin, fmax, fabs, sqrtabs (rendered sqrt(fabs(x)))
    args: tuple["Expr", ...]
    single: bool = False  # the float variants (fminf, ...)


@dataclass(frozen=True)
class Cast:
    ctype: str  # an integer type (from an integer) or float/double (from anything)
    a: "Expr"


@dataclass(frozen=True)
class Clamp:
    """Float to integer, safely: `(T)fmax(fmin(a, hi), lo)`."""

    ctype: str
    a: "Expr"


@dataclass(frozen=True)
class Sel:
    """`(ca CMP cb ? a : b)`."""

    cmp: str
    ca: "Expr"
    cb: "Expr"
    a: "Expr"
    b: "Expr"


Expr = Union[Num, Idx, Ref, Var, Bin, Un, Call, Cast, Clamp, Sel]

# ------------------------------------------------------------------------------------------------
# Statements and control
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stmt:
    target: Union[Ref, Var]
    op: str  # "=", "+=", ..., "++", "--"
    rhs: Optional[Expr]


@dataclass(frozen=True)
class Loop:
    """Counter `var` over max(lower) .. min(upper) (inclusive), by `step` (negative: from min(upper) down).

    `incl` renders the end test with `<=`/`>=` (else `<`/`>` with the bound moved by one); `style`
    "and" renders a two-term end test as a conjunction instead of a `?:` min/max.
    """

    var: str
    lower: tuple[Aff, ...]
    upper: tuple[Aff, ...]
    step: int
    body: tuple["Node", ...]
    incl: bool = True
    style: str = "ternary"


@dataclass(frozen=True)
class Cond:
    lhs: Aff
    op: str  # < <= > >= == !=, or "%" (lhs % mod == rhs.const)
    rhs: Aff
    mod: int = 0


@dataclass(frozen=True)
class Guard:
    conds: tuple[Cond, ...]
    then: tuple["Node", ...]
    els: tuple["Node", ...] = ()
    disj: bool = False  # conditions joined by || instead of &&
    neg: bool = False  # the whole condition negated with !


Node = Union[Stmt, Loop, Guard]


@dataclass(frozen=True)
class Array:
    ctype: str
    ndim: int
    slack: tuple[int, ...] = ()  # extra elements past the largest subscript, per dimension


@dataclass(frozen=True)
class Program:
    seed: int
    arrays: tuple[tuple[str, Array], ...]
    scalars: tuple[tuple[str, str], ...]  # kernel scalar arguments (name, ctype)
    locals: tuple[tuple[str, str], ...]  # local scalars (name, ctype)
    body: tuple[Node, ...]
    name: str = "kernel"

    def array(self, name: str) -> Array:
        return dict(self.arrays)[name]

    def scalar_type(self, name: str) -> str:
        d = dict(self.scalars + self.locals)
        return d[name]

    def is_local(self, name: str) -> bool:
        return name in dict(self.locals)


# ------------------------------------------------------------------------------------------------
# Generic traversal
# ------------------------------------------------------------------------------------------------


def sub_exprs(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Bin):
        return (e.a, e.b)
    if isinstance(e, (Un, Cast, Clamp)):
        return (e.a,)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Sel):
        return (e.ca, e.cb, e.a, e.b)
    return ()


def walk_expr(e: Optional[Expr]) -> Iterator[Expr]:
    if e is None:
        return
    yield e
    for s in sub_exprs(e):
        yield from walk_expr(s)


def walk_nodes(body: Sequence[Node]) -> Iterator[Node]:
    for n in body:
        yield n
        if isinstance(n, Loop):
            yield from walk_nodes(n.body)
        elif isinstance(n, Guard):
            yield from walk_nodes(n.then)
            yield from walk_nodes(n.els)


def statements(program: Program) -> list[Stmt]:
    return [n for n in walk_nodes(program.body) if isinstance(n, Stmt)]


def expr_kind(e: Expr, program: Program) -> str:
    if isinstance(e, Num):
        return kind_of_type(e.ctype)
    if isinstance(e, Idx):
        return "int"
    if isinstance(e, Ref):
        return kind_of_type(program.array(e.array).ctype)
    if isinstance(e, Var):
        return kind_of_type(program.scalar_type(e.name))
    if isinstance(e, Bin):
        ka, kb = expr_kind(e.a, program), expr_kind(e.b, program)
        return "float" if "float" in (ka, kb) else "int"
    if isinstance(e, Un):
        return expr_kind(e.a, program)
    if isinstance(e, Call):
        return "float"
    if isinstance(e, Cast):
        return kind_of_type(e.ctype)
    if isinstance(e, Clamp):
        return "int"
    if isinstance(e, Sel):
        return expr_kind(e.a, program)
    raise TypeError(e)


def target_type(t: Union[Ref, Var], program: Program) -> str:
    return program.array(t.array).ctype if isinstance(t, Ref) else program.scalar_type(t.name)


def reads_of(s: Stmt) -> list[Union[Ref, Var]]:
    """Every element or scalar the statement reads (compound assignments read their target)."""
    out: list[Union[Ref, Var]] = [x for x in walk_expr(s.rhs) if isinstance(x, (Ref, Var))]
    if s.op != "=":
        out.append(s.target)
    return out


# ------------------------------------------------------------------------------------------------
# Concrete execution of the control: domains, subscript ranges, validity
# ------------------------------------------------------------------------------------------------


@dataclass
class Layout:
    counts: dict[int, int] = field(default_factory=dict)  # id(stmt) -> instances
    lo: dict[tuple[str, int], int] = field(default_factory=dict)  # (array, dim) -> min subscript
    hi: dict[tuple[str, int], int] = field(default_factory=dict)
    loop_first: dict[int, int] = field(default_factory=dict)  # id(loop) -> first counter value
    errors: list[str] = field(default_factory=list)
    total: int = 0

    def offset(self, array: str, d: int) -> int:
        return -self.lo.get((array, d), 0)

    def extent(self, program: Program, array: str) -> tuple[int, ...]:
        arr = program.array(array)
        out = []
        for d in range(arr.ndim):
            if (array, d) not in self.hi:
                out.append(1)
                continue
            slack = arr.slack[d] if d < len(arr.slack) else 0
            out.append(self.hi[(array, d)] - self.lo[(array, d)] + 1 + slack)
        return tuple(out)

    @property
    def ok(self) -> bool:
        return not self.errors


def loop_values(loop: Loop, env: dict[str, int]) -> range:
    lo = max(a.eval(env) for a in loop.lower)
    hi = min(a.eval(env) for a in loop.upper)
    if loop.step > 0:
        return range(lo, hi + 1, loop.step)
    return range(hi, lo - 1, loop.step)


def cond_holds(c: Cond, env: dict[str, int]) -> bool:
    a = c.lhs.eval(env)
    b = c.rhs.eval(env)
    if c.op == "%":
        return c_mod(a, c.mod) == b
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[c.op]


def guard_holds(g: Guard, env: dict[str, int]) -> bool:
    vals = [cond_holds(c, env) for c in g.conds]
    v = any(vals) if g.disj else all(vals)
    return not v if g.neg else v


def layout(program: Program, *, max_domain: int = 2000, max_total: int = 6000,
           max_array: int = 8192) -> Layout:
    """Run the control flow concretely; subscript ranges, statement counts and validity errors."""
    lay = Layout()
    written: set[str] = set()
    budget = [max_total * 4]  # hard stop for runaway shrink candidates

    def touch(r: Ref, env: dict[str, int]) -> None:
        for d, a in enumerate(r.idx):
            v = a.eval(env)
            key = (r.array, d)
            if key not in lay.lo or v < lay.lo[key]:
                lay.lo[key] = v
            if key not in lay.hi or v > lay.hi[key]:
                lay.hi[key] = v

    def run(body: Sequence[Node], env: dict[str, int]) -> None:
        for n in body:
            if budget[0] < 0:
                return
            if isinstance(n, Stmt):
                budget[0] -= 1
                lay.counts[id(n)] = lay.counts.get(id(n), 0) + 1
                for x in reads_of(n):
                    if isinstance(x, Ref):
                        touch(x, env)
                    elif program.is_local(x.name) and x.name not in written:
                        lay.errors.append(f"local `{x.name}` read before it is written")
                if isinstance(n.target, Ref):
                    touch(n.target, env)
                else:
                    written.add(n.target.name)
            elif isinstance(n, Loop):
                vals = loop_values(n, env)
                if len(vals) and id(n) not in lay.loop_first:
                    lay.loop_first[id(n)] = vals[0]
                for v in vals:
                    run(n.body, {**env, n.var: v})
            else:
                run(n.then if guard_holds(n, env) else n.els, env)

    run(program.body, {})
    if budget[0] < 0:
        lay.errors.append("too many instances")
    for s in statements(program):
        c = lay.counts.get(id(s), 0)
        lay.total += c
        if c == 0:
            lay.errors.append("a statement never runs")
        elif c > max_domain:
            lay.errors.append(f"a statement runs {c} times (> {max_domain})")
    if lay.total > max_total:
        lay.errors.append(f"{lay.total} instances in all (> {max_total})")
    for name, _ in program.arrays:
        n = 1
        for e in lay.extent(program, name):
            n *= e
        if n > max_array:
            lay.errors.append(f"array {name} has {n} elements (> {max_array})")
    # Structural rules the shrinker might break.
    for s in statements(program):
        if not isinstance(s.target, (Ref, Var)) or (isinstance(s.target, Var) and not program.is_local(s.target.name)):
            lay.errors.append("assignment to a scalar argument")
        for x in walk_expr(s.rhs):
            if isinstance(x, Ref) and len(x.idx) != program.array(x.array).ndim:
                lay.errors.append("subscript count")
    return lay


# ------------------------------------------------------------------------------------------------
# Rendering to C
# ------------------------------------------------------------------------------------------------


def _num(n: Num) -> str:
    if isinstance(n.value, int) and n.ctype not in FLOAT_TYPES:
        return f"({n.value})" if n.value < 0 else str(n.value)
    text = repr(float(n.value))
    if "e" not in text and "." not in text:
        text += ".0"
    if n.ctype == "float":
        text += "f"
    return f"({text})" if n.value < 0 or text.startswith("-") else text


class _Renderer:
    def __init__(self, program: Program, lay: Layout):
        self.p = program
        self.lay = lay

    def ref(self, r: Ref) -> str:
        subs = "".join(f"[{(a + self.lay.offset(r.array, d)).render()}]" for d, a in enumerate(r.idx))
        return f"{r.array}{subs}"

    def expr(self, e: Expr, top: bool = False) -> str:
        if isinstance(e, Num):
            return _num(e)
        if isinstance(e, Idx):
            t = e.aff.render()
            return t if top or (len(e.aff.terms) == 1 and e.aff.const == 0 and e.aff.terms[0][1] == 1) else f"({t})"
        if isinstance(e, Ref):
            return self.ref(e)
        if isinstance(e, Var):
            return e.name
        if isinstance(e, Bin):
            t = f"{self.expr(e.a)} {e.op} {self.expr(e.b)}"
            return t if top else f"({t})"
        if isinstance(e, Un):
            return f"{e.op}{self.expr(e.a)}" if top else f"({e.op}{self.expr(e.a)})"
        if isinstance(e, Call):
            sfx = "f" if e.single else ""
            if e.fn == "sqrtabs":
                return f"sqrt{sfx}(fabs{sfx}({self.expr(e.args[0], True)}))"
            return f"{e.fn}{sfx}({', '.join(self.expr(a, True) for a in e.args)})"
        if isinstance(e, Cast):
            return f"({e.ctype}){self.expr(e.a)}"
        if isinstance(e, Clamp):
            lo, hi = CLAMP_RANGE[e.ctype]
            return f"({e.ctype})fmax(fmin({self.expr(e.a, True)}, {float(hi)!r}), {float(lo)!r})"
        if isinstance(e, Sel):
            t = f"{self.expr(e.ca)} {e.cmp} {self.expr(e.cb)} ? {self.expr(e.a)} : {self.expr(e.b)}"
            return f"({t})"
        raise TypeError(e)

    def target(self, t: Union[Ref, Var]) -> str:
        return self.ref(t) if isinstance(t, Ref) else t.name

    def minmax(self, affs: Sequence[Aff], fn: str, shift: int = 0) -> str:
        parts = [(a + shift).render() for a in affs]
        if len(parts) == 1:
            return parts[0]
        cmp = "<" if fn == "min" else ">"
        out = parts[0]
        for p in parts[1:]:
            out = f"({out} {cmp} {p} ? {out} : {p})"
        return out

    def cond(self, c: Cond) -> str:
        if c.op == "%":
            lhs = c.lhs.render()
            lhs = lhs if c.lhs.is_const() or (len(c.lhs.terms) == 1 and c.lhs.const == 0) else f"({lhs})"
            return f"{lhs} % {c.mod} == {c.rhs.render()}"
        return f"{c.lhs.render()} {c.op} {c.rhs.render()}"

    def node(self, n: Node, ind: int, out: list[str]) -> None:
        pad = "  " * ind
        if isinstance(n, Stmt):
            if n.op in ("++", "--"):
                out.append(f"{pad}{self.target(n.target)}{n.op};")
            else:
                out.append(f"{pad}{self.target(n.target)} {n.op} {self.expr(n.rhs, True)};")
        elif isinstance(n, Loop):
            v = n.var
            if n.step > 0:
                init = self.minmax(n.lower, "max")
                if n.style == "and" and len(n.upper) > 1:
                    op = "<=" if n.incl else "<"
                    sh = 0 if n.incl else 1
                    test = " && ".join(f"{v} {op} {(a + sh).render()}" for a in n.upper)
                else:
                    test = f"{v} <= {self.minmax(n.upper, 'min')}" if n.incl else f"{v} < {self.minmax(n.upper, 'min', 1)}"
                inc = f"{v}++" if n.step == 1 else f"{v} += {n.step}"
            else:
                init = self.minmax(n.upper, "min")
                if n.style == "and" and len(n.lower) > 1:
                    op = ">=" if n.incl else ">"
                    sh = 0 if n.incl else -1
                    test = " && ".join(f"{v} {op} {(a + sh).render()}" for a in n.lower)
                else:
                    test = f"{v} >= {self.minmax(n.lower, 'max')}" if n.incl else f"{v} > {self.minmax(n.lower, 'max', -1)}"
                inc = f"{v}--" if n.step == -1 else f"{v} -= {-n.step}"
            out.append(f"{pad}for ({v} = {init}; {test}; {inc}) {{")
            for m in n.body:
                self.node(m, ind + 1, out)
            out.append(f"{pad}}}")
        else:
            joiner = " || " if n.disj else " && "
            text = joiner.join(self.cond(c) for c in n.conds)
            if n.neg:
                text = f"!({text})"
            out.append(f"{pad}if ({text}) {{")
            for m in n.then:
                self.node(m, ind + 1, out)
            if n.els:
                out.append(f"{pad}}} else {{")
                for m in n.els:
                    self.node(m, ind + 1, out)
            out.append(f"{pad}}}")


def used_names(program: Program) -> tuple[set[str], set[str], set[str]]:
    """Arrays, scalar arguments / locals, and counters the body uses."""
    arrays: set[str] = set()
    scalars: set[str] = set()
    counters: set[str] = set()
    for n in walk_nodes(program.body):
        if isinstance(n, Loop):
            counters.add(n.var)
        elif isinstance(n, Stmt):
            for x in [n.target, *walk_expr(n.rhs)]:
                if isinstance(x, Ref):
                    arrays.add(x.array)
                elif isinstance(x, Var):
                    scalars.add(x.name)
    return arrays, scalars, counters


def render(program: Program, lay: Optional[Layout] = None, header: str = "") -> str:
    """The C text of a program (only the arrays, scalars and counters it uses are declared)."""
    lay = lay or layout(program)
    r = _Renderer(program, lay)
    arrays, scalars, counters = used_names(program)
    params = []
    for name, arr in program.arrays:
        if name in arrays:
            dims = "".join(f"[{e}]" for e in lay.extent(program, name))
            params.append(f"{arr.ctype} {name}{dims}")
    for name, ctype in program.scalars:
        if name in scalars:
            params.append(f"{ctype} {name}")
    lines = []
    if header:
        lines += [f"// {h}" if h else "//" for h in header.splitlines()]
    lines += ["#include <stdint.h>", "#include <math.h>", "",
              f"void {program.name}({', '.join(params) or 'void'})", "{"]
    cs = [c for c in ("i", "j", "k", "l") if c in counters] + sorted(c for c in counters if c not in "ijkl")
    if cs:
        lines.append(f"  int {', '.join(cs)};")
    for name, ctype in program.locals:
        if name in scalars:
            lines.append(f"  {ctype} {name};")
    lines.append("#pragma scop")
    for n in program.body:
        r.node(n, 1, lines)
    lines += ["#pragma endscop", "}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Features (for the distribution test and the fuzz report)
# ------------------------------------------------------------------------------------------------


def _access_class(r: Ref, loop_vars: Sequence[str]) -> str:
    vs = []
    for a in r.idx:
        if len(a.terms) > 1:
            return "sum"
        if any(abs(c) != 1 for _, c in a.terms):
            return "scaled"
        if any(c < 0 for _, c in a.terms):
            return "reversed"
        vs += [v for v, _ in a.terms]
    order = [loop_vars.index(v) for v in vs if v in loop_vars]
    if order != sorted(order) or len(set(order)) != len(order):
        return "transpose"
    return "uniform"


def features(program: Program) -> Counter:
    """Counts of the features listed in the fuzzing brief, read off the IR structurally."""
    f: Counter = Counter()
    types = {arr.ctype for _, arr in program.arrays} | {t for _, t in program.scalars + program.locals}
    for t in types:
        f[f"type:{t}"] += 1
    if len({a.ctype for _, a in program.arrays}) > 1:
        f["mixed-types"] += 1
    if program.scalars:
        f["scalar-arg"] += 1

    def visit(body: Sequence[Node], loops: list[str], depth: int) -> None:
        for n in body:
            if isinstance(n, Loop):
                f[f"depth{depth + 1}"] += 1
                outer = set(loops)
                lv = set().union(*(a.vars() for a in n.lower)) & outer
                uv = set().union(*(a.vars() for a in n.upper)) & outer
                if len(n.lower) > 1 or len(n.upper) > 1:
                    f["minmax-bound"] += 1
                if lv and uv:
                    f["skewed-bound"] += 1
                elif lv or uv:
                    f["triangular-bound"] += 1
                if n.step < 0:
                    f["decrementing"] += 1
                if abs(n.step) == 2:
                    f["step2"] += 1
                visit(n.body, loops + [n.var], depth + 1)
            elif isinstance(n, Guard):
                f["if-guard"] += 1
                if n.els:
                    f["if-else"] += 1
                if any(c.op == "%" for c in n.conds):
                    f["guard-mod"] += 1
                visit(n.then, loops, depth)
                visit(n.els, loops, depth)
            else:
                tgt = n.target
                if isinstance(tgt, Var):
                    f["local-scalar"] += 1
                else:
                    used = set().union(*(a.vars() for a in tgt.idx)) if tgt.idx else set()
                    if n.op not in ("=",) and not set(loops) <= used:
                        f["reduction"] += 1
                    f[f"write-{_access_class(tgt, loops)}"] += 1
                    if any(isinstance(x, Ref) and x.array == tgt.array for x in walk_expr(n.rhs)):
                        f["in-place"] += 1
                if n.op not in ("=",):
                    f["compound-assign"] += 1
                for x in walk_expr(n.rhs):
                    if isinstance(x, Ref):
                        f[f"read-{_access_class(x, loops)}"] += 1
                    elif isinstance(x, Bin):
                        fixed = isinstance(x.b, Num) and x.b.fixed
                        if x.op == "/" and fixed:
                            f["div-const"] += 1
                        elif x.op == "/":
                            f["div-data"] += 1
                        elif x.op == "%":
                            f["mod-const"] += 1
                        elif x.op in ("<<", ">>"):
                            f["shift"] += 1
                        elif x.op in ("&", "|", "^"):
                            f["bitwise"] += 1
                    elif isinstance(x, Sel):
                        f["select"] += 1
                    elif isinstance(x, Call):
                        f[f"call-{x.fn}"] += 1
                    elif isinstance(x, (Cast, Clamp)):
                        f["cast"] += 1
                    elif isinstance(x, Idx):
                        f["counter-value"] += 1

    visit(program.body, [], 0)
    for k in [k for k in f if k.startswith("read-") or k.startswith("write-")]:
        f["uniform-access" if k.endswith("uniform") else "nonuniform-access"] += f[k]
    return f


# ------------------------------------------------------------------------------------------------
# The generator
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenConfig:
    """Knobs: which element types, how big."""

    types: tuple[str, ...] = ALL_TYPES
    max_domain: int = 2000
    max_total: int = 6000
    max_nests: int = 3
    max_depth: int = 3
    size_scale: float = 1.0  # scales loop extents (smaller for RTL runs)
    rect_only: bool = False  # rectangular, increasing, unit-step loops only, no guards
    perfect: bool = False  # one perfect nest of depth 2-3 (statements only in the innermost body)
    uniform_only: bool = False  # subscripts: counters in nesting order plus constants


#: Programs whose every element type is an integer (the RTL back end handles these today).
INT_ONLY = GenConfig(types=INT_TYPES)
#: Small integer programs for RTL runs in the default suite.
RTL_SMALL = GenConfig(types=INT_TYPES, max_total=1200, max_domain=600, max_nests=2, size_scale=0.6)
#: Stencil-like programs that `--tile auto` can actually tile (one perfect-ish nest, uniform accesses).
TILE_FRIENDLY = GenConfig(max_nests=1, rect_only=True, uniform_only=True, perfect=True)
PROFILES = {"default": GenConfig(), "int": INT_ONLY, "rtl-small": RTL_SMALL, "tile": TILE_FRIENDLY}


@dataclass
class _Ctx:
    vars: list[str]
    ranges: dict[str, tuple[int, int]]
    ready: list[str] = field(default_factory=list)  # locals readable here


class _Gen:
    def __init__(self, seed: int, cfg: GenConfig):
        self.seed = seed
        self.cfg = cfg
        self.rng = random.Random(f"dpn-fuzz:{seed}")

    # -- small helpers -------------------------------------------------------------------------
    def pick(self, weighted: dict):
        keys = list(weighted)
        return self.rng.choices(keys, weights=[weighted[k] for k in keys])[0]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # -- program -------------------------------------------------------------------------------
    def program(self) -> Program:
        for _ in range(200):
            p = self._attempt()
            lay = layout(p, max_domain=self.cfg.max_domain, max_total=self.cfg.max_total)
            if lay.ok:
                return p
        raise RuntimeError(f"seed {self.seed}: no valid program in 200 attempts")

    def _attempt(self) -> Program:
        r = self.rng
        pool = list(self.cfg.types)
        if len(pool) > 1 and self.chance(0.3):
            self.types = r.sample(pool, r.choice([2, 2, 3]) if len(pool) >= 3 else 2)
        else:
            self.types = [r.choice(pool)]
        self.single_float = all(t == "float" for t in self.types if t in FLOAT_TYPES) and "float" in self.types
        names = "ABCDEFGH"
        n_arrays = r.choice([2, 3, 3, 4, 4, 5])
        self.arrays: dict[str, Array] = {}
        for k in range(n_arrays):
            ndim = self.pick({1: 4, 2: 4, 3: 1})
            slack = tuple(r.choice([0, 0, 0, 1, 2]) for _ in range(ndim))
            self.arrays[names[k]] = Array(r.choice(self.types), ndim, slack)
        self.scalars: list[tuple[str, str]] = []
        for name in ("alpha", "beta")[: r.choice([0, 0, 1, 1, 2])]:
            self.scalars.append((name, r.choice(self.types)))
        self.locals: list[tuple[str, str]] = []
        body: list[Node] = []
        for _ in range(min(r.choice([1, 1, 2, 2, 3]), self.cfg.max_nests)):
            depth = self.pick({1: 3, 2: 5, 3: 3}) if self.cfg.max_depth >= 3 else self.pick({1: 1, 2: 1})
            if self.cfg.perfect:
                depth = self.pick({2: 2, 3: 1})
            elif r.random() < 0.08:
                body.append(self.stmt_plain(_Ctx([], {})))  # a statement outside any loop
            body.append(self.loop(0, depth, _Ctx([], {}), None))
        return Program(self.seed, tuple(self.arrays.items()), tuple(self.scalars), tuple(self.locals), tuple(body))

    def new_local(self, ctype: str) -> str:
        name = f"t{len(self.locals)}"
        self.locals.append((name, ctype))
        return name

    # -- loops ---------------------------------------------------------------------------------
    def extent(self, depth: int) -> int:
        lo, hi = {1: (4, 60), 2: (3, 20), 3: (2, 10)}[depth]
        if self.cfg.perfect:
            lo = max(lo, 6)
        hi = max(lo, int(hi * self.cfg.size_scale))
        return self.rng.randint(lo, hi)

    def loop(self, level: int, depth: int, ctx: _Ctx, red) -> Loop:
        r = self.rng
        var = "ijk"[level]
        n = self.extent(depth)
        kinds = {"rect": 6}
        if ctx.vars and not self.cfg.rect_only:
            kinds.update({"tri_le": 3, "tri_ge": 2, "skew": 2, "band": 2, "tri_min": 1})
        kind = self.pick(kinds)
        o = ctx.vars[-1] if ctx.vars and self.chance(0.8) else (r.choice(ctx.vars) if ctx.vars else None)
        olo, ohi = ctx.ranges.get(o, (0, 0)) if o else (0, 0)
        c0 = r.choice([0, 0, 0, 1, 2])
        if kind == "rect":
            lower, upper = (Aff.of(c0),), (Aff.of(c0 + n - 1),)
            rng_ = (c0, c0 + n - 1)
        elif kind == "tri_le":  # j <= i, j < i, j <= i + 1
            d = r.choice([0, 0, -1, 1])
            lower, upper = (Aff.of(0),), (Aff.var(o, 1, d),)
            rng_ = (0, ohi + d)
        elif kind == "tri_ge":  # j = i; j < N
            d = r.choice([0, 1])
            top = ohi + r.choice([0, 1, 2])
            lower, upper = (Aff.var(o, 1, d),), (Aff.of(top),)
            rng_ = (olo + d, top)
        elif kind == "skew":  # j = i + 1; j < N + i
            d = r.choice([0, 1])
            m = max(2, n // 2)
            lower, upper = (Aff.var(o, 1, d),), (Aff.var(o, 1, m),)
            rng_ = (olo + d, ohi + m)
        elif kind == "band":  # max(0, i - w) .. min(N - 1, i + w)
            w = r.choice([1, 2, 3])
            top = max(ohi - r.choice([0, 1]), 1)
            lower, upper = (Aff.of(0), Aff.var(o, 1, -w)), (Aff.of(top), Aff.var(o, 1, w))
            if self.chance(0.5):
                lower, upper = lower[::-1], upper[::-1]
            rng_ = (0, top)
        else:  # tri_min: 0 .. min(i, c)
            c = max(1, (olo + ohi) // 2)
            lower, upper = (Aff.of(0),), (Aff.var(o, 1, 0), Aff.of(c))
            rng_ = (0, c)
        step = 2 if self.chance(0.12) else 1
        if self.chance(0.18):
            step = -step
        if self.cfg.rect_only:
            step = 1
        loop = Loop(var, lower, upper, step, (), incl=self.chance(0.4),
                    style="and" if self.chance(0.35) else "ternary")
        inner = _Ctx(ctx.vars + [var], {**ctx.ranges, var: rng_}, list(ctx.ready))
        body = self.body(level, depth, inner, red)
        return replace(loop, body=tuple(body))

    def body(self, level: int, depth: int, ctx: _Ctx, red) -> list[Node]:
        r = self.rng
        items: list[Node] = []
        if level == depth - 1:
            if red is not None:
                items.append(self.maybe_guard(Stmt(red[0], red[1], self.rhs_for(red[0], red[1], ctx)), ctx))
            for _ in range(r.choice([1, 1, 2, 2, 3]) - (red is not None)):
                items += self.stmt_group(ctx)
            if not items:
                items += self.stmt_group(ctx)
            return items
        pre: list[Node] = []
        post: list[Node] = []
        new_red = red
        pat = self.pick({"array-red": 3, "scalar-red": 2, "plain": 3, "none": 3}) if red is None else "none"
        if self.cfg.perfect:
            pat = "none"
        here = list(ctx.vars)
        if pat == "array-red":
            arr = r.choice(list(self.arrays))
            tgt = Ref(arr, self.index(arr, here, "uniform"))
            op = self.compound_op(self.arrays[arr].ctype)
            if self.chance(0.8):
                pre.append(Stmt(tgt, "=", self.init_value(self.arrays[arr].ctype, ctx)))
            new_red = (tgt, op)
            if self.chance(0.4):
                post.append(self.stmt_plain(ctx, extra=tgt))
        elif pat == "scalar-red":
            t = r.choice(self.types)
            name = self.new_local(t)
            pre.append(Stmt(Var(name), "=", self.init_value(t, ctx)))
            new_red = (Var(name), self.compound_op(t))
            post.append(self.stmt_plain(ctx, extra=Var(name)))
        elif pat == "plain":
            (pre if self.chance(0.6) else post).append(self.maybe_guard(self.stmt_plain(ctx), ctx))
        items += pre
        items.append(self.maybe_guard(self.loop(level + 1, depth, ctx, new_red), ctx, p=0.06))
        if self.chance(0.12) and not self.cfg.perfect:
            items.append(self.loop(level + 1, depth, ctx, None))
        items += post
        return items

    def maybe_guard(self, node: Node, ctx: _Ctx, p: float = 0.18) -> Node:
        if not ctx.vars or not self.chance(p) or self.cfg.rect_only:
            return node
        conds = [self.cond(ctx)]
        if self.chance(0.3):
            conds.append(self.cond(ctx))
        els: tuple[Node, ...] = ()
        if isinstance(node, Stmt) and self.chance(0.35):
            els = (self.stmt_plain(ctx),)
        return Guard(tuple(conds), (node,), els, disj=len(conds) > 1 and self.chance(0.3), neg=self.chance(0.15))

    def cond(self, ctx: _Ctx) -> Cond:
        r = self.rng
        v = r.choice(ctx.vars)
        lo, hi = ctx.ranges[v]
        mid = (lo + hi) // 2 + r.choice([-1, 0, 1])
        kind = self.pick({"cmp": 3, "mod": 2, "pair": 2, "eq": 1})
        if kind == "mod":
            m = r.choice([2, 2, 3])
            return Cond(Aff.var(v) if self.chance(0.7) or len(ctx.vars) < 2 else Aff.var(v) + Aff.var(r.choice(ctx.vars)),
                        "%", Aff.of(r.randrange(m)), m)
        if kind == "pair" and len(ctx.vars) >= 2:
            a, b = r.sample(ctx.vars, 2)
            if self.chance(0.5):
                return Cond(Aff.var(a), r.choice(["<=", "<", ">", ">=", "!="]), Aff.var(b, 1, r.choice([0, 0, 1])))
            (la, ha), (lb, hb) = ctx.ranges[a], ctx.ranges[b]
            return Cond(Aff.var(a) + Aff.var(b), r.choice(["<", "<=", ">="]), Aff.of((la + ha + lb + hb) // 2))
        if kind == "eq":
            return Cond(Aff.var(v), r.choice(["==", "!="]), Aff.of(mid))
        return Cond(Aff.var(v), r.choice(["<", "<=", ">", ">="]), Aff.of(mid))

    # -- statements ------------------------------------------------------------------------------
    def stmt_group(self, ctx: _Ctx) -> list[Node]:
        r = self.rng
        kind = self.pick({"plain": 5, "inplace": 2, "local": 1.5, "reduce": 1.2, "incr": 0.3})
        if kind == "inplace":
            return [self.maybe_guard(self.stmt_inplace(ctx), ctx)]
        if kind == "local":
            t = r.choice(self.types)
            name = self.new_local(t)
            first = Stmt(Var(name), "=", self.expr(ctx, kind_of_type(t), r.choice([1, 2, 2, 3])))
            ctx.ready.append(name)
            second = self.stmt_plain(ctx, extra=Var(name))
            return [first, self.maybe_guard(second, ctx)]
        if kind == "reduce" and ctx.vars:
            arr = r.choice(list(self.arrays))
            keep = ctx.vars[:-1] if len(ctx.vars) > 1 and self.chance(0.7) else []
            tgt = Ref(arr, self.index(arr, keep, "uniform"))
            op = self.compound_op(self.arrays[arr].ctype)
            return [self.maybe_guard(Stmt(tgt, op, self.rhs_for(tgt, op, ctx)), ctx)]
        if kind == "incr":
            ints = [a for a, v in self.arrays.items() if v.ctype in INT_TYPES]
            if ints:
                arr = r.choice(ints)
                return [Stmt(Ref(arr, self.index(arr, ctx.vars, "uniform")), r.choice(["++", "--"]), None)]
        return [self.maybe_guard(self.stmt_plain(ctx), ctx)]

    def stmt_plain(self, ctx: _Ctx, extra: Optional[Expr] = None) -> Stmt:
        """`X[...] op= expr`; with `extra` (a scalar to consume), `expr` combines it."""
        r = self.rng
        arr = r.choice(list(self.arrays))
        ctype = self.arrays[arr].ctype
        tgt = Ref(arr, self.index(arr, ctx.vars, "uniform" if self.chance(0.65) else None))
        op = "=" if self.chance(0.8) else self.compound_op(ctype)
        if extra is None:
            return Stmt(tgt, op, self.rhs_for(tgt, op, ctx))
        if op not in ("=", "+=", "-=", "*="):
            op = "="
        rhs = self.expr(ctx, kind_of_type(ctype), r.choice([0, 1, 2]))
        bop = r.choice(["+", "-", "*"])
        rhs = Bin(bop, extra, rhs) if self.chance(0.5) else Bin(bop, rhs, extra)
        return Stmt(tgt, op, self.fit(rhs, ctype, op))

    def stmt_inplace(self, ctx: _Ctx) -> Stmt:
        r = self.rng
        arr = r.choice(list(self.arrays))
        idx = self.index(arr, ctx.vars, "uniform")
        tgt = Ref(arr, idx)
        shifted = list(idx)
        d = r.randrange(len(idx))
        shifted[d] = shifted[d] + r.choice([-1, -1, -2, 1])
        kind = kind_of_type(self.arrays[arr].ctype)
        rhs: Expr = Ref(arr, tuple(shifted))
        rhs = Bin(r.choice(["+", "-", "*"] if kind == "float" else ["+", "-", "^", "*"]), rhs, Ref(arr, idx))
        if self.chance(0.5):
            rhs = Bin("+", rhs, self.expr(ctx, kind, 1))
        return Stmt(tgt, "=", self.fit(rhs, self.arrays[arr].ctype, "="))

    def prog_view(self) -> Program:
        return Program(self.seed, tuple(self.arrays.items()), tuple(self.scalars), tuple(self.locals), ())

    def compound_op(self, ctype: str) -> str:
        if ctype in FLOAT_TYPES:
            return self.pick({"+=": 6, "-=": 2, "*=": 1.5, "/=": 1})
        return self.pick({"+=": 6, "-=": 2, "*=": 1, "^=": 1, "|=": 0.5, "&=": 0.5, "/=": 0.5, "%=": 0.3,
                          "<<=": 0.3, ">>=": 0.5})

    def rhs_for(self, tgt: Union[Ref, Var], op: str, ctx: _Ctx) -> Expr:
        t = target_type(tgt, self.prog_view())
        if op in ("/=", "%=") and t in INT_TYPES:
            return Num(self.rng.choice([2, 3, 5, 7]), "int32_t", fixed=True)
        if op in ("<<=", ">>="):
            return Num(self.rng.randint(1, 3), "int32_t", fixed=True)
        kind = kind_of_type(t)
        return self.fit(self.expr(ctx, kind, self.rng.choice([1, 2, 2, 3])), t, op)

    def fit(self, e: Expr, ctype: str, op: str) -> Expr:
        """Make `e` safe to assign (with `op`) to a `ctype` target."""
        if ctype in INT_TYPES and expr_kind(e, self.prog_view()) == "float":
            return Clamp(ctype, e)
        if op == "=" and ctype in ("uint8_t", "int16_t") and not any(
                isinstance(x, (Ref, Var, Idx)) for x in walk_expr(e)):
            return Cast(ctype, e)  # a constant expression: convert explicitly (no -Woverflow)
        return e

    def two_leaves(self, ctx: _Ctx, kind: str) -> tuple[Expr, Expr]:
        """Two different leaves (comparing a value with itself draws -Wtautological-compare)."""
        a = self.leaf(ctx, kind)
        for _ in range(8):
            b = self.leaf(ctx, kind)
            if b != a:
                return a, b
        return a, self.const(kind) if not isinstance(a, Num) else replace(a, value=a.value + 1)

    def init_value(self, ctype: str, ctx: _Ctx) -> Expr:
        if self.chance(0.6):
            return Num(0.0, ctype) if ctype in FLOAT_TYPES else Num(self.rng.choice([0, 0, 1]), "int32_t")
        return self.fit(self.expr(ctx, kind_of_type(ctype), 1), ctype, "=")

    # -- subscripts ------------------------------------------------------------------------------
    def index(self, arr: str, vars_: list[str], pattern: Optional[str]) -> tuple[Aff, ...]:
        r = self.rng
        nd = self.arrays[arr].ndim
        if self.cfg.uniform_only:
            pattern = "uniform"
        if pattern is None:
            choices = {"uniform": 2, "transpose": 2, "sum": 2, "scaled": 1.5, "const": 1, "diff": 1, "reversed": 0.7}
            pattern = self.pick(choices)
        if not vars_:
            return tuple(Aff.of(r.randint(0, 3)) for _ in range(nd))
        vs = list(vars_)
        if pattern == "transpose":
            vs = vs[::-1]
        # pick nd counters (in order) or pad with constants
        if len(vs) >= nd:
            start = r.randint(0, len(vs) - nd) if pattern != "transpose" else 0
            chosen: list[Optional[str]] = vs[start:start + nd] if self.chance(0.7) else sorted(
                r.sample(vs, nd), key=vs.index)
        else:
            chosen = [None] * nd
            for pos, v in zip(sorted(r.sample(range(nd), len(vs))), vs):
                chosen[pos] = v
        idx: list[Aff] = []
        for v in chosen:
            off = r.choice([0, 0, 0, -1, 1, 2]) if pattern in ("uniform", "transpose") else r.choice([0, 1, -1])
            idx.append(Aff.of(r.randint(0, 4)) if v is None else Aff.var(v, 1, off))
        d = r.randrange(nd)
        live = [k for k, a in enumerate(idx) if a.terms] or [d]
        d = r.choice(live)
        if pattern == "sum" and len(vars_) >= 1:
            other = r.choice(vars_)
            idx[d] = idx[d] + Aff.var(other)
        elif pattern == "diff" and len(vars_) >= 2:
            a, b = r.sample(vars_, 2)
            idx[d] = Aff.var(a) + Aff.var(b, -1)
        elif pattern == "scaled":
            v = idx[d].terms[0][0] if idx[d].terms else r.choice(vars_)
            idx[d] = Aff.var(v, r.choice([2, 2, 3]), r.choice([0, 1]))
        elif pattern == "reversed":
            v = idx[d].terms[0][0] if idx[d].terms else r.choice(vars_)
            idx[d] = Aff.var(v, -1, 0)
        elif pattern == "const":
            idx[d] = Aff.of(r.randint(0, 3))
        return tuple(a.norm() for a in idx)

    # -- values ----------------------------------------------------------------------------------
    def float_ctype(self) -> str:
        fl = [t for t in self.types if t in FLOAT_TYPES]
        return self.rng.choice(fl) if fl else "double"

    def const(self, kind: str) -> Num:
        r = self.rng
        if kind == "float":
            v = r.choice([0.5, 0.25, 1.5, 2.0, 3.0, 0.1, 0.3, 1.0, 0.125, 10.0, 1e-3, 7.25])
            return Num(-v if self.chance(0.2) else v, self.float_ctype())
        v = r.choice([0, 1, 1, 2, 3, 5, 7, 10, 16, 100, 255, 1000, 12345])
        return Num(-v if self.chance(0.25) else v, "int32_t")

    def leaf(self, ctx: _Ctx, kind: str) -> Expr:
        r = self.rng
        same = [a for a, v in self.arrays.items() if kind_of_type(v.ctype) == kind]
        other = [a for a in self.arrays if a not in same]
        sc_same = [n for n, t in self.scalars if kind_of_type(t) == kind]
        loc = [n for n in ctx.ready if kind_of_type(dict(self.locals)[n]) == kind]
        opts = {"read": 6 if same else 0, "cross": (1.5 if same else 6) if other else 0,
                "scalar": 1.5 if sc_same else 0, "local": 2 if loc else 0, "const": 2,
                "counter": (1.5 if kind == "int" else 0.5) if ctx.vars else 0}
        what = self.pick(opts)
        if what == "read":
            arr = r.choice(same)
            return Ref(arr, self.index(arr, ctx.vars, "uniform" if self.chance(0.6) else None))
        if what == "cross":
            arr = r.choice(other)
            ref = Ref(arr, self.index(arr, ctx.vars, "uniform" if self.chance(0.6) else None))
            if kind == "int":
                return Clamp(r.choice(["int32_t", "int16_t", "int64_t", "uint8_t"]), ref)
            return Cast(self.float_ctype(), ref) if self.chance(0.7) else ref
        if what == "scalar":
            return Var(r.choice(sc_same))
        if what == "local":
            return Var(r.choice(loc))
        if what == "counter":
            v = r.choice(ctx.vars)
            a = Aff.var(v, 1, r.choice([0, 0, 1, -1]))
            if len(ctx.vars) > 1 and self.chance(0.3):
                a = a + Aff.var(r.choice(ctx.vars))
            return Idx(a) if kind == "int" else Cast(self.float_ctype(), Idx(a))
        return self.const(kind)

    def expr(self, ctx: _Ctx, kind: str, depth: int) -> Expr:
        r = self.rng
        if depth <= 0 or self.chance(0.2):
            return self.leaf(ctx, kind)
        sub = lambda k=kind: self.expr(ctx, k, depth - 1)  # noqa: E731
        if kind == "int":
            op = self.pick({"+": 5, "-": 4, "*": 4, "/c": 2, "%c": 1.5, "<<": 1, ">>": 1.5, "&": 1, "|": 0.8,
                            "^": 1, "neg": 0.5, "~": 0.3, "sel": 2, "cast": 1.5, "max": 0.7})
            if op in ("+", "-", "*", "&", "|", "^"):
                return Bin(op, sub(), sub())
            if op == "/c":
                return Bin("/", sub(), Num(r.choice([2, 3, 4, 5, 7, 8, 16, -3]), "int32_t", fixed=True))
            if op == "%c":
                return Bin("%", sub(), Num(r.choice([2, 3, 5, 7, 8, 16, -3]), "int32_t", fixed=True))
            if op in ("<<", ">>"):
                return Bin(op, sub(), Num(r.randint(0, 7), "int32_t", fixed=True))
            if op == "neg":
                return Un("-", sub())
            if op == "~":
                return Un("~", sub())
            if op == "cast":
                return Cast(r.choice(INT_TYPES), sub())
            if op == "max":
                a, b = self.two_leaves(ctx, "int")
                return Sel(r.choice([">", "<"]), a, b, a, b)
            ck = kind_of_type(r.choice(self.types))
            return Sel(r.choice(["<", "<=", ">", ">=", "==", "!="]), *self.two_leaves(ctx, ck), sub(), sub())
        op = self.pick({"+": 5, "-": 4, "*": 4, "/c": 2, "/": 1.5, "fmin": 1, "fmax": 1, "fabs": 1,
                        "sqrtabs": 1, "sel": 1.5, "neg": 0.5, "cast": 0.7, "mixint": 0.8})
        single = self.single_float and self.chance(0.5)
        if op in ("+", "-", "*", "/"):
            return Bin(op, sub(), sub())
        if op == "/c":
            return Bin("/", sub(), Num(r.choice([2.0, 3.0, 0.5, 10.0, -4.0]), self.float_ctype(), fixed=True))
        if op in ("fmin", "fmax"):
            return Call(op, (sub(), sub()), single)
        if op in ("fabs", "sqrtabs"):
            return Call(op, (sub(),), single)
        if op == "sel":
            ck = kind_of_type(r.choice(self.types))
            return Sel(r.choice(["<", "<=", ">", ">=", "!="]), *self.two_leaves(ctx, ck), sub(), sub())
        if op == "neg":
            return Un("-", sub())
        if op == "cast":
            return Cast(r.choice(FLOAT_TYPES), sub())
        # float op int, with the usual arithmetic conversions doing the work
        return Bin(r.choice(["+", "-", "*"]), sub(), self.expr(ctx, "int", depth - 1))


def generate(seed: int, config: GenConfig = GenConfig()) -> Program:
    """The program of a seed (deterministic: same seed and config, same program)."""
    return _Gen(seed, config).program()


def generate_c(seed: int, config: GenConfig = GenConfig()) -> str:
    p = generate(seed, config)
    return render(p, header=f"generated by tests/fuzz/generator.py, seed {seed}")
