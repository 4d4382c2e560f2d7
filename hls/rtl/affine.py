"""isl objects to Verilog expressions over the iteration registers of a process.

All control arithmetic is 32-bit signed (`CW`).  Integer division appears only as floor division by a
positive constant (isl's quasi-affine `floor(e/d)`), printed so that Verilog's truncating `/` gives
the floor for negative numerators too.  Sets become OR-of-AND of affine comparisons; piecewise
functions become nested `?:`.  Each affine form is one adder chain followed by one comparator.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import islpy as isl

CW = 32  # control word width


def _frac(v: isl.Val) -> Fraction:
    return Fraction(str(v))


def _lin(terms: list[tuple[int, str]], const: int) -> str:
    """`c0*e0 + c1*e1 + ... + const` with integer coefficients, in plain Verilog."""
    parts: list[tuple[int, str]] = [(c, e if abs(c) == 1 else f"{abs(c)} * {e}") for c, e in terms if c]
    if const or not parts:
        parts.append((const, str(abs(const))))
    out = ("-" if parts[0][0] < 0 else "") + parts[0][1]
    for c, t in parts[1:]:
        out += (" - " if c < 0 else " + ") + t
    return out


def floor_div(e: str, d: int) -> str:
    if d == 1:
        return e
    return f"((({e}) >= 0) ? (({e}) / {d}) : (-((-({e}) + {d - 1}) / {d})))"


def aff_expr(aff: isl.Aff, names: Sequence[str]) -> str:
    """An integer-valued quasi-affine function of the set dimensions `names`."""
    den = int(aff.get_denominator_val().to_python())
    n = aff.dim(isl.dim_type.in_)
    assert aff.dim(isl.dim_type.param) == 0 or all(
        aff.get_coefficient_val(isl.dim_type.param, k).is_zero() for k in range(aff.dim(isl.dim_type.param))
    ), "parameters must be bound before RTL generation"
    terms: list[tuple[int, str]] = []
    for k in range(n):
        c = _frac(aff.get_coefficient_val(isl.dim_type.in_, k)) * den
        terms.append((int(c), names[k]))
    for k in range(aff.dim(isl.dim_type.div)):
        c = _frac(aff.get_coefficient_val(isl.dim_type.div, k)) * den
        if c:
            terms.append((int(c), f"({div_expr(aff.get_div(k), names)})"))
    const = int(_frac(aff.get_constant_val()) * den)
    return floor_div(_lin(terms, const), den) if den != 1 else _lin(terms, const)


def div_expr(div: isl.Aff, names: Sequence[str]) -> str:
    return aff_expr(div, names)


def basic_set_expr(b: isl.BasicSet, names: Sequence[str]) -> str:
    ls = b.get_local_space()
    divs = [f"({aff_expr(ls.get_div(k), names)})" for k in range(b.dim(isl.dim_type.div))]
    conds: list[str] = []
    for c in b.get_constraints():
        terms = [(int(c.get_coefficient_val(isl.dim_type.set, k).to_python()), names[k])
                 for k in range(b.dim(isl.dim_type.set))]
        terms += [(int(c.get_coefficient_val(isl.dim_type.div, k).to_python()), divs[k]) for k in range(len(divs))]
        const = int(c.get_constant_val().to_python())
        lhs = _lin(terms, const)
        conds.append(f"(({lhs}) {'==' if c.is_equality() else '>='} 0)")
    return " && ".join(conds) if conds else "1'b1"


def set_expr(s: isl.Set, names: Sequence[str]) -> str:
    """Membership test of the point `names` in `s` (params already eliminated)."""
    s = s.compute_divs().coalesce()
    if s.is_empty():
        return "1'b0"
    if s.plain_is_universe():
        return "1'b1"
    parts = [basic_set_expr(b, names) for b in s.get_basic_sets()]
    if any(p == "1'b1" for p in parts):
        return "1'b1"
    return " || ".join(f"({p})" for p in parts)


def pw_aff_expr(pa: isl.PwAff, names: Sequence[str]) -> str:
    pieces: list[tuple[isl.Set, isl.Aff]] = []
    pa.foreach_piece(lambda s, a: pieces.append((s, a)))
    assert pieces, "empty piecewise function"
    out = aff_expr(pieces[-1][1], names)
    for s, a in reversed(pieces[:-1]):
        out = f"(({set_expr(s, names)}) ? ({aff_expr(a, names)}) : ({out}))"
    return out


def pw_multi_aff_pieces(pma: isl.PwMultiAff) -> list[tuple[isl.Set, isl.MultiAff]]:
    pieces: list[tuple[isl.Set, isl.MultiAff]] = []
    pma.foreach_piece(lambda s, m: pieces.append((s, m)))
    return pieces


def drop_params(obj, values: dict[str, int]):
    """Fix bound parameters and remove them, so that generated expressions only see iteration dims."""
    if obj.dim(isl.dim_type.param) == 0:
        return obj
    if isinstance(obj, isl.PwAff):  # an affine value of the statement (e.g. `n - 1`): through its map
        return isl.PwMultiAff.from_map(drop_params(isl.Map.from_pw_aff(obj), values)).get_pw_aff(0)
    names = [obj.get_dim_name(isl.dim_type.param, k) for k in range(obj.dim(isl.dim_type.param))]
    for k, nm in enumerate(names):
        if nm in values:
            obj = obj.fix_val(isl.dim_type.param, k, values[nm]) if hasattr(obj, "fix_val") else obj
    return obj.project_out(isl.dim_type.param, 0, len(names))
