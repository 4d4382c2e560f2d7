"""Affine extraction: the kernel's C syntax tree to a `PolyProgram`.

The scop is walked once.  Each loop adds a dimension to the iteration domain; each `if` intersects
(or subtracts) an affine set; each assignment becomes a `Statement` with its accesses and a typed
expression.  The original execution order is recorded as a 2d+1 schedule: block positions interleaved
with loop counters (negated for decrementing loops).  Anything outside the accepted subset is a
`CompileError` pointing at the construct.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

import islpy as isl
from pycparser import c_ast, c_generator

from ..diagnostics import CompileError, SourceLoc
from ..poly import expr as E
from ..poly import isl_utils as iu
from ..poly.evaluate import EvaluationError, compile_expr
from ..poly.program import Access, Array, HoistedScalar, KernelArg, Param, PolyProgram, Statement
from ..poly.types import DOUBLE, FLOAT, INT32, INT64, UINT32, UINT64, ScalarType, promote, usual_arithmetic_conversion
from .ctype import array_declarator, scalar_type
from .pointers import (
    OpenArray, Stride, delinearized, dimension_sizes, index_terms, open_extent, open_parameter, size_text, stride_chain,
)
from .returned import returned_name, returned_type

#: elements up to which an initialized constant local array becomes a selection in the datapath
#: (`constant_table`); a larger one is read from memory as an argument
TABLE_ELEMENTS = 64

#: the C name of the result's array (`returned`): not a C identifier, so no variable of the kernel hides it
RESULT = "return@"

MAX_LOOP_DEPTH = 64  # deeper nests make isl's exact analyses explode; no real kernel comes close

MATH_CALLS = {
    "sqrt": ("sqrt", DOUBLE), "sqrtf": ("sqrt", FLOAT),
    "fabs": ("fabs", DOUBLE), "fabsf": ("fabs", FLOAT),
    "fmin": ("fmin", DOUBLE), "fminf": ("fmin", FLOAT),
    "fmax": ("fmax", DOUBLE), "fmaxf": ("fmax", FLOAT),
}

# Math functions no datapath implements.  They are accepted where their arguments depend only on
# scalar arguments and constants: the whole parameter-only subexpression is then hoisted, and gcc
# computes it once on the host (`HoistedScalar`), so the hardware never needs them.
HOST_CALLS = {
    **{f: (f, DOUBLE) for f in E.HOST_CALLS},
    **{f + "f": (f, FLOAT) for f in E.HOST_CALLS},
}

_GEN = c_generator.CGenerator()


def c_text(node: c_ast.Node) -> str:
    return _GEN.visit(node)


class _HostTextGenerator(c_generator.CGenerator):
    """C text for the host function: casts are spelled with canonical types (`int32_t`, `double`), so
    the generated C needs none of the user's typedefs yet converts exactly as the kernel does."""

    def __init__(self, cast_types: Mapping[int, str], constants: Mapping[str, E.Const]) -> None:
        super().__init__()
        self.cast_types = cast_types
        self.constants = constants

    def visit_Cast(self, n: c_ast.Cast) -> str:
        return f"({self.cast_types[id(n)]}) " + self._parenthesize_unless_simple(n.expr)

    def visit_ID(self, n: c_ast.ID) -> str:
        """A constant local is not in scope in the host function: its exact value is spelled instead."""
        c = self.constants.get(n.name)
        return _c_literal(c) if c is not None else n.name


@dataclass
class _Scope:
    """The loop nest around the statement being extracted."""

    dims: list[str]  # isl dimension names of the enclosing loop counters, outermost first
    counters: dict[str, str]  # C counter name -> isl dimension name
    counter_types: dict[str, ScalarType]
    domain: isl.Set  # in set_space(dims, params)
    time: list[str]  # 2d+1 schedule prefix (expressions over dims)
    positions: list[int] = field(default_factory=lambda: [0])
    # the truth of the conditions on data around the statement (`_Extractor.converted`), None outside any
    guard: Optional[c_ast.Node] = None
    # the C name of the innermost loop's flag set by its `break` (`_Extractor.loop`), None without one
    broken: Optional[str] = None

    def child(self, **kw) -> "_Scope":
        d = dict(dims=list(self.dims), counters=dict(self.counters), counter_types=dict(self.counter_types),
                 domain=self.domain, time=list(self.time), guard=self.guard, broken=self.broken)
        d.update(kw)
        return _Scope(**d)


class _NotAffine(CompileError):
    """An integer expression that is no affine function of the counters and parameters: a condition
    that is one is if-converted (`_Extractor.converted`); other errors stay errors."""


class _Rechain(Exception):
    """The strides of pointer parameters, found once the whole kernel is read: extraction starts again
    with them (`pointers`), since every subscript of a pointer needs all of its array's strides."""

    def __init__(self, chains: dict[str, list[Stride]]) -> None:
        super().__init__()
        self.chains = chains


