"""Parameter values from the kernel's call site, e.g. `kernel_jacobi_2d(tsteps, n, ...)` in `main`.

PolyBench-style programs call the kernel with integer locals initialized from constants
(`int tsteps = TSTEPS;`).  When the user gives no `--param`, those are the values the program itself
uses, so they are better defaults than guesses.
"""

from __future__ import annotations

from pycparser import c_ast

from .parse import ParsedKernel


def _int_value(node: c_ast.Node, env: dict[str, int]) -> int | None:
    if isinstance(node, c_ast.Constant) and node.type in ("int", "long int", "unsigned int", "long long int"):
        try:
            return int(node.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    if isinstance(node, c_ast.ID):
        return env.get(node.name)
    if isinstance(node, c_ast.BinaryOp) and node.op in "+-*":
        a, b = _int_value(node.left, env), _int_value(node.right, env)
        if a is None or b is None:
            return None
        return a + b if node.op == "+" else a - b if node.op == "-" else a * b
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        v = _int_value(node.expr, env)
        return None if v is None else -v
    return None


class _Calls(c_ast.NodeVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.env: dict[str, int] = {}
        self.calls: list[tuple[c_ast.FuncCall, dict[str, int]]] = []

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.init is not None and isinstance(node.type, c_ast.TypeDecl):
            v = _int_value(node.init, self.env)
            if v is not None:
                self.env[node.name] = v
        self.generic_visit(node)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if isinstance(node.lvalue, c_ast.ID):
            self.env.pop(node.lvalue.name, None)  # reassigned: no longer a known constant
        self.generic_visit(node)

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if isinstance(node.name, c_ast.ID) and node.name.name == self.name:
            self.calls.append((node, dict(self.env)))
        self.generic_visit(node)


def call_site_params(kernel: ParsedKernel, int_params: list[str]) -> tuple[dict[str, int], str | None]:
    """Values of the kernel's integer parameters at its only call site, and where that call is."""
    sites: list[tuple[c_ast.FuncCall, dict[str, int]]] = []
    for ext in kernel.ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext is not kernel.func:
            v = _Calls(kernel.name)
            v.visit(ext.body)
            sites.extend(v.calls)
    if len(sites) != 1:
        return {}, None
    call, env = sites[0]
    formals = [getattr(p, "name", None) for p in (kernel.func.decl.type.args.params if kernel.func.decl.type.args else [])]
    actuals = call.args.exprs if call.args is not None else []
    values: dict[str, int] = {}
    for name, arg in zip(formals, actuals):
        if name in int_params:
            v = _int_value(arg, env)
            if v is not None:
                values[name] = v
    coord = call.coord
    return values, (f"{coord.file}:{coord.line}" if coord else None)
