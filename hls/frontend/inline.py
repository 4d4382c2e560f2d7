"""Calls to the file's own expression functions, replaced by their bodies before extraction.

C kernels name small computations: `static inline float sq(float x) { return x * x; }`,
`clampf(v, lo, hi)`.  A call is not a statement instance of the polyhedral model, so the kernel
could not use them.  A function defined in the translation unit whose body is one `return` of an
expression over its scalar parameters is a value, though: the call becomes that expression with each
parameter replaced by its argument converted to the parameter's type, and the whole converted to the
return type, which is what C computes (arguments are converted as if by assignment, and so is the
returned value).  The math library's functions keep their own handling (`extract.MATH_CALLS`).

A `void` function called as a statement (`conv(in, tmp); relu(tmp); pool(tmp, out);`, a dataflow
of stages) is inlined as a block: each array parameter becomes the array passed (a whole array, by
name), each scalar parameter its argument converted to the parameter's type (a local copy when the
function assigns it), and the function's own variables are renamed apart from the caller's, so the
stages become loop nests of one kernel, and the process network streams between them.

Nested calls are replaced too, inside out; a function that calls itself, directly or not, is an
error, and so is a call to a defined function with another body (the message says what is inlined).
"""

from __future__ import annotations

import copy
from typing import Callable, Optional

from pycparser import c_ast

from ..diagnostics import CompileError, SourceLoc
from .returned import is_void

__all__ = ["inlined"]

#: calls nested deeper than this inside one inlined body are taken for recursion
MAX_DEPTH = 32


def inlined(func: c_ast.FuncDef, defined: list[c_ast.FuncDef], path: str) -> c_ast.FuncDef:
    """`func` with every call to one of the functions `defined` in the user's files replaced by its
    body (module docstring), a copy; `func` itself when it calls none.  `func` stays as written: the
    gcc reference compiles the user's own functions.  The math library's functions are declared by
    its header, not defined there, and stay calls."""
    defs = {str(f.decl.name): f for f in defined if f is not func}
    called = {n.name.name for n in _walk(func.body)
              if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}
    if not called & defs.keys():
        return func
    out = copy.deepcopy(func)
    out.body = _Inliner(defs, path).visit(out.body, ())
    return out


