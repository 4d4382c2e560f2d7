"""An independent oracle for a kernel: the user's own C, compiled by gcc and called through ctypes.

Every later stage (polyhedral model, process network, RTL simulation) is checked against this
reference, so it must share nothing with them but the parsed AST: the kernel is printed back to C with
pycparser's `CGenerator` and compiled with `gcc -O0 -ffp-contract=off`, which evaluates floating-point
expressions exactly in source order (no fused multiply-add, no reassociation), like the hardware must.

Only the kernel and what it needs from the user's files (typedefs, struct/enum definitions, helper
functions, globals) are compiled: the rest of the file, `main` in particular, often calls functions
defined elsewhere.  The system headers the user's files include are included again, so system types
and functions resolve exactly as in the user's build.
"""

from __future__ import annotations

import copy
import ctypes
from dataclasses import dataclass
from typing import Literal, Mapping

import numpy as np
from pycparser import c_ast, c_generator

from hls.diagnostics import CompileError, SourceLoc
from hls.frontend.parse import ParsedKernel, check_gnu_placeholders
from hls.frontend.returned import returned_name, returned_type
from hls.shared_object import compile_shared_object, default_cache_dir

__all__ = ["KernelArg", "GccReference", "GCC_FLAGS", "default_cache_dir"]

#: Flags of the reference build.  `-ffp-contract=off`: no a*b+c fused into fma (gcc's default for GNU
#: C is `fast`); `-O0`: nothing clever at all.
GCC_FLAGS: tuple[str, ...] = ("-std=gnu11", "-O0", "-ffp-contract=off", "-fPIC", "-shared")

ENTRY = "dpn_ref_entry"

_CTYPE_TO_DTYPE: dict[str, np.dtype] = {
    "int8_t": np.dtype(np.int8),
    "int16_t": np.dtype(np.int16),
    "int32_t": np.dtype(np.int32),
    "int64_t": np.dtype(np.int64),
    "uint8_t": np.dtype(np.uint8),
    "uint16_t": np.dtype(np.uint16),
    "uint32_t": np.dtype(np.uint32),
    "uint64_t": np.dtype(np.uint64),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}

_CTYPE_TO_CTYPES: dict[str, type] = {
    "int8_t": ctypes.c_int8,
    "int16_t": ctypes.c_int16,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
}


@dataclass(frozen=True)
class KernelArg:
    """One kernel parameter as the reference sees it.

    kind: 'int' (integer scalar, including unsigned and `_Bool`), 'float' (float/double scalar) or
        'array' (an array or pointer parameter; `ctype` is its element type).
    ctype: canonical element type, 'int8_t'..'int64_t', 'uint8_t'..'uint64_t', 'float' or 'double'
        (x86-64 sizes: `long` is 64 bits, plain `char` is signed, `_Bool` is a byte).
    ndim: number of array dimensions, 0 for scalars.
    """

    name: str
    kind: Literal["int", "float", "array"]
    ctype: str
    ndim: int

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the scalar or of the array's elements."""
        return _CTYPE_TO_DTYPE[self.ctype]


@dataclass(frozen=True)
class _ArgInfo:
    """What `run` needs beyond `KernelArg`: declared dimensions (None = unknown) and constness."""

    arg: KernelArg
    dims: tuple[c_ast.Node | None, ...]
    const: bool


# ---------------------------------------------------------------------------------------------------
# Parameter types
# ---------------------------------------------------------------------------------------------------

