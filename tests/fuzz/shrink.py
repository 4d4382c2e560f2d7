"""Shrink a failing generated program to a small one that fails the same way.

Works on the generator's IR, so every candidate is re-laid-out (array offsets and sizes recomputed)
and re-rendered as valid C.  Candidates, tried greedily from the most to the least drastic:
drop a statement / loop / guard, replace a loop by its body at the counter's first value, replace a
guard by one of its branches, simplify loop bounds (single bound, no step, no reversal, smaller
extent, bounds made constant), simplify statements (`op=` to `=`, subscripts, subexpressions replaced
by a child of the same kind or by a constant), and shrink constants.  A candidate is kept when it is
smaller (shorter C text, then fewer instances) and `check` still reports the same failure signature
(stage, kind, where).  `save_regression` writes the result to `tests/regressions/fuzz_<hash>.c` with
an `xfail:` first line.
"""

from __future__ import annotations

import datetime
import hashlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

from . import generator as G
from .check import Verdict, check_program

REGRESSIONS = Path(__file__).resolve().parents[1] / "regressions"


# ------------------------------------------------------------------------------------------------
# Substitution of a counter by a value (unwrapping a loop)
# ------------------------------------------------------------------------------------------------


def _subst_expr(e: G.Expr, var: str, val: int) -> G.Expr:
    if isinstance(e, G.Idx):
        return G.Idx(e.aff.subst(var, val))
    if isinstance(e, G.Ref):
        return G.Ref(e.array, tuple(a.subst(var, val) for a in e.idx))
    if isinstance(e, G.Bin):
        return G.Bin(e.op, _subst_expr(e.a, var, val), _subst_expr(e.b, var, val))
    if isinstance(e, G.Un):
        return G.Un(e.op, _subst_expr(e.a, var, val))
    if isinstance(e, G.Call):
        return G.Call(e.fn, tuple(_subst_expr(a, var, val) for a in e.args), e.single)
    if isinstance(e, G.Cast):
        return G.Cast(e.ctype, _subst_expr(e.a, var, val))
    if isinstance(e, G.Clamp):
        return G.Clamp(e.ctype, _subst_expr(e.a, var, val))
    if isinstance(e, G.Sel):
        return G.Sel(e.cmp, *(_subst_expr(x, var, val) for x in (e.ca, e.cb, e.a, e.b)))
    return e


def _subst_node(n: G.Node, var: str, val: int) -> G.Node:
    if isinstance(n, G.Stmt):
        t = n.target
        if isinstance(t, G.Ref):
            t = G.Ref(t.array, tuple(a.subst(var, val) for a in t.idx))
        return G.Stmt(t, n.op, None if n.rhs is None else _subst_expr(n.rhs, var, val))
    if isinstance(n, G.Loop):
        if n.var == var:  # shadowing: a sibling nest reusing the name is not inside, but an inner one is
            return n
        return replace(n, lower=tuple(a.subst(var, val) for a in n.lower),
                       upper=tuple(a.subst(var, val) for a in n.upper),
                       body=tuple(_subst_node(m, var, val) for m in n.body))
    return replace(n, conds=tuple(G.Cond(c.lhs.subst(var, val), c.op, c.rhs.subst(var, val), c.mod) for c in n.conds),
                   then=tuple(_subst_node(m, var, val) for m in n.then),
                   els=tuple(_subst_node(m, var, val) for m in n.els))


# ------------------------------------------------------------------------------------------------
# Candidates
# ------------------------------------------------------------------------------------------------


def _num_for(kind: str, program: G.Program, value=1) -> G.Num:
    if kind == "int":
        return G.Num(int(value), "int32_t")
    fl = [a.ctype for _, a in program.arrays if a.ctype in G.FLOAT_TYPES]
    return G.Num(float(value), fl[0] if fl else "double")


