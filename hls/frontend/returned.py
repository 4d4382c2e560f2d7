"""A kernel's return value, as an output array of one element.

A function that returns what it computes (`float dot(const float *a, const float *b, int n)`) has
no array to hold the result.  Its final `return e;` becomes the statement `return_value[0] = e`, and
`return_value` is an output of the hardware like any written array argument.  The gcc reference
stores the function's result in the same array (`sim.gcc_ref`), so both name it by this rule.
"""

from __future__ import annotations

from typing import Optional

from pycparser import c_ast

__all__ = ["is_void", "returned_name", "returned_type"]

BASE = "return_value"


def is_void(t: c_ast.Node) -> bool:
    """Whether a type node is plain `void`."""
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names == ["void"]


def returned_type(func: c_ast.FuncDef) -> Optional[c_ast.Node]:
    """The type node of the function's result; None for a `void` function."""
    t = func.decl.type.type  # FuncDecl -> its return type
    return None if is_void(t) else t


def returned_name(func: c_ast.FuncDef) -> Optional[str]:
    """The name of the output holding the result: `return_value`, unless a parameter has that name."""
    if returned_type(func) is None:
        return None
    args = func.decl.type.args
    taken = {getattr(p, "name", None) for p in (args.params if args is not None else [])}
    name, k = BASE, 1
    while name in taken:
        name, k = f"{BASE}_{k}", k + 1
    return name