_BASIC_WORDS = frozenset(
    {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool", "_Complex", "__int128"}
)


def _canonical_scalar(names: list[str]) -> str | None:
    """Canonical ctype of a list of basic type specifiers, or None if unsupported."""
    words = list(names)
    if "_Complex" in words or "__int128" in words or "void" in words:
        return None
    unsigned = "unsigned" in words
    longs = words.count("long")
    if "_Bool" in words:
        return "uint8_t"
    if "float" in words:
        return "float" if longs == 0 else None
    if "double" in words:
        return "double" if longs == 0 else None
    if "char" in words:
        return "uint8_t" if unsigned else "int8_t"
    if "short" in words:
        return "uint16_t" if unsigned else "int16_t"
    if longs >= 1:
        return "uint64_t" if unsigned else "int64_t"
    if words and all(w in ("int", "signed", "unsigned") for w in words):
        return "uint32_t" if unsigned else "int32_t"
    return None


def _describe(names: list[str]) -> str:
    return " ".join(names)


def _resolve_param(
    param: c_ast.Decl, typedefs: Mapping[str, c_ast.Typedef], path: str
) -> _ArgInfo:
    """Resolve a parameter's type through typedefs into a `KernelArg`; unsupported types are errors."""
    return _resolve(str(param.name), param.type, param.coord, typedefs, path)


def _resolve(
    name: str, typ: c_ast.Node | None, coord: object, typedefs: Mapping[str, c_ast.Typedef], path: str
) -> _ArgInfo:
    loc = SourceLoc.from_coord(coord, path)
    layers: list[tuple[str, c_ast.Node | None]] = []
    const = False
    seen: set[str] = set()
    base: str | None = None
    while True:
        if isinstance(typ, c_ast.ArrayDecl):
            layers.append(("array", typ.dim))
            typ = typ.type
        elif isinstance(typ, c_ast.PtrDecl):
            layers.append(("ptr", None))
            typ = typ.type
        elif isinstance(typ, (c_ast.TypeDecl, c_ast.Typename)):
            const = const or "const" in (typ.quals or [])
            typ = typ.type
        elif isinstance(typ, c_ast.IdentifierType):
            names = list(typ.names)
            if len(names) == 1 and names[0] not in _BASIC_WORDS and names[0] in typedefs:
                if names[0] in seen:
                    raise CompileError(loc, f"parameter '{name}': recursive typedef '{names[0]}'")
                seen.add(names[0])
                typ = typedefs[names[0]].type
                continue
            base = _canonical_scalar(names)
            if base is None:
                raise CompileError(loc, f"parameter '{name}': type '{_describe(names)}' is not supported")
            break
        elif isinstance(typ, c_ast.Enum):
            base = "int32_t"
            break
        elif isinstance(typ, (c_ast.Struct, c_ast.Union)):
            what = "struct" if isinstance(typ, c_ast.Struct) else "union"
            raise CompileError(loc, f"parameter '{name}': {what} types are not supported")
        elif isinstance(typ, c_ast.FuncDecl):
            raise CompileError(loc, f"parameter '{name}': function pointers are not supported")
        else:
            raise CompileError(loc, f"parameter '{name}': unsupported type")
    if not layers:
        kind: Literal["int", "float", "array"] = "float" if base in ("float", "double") else "int"
        return _ArgInfo(KernelArg(name, kind, base, 0), (), const)
    if any(kind == "ptr" for kind, _ in layers[1:]):
        raise CompileError(
            loc, f"parameter '{name}': pointers to pointers and arrays of pointers are not supported"
        )
    dims = tuple(dim for _, dim in layers)
    return _ArgInfo(KernelArg(name, "array", base, len(layers)), dims, const)


def _kernel_params(kernel: ParsedKernel) -> list[_ArgInfo]:
    func = kernel.func
    path = kernel.path
    fdecl = func.decl.type
    if func.param_decls:
        raise CompileError(
            SourceLoc.from_coord(func.decl.coord, path),
            f"function '{func.decl.name}': old-style (K&R) parameter declarations are not supported",
        )
    assert isinstance(fdecl, c_ast.FuncDecl)
    params = list(fdecl.args.params) if fdecl.args is not None else []
    result: list[_ArgInfo] = []
    for p in params:
        if isinstance(p, c_ast.EllipsisParam):
            raise CompileError(SourceLoc.from_coord(p.coord, path), "variadic kernels are not supported")
        if isinstance(p, c_ast.Typename):
            if _is_void(p.type, kernel.typedefs) and len(params) == 1:
                break
            raise CompileError(SourceLoc.from_coord(p.coord, path), "kernel parameter has no name")
        if isinstance(p, c_ast.ID):
            raise CompileError(
                SourceLoc.from_coord(p.coord, path), "old-style (K&R) parameter declarations are not supported"
            )
        result.append(_resolve_param(p, kernel.typedefs, path))
    name = returned_name(func)
    if name is not None:  # the result, stored into an array of one element by the entry (`returned`)
        scalar = _resolve(name, returned_type(func), func.decl.coord, kernel.typedefs, path).arg
        result.append(_ArgInfo(KernelArg(name, "array", scalar.ctype, 1), (c_ast.Constant("int", "1"),), False))
    return result


def _is_void(typ: c_ast.Node, typedefs: Mapping[str, c_ast.Typedef]) -> bool:
    while isinstance(typ, c_ast.TypeDecl):
        typ = typ.type
    if isinstance(typ, c_ast.IdentifierType):
        if typ.names == ["void"]:
            return True
        if len(typ.names) == 1 and typ.names[0] in typedefs:
            return _is_void(typedefs[typ.names[0]].type, typedefs)
    return False


# ---------------------------------------------------------------------------------------------------
# The translation unit
# ---------------------------------------------------------------------------------------------------


def _defined_keys(node: c_ast.Node) -> set[tuple[str, str]]:
    """Names a file-scope declaration defines: ('id', name) for ordinary identifiers, (tag kind, name)."""
    keys: set[tuple[str, str]] = set()
    if isinstance(node, c_ast.FuncDef):
        keys.add(("id", str(node.decl.name)))
        return keys
    if isinstance(node, (c_ast.Typedef, c_ast.Decl)):
        if node.name:
            keys.add(("id", str(node.name)))
        for sub in _walk(node.type):
            if isinstance(sub, (c_ast.Struct, c_ast.Union)) and sub.name and sub.decls is not None:
                keys.add(("struct" if isinstance(sub, c_ast.Struct) else "union", sub.name))
            elif isinstance(sub, c_ast.Enum) and sub.values is not None:
                if sub.name:
                    keys.add(("enum", sub.name))
                keys.update(("id", str(e.name)) for e in sub.values.enumerators)
    return keys


def _referenced_keys(node: c_ast.Node) -> set[tuple[str, str]]:
    refs: set[tuple[str, str]] = set()
    for sub in _walk(node):
        if isinstance(sub, c_ast.ID):
            refs.add(("id", str(sub.name)))
        elif isinstance(sub, c_ast.IdentifierType):
            refs.update(("id", n) for n in sub.names if n not in _BASIC_WORDS)
        elif isinstance(sub, c_ast.Struct) and sub.name:
            refs.add(("struct", sub.name))
        elif isinstance(sub, c_ast.Union) and sub.name:
            refs.add(("union", sub.name))
        elif isinstance(sub, c_ast.Enum) and sub.name:
            refs.add(("enum", sub.name))
    return refs


def _walk(node: c_ast.Node | None):  # type: ignore[no-untyped-def]
    if node is None:
        return
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(child for _, child in reversed(n.children()))


def _needed_declarations(kernel: ParsedKernel) -> list[c_ast.Node]:
    """The user's file-scope declarations the kernel depends on (transitively), in source order."""
    markers = kernel.markers
    ext = [
        node
        for node in kernel.ast.ext
        if not isinstance(node, (c_ast.Pragma, c_ast.StaticAssert))
        and markers.is_user_file(getattr(getattr(node, "coord", None), "file", None))
    ]
    definers: dict[tuple[str, str], list[int]] = {}
    for index, node in enumerate(ext):
        for key in _defined_keys(node):
            definers.setdefault(key, []).append(index)
    chosen: set[int] = set()
    kernel_index = next((i for i, node in enumerate(ext) if node is kernel.func), None)
    todo = [kernel.func]
    done_keys: set[tuple[str, str]] = set()
    while todo:
        node = todo.pop()
        for key in _referenced_keys(node):
            if key in done_keys:
                continue
            done_keys.add(key)
            for index in definers.get(key, ()):
                candidate = ext[index]
                if index in chosen or index == kernel_index:
                    continue
                if isinstance(candidate, c_ast.FuncDef) and candidate.decl.name == "main":
                    continue
                chosen.add(index)
                todo.append(candidate)
    if kernel_index is None:  # kernel from a system header (--function): keep it after the rest
        return [ext[i] for i in sorted(chosen)] + [kernel.func]
    chosen.add(kernel_index)
    return [ext[i] for i in sorted(chosen)]


class _PragmaNeutralizer(c_ast.NodeVisitor):
    """Replace pragmas by empty statements: `#pragma GCC optimize` and friends must not change the
    reference, and a pragma printed in the middle of a statement would not compile."""

    def generic_visit(self, node: c_ast.Node) -> None:
        for slot in getattr(node, "__slots__", ()):
            value = getattr(node, slot, None)
            if isinstance(value, c_ast.Pragma):
                setattr(node, slot, c_ast.EmptyStatement(coord=value.coord))
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, c_ast.Pragma):
                        value[k] = c_ast.EmptyStatement(coord=item.coord)
        for _, child in node.children():
            self.visit(child)