def _walk(node: c_ast.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(child for _name, child in n.children())


class _Inliner:
    def __init__(self, defs: dict[str, c_ast.FuncDef], path: str):
        self.defs = defs
        self.path = path
        self.sites = 0  # procedure calls inlined so far: their variables' names are made unique by it

    def error(self, node: c_ast.Node, message: str) -> CompileError:
        return CompileError(SourceLoc.from_coord(getattr(node, "coord", None), self.path), message)

    def visit(self, node: c_ast.Node, active: tuple[str, ...]) -> c_ast.Node:
        """`node` with the calls below it replaced (children first); `active`: the functions whose
        bodies are being inlined around it."""
        _map_children(node, lambda c: self.visit(c, active))
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and node.name.name in self.defs:
            return self.inlined(node, active)
        return node

    def inlined(self, call: c_ast.FuncCall, active: tuple[str, ...]) -> c_ast.Node:
        name = call.name.name
        fdef = self.defs[name]
        if name in active or len(active) >= MAX_DEPTH:
            raise self.error(call, f"function `{name}` calls itself: recursive functions cannot be inlined")
        if is_void(fdef.decl.type.type):
            return self.procedure(call, fdef, active)
        body = _returned(fdef)
        params = _params(fdef)
        if body is None or params is None or not isinstance(fdef.decl.type.type, c_ast.TypeDecl):
            raise self.error(call, f"function `{name}` cannot be inlined: only functions whose body is "
                                   "`return <expression>;` over scalar parameters, returning a scalar, are, and "
                                   "`void` functions called as statements; write the computation in the kernel")
        args = call.args.exprs if call.args is not None else []
        if len(args) != len(params):
            raise self.error(call, f"function `{name}` takes {len(params)} argument(s), called with {len(args)}")
        values = {p: _cast(t, a) for (p, t), a in zip(params, args)}
        expr = _substituted(copy.deepcopy(body), values)
        expr = self.visit(expr, (*active, name))
        return _cast(_type_name(fdef.decl.type.type), expr)


    def procedure(self, call: c_ast.FuncCall, fdef: c_ast.FuncDef, active: tuple[str, ...]) -> c_ast.Compound:
        """The body of a `void` function for its call statement (module docstring)."""
        name = str(fdef.decl.name)
        plist = fdef.decl.type.args
        params = [p for p in (plist.params if plist is not None else []) if not _is_void_param(p)]
        args = call.args.exprs if call.args is not None else []
        if len(args) != len(params):
            raise self.error(call, f"function `{name}` takes {len(params)} argument(s), called with {len(args)}")
        self.sites += 1
        body = copy.deepcopy(fdef.body)
        items = list(body.block_items or [])
        if items and isinstance(items[-1], c_ast.Return) and items[-1].expr is None:
            items.pop()  # the end of the function anyway
        written = _assigned(body)
        values: dict[str, c_ast.Node] = {}
        copies: list[c_ast.Node] = []
        renamed = {d: f"{d}_{name}{self.sites}" for d in _declared(body)}
        for p, a in zip(params, args):
            if not isinstance(p, c_ast.Decl) or not p.name:
                raise self.error(call, f"function `{name}`: its parameters must be named to be inlined")
            if isinstance(p.type, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                if not isinstance(a, c_ast.ID):
                    raise self.error(a, f"argument `{p.name}` of `{name}`: pass a whole array by its name "
                                        "(rows and offsets are not supported)")
                values[p.name] = a
            elif p.name in written:  # C passes a copy: the function's assignments stay in it
                local = f"{p.name}_{name}{self.sites}"
                decl = copy.deepcopy(p)
                decl.name = local
                _rename_declarator(decl.type, local)
                decl.init = _cast(_type_name(p.type), a)
                copies.append(decl)
                renamed[p.name] = local
            else:
                values[p.name] = _cast(_type_name(p.type), a)
        body.block_items = items
        body = _substituted(_renamed(body, renamed), values)
        body.block_items = copies + list(body.block_items or [])  # their initializers are the caller's
        return self.visit(body, (*active, name))


def _is_void_param(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Typename) and is_void(p.type)


def _declared(body: c_ast.Node) -> set[str]:
    """The names the function body declares (its locals and loop counters)."""
    return {n.name for n in _walk(body) if isinstance(n, c_ast.Decl) and n.name}


def _assigned(body: c_ast.Node) -> set[str]:
    """The names the body assigns or increments directly (not through a subscript)."""
    out = set()
    for n in _walk(body):
        target = n.lvalue if isinstance(n, c_ast.Assignment) else (
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--") else None)
        if isinstance(target, c_ast.ID):
            out.add(target.name)
    return out


def _rename_declarator(t: c_ast.Node, name: str) -> None:
    while not isinstance(t, c_ast.TypeDecl):
        t = t.type
    t.declname = name


def _renamed(node: c_ast.Node, names: dict[str, str]) -> c_ast.Node:
    """`node` with the declarations and uses of `names` renamed (in place)."""
    for n in _walk(node):
        if isinstance(n, c_ast.ID) and n.name in names:
            n.name = names[n.name]
        elif isinstance(n, c_ast.Decl) and n.name in names:
            n.name = names[n.name]
            _rename_declarator(n.type, n.name)
    return node


def _returned(fdef: c_ast.FuncDef) -> Optional[c_ast.Node]:
    items = fdef.body.block_items or []
    if len(items) == 1 and isinstance(items[0], c_ast.Return) and items[0].expr is not None:
        return items[0].expr
    return None


def _params(fdef: c_ast.FuncDef) -> Optional[list[tuple[str, c_ast.Typename]]]:
    """(name, type) of each scalar parameter, or None when one is an array, a pointer or unnamed."""
    plist = fdef.decl.type.args
    if plist is None:
        return []
    out = []
    for p in plist.params:
        if _is_void_param(p):
            continue  # `f(void)`
        if not isinstance(p, c_ast.Decl) or not isinstance(p.type, c_ast.TypeDecl) or not p.name:
            return None
        out.append((p.name, _type_name(p.type)))
    return out


def _type_name(decl_type: c_ast.TypeDecl) -> c_ast.Typename:
    t = copy.deepcopy(decl_type)
    t.declname = None
    return c_ast.Typename(None, [], None, t, coord=decl_type.coord)


def _cast(t: c_ast.Typename, expr: c_ast.Node) -> c_ast.Cast:
    return c_ast.Cast(copy.deepcopy(t), expr, coord=expr.coord)


def _substituted(node: c_ast.Node, values: dict[str, c_ast.Node]) -> c_ast.Node:
    """`node` with each parameter's identifier replaced by a copy of its value."""
    if isinstance(node, c_ast.ID) and node.name in values:
        return copy.deepcopy(values[node.name])
    _map_children(node, lambda c: _substituted(c, values))
    return node


def _map_children(node: c_ast.Node, f: Callable[[c_ast.Node], c_ast.Node]) -> None:
    """Each child node of `node` replaced, in place, by `f` of it."""
    for name in node.__slots__:
        if name in ("coord", "__weakref__"):
            continue
        child = getattr(node, name, None)
        if isinstance(child, c_ast.Node):
            setattr(node, name, f(child))
        elif isinstance(child, list):
            setattr(node, name, [f(c) if isinstance(c, c_ast.Node) else c for c in child])