class _Extractor:
    def __init__(self, func: c_ast.FuncDef, typedefs: Mapping[str, c_ast.Typedef], path: str,
                 file_scope: Sequence[c_ast.Node] = (), chains: Optional[Mapping[str, list[Stride]]] = None) -> None:
        self.func = func
        self.file_decls = file_scope
        self.typedefs = typedefs
        self.path = path
        self.params: list[Param] = []
        self.args: list[KernelArg] = []
        self.scalar_args: dict[str, ScalarType] = {}
        self.arrays: dict[str, Array] = {}
        self.local_names: dict[str, str] = {}  # C name of a local variable -> array name
        self.counter_decls: dict[str, ScalarType] = {}
        self.expanded: dict[str, int] = {}  # local scalar declared inside loops -> number of enclosing loops
        self.statements: list[Statement] = []
        self.schedules: list[str] = []
        self.max_depth = 0
        self.hoisted: dict[tuple[str, str], HoistedScalar] = {}  # (host C text, type) -> hoisted scalar
        self.host_depth = 0  # > 0 while extracting the tree of a hoisted subexpression
        self.param_only_memo: dict[int, tuple] = {}  # id(node) -> (node, scope, parameter_only result)
        self.constants: dict[str, E.Const] = {}  # constant locals (see `constant_local`) -> their value
        # constant local arrays (see `constant_table`) -> (sizes, row-major elements)
        self.tables: dict[str, tuple[tuple[int, ...], tuple[E.Const, ...]]] = {}
        self.written: set[str] = set()  # names assigned somewhere inside the scop
        # array parameters without a first extent (`pointers`), the strides their subscripts use, the
        # row-major strides they were extracted with, and the sizes of their inner dimensions
        self.open_arrays: dict[str, OpenArray] = {}
        self.strides: dict[str, set[Stride]] = {}
        self.chains: dict[str, list[Stride]] = dict(chains or {})
        self.inner_sizes: dict[str, list[isl.PwAff]] = {}
        # the rest of a loop body after `if (c) continue;` (`walk_block`), walked at that body's level
        self.rest_blocks: dict[int, tuple[c_ast.Compound, tuple[type, ...]]] = {}
        # local -> the guard of its declaration: assignments under that same guard need no select
        self.local_guard: dict[str, Optional[c_ast.Node]] = {}

    # ---------------------------------------------------------------- helpers
    def root_scope(self) -> _Scope:
        """The scope outside every loop: constants and sizes are evaluated there."""
        return _Scope([], {}, {}, isl.Set.universe(self.space([])), [])

    def loc(self, node: c_ast.Node | None) -> SourceLoc:
        return SourceLoc.from_coord(getattr(node, "coord", None), self.path)

    def error(self, node: c_ast.Node | None, message: str) -> CompileError:
        return CompileError(self.loc(node), message)

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def space(self, dims: Sequence[str]) -> isl.Space:
        return iu.set_space(dims, self.param_names)

    # ---------------------------------------------------------------- signature
    def signature(self) -> None:
        decl_type = self.func.decl.type
        params = decl_type.args.params if decl_type.args is not None else []
        arrays: list[tuple[c_ast.Decl, c_ast.Node, list]] = []
        for p in params:
            if isinstance(p, c_ast.ID):
                raise self.error(p, "old-style (K&R) parameter lists are not supported; declare parameter types "
                                    "in the parentheses")
            if isinstance(p, c_ast.Typename):  # `void` or unnamed
                if isinstance(p.type, c_ast.TypeDecl) and getattr(p.type.type, "names", None) == ["void"]:
                    continue
                raise self.error(p, "kernel parameters must be named")
            if isinstance(p, c_ast.EllipsisParam):
                raise self.error(p, "variadic kernels are not supported")
            what = f"parameter `{p.name}`"
            self.constants.pop(p.name, None)  # a parameter hides a file-scope constant of its name
            self.tables.pop(p.name, None)
            opened = open_parameter(p, self.typedefs)
            if opened is not None:
                self.open_arrays[p.name] = opened[0]
                arrays.append((p, opened[1], []))
                continue
            if isinstance(p.type, c_ast.ArrayDecl):
                elem, dims = array_declarator(p.type)
                arrays.append((p, elem, dims))
                continue
            t = scalar_type(p.type, self.typedefs, self.loc(p), what)
            if t.is_int:
                self.params.append(Param(p.name, t, self.loc(p)))
                self.args.append(KernelArg(p.name, "param", t, self.loc(p)))
            else:
                self.scalar_args[p.name] = t
                self.args.append(KernelArg(p.name, "scalar", t, self.loc(p)))
        # Array extents may use integer parameters, so they are read once all parameters are known.
        by_name = {a.name: a for a in self.args}
        for p, elem, dims in arrays:
            t = scalar_type(elem, self.typedefs, self.loc(p), f"array `{p.name}`")
            if p.name in self.open_arrays:
                self.arrays[p.name] = self.make_open_array(p, self.open_arrays[p.name], t)
            else:
                self.arrays[p.name] = self.make_array(p, p.name, t, dims, is_arg=True)
            by_name[p.name] = KernelArg(p.name, "array", t, self.loc(p))
        self.args = [by_name[p.name] for p in params if getattr(p, "name", None) in by_name]
        self.declare_result()

    def declare_result(self) -> None:
        """A function returning a value gets an output array of one element for it (`returned`)."""
        name = returned_name(self.func)
        if name is None:
            return
        loc = self.loc(self.func.decl)
        t = scalar_type(returned_type(self.func), self.typedefs, loc, f"the result of `{self.func.decl.name}`")
        space = self.space(["d0"])
        extent = iu.var(space, "d0").eq_set(iu.const(space, 0)).set_tuple_name(name)
        self.arrays[name] = Array(name, t, ("1",), extent, True, loc)
        self.args.append(KernelArg(name, "array", t, loc))
        self.local_names[RESULT] = name

    def make_array(self, node: c_ast.Node, name: str, t: ScalarType, dims: list, *, is_arg: bool) -> Array:
        names = [f"d{k}" for k in range(len(dims))]
        space = self.space(names)
        extent = isl.Set.universe(space)
        sizes = _Scope(names, {}, {}, extent, [])  # no counters in scope: sizes use parameters only
        shape: list[str] = []
        for k, dim in enumerate(dims):
            if dim is None:
                raise self.error(node, f"array `{name}` needs a size on every dimension")
            ext = self.affine(dim, sizes, what="array size")
            size = iu.constant_value(ext)
            if size is not None and size <= 0:
                raise self.error(dim, f"array `{name}` has size {size} on dimension {k + 1}; sizes must be positive")
            d = iu.var(space, names[k])
            extent = extent.intersect(d.ge_set(iu.const(space, 0))).intersect(d.lt_set(ext))
            shape.append(c_text(dim))
        return Array(name, t, tuple(shape), extent.set_tuple_name(name), is_arg, self.loc(node))

    def make_open_array(self, node: c_ast.Node, opened: OpenArray, t: ScalarType) -> Array:
        """An array parameter whose first extent is found from its accesses (`close_open_arrays`);
        until then it is unbounded along its first dimension."""
        name = opened.name
        if opened.pointer:
            inner_text = dimension_sizes(self.chains.get(name, [()]))
            inner = [c_ast.ID(n, coord=node.coord) for n in inner_text]
        else:
            inner, inner_text = list(opened.inner), [c_text(d) if d is not None else "" for d in opened.inner]
        names = [f"d{k}" for k in range(1 + len(inner))]
        space = self.space(names)
        sizes = _Scope(names, {}, {}, isl.Set.universe(space), [])
        extent = isl.Set.universe(space)
        self.inner_sizes[name] = []
        for k, dim in enumerate(inner, start=1):
            if dim is None:
                raise self.error(node, f"array `{name}` needs a size on every dimension after the first")
            ext = self.affine(dim, sizes, what="array size")
            self.inner_sizes[name].append(ext)
            d = iu.var(space, names[k])
            extent = extent.intersect(d.ge_set(iu.const(space, 0))).intersect(d.lt_set(ext))
        return Array(name, t, ("", *inner_text), extent.set_tuple_name(name), True, self.loc(node))

    def close_open_arrays(self) -> None:
        """Each open array's first extent: up to the largest index the kernel touches."""
        for name in self.open_arrays:
            arr = self.arrays[name]
            image = isl.Set.empty(arr.extent.get_space())
            for st in self.statements:
                for acc in st.accesses:
                    if acc.array == name:
                        image = image.union(acc.relation.range())
            extent = open_extent(name, image, self.inner_sizes[name], arr.extent.reset_tuple_id().get_space())
            self.arrays[name] = _dc_replace(arr, extent=extent, shape=(size_text(extent), *arr.shape[1:]))

    # ---------------------------------------------------------------- declarations
    def file_scope(self) -> None:
        """The constants of the user's file scope, in order: enumerators, `const` scalars with constant
        initializers (`static const int N = 64;`) and `const` tables of at most `TABLE_ELEMENTS`
        elements.  Another global is unknown to the kernel: an error only where the kernel uses it."""
        for d in self.file_decls:
            self.enumerators(d)
            if not isinstance(d, c_ast.Decl) or d.name is None or d.init is None or "const" not in (d.quals or []):
                continue
            try:
                if isinstance(d.type, c_ast.ArrayDecl):
                    elem, dims = array_declarator(d.type)
                    t = scalar_type(elem, self.typedefs, self.loc(d), f"constant `{d.name}`")
                    self.tables[d.name] = self.constant_table(d, t, dims)
                elif isinstance(d.type, c_ast.TypeDecl):
                    t = scalar_type(d.type, self.typedefs, self.loc(d), f"constant `{d.name}`")
                    value = self.constant_value(d.init, t)
                    if value is not None:
                        self.constants[d.name] = value
            except CompileError:
                continue  # not a constant the datapath can use

    def result(self, final: Optional[c_ast.Return], root: _Scope) -> None:
        """The scop's final `return e;`: the statement `return_value[0] = e` (`returned`)."""
        name = returned_name(self.func)
        if final is None or final.expr is None:
            if name is not None:
                at = final or self.func
                raise self.error(at, f"`{self.func.decl.name}` returns a value: end its scop with `return <value>;` "
                                     "(the value is the output `return_value`)")
            return  # a `return;` ending a void function's scop changes nothing
        if name is None:
            raise self.error(final, f"`{self.func.decl.name}` is `void` and cannot return a value")
        target = c_ast.ArrayRef(c_ast.ID(RESULT, coord=final.coord), c_ast.Constant("int", "0"), coord=final.coord)
        self.assignment(final, "=", target, final.expr, root, text=f"{name}[0] = {c_text(final.expr)}")

    def enumerators(self, node: c_ast.Node) -> None:
        """The enumeration constants declared in `node` (`enum { N = 64, M = N / 2, K };`): named `int`s."""
        for sub in _walk_c(node):
            if isinstance(sub, c_ast.Enum) and sub.values is not None:
                nxt = 0
                for e in sub.values.enumerators:
                    if e.value is not None:
                        try:
                            v = self.constant_value(e.value, INT32)
                        except CompileError:
                            v = None
                        if v is None:  # `sizeof(t) / sizeof(t[0])`: this one and the next are unknown
                            break
                        nxt = int(v.value)
                    self.constants[e.name] = E.Const(nxt, INT32)
                    self.tables.pop(e.name, None)
                    nxt += 1

    def declare_local(self, decl: c_ast.Decl, scope: Optional[_Scope]) -> None:
        """A local variable: a loop counter, a local scalar (a 0-d array) or a local array."""
        self.enumerators(decl)
        if decl.name is None:
            return  # `enum { N = 4 };`, a struct tag
        what = f"local `{decl.name}`"
        self.constants.pop(decl.name, None)  # a new object of that name hides an older constant
        self.tables.pop(decl.name, None)
        if isinstance(decl.type, c_ast.ArrayDecl):
            elem, dims = array_declarator(decl.type)
            t = scalar_type(elem, self.typedefs, self.loc(decl), what)
            if decl.init is not None:
                self.tables[decl.name] = self.constant_table(decl, t, dims)
                self.local_names.pop(decl.name, None)
                return
            name = self.fresh_array_name(decl.name)
            self.arrays[name] = self.make_array(decl, name, t, dims, is_arg=False)
            self.local_names[decl.name] = name
            self.local_guard[name] = scope.guard if scope is not None else None
            return
        if isinstance(decl.type, c_ast.FuncDecl):
            return  # a local prototype
        t = scalar_type(decl.type, self.typedefs, self.loc(decl), what)
        if decl.init is not None and self.constant_local(decl, t, scope):
            return
        if scope is None and t.is_int and decl.init is None:
            self.counter_decls[decl.name] = t  # probably a loop counter; becomes a scalar if assigned
        self.scalar_local(decl.name, decl.name, t, scope, decl)
        if decl.init is not None:
            if scope is None:
                raise self.error(decl, f"initialize `{decl.name}` inside the `#pragma scop` region")
            if isinstance(decl.init, c_ast.InitList):
                raise self.error(decl.init, "initializer lists are not supported")
            self.assignment(decl, "=", c_ast.ID(decl.name, coord=decl.coord), decl.init, scope)

    def scalar_local(self, c_name: str, base: str, t: ScalarType, scope: Optional[_Scope], node: c_ast.Node) -> str:
        """A local scalar named `c_name` in C: a fresh array (named after `base`), 0-d or expanded."""
        name = self.fresh_array_name(base)
        if scope is not None and scope.dims and self._expandable(scope):
            # C gives every iteration of the enclosing loops a fresh object: index it by their counters
            # (scalar expansion), so that iterations share no storage and carry no false write-after-read
            # or write-after-write dependence; the tiler may then interleave independent accumulations.
            counters = {v: k for k, v in scope.counters.items()}
            self.arrays[name] = Array(name, t, tuple(counters.get(d, d) for d in scope.dims),
                                      scope.domain.set_tuple_name(name), False, self.loc(node))
            self.expanded[name] = len(scope.dims)
        else:
            space = isl.Space.create_from_names(iu.CTX, set=[], params=self.param_names).set_tuple_name(
                isl.dim_type.set, name)
            self.arrays[name] = Array(name, t, (), isl.Set.universe(space), False, self.loc(node))
        self.local_names[c_name] = name
        self.local_guard[name] = scope.guard if scope is not None else None
        return name

    def constant_local(self, decl: c_ast.Decl, t: ScalarType, scope: Optional[_Scope]) -> bool:
        """Record `decl` as a named constant when its value is known at compile time and never changes.

        That is a `const` local with a constant initializer, wherever it is declared, and a local
        initialized with a constant before the scop and only read inside it (PolyBench's
        `DATA_TYPE eps = SCALAR_VAL(0.1);`).  Its reads become the initializer's value converted to
        the local's type, exactly what C stores in it, so no statement, array or hardware input is
        needed, and an integer one may appear in bounds and subscripts like a number."""
        if "const" not in (decl.quals or []) and (scope is not None or decl.name in self.written):
            return False
        if isinstance(decl.init, c_ast.InitList):
            return False
        value = self.constant_value(decl.init, t)
        if value is None:
            return False
        self.constants[decl.name] = value
        self.local_names.pop(decl.name, None)
        return True

    def constant_table(self, decl: c_ast.Decl, t: ScalarType,
                       dims: list) -> tuple[tuple[int, ...], tuple[E.Const, ...]]:
        """A local array with an initializer list of constants that the kernel never writes (a filter's
        coefficients, `const float k[3][3] = {...}`): a table of at most `TABLE_ELEMENTS` values.  A read
        becomes a selection among them on its affine index (`table_read`): no statement, channel or
        memory, and an index constant over the loops folds to the element.  Elements missing from the
        list are zero, as in C; nested lists follow the dimensions, a flat one fills them in order."""
        name = decl.name
        if not isinstance(decl.init, c_ast.InitList):
            raise self.error(decl.init, f"local array `{name}`: initialize it with a list in braces, `{{...}}`")
        if name in self.written:
            raise self.error(decl, f"initialized local array `{name}` is also assigned in the kernel: only constant "
                                   "tables may have an initializer; assign its elements in statements instead")
        sizes = []
        root = self.root_scope()
        for k, dim in enumerate(dims):
            if dim is None and k == 0 and len(dims) == 1:
                sizes.append(len(decl.init.exprs))
                continue
            size = None if dim is None else iu.constant_value(self.affine(dim, root, what="array size"))
            if size is None or size <= 0:
                raise self.error(decl, f"constant table `{name}` needs a constant positive size on every dimension")
            sizes.append(size)
        total = math.prod(sizes)
        if total > TABLE_ELEMENTS:
            raise self.error(decl, f"constant table `{name}` has {total} elements, more than {TABLE_ELEMENTS}: "
                                   "pass it as an array argument instead (it is read from memory then)")
        flat: list[c_ast.Node] = []

        def fill(node: c_ast.Node, depth: int) -> None:
            if isinstance(node, c_ast.InitList) and depth < len(sizes):
                start = len(flat)
                inner = math.prod(sizes[depth + 1:])
                for e in node.exprs:
                    if isinstance(e, c_ast.InitList):
                        fill(e, depth + 1)
                    else:
                        flat.append(e)
                if depth > 0:  # a nested list covers one sub-array: pad it to its size
                    flat.extend([None] * (start + sizes[depth] * inner - len(flat)))
            else:
                raise self.error(node, f"constant table `{name}`: the initializer nests deeper than its dimensions")

        fill(decl.init, 0)
        if len(flat) > total:
            raise self.error(decl.init, f"constant table `{name}` has more initializers than its {total} elements")
        values = []
        for e in flat + [None] * (total - len(flat)):
            if e is None:
                values.append(E.Const(E.convert_value(0, t), t))
                continue
            v = self.constant_value(e, t)
            if v is None:
                raise self.error(e, f"constant table `{name}`: `{c_text(e)}` is not a constant")
            values.append(v)
        return tuple(sizes), tuple(values)

    def table_read(self, node: c_ast.Node, scope: _Scope, name: str, subs: list,
                   value: Callable[[c_ast.Node], E.Expr]) -> E.Expr:
        """An element of a constant table (`constant_table`) at affine subscripts, checked in bounds on
        the statement's domain: the element when the index is constant, else a selection of its
        distinct values on the row-major index, the most frequent value last (no comparison for it).
        The index is a loop counter expression where it is affine without divisions, else (`i % 2`)
        the subscripts' own arithmetic (`value`)."""
        sizes, values = self.tables[name]
        if len(subs) != len(sizes):
            raise self.error(node, f"constant table `{name}` has {len(sizes)} dimension(s), indexed with {len(subs)}")
        space = self.space(scope.dims)
        dom = scope.domain
        index = iu.const(space, 0)
        for sub, size in zip(subs, sizes):
            pa = self.affine(sub, scope, what="table index")
            inside = pa.ge_set(iu.const(space, 0)).intersect(pa.lt_set(iu.const(space, size)))
            if not dom.is_subset(inside):
                raise self.error(sub, f"index `{c_text(sub)}` of constant table `{name}` leaves 0 .. {size - 1} "
                                      "at some iteration")
            index = index.mul(iu.const(space, size)).add(pa)
        index = index.intersect_domain(dom)
        t = values[0].type
        at = iu.constant_value(index) if not dom.is_empty() else 0
        if at is not None:
            return values[at]
        # the elements read, grouped by value; by its spelling, so that -0.0 and 0.0 stay apart
        by_value: dict[str, list[int]] = {}
        for k, v in enumerate(values):
            if dom.is_empty() or not index.eq_set(iu.const(space, k)).intersect(dom).is_empty():
                by_value.setdefault(repr(v.value), []).append(k)
        ranked = sorted(by_value.values(), key=lambda ks: (-len(ks), ks[0]))
        text = c_text(node)
        out: E.Expr = values[ranked[0][0]]
        pieces = index.get_pieces()
        aff = pieces[0][1] if len(pieces) == 1 else None
        if aff is not None and aff.dim(isl.dim_type.div) == 0 and aff.get_denominator_val().is_one():
            idx: E.Expr = E.AffineValue(index, INT32, f"index of {text}")
        else:
            idx = E.cast(value(subs[0]), INT32)
            for sub, size in zip(subs[1:], sizes[1:]):
                idx = E.Binary("+", E.Binary("*", idx, E.Const(size, INT32), INT32), E.cast(value(sub), INT32), INT32)
        for ks in reversed(ranked[1:]):
            cond: Optional[E.Expr] = None
            for k in ks:
                eq = E.Binary("==", idx, E.Const(k, INT32), INT32)
                cond = eq if cond is None else E.Binary("||", cond, eq, INT32)
            out = E.Select(cond, values[ks[0]], out, t)
        return out

    def constant_value(self, node: c_ast.Node, t: ScalarType) -> Optional[E.Const]:
        """The value of a constant expression (numbers, earlier constants, casts, operators, sqrt,
        fabs, fmin, fmax) converted to `t`, folded bit-exactly by the evaluator the interpreter uses;
        None when `node` is not one."""
        if not self.is_constant_tree(node):
            return None
        root = self.root_scope()
        self.host_depth += 1  # folded here, never hoisted to the host
        try:
            e = E.cast(self.value(node, root, "init", []), t)
        finally:
            self.host_depth -= 1
        try:
            v = compile_expr(e, {}, {}, {})((), ())
        except EvaluationError as exc:
            raise self.error(node, f"{exc} in the initializer `{c_text(node)}`") from None
        return E.Const(int(v) if t.is_int else float(v), t)

    def is_constant_tree(self, node: c_ast.Node) -> bool:
        """Whether `node` is built only of what `constant_value` can fold."""
        if isinstance(node, c_ast.Constant):
            return node.type != "string"
        if isinstance(node, c_ast.ID):
            return node.name in self.constants
        if isinstance(node, c_ast.Cast):
            return self.is_constant_tree(node.expr)
        if isinstance(node, c_ast.UnaryOp) and node.op == "sizeof":
            return True  # `size_of` explains the ones it cannot take
        if isinstance(node, c_ast.UnaryOp):
            return node.op in ("-", "+", "~", "!") and self.is_constant_tree(node.expr)
        if isinstance(node, c_ast.BinaryOp):
            return self.is_constant_tree(node.left) and self.is_constant_tree(node.right)
        if isinstance(node, c_ast.TernaryOp):
            return all(self.is_constant_tree(n) for n in (node.cond, node.iftrue, node.iffalse))
        if isinstance(node, c_ast.FuncCall):
            args = node.args.exprs if node.args is not None else []
            return (isinstance(node.name, c_ast.ID) and node.name.name in MATH_CALLS
                    and all(self.is_constant_tree(a) for a in args))
        return False

    def size_of(self, node: c_ast.UnaryOp) -> int:
        """`sizeof` of a type, a constant, a constant table, a local array of constant extents or an
        element of one (`sizeof(k) / sizeof(k[0])`, the count of a table); bytes as on x86-64."""
        operand = node.expr
        if isinstance(operand, c_ast.Typename):
            return scalar_type(operand.type, self.typedefs, self.loc(node), "sizeof").bits // 8
        derefs = 0
        while isinstance(operand, c_ast.UnaryOp) and operand.op == "*":  # `sizeof *k`, an element
            operand, derefs = operand.expr, derefs + 1
        base, subs = _array_ref(operand)
        subs = subs + [None] * derefs
        sizes: Optional[tuple[int, ...]] = None
        bits = 0
        if base in self.tables:
            sizes, values = self.tables[base]
            bits = values[0].type.bits
        elif base in self.constants:
            sizes, bits = (), self.constants[base].type.bits
        elif base in self.local_names and self.local_names[base] in self.arrays:
            name = self.local_names[base]
            arr = self.arrays[name]
            if name in self.expanded:  # a scalar in C, expanded by its loops here
                sizes, bits = (), arr.type.bits
            elif all(arr.bound_shape):
                sizes, bits = arr.bound_shape, arr.type.bits
        if sizes is None or len(subs) > len(sizes):
            raise self.error(node, f"`{c_text(node)}` is not supported: only `sizeof` of a type, a constant, a "
                                   "constant table, a local array of constant sizes or their elements (an array "
                                   "parameter is a pointer in C)")
        return math.prod(sizes[len(subs):]) * bits // 8

    def _expandable(self, scope: _Scope) -> bool:
        """Expansion indexes by the loop counters, so they must never be negative."""
        nonneg = isl.Set.universe(scope.domain.get_space())
        for d in scope.dims:
            v = iu.var(scope.domain.get_space(), d)
            nonneg = nonneg.intersect(v.ge_set(iu.const(scope.domain.get_space(), 0)))
        return scope.domain.is_subset(nonneg)

    def fresh_array_name(self, name: str) -> str:
        if name not in self.arrays and name not in self.scalar_args and name not in self.param_names:
            return name
        k = 1
        while f"{name}_{k}" in self.arrays:
            k += 1
        return f"{name}_{k}"

    # ---------------------------------------------------------------- statements
    def walk_block(self, items: Sequence[c_ast.Node], scope: _Scope, skip: tuple[type, ...] = ()) -> None:
        """The statements of a block.  In a loop body (`skip`: `Continue` and `Break`) or the scop of a
        `void` function (`Return` without a value), `if (c) { ...; continue; }` skips the rest of the
        block where c holds: the rest becomes the `else` of that `if`, which may be on data.  A
        `break` also sets its loop's flag, which guards the later iterations (`loop`)."""
        for k, item in enumerate(items):
            jump, then = next(((j, t) for j in skip if (t := _ends_with(item, j)) is not None), (None, None))
            if then is not None:
                if jump is c_ast.Break:
                    one = c_ast.Constant("int", "1", coord=item.coord)
                    flag = c_ast.ID(scope.broken, coord=item.coord)
                    then = [*then, c_ast.Assignment("=", flag, one, coord=item.coord)]
                rest = c_ast.Compound(list(items[k + 1:]), coord=item.coord)
                self.rest_blocks[id(rest)] = (rest, skip)  # still the loop body's (or the scop's) level
                self.walk(c_ast.If(item.cond, c_ast.Compound(then, coord=item.coord), rest, coord=item.coord), scope)
                return
            self.walk(item, scope)

    def next_position(self, scope: _Scope) -> int:
        pos = scope.positions[0]
        scope.positions[0] += 1
        return pos

    def walk(self, node: c_ast.Node, scope: _Scope) -> None:
        if node is None or isinstance(node, (c_ast.EmptyStatement, c_ast.Pragma)):
            return
        if isinstance(node, c_ast.Compound):
            rest = self.rest_blocks.get(id(node))
            self.walk_block(node.block_items or [], scope, skip=rest[1] if rest is not None else ())
        elif isinstance(node, c_ast.For):
            self.loop(node, scope)
        elif isinstance(node, c_ast.If):
            self.conditional(node, scope)
        elif isinstance(node, c_ast.Assignment):
            self.assignment(node, node.op, node.lvalue, node.rvalue, scope)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--"):
            one = c_ast.Constant("int", "1", coord=node.coord)
            self.assignment(node, "+=" if "++" in node.op else "-=", node.expr, one, scope)
        elif isinstance(node, c_ast.Decl):
            self.declare_local(node, scope)
        elif isinstance(node, c_ast.DeclList):
            for d in node.decls:
                self.declare_local(d, scope)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            raise self.error(node, "`while` loops are not supported inside the scop; write a `for` loop with affine bounds")
        elif isinstance(node, c_ast.Break):
            raise self.error(node, "`break` is supported only ending an `if` directly in the loop body "
                                   "(`if (A[i] == key) { k = i; break; }`)")
        elif isinstance(node, c_ast.Continue):
            raise self.error(node, "`continue` is supported only ending an `if` directly in the loop body "
                                   "(`if (c) continue;`, `if (c) { ...; continue; }`)")
        elif isinstance(node, (c_ast.Goto, c_ast.Label)):
            raise self.error(node, "`goto` and labels are not supported inside the scop")
        elif isinstance(node, c_ast.Return):
            raise self.error(node, "`return` is supported only ending the kernel, or ending an `if` directly in "
                                   "the body of a `void` kernel (`if (n <= 0) return;`)")
        elif isinstance(node, c_ast.Switch):
            raise self.error(node, "`switch` is not supported inside the scop; use affine `if`s")
        elif isinstance(node, c_ast.FuncCall):
            raise self.error(node, f"call to `{c_text(node.name)}` as a statement is not supported inside the scop")
        else:
            raise self.error(node, f"unsupported statement `{c_text(node)}` inside the scop")

    def loop(self, node: c_ast.For, scope: _Scope) -> None:
        if len(scope.dims) >= MAX_LOOP_DEPTH:
            raise self.error(node, f"loops nested more than {MAX_LOOP_DEPTH} deep are not supported")
        counter, init = self.loop_init(node)
        step = self.loop_step(node, counter)
        if node.cond is None:
            raise self.error(node, "a loop needs a condition that bounds its counter")
        dim = counter
        k = 1
        while dim in scope.dims:
            dim = f"{counter}_{k}"
            k += 1
        dims = scope.dims + [dim]
        space = self.space(dims)
        inner = scope.child(dims=dims, counters={**scope.counters, counter: dim},
                            counter_types={**scope.counter_types, counter: self.counter_decls.get(counter, INT32)})
        inner.domain = _add_dim(scope.domain, dim, self.param_names)
        outer_scope = inner.child(counters=dict(scope.counters))  # init is evaluated outside the loop
        outer_scope.domain = inner.domain
        lb = self.affine(init, outer_scope, what="loop initial value")
        v = iu.var(space, dim)
        start = v.ge_set(lb) if step > 0 else v.le_set(lb)
        if abs(step) > 1:
            start = start.intersect((v - lb).mod_val(abs(step)).eq_set(iu.const(space, 0)))
        cond = self.condition(node.cond, inner)
        dom = inner.domain.intersect(start)
        # C runs the loop until the condition first fails; the polyhedral domain equals that only
        # if the condition, once false, stays false along the counter's direction.
        shift = isl.Map.from_multi_aff(_shift_multi_aff(space, dims.index(dim), step))
        cond_prev = cond.apply(shift)  # {v : v - step satisfies cond}
        later = dom.intersect(cond).intersect(dom.apply(shift))  # iterations with a predecessor
        if not later.subtract(cond_prev).is_empty():
            raise self.error(node.cond, "loop condition is not monotone in the loop counter; "
                                        "the iteration domain would not be a polyhedron")
        inner.domain = dom.intersect(cond)
        self.check_termination(node, counter, inner.domain, dims.index(dim), step, inner.counter_types[counter])
        body = _items(node.stmt)
        inner.broken = None
        if any(_ends_with(item, c_ast.Break) is not None for item in body):
            # `if (c) { ...; break; }`: a flag, cleared before the loop, set by the break, and guarding
            # every statement of the loop: the iterations after it run and keep every value as it was
            inner.broken = f"done@{len(self.statements)}"  # not a C name: no user variable can hide it
            at = scope.child(guard=None)
            at.positions = scope.positions
            name = self.scalar_local(inner.broken, "done", INT32, at, node)
            zero = c_ast.Constant("int", "0", coord=node.coord)
            self.assignment(node, "=", c_ast.ID(inner.broken, coord=node.coord), zero, at, text=f"{name} = 0")
            running = c_ast.UnaryOp("!", c_ast.ID(inner.broken, coord=node.coord), coord=node.coord)
            inner.guard = _both(scope.guard, running)
        pos = self.next_position(scope)
        inner.time = scope.time + [str(pos), dim if step > 0 else f"-{dim}"]
        inner.positions = [0]
        self.walk_block(body, inner, skip=(c_ast.Continue, c_ast.Break))

    def check_termination(self, node: c_ast.For, counter: str, dom: isl.Set, pos: int, step: int,
                          t: ScalarType) -> None:
        """The C loop must stop: its condition must bound the counter, and the counter must not wrap."""
        try:
            (dom.dim_max(pos) if step > 0 else dom.dim_min(pos))
        except isl.Error:
            raise self.error(node.cond, f"the condition does not bound `{counter}` in the direction of its step; "
                                        "the loop would not terminate") from None
        lo, hi = (0, (1 << t.bits) - 1) if not t.signed else (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1)
        v = iu.var(dom.get_space(), dom.get_dim_name(isl.dim_type.set, pos))
        nxt = v + iu.const(dom.get_space(), step)
        wraps = dom.intersect(nxt.gt_set(iu.const(dom.get_space(), hi)).union(nxt.lt_set(iu.const(dom.get_space(), lo))))
        if not wraps.is_empty() and dom.params().is_subset(wraps.params()):
            raise self.error(node.cond, f"`{counter}` ({t}) leaves its type's range before the condition fails; "
                                        "the loop would not terminate as written")

    def loop_init(self, node: c_ast.For) -> tuple[str, c_ast.Node]:
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            d = init.decls[0]
            self.counter_decls[d.name] = scalar_type(d.type, self.typedefs, self.loc(d), f"loop counter `{d.name}`")
            if not self.counter_decls[d.name].is_int:
                raise self.error(d, "loop counters must have an integer type")
            return d.name, d.init
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            return init.lvalue.name, init.rvalue
        raise self.error(node, "a loop must initialize one counter, e.g. `for (i = 0; ...; i++)`")

    def loop_step(self, node: c_ast.For, counter: str) -> int:
        nxt = node.next
        err = self.error(node.next or node, f"the loop step must be a constant increment of `{counter}`")
        if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == counter:
            if nxt.op in ("p++", "++"):
                return 1
            if nxt.op in ("p--", "--"):
                return -1
        if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == counter:
            if nxt.op in ("+=", "-="):
                c = _int_constant(nxt.rvalue)
                if c is not None and c != 0:
                    return c if nxt.op == "+=" else -c
            if nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in "+-":
                l, r = nxt.rvalue.left, nxt.rvalue.right
                if isinstance(l, c_ast.ID) and l.name == counter and _int_constant(r):
                    return _int_constant(r) * (1 if nxt.rvalue.op == "+" else -1)
                if nxt.rvalue.op == "+" and isinstance(r, c_ast.ID) and r.name == counter and _int_constant(l):
                    return _int_constant(l)
        raise err

    def conditional(self, node: c_ast.If, scope: _Scope) -> None:
        try:
            cond = self.condition(node.cond, scope)
        except _NotAffine:
            self.converted(node, scope)
            return
        then = scope.child(domain=scope.domain.intersect(cond))
        then.positions = scope.positions
        self.walk(node.iftrue, then)
        if node.iffalse is not None:
            other = scope.child(domain=scope.domain.subtract(cond))
            other.positions = scope.positions
            self.walk(node.iffalse, other)

    def converted(self, node: c_ast.If, scope: _Scope) -> None:
        """An `if` on data (`if (A[i] > m) { m = A[i]; k = i; }`), if-converted.

        The condition is evaluated once, before either branch, into a fresh local flag (a branch may
        change what it reads: `m` above); every assignment of a branch then writes its target always,
        the new value where the guard holds and the old one elsewhere: `m = flag ? A[i] : m`.  The
        affine conjuncts of a condition without `else` (`i > 0 && A[i] < A[i - 1]`) still restrict the
        domain.  Loops, nested `if`s and declarations may appear in the branches; a local declared in
        a branch is assigned there without a guard, being a fresh object."""
        affine: list[isl.Set] = []
        data: list[c_ast.Node] = []
        for c in _conjuncts(node.cond):
            try:
                affine.append(self.condition(c, scope))
            except _NotAffine:
                data.append(c)
        if node.iffalse is not None and affine:  # the else branch needs the negation of the whole
            affine, data = [], [node.cond]
        domain = scope.domain
        for a in affine:
            domain = domain.intersect(a)
        test = data[0]
        for c in data[1:]:
            test = c_ast.BinaryOp("&&", test, c, coord=c.coord)
        flag = f"cond@{len(self.statements)}"  # not a C name: no user variable can hide it
        at = scope.child(domain=domain, guard=None)
        at.positions = scope.positions
        name = self.scalar_local(flag, "cond", INT32, at, node)
        truth = c_ast.UnaryOp("!", c_ast.UnaryOp("!", test, coord=test.coord), coord=test.coord)
        self.assignment(test, "=", c_ast.ID(flag, coord=node.coord), truth, at, text=f"{name} = {c_text(test)}")
        then = scope.child(domain=domain, guard=_both(scope.guard, c_ast.ID(flag, coord=node.coord)))
        then.positions = scope.positions
        self.walk(node.iftrue, then)
        if node.iffalse is not None:
            negated = c_ast.UnaryOp("!", c_ast.ID(flag, coord=node.coord), coord=node.coord)
            other = scope.child(guard=_both(scope.guard, negated))
            other.positions = scope.positions
            self.walk(node.iffalse, other)

    # ---------------------------------------------------------------- assignments
    def assignment(self, node: c_ast.Node, op: str, lvalue: c_ast.Node, rvalue: c_ast.Node, scope: _Scope,
                   text: Optional[str] = None) -> None:
        if isinstance(rvalue, c_ast.Assignment):
            # `a = b = e`: C assigns `b = e` first, and the value of that expression is what `b` now
            # holds (e converted to b's type).  Two statements, the second reading `b` back: exact
            # even when `e` reads `b` or `a` (recomputing `e` after `b = e` would not be), and the
            # dataflow is a plain dependence from the first statement to the second.
            self.assignment(rvalue, rvalue.op, rvalue.lvalue, rvalue.rvalue, scope)
            rvalue = rvalue.lvalue
            if isinstance(node, c_ast.Assignment):
                node = c_ast.Assignment(op, lvalue, rvalue, coord=node.coord)
        name = f"S{len(self.statements)}"
        reads: list[Access] = []
        target_array, subscripts = self.lvalue(lvalue, scope)
        arr = self.arrays[target_array]
        write = self.access(name, target_array, subscripts, True, lvalue, scope, "w")
        value = self.value(rvalue, scope, name, reads)
        if op != "=":
            binop = op[:-1]
            if binop not in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
                raise self.error(node, f"unsupported assignment operator `{op}`")
            old_read = self.access(name, target_array, subscripts, False, lvalue, scope, f"r{len(reads)}")
            reads.append(old_read)
            old = E.ArrayRead(old_read.id, arr.type, old_read.text)
            value = self.binary(binop, old, value, node)
        value = E.cast(value, arr.type)
        if scope.guard is not None and self.local_guard.get(target_array, False) is not scope.guard:
            kept = E.cast(self.read(lvalue, scope, name, reads), arr.type)
            value = E.Select(_truth(self.value(scope.guard, scope, name, reads)), value, kept, arr.type)
        domain = scope.domain.set_tuple_name(name)
        self.statements.append(Statement(
            name=name, domain=domain, iterators=tuple(scope.dims), write=write, reads=tuple(reads), expr=value,
            loc=self.loc(node), text=text or self.readable(c_text(node) if not isinstance(node, c_ast.Decl)
                                                           else f"{node.name} = {c_text(rvalue)}"),
        ))
        pos = self.next_position(scope)
        self.schedules.append((name, scope.dims, scope.time + [str(pos)]))
        self.max_depth = max(self.max_depth, len(scope.dims))

    def readable(self, text: str) -> str:
        """`text` with the internal names of flags (`done@7`, not C names) spelled as their locals."""
        return re.sub(r"\b\w+@\d+", lambda m: self.local_names.get(m.group(0), m.group(0)), text)

    def lvalue(self, node: c_ast.Node, scope: _Scope) -> tuple[str, list[c_ast.Node]]:
        base, subs = _array_ref(node)
        if base is None:
            raise self.error(node, f"cannot assign to `{c_text(node)}`; only array elements and local scalars")
        if base in scope.counters:
            raise self.error(node, f"loop counter `{base}` must not be assigned in the loop body")
        if base in self.param_names or base in self.scalar_args:
            raise self.error(node, f"scalar parameter `{base}` is read-only in the kernel")
        return self.array_of(base, subs, node), subs

    def array_of(self, base: str, subs: list, node: c_ast.Node) -> str:
        name = self.local_names.get(base, base)
        if name not in self.arrays:
            raise self.error(node, f"unknown variable `{base}` (globals are not supported, but for `const` scalars, "
                                   f"enumerators and `const` tables of at most {TABLE_ELEMENTS} elements; pass it as "
                                   "a parameter)")
        arr = self.arrays[name]
        opened = self.open_arrays.get(name)
        if opened is not None and opened.pointer and name == base:
            if len(subs) != 1:
                raise self.error(node, f"`{base}` is a pointer: index it with one subscript (`{base}[i * m + j]`)")
            return name
        if len(subs) != arr.ndim and not (name in self.expanded and not subs):
            if len(subs) < arr.ndim:
                raise self.error(node, f"`{base}` has {arr.ndim} dimension(s) but is used with {len(subs)} subscript(s); "
                                       "pointer arithmetic and array decay are not supported")
            raise self.error(node, f"`{base}` has {arr.ndim} dimension(s) but is used with {len(subs)} subscript(s)")
        return name

    def access(self, stmt: str, array: str, subs: list, is_write: bool, node, scope: _Scope, suffix: str) -> Access:
        space = self.space(scope.dims)
        rel: Optional[isl.Map] = None
        opened = self.open_arrays.get(array)
        indices = (self.pointer_index(array, subs[0], scope) if opened is not None and opened.pointer
                   else [self.affine(s, scope, what="array index") for s in subs])
        for pa in indices:
            m = isl.Map.from_pw_aff(pa)
            rel = m if rel is None else rel.flat_range_product(m)
        if rel is None and array in self.expanded:
            k = self.expanded[array]
            rel = isl.Map.identity(isl.Space.map_from_set(space)).project_out(isl.dim_type.out, k, len(scope.dims) - k)
        elif rel is None:
            rel = isl.Map.from_domain_and_range(isl.Set.universe(space), isl.Set.universe(
                isl.Space.create_from_names(iu.CTX, set=[], params=self.param_names)))
        rel = rel.set_tuple_name(isl.dim_type.in_, stmt).set_tuple_name(isl.dim_type.out, array)
        rel = rel.intersect_domain(scope.domain.set_tuple_name(stmt))
        return Access(f"{stmt}.{suffix}", stmt, array, is_write, rel, self.loc(node), c_text(node))

    def pointer_index(self, array: str, sub: c_ast.Node, scope: _Scope) -> list[isl.PwAff]:
        """The subscripts of a pointer's element as a row-major array (`pointers`)."""
        def fail(why: str) -> CompileError:
            return self.error(sub, f"index `{c_text(sub)}` of pointer `{array}` is not a row-major index ({why})")

        terms = index_terms(sub, lambda n: self.affine(n, scope, what="array index"), fail)
        seen = self.strides.setdefault(array, set())
        seen.update(terms)
        if stride_chain(seen) is None:
            strides = ", ".join(" * ".join(s) or "1" for s in sorted(seen, key=lambda s: (len(s), s)))
            raise self.error(sub, f"the strides of pointer `{array}` do not nest ({strides}: each must divide the "
                                  "next), so its indices are not those of one row-major array; declare it with "
                                  "its sizes, e.g. `float A[N][M]`")
        space = self.space(scope.dims)
        chain = self.chains.get(array, [()])
        if not set(terms) <= set(chain):  # a stride not seen when this extraction started: it starts again
            return [iu.const(space, 0)] * len(chain)
        return delinearized(terms, chain, scope.domain)

    # ---------------------------------------------------------------- values
    def value(self, node: c_ast.Node, scope: _Scope, stmt: str, reads: list[Access]) -> E.Expr:
        rec: Callable[[c_ast.Node], E.Expr] = lambda n: self.value(n, scope, stmt, reads)  # noqa: E731
        if self.host_depth == 0:
            hoisted = self.hoist(node, scope, stmt, reads)
            if hoisted is not None:
                return hoisted
        if isinstance(node, c_ast.Constant):
            return _constant(node, self)
        if isinstance(node, c_ast.ID):
            n = node.name
            if n in scope.counters:
                return E.AffineValue(iu.var(self.space(scope.dims), scope.counters[n]), scope.counter_types[n], n)
            if n in self.constants:
                return self.constants[n]
            if n in self.param_names:
                p = next(p for p in self.params if p.name == n)
                return E.AffineValue(iu.var(self.space(scope.dims), n), p.type, n)
            if n in self.scalar_args:
                return E.ScalarArg(n, self.scalar_args[n])
            return self.read(node, scope, stmt, reads)
        if isinstance(node, c_ast.ArrayRef):
            return self.read(node, scope, stmt, reads)
        if isinstance(node, c_ast.Cast):
            t = scalar_type(node.to_type, self.typedefs, self.loc(node), "cast")
            return E.cast(rec(node.expr), t)
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("p++", "++", "p--", "--"):
                raise self.error(node, "increments inside expressions are not supported; write a separate statement")
            if node.op in ("*", "&"):
                raise self.error(node, "pointer dereference and address-of are not supported; index arrays with subscripts")
            if node.op == "sizeof":
                return E.Const(self.size_of(node), UINT64)
            x = rec(node.expr)
            if node.op == "+":
                return E.cast(x, promote(x.type))
            if node.op == "-":
                t = promote(x.type)
                x = E.cast(x, t)
                if isinstance(x, E.Const):
                    return E.Const(E.convert_value(-x.value, t), t)
                return E.Unary("-", x, t)
            if node.op == "~":
                if not x.type.is_int:
                    raise self.error(node, "`~` needs an integer operand")
                t = promote(x.type)
                return E.Unary("~", E.cast(x, t), t)
            if node.op == "!":
                return E.Binary("==", x, E.Const(E.convert_value(0, x.type), x.type), INT32)
            raise self.error(node, f"unsupported operator `{node.op}`")
        if isinstance(node, c_ast.BinaryOp):
            return self.binary(node.op, rec(node.left), rec(node.right), node)
        if isinstance(node, c_ast.TernaryOp):
            c = _truth(rec(node.cond))
            a, b = rec(node.iftrue), rec(node.iffalse)
            t = usual_arithmetic_conversion(a.type, b.type)
            return E.Select(c, E.cast(a, t), E.cast(b, t), t)
        if isinstance(node, c_ast.FuncCall):
            fname = node.name.name if isinstance(node.name, c_ast.ID) else c_text(node.name)
            if fname in HOST_CALLS and self.host_depth == 0:
                what = self.non_parameter(node, scope) or c_text(node)
                raise self.error(node, f"call to unknown function `{fname}` in the datapath: only sqrt, fabs, fmin, "
                                       f"fmax (and their float variants) are implemented in hardware; `{fname}` is "
                                       "accepted only when its arguments depend on nothing but scalar parameters "
                                       f"and constants (it is then computed once on the host), but `{c_text(node)}` "
                                       f"depends on `{what}`")
            if fname not in MATH_CALLS and fname not in HOST_CALLS:
                raise self.error(node, f"call to unknown function `{fname}`; only sqrt, fabs, fmin, fmax "
                                       "(and their float variants) are supported, and exp, log, pow, sin, cos, tan, "
                                       "exp2, log2, log10, cbrt on scalar parameters")
            func, t = MATH_CALLS[fname] if fname in MATH_CALLS else HOST_CALLS[fname]
            args = node.args.exprs if node.args is not None else []
            want = {**E.CALLS, **E.HOST_CALLS}[func]
            if len(args) != want:
                raise self.error(node, f"`{fname}` takes {want} argument(s)")
            return E.Call(func, tuple(E.cast(rec(a), t) for a in args), t)
        if isinstance(node, c_ast.Assignment):
            raise self.error(node, "assignments inside expressions are not supported")
        if isinstance(node, c_ast.StructRef):
            raise self.error(node, "struct members are not supported")
        raise self.error(node, f"unsupported expression `{c_text(node)}`")

    # ---------------------------------------------------------------- hoisting
    def parameter_only(self, node: c_ast.Node, scope: _Scope) -> Optional[tuple[set[str], bool]]:
        """(scalar arguments read, calls a function?) when `node` depends on nothing but scalar
        arguments, structure parameters and constants; None otherwise.  Memoized: `value` asks at every
        node on its way down, which would be quadratic in the depth of long expressions."""
        hit = self.param_only_memo.get(id(node))
        if hit is not None and hit[0] is node and hit[1] is scope:
            return hit[2]
        res = self._parameter_only(node, scope)
        self.param_only_memo[id(node)] = (node, scope, res)
        return res

    def _parameter_only(self, node: c_ast.Node, scope: _Scope) -> Optional[tuple[set[str], bool]]:
        if isinstance(node, c_ast.Constant):
            return (set(), False) if node.type != "string" else None
        if isinstance(node, c_ast.ID):
            n = node.name
            if n in scope.counters:
                return None
            if n in self.constants:
                return set(), False
            if n in self.local_names:
                return None
            return ({n}, False) if n in self.param_names or n in self.scalar_args else None
        kids: list[c_ast.Node]
        calls = False
        if isinstance(node, c_ast.Cast):
            kids = [node.expr]
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+", "~", "!"):
            kids = [node.expr]
        elif isinstance(node, c_ast.BinaryOp):
            kids = [node.left, node.right]
        elif isinstance(node, c_ast.TernaryOp):
            kids = [node.cond, node.iftrue, node.iffalse]
        elif isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and (
                node.name.name in MATH_CALLS or node.name.name in HOST_CALLS):
            kids = list(node.args.exprs) if node.args is not None else []
            calls = True
        else:
            return None
        names: set[str] = set()
        for k in kids:
            sub = self.parameter_only(k, scope)
            if sub is None:
                return None
            names |= sub[0]
            calls = calls or sub[1]
        return names, calls

    def non_parameter(self, node: c_ast.Node, scope: _Scope) -> Optional[str]:
        """The first operand (loop counter, array element, local) that keeps `node` off the host."""
        if self.parameter_only(node, scope) is not None:
            return None
        if isinstance(node, (c_ast.ID, c_ast.ArrayRef)) or not node.children():
            return c_text(node)
        for _, child in node.children():
            if isinstance(node, c_ast.FuncCall) and child is node.name:
                continue
            found = self.non_parameter(child, scope)
            if found is not None:
                return found
        return c_text(node)

    def hoist(self, node: c_ast.Node, scope: _Scope, stmt: str, reads: list[Access]) -> Optional[E.Expr]:
        """A reference to a hoisted scalar when `node` is a non-trivial parameter-only subexpression.

        `value` tries this before descending, so the subexpressions hoisted are the maximal ones.
        Constant-only arithmetic stays in the datapath (nothing to compute on the host) unless it
        calls a function."""
        if isinstance(node, (c_ast.Constant, c_ast.ID)):
            return None
        dep = self.parameter_only(node, scope)
        if dep is None or not (dep[0] or dep[1]):
            return None
        self.host_depth += 1
        try:
            e = self.value(node, scope, stmt, reads)
        finally:
            self.host_depth -= 1
        if isinstance(e, (E.Const, E.ScalarArg, E.AffineValue)) and not dep[1]:
            return e  # folded to a constant or a lone scalar (e.g. `+alpha`): nothing to compute
        casts: dict[int, str] = {}
        for sub in _walk_c(node):
            if isinstance(sub, c_ast.Cast):
                casts[id(sub)] = scalar_type(sub.to_type, self.typedefs, self.loc(sub), "cast").name
        host = _HostTextGenerator(casts, self.constants).visit(node)
        key = (host, e.type.name)
        if key not in self.hoisted:
            order = [a.name for a in self.args]
            self.hoisted[key] = HoistedScalar(
                name=self.hoisted_name(), expr=e, type=e.type, loc=self.loc(node), c_text=host, text=c_text(node),
                inputs=tuple(n for n in order if n in dep[0]))
        return E.ScalarArg(self.hoisted[key].name, e.type)

    def hoisted_name(self) -> str:
        """`h<k>`, numbered in source order (deterministic), avoiding every name of the kernel."""
        taken = {a.name for a in self.args} | set(self.arrays) | set(self.local_names) | set(self.counter_decls)
        taken |= set(self.constants)
        taken |= {h.name for h in self.hoisted.values()}
        k = len(self.hoisted)
        name = f"h{k}"
        j = 1
        while name in taken:
            name = f"h{k}_{j}"
            j += 1
        return name

    def read(self, node: c_ast.Node, scope: _Scope, stmt: str, reads: list[Access]) -> E.Expr:
        base, subs = _array_ref(node)
        if base is None:
            raise self.error(node, f"unsupported expression `{c_text(node)}`")
        if base in self.tables:
            return self.table_read(node, scope, base, subs, lambda n: self.value(n, scope, stmt, reads))
        if base in self.param_names or base in scope.counters:
            raise self.error(node, f"`{base}` is not an array")
        name = self.array_of(base, subs, node)
        acc = self.access(stmt, name, subs, False, node, scope, f"r{len(reads)}")
        # A statement reads each element once: its reads happen before its write, so two reads of one
        # element by one instance give the same value (heat-3d's `A[i][j][k]`, four times in its
        # expression: three channels, three buffers and their analyses fewer per statement).
        same = next((r for r in reads if r.array == name and r.relation.is_equal(acc.relation)), None)
        if same is not None:
            return E.ArrayRead(same.id, self.arrays[name].type, same.text)
        reads.append(acc)
        return E.ArrayRead(acc.id, self.arrays[name].type, acc.text)

    def binary(self, op: str, a: E.Expr, b: E.Expr, node: c_ast.Node) -> E.Expr:
        if op in E.ARITH_OPS:
            t = usual_arithmetic_conversion(a.type, b.type)
            if op in ("%", "&", "|", "^") and t.is_float:
                raise self.error(node, f"`{op}` needs integer operands")
            return E.Binary(op, E.cast(a, t), E.cast(b, t), t)
        if op in E.SHIFT_OPS:
            if not (a.type.is_int and b.type.is_int):
                raise self.error(node, f"`{op}` needs integer operands")
            return E.Binary(op, E.cast(a, promote(a.type)), E.cast(b, promote(b.type)), promote(a.type))
        if op in E.COMPARE_OPS:
            t = usual_arithmetic_conversion(a.type, b.type)
            return E.Binary(op, E.cast(a, t), E.cast(b, t), INT32)
        if op in E.LOGIC_OPS:
            return E.Binary(op, _truth(a), _truth(b), INT32)
        raise self.error(node, f"unsupported operator `{op}`")

    # ---------------------------------------------------------------- affine forms
    def affine(self, node: c_ast.Node, scope: _Scope, *, what: str) -> isl.PwAff:
        """An integer expression of counters and parameters as an isl piecewise affine function."""
        space = self.space(scope.dims)
        rec = lambda n: self.affine(n, scope, what=what)  # noqa: E731

        def not_affine(why: str = "") -> CompileError:
            return _NotAffine(self.loc(node), f"{what} `{c_text(node)}` is not affine in the loop counters and "
                                              "parameters" + (f" ({why})" if why else ""))

        if isinstance(node, c_ast.Constant):
            v = _int_constant(node)
            if v is None:
                raise not_affine("non-integer constant")
            return iu.const(space, v)
        if isinstance(node, c_ast.ID):
            if node.name in scope.counters:
                return iu.var(space, scope.counters[node.name])
            if node.name in self.param_names:
                return iu.var(space, node.name)
            if node.name in self.constants:
                c = self.constants[node.name]
                if not c.type.is_int:
                    raise not_affine(f"`{node.name}` is a floating-point constant")
                return iu.const(space, int(c.value))
            if node.name in self.local_names or node.name in self.arrays:
                raise not_affine(f"it reads the variable `{node.name}`")
            if any(getattr(d, "name", None) == node.name for d in self.file_decls):
                raise not_affine(f"`{node.name}` is a global variable: declare it `const` with a constant initializer, "
                                 "or pass it as a parameter")
            raise not_affine(f"`{node.name}` is not a loop counter or an integer parameter")
        if isinstance(node, c_ast.ArrayRef):
            raise not_affine("it reads array data")
        if isinstance(node, c_ast.Cast):
            t = scalar_type(node.to_type, self.typedefs, self.loc(node), "cast")
            if not t.is_int:
                raise not_affine("floating-point cast")
            return rec(node.expr)
        if isinstance(node, c_ast.UnaryOp):
            if node.op == "sizeof":
                return iu.const(space, self.size_of(node))
            if node.op == "-":
                return rec(node.expr).neg()
            if node.op == "+":
                return rec(node.expr)
            raise not_affine()
        if isinstance(node, c_ast.TernaryOp):
            c = self.condition(node.cond, scope)
            return c.indicator_function().cond(rec(node.iftrue), rec(node.iffalse))
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("+", "-"):
                a, b = rec(node.left), rec(node.right)
                return a + b if node.op == "+" else a - b
            if node.op == "*":
                a, b = rec(node.left), rec(node.right)
                if not (a.is_cst() or b.is_cst()):
                    raise not_affine("product of two variables")
                return a.mul(b)
            if node.op in ("/", "%"):
                a, b = rec(node.left), rec(node.right)
                c = iu.constant_value(b)
                if c == 0:
                    raise self.error(node, f"division by zero in {what} `{c_text(node)}`")
                if c is None:
                    raise not_affine("division by a non-constant")
                return a.tdiv_q(b) if node.op == "/" else a.tdiv_r(b)
            raise not_affine()
        if isinstance(node, c_ast.FuncCall):
            raise not_affine("function call")
        raise not_affine()

    def condition(self, node: c_ast.Node, scope: _Scope) -> isl.Set:
        """An affine condition as the set of (counters, parameters) where it holds."""
        space = self.space(scope.dims)
        if isinstance(node, c_ast.BinaryOp):
            if node.op == "&&":
                return self.condition(node.left, scope).intersect(self.condition(node.right, scope))
            if node.op == "||":
                return self.condition(node.left, scope).union(self.condition(node.right, scope))
            cmp = {"<": "lt_set", "<=": "le_set", ">": "gt_set", ">=": "ge_set", "==": "eq_set", "!=": "ne_set"}
            if node.op in cmp:
                a = self.affine(node.left, scope, what="condition")
                b = self.affine(node.right, scope, what="condition")
                return getattr(a, cmp[node.op])(b)
        if isinstance(node, c_ast.UnaryOp) and node.op == "!":
            return isl.Set.universe(space).subtract(self.condition(node.expr, scope))
        try:
            v = self.affine(node, scope, what="condition")
        except CompileError as e:  # located at the whole condition, of the same kind
            raise type(e)(self.loc(node), e.message) from None
        return v.ne_set(iu.const(space, 0))

    # ---------------------------------------------------------------- driver
    def run(self, scop: Optional[tuple[c_ast.Compound, int, int]]) -> PolyProgram:
        body = self.func.body.block_items or []
        if scop is None:
            block, start, end = self.func.body, 0, len(body)
        else:
            block, start, end = scop
        items = block.block_items or []
        self.written = _written_names(items[start:end])
        self.file_scope()
        self.signature()
        self.outside(body, block, start, end)
        root = self.root_scope()
        region = list(items[start:end])
        final = region.pop() if region and isinstance(region[-1], c_ast.Return) else None
        self.walk_block(region, root, skip=(c_ast.Return,))
        self.result(final, root)
        if not self.statements:
            raise self.error(self.func, f"kernel `{self.func.decl.name}` has no statements inside its scop")
        found = {a: stride_chain(s) for a, s in self.strides.items()}
        if any(found[a] != self.chains.get(a, [()]) for a in found):
            raise _Rechain({a: c for a, c in found.items() if c is not None})
        self.close_open_arrays()
        return self.build()

    def outside(self, body: list, block: c_ast.Compound, start: int, end: int) -> None:
        """Declarations outside the scop are allowed; computations there would escape synthesis."""
        def check(items: list, skip: Optional[tuple[int, int]]) -> None:
            for k, it in enumerate(items):
                if skip and skip[0] - 1 <= k < skip[1] + 1:
                    continue
                if isinstance(it, c_ast.Decl):
                    self.declare_local(it, None)
                elif isinstance(it, c_ast.DeclList):
                    for d in it.decls:
                        self.declare_local(d, None)
                elif isinstance(it, (c_ast.Pragma, c_ast.EmptyStatement)):
                    continue
                elif it is block:
                    check(block.block_items or [], (start, end))
                elif isinstance(it, c_ast.Return) and it.expr is None:
                    continue
                else:
                    raise self.error(it, "statement outside the `#pragma scop` region; dpn-synth synthesizes only the "
                                         "scop, so move it inside or out of the kernel")
        if block is self.func.body:
            check(body, (start, end))
        else:
            check(body, None)

    def demote_value_params(self) -> None:
        """Integer arguments used only as values (e.g. `int alpha`) are run-time scalars, not structure
        parameters: they need no value at compile time and become inputs of the hardware."""
        objs = [s.domain for s in self.statements] + [a.relation for s in self.statements for a in s.accesses]
        objs += [a.extent for a in self.arrays.values()]
        for p in list(self.params):
            def involves(o) -> bool:
                pos = o.find_dim_by_name(isl.dim_type.param, p.name)
                return pos >= 0 and o.involves_dims(isl.dim_type.param, pos, 1)
            if any(involves(o) for o in objs):
                continue
            self.params.remove(p)
            self.scalar_args[p.name] = p.type
            self.args = [KernelArg(a.name, "scalar", a.type, a.loc) if a.name == p.name else a for a in self.args]
            drop = lambda o: o.project_out(isl.dim_type.param, o.find_dim_by_name(isl.dim_type.param, p.name), 1)  # noqa
            self.statements = [_replace_stmt(st, drop, p.name) for st in self.statements]
            self.hoisted = {k: _dc_replace(h, expr=_param_to_scalar(h.expr, p.name, drop))
                            for k, h in self.hoisted.items()}
            self.arrays = {k: _dc_replace(a, extent=drop(a.extent)) for k, a in self.arrays.items()}

    def build(self) -> PolyProgram:
        self.demote_value_params()
        depth = self.max_depth
        width = 2 * depth + 1
        sched = isl.UnionMap.empty(isl.Space.params_alloc(iu.CTX, 0))
        for name, dims, time in self.schedules:
            time = time + ["0"] * (width - len(time))
            stmt = next(s for s in self.statements if s.name == name)
            text = f"[{', '.join(self.param_names)}] -> {{ {name}[{', '.join(dims)}] -> [{', '.join(time)}] }}"
            m = isl.Map.read_from_str(iu.CTX, text)
            sched = sched.union(isl.UnionMap.from_map(m.intersect_domain(stmt.domain)))
        context = iu.param_set({}, self.param_names)
        used = {a.array for s in self.statements for a in s.accesses}
        arrays = {k: a for k, a in self.arrays.items() if a.is_arg or k in used}  # drop loop counters
        hoisted = tuple(sorted(self.hoisted.values(), key=lambda h: int(h.name[1:].split("_")[0])))
        args = tuple(self.args) + tuple(KernelArg(h.name, "scalar", h.type, h.loc, hoisted=True) for h in hoisted)
        notes = tuple(f"`{h.text}` ({h.loc}) is computed once on the host before start: top input arg_{h.name}"
                      for h in hoisted)
        return PolyProgram(
            name=self.func.decl.name, file=self.path, loc=self.loc(self.func), args=args,
            params=tuple(self.params), context=context, arrays=arrays, statements=tuple(self.statements),
            schedule=sched, notes=notes, hoisted=hoisted,
        )