def _exportable(node: c_ast.Node, kernel_name: str) -> c_ast.Node:
    """A copy of a declaration that links as an ordinary external function.

    `inline` goes (a C99 inline definition emits no symbol at -O0), and so does `static` on the
    kernel's own declarations, so that the kernel is a plain function the wrapper can call.
    """
    if isinstance(node, c_ast.FuncDef):
        node = copy.deepcopy(node)
        _PragmaNeutralizer().visit(node.body)
        decl = node.decl
        decl.funcspec = [f for f in decl.funcspec if f != "inline"]
        decl.storage = [s for s in decl.storage if s != "extern" and not (s == "static" and decl.name == kernel_name)]
        return node
    if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
        node = copy.copy(node)
        node.funcspec = [f for f in node.funcspec if f != "inline"]
        if node.name == kernel_name:
            node.storage = [s for s in node.storage if s != "static"]
        return node
    return node


def generate_source(kernel: ParsedKernel, args: list[_ArgInfo]) -> str:
    """The C translation unit of the reference: headers, the kernel with its dependencies, a wrapper."""
    name = kernel.name
    lines = [
        f"/* dpn-synth gcc reference for kernel '{name}' (generated, deterministic) */",
        "#include <stdint.h>",
        "#include <math.h>",
        "#include <stddef.h>",
    ]
    for header in kernel.markers.system_includes:
        if header.startswith("/"):
            lines.append(f'#include "{header}"')
    needed = _needed_declarations(kernel)
    for node in needed:
        check_gnu_placeholders(node, kernel.path)
    body = c_ast.FileAST([_exportable(node, name) for node in needed])
    lines.append(c_generator.CGenerator().visit(body))
    params = ", ".join(
        f"void *dpn_a{i}" if a.arg.kind == "array" else f"{a.arg.ctype} dpn_a{i}" for i, a in enumerate(args)
    ) or "void"
    result = returned_name(kernel.func)
    n_call = len(args) - (result is not None)
    call = f"{name}({', '.join(f'dpn_a{i}' for i in range(n_call))})"
    store = f"*({args[-1].arg.ctype} *) dpn_a{n_call} = {call}" if result is not None else f"(void) {call}"
    lines.append(f"void {ENTRY}({params})\n{{\n  {store};\n}}\n")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Compilation and cache
# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
# Dimension expressions (to check array shapes before handing memory to C)
# ---------------------------------------------------------------------------------------------------


def _int_constant(text: str) -> int | None:
    s = text.rstrip("uUlL")
    try:
        if len(s) > 1 and s[0] == "0" and s[1] not in "xXbB":
            return int(s, 8)
        return int(s, 0)
    except ValueError:
        return None


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _eval_dim(node: c_ast.Node | None, env: Mapping[str, int]) -> int | None:
    """Value of an integer dimension expression, or None if it cannot be known here."""
    if node is None:
        return None
    if isinstance(node, c_ast.Constant):
        return _int_constant(node.value) if node.type.endswith("int") else None
    if isinstance(node, c_ast.ID):
        return env.get(str(node.name))
    if isinstance(node, c_ast.Cast):
        return _eval_dim(node.expr, env)
    if isinstance(node, c_ast.UnaryOp):
        v = _eval_dim(node.expr, env)
        if v is None:
            return None
        return {"-": -v, "+": v, "~": ~v, "!": int(not v)}.get(node.op)
    if isinstance(node, c_ast.TernaryOp):
        c = _eval_dim(node.cond, env)
        return None if c is None else _eval_dim(node.iftrue if c else node.iffalse, env)
    if isinstance(node, c_ast.BinaryOp):
        a = _eval_dim(node.left, env)
        b = _eval_dim(node.right, env)
        if a is None or b is None:
            return None
        op = node.op
        if op in ("/", "%") and b == 0:
            return None
        ops = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: _c_div(a, b), "%": lambda: a - b * _c_div(a, b),
            "<<": lambda: a << b if b >= 0 else None, ">>": lambda: a >> b if b >= 0 else None,
            "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
            "<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
            ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b),
            "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b)),
        }
        f = ops.get(op)
        return f() if f is not None else None
    return None


def _enumerators(kernel: ParsedKernel) -> dict[str, int]:
    """Values of the enumeration constants of the user's files (they may size arrays)."""
    values: dict[str, int] = {}
    markers = kernel.markers
    for node in kernel.ast.ext:
        if not markers.is_user_file(getattr(getattr(node, "coord", None), "file", None)):
            continue
        for sub in _walk(node):
            if isinstance(sub, c_ast.Enum) and sub.values is not None:
                nxt = 0
                for e in sub.values.enumerators:
                    v = _eval_dim(e.value, values) if e.value is not None else nxt
                    if v is None:
                        break
                    values[str(e.name)] = v
                    nxt = v + 1
    return values


