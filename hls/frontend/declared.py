"""Undeclared identifiers in the kernel, reported as a C compiler would.

pycparser only parses: `double A[M]` with `M` never defined is a valid parse, and the extractor would
then call `M` "not affine in the loop counters and parameters", which hides the real mistake (a
forgotten `-DM=...` or `#define`).  C requires every identifier to be declared before use, and gcc,
which computes the reference, rejects the file for the same reason; so the kernel's identifiers are
checked here, once the kernel is chosen, and the first undeclared one is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from pycparser import c_ast

from hls.diagnostics import CompileError, SourceLoc
from hls.frontend.preprocess import GNU_PLACEHOLDERS

__all__ = ["check_declared"]

# Identifiers gcc knows without a declaration.
_PREDEFINED = frozenset({"__func__", "__FUNCTION__", "__PRETTY_FUNCTION__"})


@dataclass(frozen=True)
class _Use:
    """An identifier read by the kernel, and whether it is in a size, loop header or subscript (where
    a missing integer macro is the likely cause)."""

    node: c_ast.ID
    structural: bool


def _declared_names(node: c_ast.Node, *, into_functions: bool) -> set[str]:
    """Names declared anywhere under `node`: objects, functions, typedefs, enumerators, parameters."""
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (c_ast.Decl, c_ast.Typedef, c_ast.Enumerator)) and n.name:
            names.add(str(n.name))
        elif isinstance(n, c_ast.FuncDef):
            names.add(str(n.decl.name))
            if not into_functions:
                stack.append(n.decl)
                continue
        elif isinstance(n, c_ast.ParamList):
            names.update(str(p.name) for p in n.params if isinstance(p, c_ast.ID))  # K&R identifier lists
        stack.extend(child for _, child in n.children())
    return names


def _uses(node: c_ast.Node | None, structural: bool = False) -> Iterator[_Use]:
    """Identifiers read under `node`, skipping names that are not variables: called functions (the
    extractor explains unknown calls), struct members and designators."""
    if node is None:
        return
    if isinstance(node, c_ast.ID):
        yield _Use(node, structural)
        return
    if isinstance(node, c_ast.FuncCall):
        if not isinstance(node.name, c_ast.ID):
            yield from _uses(node.name, structural)
        yield from _uses(node.args, structural)
        return
    if isinstance(node, c_ast.StructRef):
        yield from _uses(node.name, structural)
        return
    if isinstance(node, c_ast.NamedInitializer):
        yield from _uses(node.expr, structural)
        return
    if isinstance(node, c_ast.ArrayDecl):
        yield from _uses(node.type, structural)
        yield from _uses(node.dim, True)
        return
    if isinstance(node, c_ast.ArrayRef):
        yield from _uses(node.name, structural)
        yield from _uses(node.subscript, True)
        return
    if isinstance(node, c_ast.For):
        for part in (node.init, node.cond, node.next):
            yield from _uses(part, True)
        yield from _uses(node.stmt, structural)
        return
    for _, child in node.children():
        yield from _uses(child, structural)


def _is_builtin(name: str) -> bool:
    return name.startswith("__builtin_") or name in _PREDEFINED or name in GNU_PLACEHOLDERS


def _position(use: _Use) -> tuple[int, int]:
    coord = use.node.coord
    return (int(getattr(coord, "line", 0) or 0), int(getattr(coord, "column", 0) or 0))


def check_declared(func: c_ast.FuncDef, ast: c_ast.FileAST, path: str) -> None:
    """Raise a `CompileError` at the first identifier of `func` (signature or body) that nothing in
    the translation unit declares."""
    local = _declared_names(func, into_functions=True)
    uses = [u for u in _uses(func.decl) if u.node.name not in local and not _is_builtin(u.node.name)]
    for decl in func.param_decls or ():
        uses += [u for u in _uses(decl) if u.node.name not in local and not _is_builtin(u.node.name)]
    uses += [u for u in _uses(func.body) if u.node.name not in local and not _is_builtin(u.node.name)]
    if not uses:
        return
    file_scope: set[str] = set()
    for ext in ast.ext:
        if ext is not func:
            file_scope |= _declared_names(ext, into_functions=False)
    missing = [u for u in uses if u.node.name not in file_scope]
    if not missing:
        return
    first = min(missing, key=_position)
    name = first.node.name
    why = f"`{name}` is undeclared"
    if any(u.structural for u in missing if u.node.name == name):
        why += f" (hint: define it with -D{name}=VALUE)"
    raise CompileError(SourceLoc.from_coord(first.node.coord, path), why)
