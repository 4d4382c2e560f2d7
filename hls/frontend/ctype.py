"""C declarations to dpn-synth types: scalar types through typedef chains, and array declarators."""

from __future__ import annotations

from typing import Mapping

from pycparser import c_ast

from ..diagnostics import CompileError, SourceLoc
from ..poly.types import (
    DOUBLE,
    FLOAT,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    ScalarType,
)

_BUILTIN: dict[tuple[str, ...], ScalarType] = {}


def _register(t: ScalarType, *spellings: str) -> None:
    for sp in spellings:
        _BUILTIN[tuple(sorted(sp.split()))] = t


_register(INT8, "char", "signed char")
_register(UINT8, "unsigned char", "_Bool")
_register(INT16, "short", "short int", "signed short", "signed short int")
_register(UINT16, "unsigned short", "unsigned short int")
_register(INT32, "int", "signed", "signed int")
_register(UINT32, "unsigned", "unsigned int")
_register(
    INT64, "long", "long int", "signed long", "signed long int", "long long", "long long int", "signed long long",
    "signed long long int",
)
_register(UINT64, "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int")
_register(FLOAT, "float")
_register(DOUBLE, "double")

_REJECTED = {
    "long double": "`long double` is not supported (use float or double)",
    "_Complex": "complex types are not supported",
    "void": "`void` values are not supported",
}


def scalar_type(node: c_ast.Node, typedefs: Mapping[str, c_ast.Typedef], loc: SourceLoc, what: str) -> ScalarType:
    """Resolve a type node (TypeDecl / IdentifierType / Typename) to a scalar type, or explain why not."""
    while True:
        if isinstance(node, (c_ast.TypeDecl, c_ast.Typename)):
            node = node.type
            continue
        if isinstance(node, c_ast.IdentifierType):
            names = tuple(node.names)
            key = tuple(sorted(names))
            if key in _BUILTIN:
                return _BUILTIN[key]
            joined = " ".join(names)
            for bad, why in _REJECTED.items():
                if all(w in names for w in bad.split()):
                    raise CompileError(loc, f"{what}: {why}")
            if len(names) == 1 and names[0] in typedefs:
                node = typedefs[names[0]].type
                continue
            raise CompileError(loc, f"{what}: unsupported type `{joined}`")
        if isinstance(node, (c_ast.Struct, c_ast.Union)):
            raise CompileError(loc, f"{what}: struct and union types are not supported")
        if isinstance(node, c_ast.Enum):
            return INT32
        if isinstance(node, c_ast.PtrDecl):
            raise CompileError(loc, f"{what}: a pointer here is not supported: only an array parameter may be a "
                                    "pointer (`double *A`, one level, indexed with subscripts); declare an array with "
                                    "sizes, e.g. `double A[N]`")
        raise CompileError(loc, f"{what}: unsupported type")


def array_declarator(node: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node | None]]:
    """Split `T A[d0][d1]` into the element type node and the list of dimension expressions."""
    dims: list[c_ast.Node | None] = []
    while isinstance(node, c_ast.ArrayDecl):
        dims.append(node.dim)
        node = node.type
    return node, dims