def _expr_variants(e: G.Expr, program: G.Program) -> Iterator[G.Expr]:
    """Smaller versions of `e` with the same kind (int/float)."""
    kind = G.expr_kind(e, program)
    # the whole subtree replaced by a child of the same kind
    for c in G.sub_exprs(e):
        if G.expr_kind(c, program) == kind and not (isinstance(c, G.Num) and c.fixed):
            yield c
    if not isinstance(e, G.Num):
        yield _num_for(kind, program, 1)
        yield _num_for(kind, program, 0)
    if isinstance(e, G.Num) and not e.fixed:
        v = e.value
        for w in ([0, 1, v // 2] if isinstance(v, int) else [0.0, 1.0, 0.5]):
            if w != v and (not isinstance(v, int) or abs(w) < abs(v)):
                yield replace(e, value=w)
        return
    if isinstance(e, G.Ref):
        for idx in _index_variants(e.idx):
            yield G.Ref(e.array, idx)
        return
    if isinstance(e, G.Idx):
        for a in _aff_variants(e.aff):
            yield G.Idx(a)
        return
    if isinstance(e, G.Call) and e.single:
        yield replace(e, single=False)
    if isinstance(e, G.Sel):
        for c2 in _expr_variants(e.ca, program):
            if G.expr_kind(c2, program) == G.expr_kind(e.ca, program):
                yield replace(e, ca=c2)
        for c2 in _expr_variants(e.cb, program):
            if G.expr_kind(c2, program) == G.expr_kind(e.cb, program):
                yield replace(e, cb=c2)
        for field in ("a", "b"):
            for c2 in _expr_variants(getattr(e, field), program):
                yield replace(e, **{field: c2})
        return
    # one child simplified (the kinds of children are kept)
    if isinstance(e, G.Bin):
        for c2 in _expr_variants(e.a, program):
            if G.expr_kind(c2, program) == G.expr_kind(e.a, program):
                yield replace(e, a=c2)
        if not (isinstance(e.b, G.Num) and e.b.fixed):
            for c2 in _expr_variants(e.b, program):
                if G.expr_kind(c2, program) == G.expr_kind(e.b, program):
                    yield replace(e, b=c2)
    elif isinstance(e, (G.Un, G.Cast, G.Clamp)):
        for c2 in _expr_variants(e.a, program):
            if G.expr_kind(c2, program) == G.expr_kind(e.a, program):
                yield replace(e, a=c2)
    elif isinstance(e, G.Call):
        for k, a in enumerate(e.args):
            for c2 in _expr_variants(a, program):
                if G.expr_kind(c2, program) == "float" or e.fn != "sqrtabs":
                    yield replace(e, args=e.args[:k] + (c2,) + e.args[k + 1:])


def _aff_variants(a: G.Aff) -> Iterator[G.Aff]:
    if a.const != 0:
        yield G.Aff(a.terms, 0)
    if len(a.terms) > 1:
        for k in range(len(a.terms)):
            yield G.Aff(a.terms[:k] + a.terms[k + 1:], a.const)
    for k, (v, c) in enumerate(a.terms):
        if abs(c) != 1:
            yield G.Aff(a.terms[:k] + ((v, 1),) + a.terms[k + 1:], a.const)
        elif c == -1:
            yield G.Aff(a.terms[:k] + ((v, 1),) + a.terms[k + 1:], a.const)
    if a.terms:
        yield G.Aff.of(0)


def _index_variants(idx: tuple[G.Aff, ...]) -> Iterator[tuple[G.Aff, ...]]:
    for d, a in enumerate(idx):
        for b in _aff_variants(a):
            yield idx[:d] + (b,) + idx[d + 1:]


def _loop_variants(n: G.Loop, first: Optional[int]) -> Iterator[G.Node]:
    if n.step not in (1, -1):
        yield replace(n, step=1 if n.step > 0 else -1)
    if n.step < 0:
        yield replace(n, step=-n.step)
    if not n.incl:
        yield replace(n, incl=True)
    if n.style != "ternary":
        yield replace(n, style="ternary")
    for k in range(len(n.lower)):
        if len(n.lower) > 1:
            yield replace(n, lower=n.lower[:k] + n.lower[k + 1:])
    for k in range(len(n.upper)):
        if len(n.upper) > 1:
            yield replace(n, upper=n.upper[:k] + n.upper[k + 1:])
    # bounds made constant, then extents reduced
    for k, a in enumerate(n.lower):
        if a.terms:
            yield replace(n, lower=n.lower[:k] + (G.Aff.of(a.const),) + n.lower[k + 1:])
    for k, a in enumerate(n.upper):
        if a.terms:
            yield replace(n, upper=n.upper[:k] + (G.Aff.of(a.const),) + n.upper[k + 1:])
    if len(n.lower) == 1 and len(n.upper) == 1 and n.lower[0].is_const() and n.upper[0].is_const():
        lo, hi = n.lower[0].const, n.upper[0].const
        if lo != 0 and hi - lo >= 0:
            yield replace(n, lower=(G.Aff.of(0),), upper=(G.Aff.of(hi - lo),))
        for new_hi in (lo + (hi - lo) // 2, hi - 1):
            if lo <= new_hi < hi:
                yield replace(n, upper=(G.Aff.of(new_hi),))
    for k, a in enumerate(n.upper):
        if a.terms and a.const > 0:
            yield replace(n, upper=n.upper[:k] + (G.Aff(a.terms, a.const - 1),) + n.upper[k + 1:])


def _stmt_variants(s: G.Stmt, program: G.Program) -> Iterator[G.Stmt]:
    ttype = G.target_type(s.target, program)
    if s.op in ("++", "--"):
        yield replace(s, op="=", rhs=G.Num(1, "int32_t"))
    elif s.op != "=":
        if s.rhs is not None and not (isinstance(s.rhs, G.Num) and s.rhs.fixed):
            yield replace(s, op="=")
    if isinstance(s.target, G.Ref):
        for idx in _index_variants(s.target.idx):
            yield replace(s, target=G.Ref(s.target.array, idx))
    if s.rhs is not None and not (isinstance(s.rhs, G.Num) and s.rhs.fixed):
        for e in _expr_variants(s.rhs, program):
            if G.expr_kind(e, program) == "float" and ttype in G.INT_TYPES:
                continue
            yield replace(s, rhs=e)


def _body_variants(body: tuple[G.Node, ...], program: G.Program, lay: G.Layout,
                   phase: int) -> Iterator[tuple[G.Node, ...]]:
    """Phase 0: structural (drop / unwrap); phase 1: local simplifications."""
    for k, n in enumerate(body):
        pre, post = body[:k], body[k + 1:]
        if phase == 0:
            if len(body) > 1:
                yield pre + post
            if isinstance(n, G.Loop):
                first = lay.loop_first.get(id(n))
                if first is not None:
                    yield pre + tuple(_subst_node(m, n.var, first) for m in n.body) + post
            elif isinstance(n, G.Guard):
                yield pre + n.then + post
                if n.els:
                    yield pre + n.els + post
                    yield pre + (replace(n, els=()),) + post
        else:
            if isinstance(n, G.Loop):
                for m in _loop_variants(n, lay.loop_first.get(id(n))):
                    yield pre + (m,) + post
            elif isinstance(n, G.Guard):
                if len(n.conds) > 1:
                    for j in range(len(n.conds)):
                        yield pre + (replace(n, conds=n.conds[:j] + n.conds[j + 1:]),) + post
                if n.neg:
                    yield pre + (replace(n, neg=False),) + post
                if n.disj:
                    yield pre + (replace(n, disj=False),) + post
            else:
                for m in _stmt_variants(n, program):
                    yield pre + (m,) + post
        # recurse into children
        if isinstance(n, G.Loop):
            for b in _body_variants(n.body, program, lay, phase):
                if b:
                    yield pre + (replace(n, body=b),) + post
        elif isinstance(n, G.Guard):
            for b in _body_variants(n.then, program, lay, phase):
                if b:
                    yield pre + (replace(n, then=b),) + post
            for b in _body_variants(n.els, program, lay, phase):
                yield pre + (replace(n, els=b),) + post


def candidates(program: G.Program, lay: G.Layout) -> Iterator[G.Program]:
    for phase in (0, 1):
        for body in _body_variants(program.body, program, lay, phase):
            if body:
                yield replace(program, body=body)
    # arrays without slack, scalar types unchanged
    arrays = tuple((n, replace(a, slack=tuple(0 for _ in a.slack))) for n, a in program.arrays)
    if arrays != program.arrays:
        yield replace(program, arrays=arrays)


# ------------------------------------------------------------------------------------------------
# The greedy loop
# ------------------------------------------------------------------------------------------------


def _cost(program: G.Program, lay: G.Layout) -> tuple[int, int]:
    return (len(G.render(program, lay)), lay.total)


def shrink(program: G.Program, still_fails: Callable[[G.Program], bool], *, max_checks: int = 500,
           max_seconds: float = 900.0, log: Optional[Callable[[str], None]] = None) -> G.Program:
    """Greedy shrinking: keep the first smaller valid candidate that still fails; until none does."""
    t0 = time.perf_counter()
    current = program
    lay = G.layout(current)
    cost = _cost(current, lay)
    checks = 0
    seen: set[str] = set()
    progress = True
    while progress:
        progress = False
        for cand in candidates(current, lay):
            if checks >= max_checks or time.perf_counter() - t0 > max_seconds:
                return current
            clay = G.layout(cand)
            if not clay.ok:
                continue
            text = G.render(cand, clay)
            if text in seen:
                continue
            seen.add(text)
            ccost = (len(text), clay.total)
            if ccost >= cost:
                continue
            checks += 1
            if still_fails(cand):
                current, lay, cost = cand, clay, ccost
                if log:
                    log(f"shrink: {cost[0]} chars, {cost[1]} instances ({checks} checks)")
                progress = True
                break
    return current


def same_failure(signature: tuple[str, str, str], **check_kw) -> Callable[[G.Program], bool]:
    """A predicate: the program still fails with `signature` (RTL only checked for RTL failures)."""
    kw = dict(check_kw)
    kw["rtl"] = signature[0] == "rtl"

    def pred(p: G.Program) -> bool:
        return check_program(p, **kw).has(signature)

    return pred


def save_regression(program: G.Program, verdict: Verdict, *, origin: str, directory: Path = REGRESSIONS,
                    original_lines: Optional[int] = None, signature: Optional[tuple[str, str, str]] = None,
                    seeds: Sequence[int] = (0,), compiles: int = 1) -> Path:
    """Write the program as `fuzz_<hash>.c` with an `xfail:` first line naming the failure.

    The header also says which input seeds reproduce it (`check-seeds: 3`), read back by
    `tests/test_regressions.py`; so does `check-compiles: 8` for a failure that only some of several
    compilations show (isl may return different, equal, representations from run to run).
    """
    f = next((x for x in verdict.failures if signature is None or x.signature == signature), verdict.first)
    assert f is not None
    body = G.render(program)
    key = hashlib.sha1(body.encode()).hexdigest()[:8]
    msg = " ".join(f.message.split())[:160]
    header = [f"xfail: {f.stage} {f.kind}: {msg}",
              f"fuzz regression: {origin}; found {datetime.date.today().isoformat()} by tests/fuzz",
              f"failure signature: {' / '.join(x for x in f.signature if x)}",
              f"check-seeds: {' '.join(str(x) for x in seeds)}"]
    if compiles > 1:
        header.append(f"check-compiles: {compiles}")
    if original_lines:
        header.append(f"shrunk from {original_lines} to {len(body.splitlines())} lines")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"fuzz_{key}.c"
    path.write_text(G.render(program, header="\n".join(header)))
    return path


def shrink_failure(program: G.Program, verdict: Verdict, *, origin: str, save: bool = True,
                   directory: Path = REGRESSIONS, log: Optional[Callable[[str], None]] = None,
                   max_checks: int = 500, max_seconds: float = 900.0, **check_kw) -> tuple[G.Program, Verdict, Optional[Path]]:
    """Shrink a failing program, re-check the result, and (optionally) save it as a regression."""
    sig = verdict.signature
    assert sig is not None
    small = shrink(program, same_failure(sig, **check_kw), max_checks=max_checks, max_seconds=max_seconds, log=log)
    kw = dict(check_kw)
    kw["rtl"] = sig[0] == "rtl"
    final = check_program(small, **kw)
    if not final.has(sig):  # flaky: keep the original
        small, final = program, verdict
    path = None
    if save:
        path = save_regression(small, final, origin=origin, directory=directory, signature=sig,
                               original_lines=len(G.render(program).splitlines()),
                               seeds=tuple(check_kw.get("seeds", (0,))), compiles=check_kw.get("compiles", 1))
    return small, final, path
