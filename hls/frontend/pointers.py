"""Pointer parameters: arrays whose shape the kernel's own subscripts give.

Kernels written for HLS tools often take their arrays as pointers (`const float *A`, `float A[]`,
`float A[][M]`) and index them row-major by hand: `A[i * m + j]`.  C says nothing of such an
array's extent, and with a parameter `m` the subscript is not affine, so the polyhedral model
cannot take it as it stands.

The subscript is delinearized instead (the idea of Grosser et al., "On recovering
multi-dimensional arrays in Polly", IMPACT 2015).  It is expanded into monomials, each a constant
times a product of parameters times a loop counter (or 1), and grouped by its product of
parameters, its *stride*.  When the strides of all the subscripts of one pointer nest, each
dividing the next (1 | m | m*k), they are the strides of a row-major array: one dimension per
stride, the dimension's index is its group (`i` and `j` above), and a dimension's size is the
ratio of the next stride to its own (`m`).  Two strides that do not nest (`m` and `n`) are an error.

Nothing here assumes that an index stays within its dimension (`0 <= j < m`): the access is
checked against the array's extent like any other (`params.check_bounds`), which restricts the
parameters to the values where it holds or reports the access.  The first dimension's extent is
the largest index the kernel touches, a formula of the parameters, so the memory the hardware
expects is exactly what the kernel reads and writes.  Distinct pointers are taken not to overlap,
as `restrict` would promise and as dataflow HLS tools assume of their memory ports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import islpy as isl
from pycparser import c_ast

from ..diagnostics import CompileError
from ..poly import isl_utils as iu
from .ctype import array_declarator

__all__ = [
    "Stride", "OpenArray", "open_parameter", "index_terms", "stride_chain", "dimension_sizes", "delinearized",
    "open_extent", "size_text",
]

#: a product of parameters, as their sorted names with repetition; () is the stride 1
Stride = tuple[str, ...]


@dataclass(frozen=True)
class OpenArray:
    """An array parameter whose first extent C does not give.

    pointer: subscripted once (`T *A`, `T A[]`) and delinearized; otherwise the declared inner
        dimensions are subscripted as written (`T A[][M]`, `T (*A)[M]`).
    inner: the declared sizes of the dimensions after the first (empty for a pointer).
    """

    name: str
    pointer: bool
    inner: tuple[c_ast.Node, ...]


def open_parameter(decl: c_ast.Decl, typedefs: Mapping[str, c_ast.Typedef]) -> Optional[tuple[OpenArray, c_ast.Node]]:
    """The open array a parameter declares, with its element type node; None for other parameters.

    A pointer to a pointer is left to the type resolution, which explains why it is refused."""
    t = decl.type
    seen: set[str] = set()
    while (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
           and len(t.type.names) == 1 and t.type.names[0] in typedefs and t.type.names[0] not in seen):
        seen.add(t.type.names[0])  # `typedef float *vec_t;`
        t = typedefs[t.type.names[0]].type
    if isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl):
        return OpenArray(decl.name, True, ()), t.type
    if isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.ArrayDecl):
        elem, dims = array_declarator(t.type)
        return OpenArray(decl.name, False, tuple(dims)), elem
    if isinstance(t, c_ast.ArrayDecl) and t.dim is None:
        elem, dims = array_declarator(t)
        if len(dims) == 1:
            return OpenArray(decl.name, True, ()), elem
        return OpenArray(decl.name, False, tuple(dims[1:])), elem
    return None


# ---------------------------------------------------------------------------------------------------
# A subscript as a sum over strides
# ---------------------------------------------------------------------------------------------------

Terms = dict[Stride, isl.PwAff]  # stride -> its group: an affine function of the counters, no parameter


def index_terms(node: c_ast.Node, affine: Callable[[c_ast.Node], isl.PwAff],
                fail: Callable[[str], CompileError]) -> Terms:
    """The subscript `node` grouped by stride.

    `affine` turns a subexpression into an isl function of the counters and parameters (or raises
    the extractor's error, which is then the error of the whole subscript); `fail` makes the error
    for a subscript that is a polynomial but not a sum of strides times affine groups."""
    try:
        return _canonical({(): affine(node)}, fail)
    except CompileError:
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
            a = index_terms(node.left, affine, fail)
            b = index_terms(node.right, affine, fail)
            if node.op == "*":
                return _product(a, b, fail)
            return _sum(a, _negated(b) if node.op == "-" else b)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            x = index_terms(node.expr, affine, fail)
            return _negated(x) if node.op == "-" else x
        if isinstance(node, c_ast.Cast):
            return index_terms(node.expr, affine, fail)
        raise


def _canonical(terms: Terms, fail: Callable[[str], CompileError]) -> Terms:
    """Move the parameters out of the groups into the strides: `(i + n) * m` is i*m + n*m."""
    out: Terms = {}
    for stride, pa in terms.items():
        nparam = pa.dim(isl.dim_type.param)
        used = [k for k in range(nparam) if pa.involves_dims(isl.dim_type.param, k, 1)]
        if used:
            pieces = pa.get_pieces()
            if len(pieces) != 1 or pieces[0][1].dim(isl.dim_type.div):
                raise fail("a parameter inside a condition, a minimum or a division")
            aff = pieces[0][1]
            space = pa.get_domain_space()
            for k in used:
                c = aff.get_coefficient_val(isl.dim_type.param, k)
                name = pa.get_dim_name(isl.dim_type.param, k)
                coeff = iu.const(space, int(c.to_python()))
                pa = pa - coeff.mul(iu.var(space, name))
                _accumulate(out, tuple(sorted(stride + (name,))), coeff)
        _accumulate(out, stride, pa)
    return {s: g for s, g in out.items() if not _is_zero(g)}


def _accumulate(terms: Terms, stride: Stride, pa: isl.PwAff) -> None:
    terms[stride] = terms[stride] + pa if stride in terms else pa


def _is_zero(pa: isl.PwAff) -> bool:
    return iu.constant_value(pa) == 0


def _sum(a: Terms, b: Terms) -> Terms:
    out = dict(a)
    for s, g in b.items():
        _accumulate(out, s, g)
    return {s: g for s, g in out.items() if not _is_zero(g)}


def _negated(a: Terms) -> Terms:
    return {s: g.neg() for s, g in a.items()}


def _product(a: Terms, b: Terms, fail: Callable[[str], CompileError]) -> Terms:
    out: Terms = {}
    for sa, ga in a.items():
        for sb, gb in b.items():
            if not (ga.is_cst() or gb.is_cst()):
                raise fail("a product of two loop counters")
            _accumulate(out, tuple(sorted(sa + sb)), ga.mul(gb))
    return {s: g for s, g in out.items() if not _is_zero(g)}


# ---------------------------------------------------------------------------------------------------
# Strides to dimensions
# ---------------------------------------------------------------------------------------------------


def stride_chain(strides: set[Stride]) -> Optional[list[Stride]]:
    """The row-major strides the given ones belong to, innermost (1) first; None if they do not nest.

    A step that multiplies by several parameters at once (`i*m*k + j`) gets a dimension per
    parameter, in the order of their names, so that every size is one parameter."""
    ordered = sorted(set(strides) | {()}, key=lambda s: (len(s), s))
    chain: list[Stride] = [()]
    for s in ordered[1:]:
        last = Counter(chain[-1])
        extra = Counter(s)
        extra.subtract(last)
        if any(v < 0 for v in extra.values()):
            return None
        for name in sorted(extra.elements()):
            chain.append(tuple(sorted(chain[-1] + (name,))))
    return chain


def dimension_sizes(chain: Sequence[Stride]) -> list[str]:
    """The size of each dimension but the first, outermost first: the parameter each stride adds."""
    sizes = []
    for inner, outer in zip(chain, chain[1:]):
        extra = Counter(outer)
        extra.subtract(Counter(inner))
        sizes.append(next(extra.elements()))
    return list(reversed(sizes))


def delinearized(terms: Terms, chain: Sequence[Stride], domain: isl.Set) -> list[isl.PwAff]:
    """The subscripts of the row-major array, outermost first.

    An index that is one row below or above its dimension wherever the access runs borrows from the
    dimension outside it: `x[(i + 1) * n - 1]` is `x[i][n - 1]`, not `x[i + 1][-1]`."""
    space = domain.get_space()
    zero = iu.const(space, 0)
    index = [terms.get(s, zero) for s in reversed(chain)]
    sizes = [iu.var(space, name) for name in dimension_sizes(chain)]
    for size in sizes:  # an array with an empty dimension has no element to borrow from
        domain = domain.intersect(size.ge_set(iu.const(space, 1)))
    for k in range(len(index) - 1, 0, -1):
        e, size = index[k], sizes[k - 1]
        if _within(domain, e + size, size):
            index[k], index[k - 1] = e + size, index[k - 1] - iu.const(space, 1)
        elif _within(domain, e - size, size):
            index[k], index[k - 1] = e - size, index[k - 1] + iu.const(space, 1)
    return index


def _within(domain: isl.Set, e: isl.PwAff, size: isl.PwAff) -> bool:
    """0 <= e < size wherever `domain` holds (and it holds somewhere)."""
    zero = iu.const(domain.get_space(), 0)
    outside = e.lt_set(zero).union(e.ge_set(size))
    return not domain.is_empty() and domain.intersect(outside).is_empty()


def open_extent(name: str, image: isl.Set, inner: Sequence[isl.PwAff], space: isl.Space) -> isl.Set:
    """The array's extent: its first index from 0 to the largest the kernel touches, the others
    within their sizes.  `image` holds the elements the kernel touches, `inner` the sizes of the
    dimensions after the first, as functions on `space` (the array's space) of the parameters."""
    n = space.dim(isl.dim_type.set)
    first = image.reset_tuple_id().project_out(isl.dim_type.set, 1, n - 1)
    if first.is_empty():  # never touched: one element, so that the memory is not empty
        first = isl.Set.read_from_str(iu.CTX, "{ [0] }")
    below = isl.Map.read_from_str(iu.CTX, "{ [e] -> [d] : 0 <= d <= e }")  # every index up to a touched one
    first = first.apply(below.align_params(first.get_space()))
    rest = iu.set_space([space.get_dim_name(isl.dim_type.set, k) for k in range(1, n)],
                        [space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param))])
    extent = first.align_params(space).flat_product(isl.Set.universe(rest).align_params(space))
    box = isl.Set.universe(space)
    for k, size in enumerate(inner, start=1):
        v = iu.var(space, space.get_dim_name(isl.dim_type.set, k))
        box = box.intersect(v.ge_set(iu.const(space, 0))).intersect(v.lt_set(size))
    return iu.coalesced(box.intersect(_renamed(extent, space))).set_tuple_name(name)


def _renamed(s: isl.Set, space: isl.Space) -> isl.Set:
    """`s` with the dimension names of `space` (a set of the same dimensions)."""
    for k in range(space.dim(isl.dim_type.set)):
        s = s.set_dim_name(isl.dim_type.set, k, space.get_dim_name(isl.dim_type.set, k))
    return s


def size_text(extent: isl.Set) -> str:
    """The first dimension's size as C-like text of the parameters (`n * 4`), for reports and errors."""
    top = extent.dim_max(0)
    pieces = top.get_pieces()
    if len(pieces) != 1 or pieces[0][1].dim(isl.dim_type.div):
        return str(top)
    aff = pieces[0][1]
    parts = []
    for k in range(aff.dim(isl.dim_type.param)):
        c = int(aff.get_coefficient_val(isl.dim_type.param, k).to_python())
        if c:
            name = aff.get_dim_name(isl.dim_type.param, k)
            parts.append(name if c == 1 else f"{c} * {name}")
    c = int(aff.get_constant_val().to_python()) + 1
    if c or not parts:
        parts.append(str(c))
    return " + ".join(parts).replace("+ -", "- ")