# -------------------------------------------------------------------- small helpers
def _dc_replace(obj, **kw):
    from dataclasses import replace

    return replace(obj, **kw)


def _param_to_scalar(e: E.Expr, name: str, drop) -> E.Expr:
    """Rewrite reads of parameter `name` as a scalar argument, and drop it from other affine values."""
    if isinstance(e, E.AffineValue):
        pos = e.expr.find_dim_by_name(isl.dim_type.param, name)
        if pos >= 0 and e.expr.involves_dims(isl.dim_type.param, pos, 1):
            return E.ScalarArg(name, e.type)
        return E.AffineValue(e.expr.drop_dims(isl.dim_type.param, pos, 1) if pos >= 0 else e.expr, e.type, e.text)
    if isinstance(e, E.Unary):
        return E.Unary(e.op, _param_to_scalar(e.operand, name, drop), e.type)
    if isinstance(e, E.Binary):
        return E.Binary(e.op, _param_to_scalar(e.lhs, name, drop), _param_to_scalar(e.rhs, name, drop), e.type)
    if isinstance(e, E.Select):
        return E.Select(*(_param_to_scalar(x, name, drop) for x in (e.cond, e.if_true, e.if_false)), e.type)
    if isinstance(e, E.Cast):
        return E.Cast(_param_to_scalar(e.operand, name, drop), e.type)
    if isinstance(e, E.Call):
        return E.Call(e.func, tuple(_param_to_scalar(a, name, drop) for a in e.args), e.type)
    return e