# ---------------------------------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------------------------------


class GccReference:
    """The kernel compiled by gcc, callable on numpy arrays.

    Attributes: `args` (the kernel's parameters in order), `source` (the generated C), `so_path` (the
    cached shared object) and `compiled` (whether this construction had to run gcc).
    """

    args: tuple[KernelArg, ...]

    def __init__(
        self,
        kernel: ParsedKernel,
        *,
        cache_dir: str | None = None,
        defines: tuple[str, ...] | list[str] = (),
    ) -> None:
        self.kernel = kernel
        self._infos = _kernel_params(kernel)
        self.args = tuple(info.arg for info in self._infos)
        self.source = generate_source(kernel, self._infos)
        flags = GCC_FLAGS + tuple(f"-D{d}" for d in defines)
        self.so_path, self.compiled = compile_shared_object(self.source, flags, cache_dir or default_cache_dir())
        self._lib = ctypes.CDLL(self.so_path)
        self._entry = getattr(self._lib, ENTRY)
        self._entry.restype = None
        self._entry.argtypes = [
            ctypes.c_void_p if a.kind == "array" else _CTYPE_TO_CTYPES[a.ctype] for a in self.args
        ]
        self._enums = _enumerators(kernel)

    def run(self, values: Mapping[str, int | float | np.ndarray]) -> None:
        """Call the kernel. Arrays are C-contiguous numpy arrays of the right dtype; they are updated in place.

        A wrong Python type, dtype, number of dimensions or layout is a bug in the caller: TypeError.
        An array whose shape disagrees with the declared (evaluable) dimensions: ValueError, checked
        before C touches any memory.
        """
        names = [a.name for a in self.args]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise TypeError(f"kernel '{self.kernel.name}' has no parameter(s) {', '.join(unknown)}")
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"missing value(s) for kernel parameter(s) {', '.join(missing)}")
        scalars = {a.name: self._scalar(a, values[a.name]) for a in self.args if a.kind != "array"}
        env = dict(self._enums)
        env.update((a.name, int(scalars[a.name])) for a in self.args if a.kind == "int")
        cargs = [
            self._array(info, values[info.arg.name], env) if info.arg.kind == "array" else scalars[info.arg.name]
            for info in self._infos
        ]
        self._entry(*cargs)

    @staticmethod
    def _scalar(a: KernelArg, value: object) -> int | float:
        dtype = a.dtype
        if a.kind == "int":
            if not isinstance(value, (int, np.integer, np.bool_)):
                raise TypeError(f"parameter '{a.name}' ({a.ctype}) needs an integer, got {type(value).__name__}")
            v = int(value)
            info = np.iinfo(dtype)
            if not info.min <= v <= info.max:
                raise ValueError(f"parameter '{a.name}' ({a.ctype}): {v} is out of range")
            return v
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, (bool, np.bool_)):
            raise TypeError(f"parameter '{a.name}' ({a.ctype}) needs a number, got {type(value).__name__}")
        return float(value)

    @staticmethod
    def _array(info: _ArgInfo, value: object, env: Mapping[str, int]) -> int:
        a = info.arg
        if not isinstance(value, np.ndarray):
            raise TypeError(f"parameter '{a.name}' needs a numpy array, got {type(value).__name__}")
        if value.dtype != a.dtype:
            raise TypeError(f"parameter '{a.name}' needs dtype {a.dtype} ({a.ctype}), got {value.dtype}")
        # A pointer takes any C-contiguous memory: the model may see it with more dimensions (`pointers`).
        if value.ndim != a.ndim and info.dims != (None,):
            raise TypeError(f"parameter '{a.name}' needs a {a.ndim}-dimensional array, got {value.ndim} dimensions")
        if not value.flags.c_contiguous:
            raise TypeError(f"parameter '{a.name}' needs a C-contiguous array")
        if not value.flags.writeable and not info.const:
            raise TypeError(f"parameter '{a.name}' may be written by the kernel but the array is read-only")
        for axis, dim in enumerate(info.dims if value.ndim == a.ndim else ()):
            expected = _eval_dim(dim, env)
            if expected is not None and value.shape[axis] != expected:
                raise ValueError(
                    f"parameter '{a.name}': dimension {axis} has size {value.shape[axis]}, the kernel declares {expected}"
                )
        return int(value.ctypes.data)