def _replace_stmt(st: Statement, drop, name: str) -> Statement:
    return _dc_replace(
        st, domain=drop(st.domain), write=_dc_replace(st.write, relation=drop(st.write.relation)),
        reads=tuple(_dc_replace(r, relation=drop(r.relation)) for r in st.reads),
        expr=_param_to_scalar(st.expr, name, drop))


def _add_dim(domain: isl.Set, name: str, params: Sequence[str]) -> isl.Set:
    n = domain.dim(isl.dim_type.set)
    d = domain.add_dims(isl.dim_type.set, 1)
    return d.set_dim_name(isl.dim_type.set, n, name)


def _shift_multi_aff(space: isl.Space, pos: int, step: int) -> isl.MultiAff:
    """{ [.., v, ..] -> [.., v + step, ..] }"""
    mspace = isl.Space.map_from_set(space)
    ma = isl.MultiAff.identity(mspace)
    aff = ma.get_aff(pos)
    return ma.set_aff(pos, aff.set_constant_val(isl.Val.int_from_si(iu.CTX, step)))


def _walk_c(node: c_ast.Node):  # type: ignore[no-untyped-def]
    yield node
    for _, child in node.children():
        yield from _walk_c(child)


def _array_ref(node: c_ast.Node) -> tuple[Optional[str], list[c_ast.Node]]:
    subs: list[c_ast.Node] = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    if isinstance(node, c_ast.ID):
        return node.name, list(reversed(subs))
    return None, []


def _items(node: c_ast.Node) -> list[c_ast.Node]:
    return list(node.block_items or []) if isinstance(node, c_ast.Compound) else [node]


def _ends_with(node: c_ast.Node, jump: type) -> Optional[list[c_ast.Node]]:
    """The statements before the final `jump` of an `if` without `else` whose branch ends with it
    (`if (c) continue;`, `if (c) { s; continue; }`), else None."""
    if not isinstance(node, c_ast.If) or node.iffalse is not None:
        return None
    body = _items(node.iftrue)
    if body and isinstance(body[-1], jump) and not (isinstance(body[-1], c_ast.Return) and body[-1].expr is not None):
        return body[:-1]
    return None


def _conjuncts(node: c_ast.Node) -> list[c_ast.Node]:
    """`a && b && c` as [a, b, c]."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _both(outer: Optional[c_ast.Node], inner: c_ast.Node) -> c_ast.Node:
    return inner if outer is None else c_ast.BinaryOp("&&", outer, inner, coord=inner.coord)


def _written_names(items: Sequence[c_ast.Node]) -> set[str]:
    """Names of the variables assigned or incremented anywhere in `items`."""
    names: set[str] = set()
    for item in items:
        for node in _walk_c(item):
            target = None
            if isinstance(node, c_ast.Assignment):
                target = node.lvalue
            elif isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--"):
                target = node.expr
            base, _ = _array_ref(target) if target is not None else (None, [])
            if base is not None:
                names.add(base)
    return names


def _c_literal(c: E.Const) -> str:
    """C text of exactly the value `c` at its type (hexadecimal floating constants are exact)."""
    if c.type.is_float:
        v = float(c.value)
        if v != v:
            text = "__builtin_nan(\"\")"
        elif v in (float("inf"), float("-inf")):
            text = ("-" if v < 0 else "") + "__builtin_inf()"
        else:
            text = v.hex()
        return f"(({c.type.name}) {text})"
    v = int(c.value)
    if not c.type.signed:
        return f"(({c.type.name}) {v}ULL)"
    text = f"{v}LL" if v > -(1 << 63) else "(-9223372036854775807LL - 1)"
    return f"(({c.type.name}) {text})"


def _int_constant(node: c_ast.Node) -> Optional[int]:
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        v = _int_constant(node.expr)
        return -v if v is not None else None
    if not isinstance(node, c_ast.Constant):
        return None
    if node.type == "char":
        body = node.value[1:-1]
        return ord(body.encode().decode("unicode_escape")) if body else 0
    if "int" not in node.type and node.type not in ("long", "unsigned"):
        return None
    text = node.value.rstrip("uUlL")
    return int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1:].isdigit()) else int(text, 8)


def _constant(node: c_ast.Constant, ex: _Extractor) -> E.Expr:
    if node.type in ("float", "double") or (node.type not in ("char", "string") and _int_constant(node) is None):
        text = node.value
        is_float = text[-1] in "fF"
        if text[-1] in "fFlL":
            if text[-1] in "lL":
                raise ex.error(node, "`long double` constants are not supported")
            text = text[:-1]
        v = float.fromhex(text) if text.lower().startswith("0x") else float(text)
        t = FLOAT if is_float else DOUBLE
        return E.Const(E.convert_value(v, t), t)
    if node.type == "string":
        raise ex.error(node, "string literals are not supported")
    v = _int_constant(node)
    assert v is not None
    text = node.value.lower()
    digits = text.rstrip("ul")
    suffix = text[len(digits):]
    decimal = not (digits.startswith("0x") or (digits.startswith("0") and len(digits) > 1))
    if "u" in suffix:
        candidates = (UINT64,) if "l" in suffix else (UINT32, UINT64)
    elif "l" in suffix:
        candidates = (INT64,) if decimal else (INT64, UINT64)
    else:
        candidates = (INT32, INT64) if decimal else (INT32, UINT32, INT64, UINT64)
    for t in candidates:
        if t.wrap(v) == v:
            return E.Const(v, t)
    return E.Const(UINT64.wrap(v), UINT64)


def _truth(e: E.Expr) -> E.Expr:
    """A C truth value (0 or 1, `int`) from any scalar."""
    if e.type == INT32 and isinstance(e, E.Binary) and e.op in E.COMPARE_OPS + E.LOGIC_OPS:
        return e
    return E.Binary("!=", e, E.Const(E.convert_value(0, e.type), e.type), INT32)


def extract(func: c_ast.FuncDef, typedefs: Mapping[str, c_ast.Typedef], path: str,
            scop: Optional[tuple[c_ast.Compound, int, int]], file_scope: Sequence[c_ast.Node] = ()) -> PolyProgram:
    """Build the polyhedral model of kernel `func` (the scop region, or its whole body); `file_scope`:
    the declarations of the user's files around it, for their constants (`ParsedKernel.file_scope`)."""
    try:
        return _Extractor(func, typedefs, path, file_scope).run(scop)
    except _Rechain as again:
        return _Extractor(func, typedefs, path, file_scope, again.chains).run(scop)
