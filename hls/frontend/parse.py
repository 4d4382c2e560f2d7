"""Parse a C file and find the kernel: the function whose body holds `#pragma scop` ... `#pragma endscop`
(or, in a file without these pragmas, its only function with loops or only function besides `main`).

Everything else in the file (a `main`, `init_array`, printing helpers, ...) is parsed, because C needs
the whole translation unit to know which names are types, but otherwise ignored: such code often calls
functions defined elsewhere and must not stop us from compiling the kernel.
"""

from __future__ import annotations

import functools
import re
import types
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from pycparser import c_ast, c_lexer, c_parser

from hls.diagnostics import CompileError, SourceLoc
from hls.frontend.declared import check_declared
from hls.frontend.inline import inlined
from hls.frontend.preprocess import GNU_PLACEHOLDERS, PRELUDE_FILE, MarkerSummary, preprocess, scan_line_markers

__all__ = ["ParsedKernel", "parse_kernel", "parse_source", "find_scop", "check_gnu_placeholders"]


@dataclass(frozen=True)
class ParsedKernel:
    """The kernel function of a C file, with the translation unit around it.

    scop: (block, first, end) such that `block.block_items[first:end]` are the statements between
        `#pragma scop` and `#pragma endscop`, in `model`; None when the function has no scop pragmas
        (then the whole body is the scop).
    model: the function the polyhedral model is extracted from: `func` with the calls to the file's
        own expression functions inlined (`inline.inlined`), or `func` itself.  `func` stays as
        written, for the gcc reference.
    """

    path: str
    func: c_ast.FuncDef
    ast: c_ast.FileAST
    typedefs: Mapping[str, c_ast.Typedef]
    scop: tuple[c_ast.Compound, int, int] | None
    preprocessed: str
    model: c_ast.FuncDef

    @property
    def name(self) -> str:
        return str(self.func.decl.name)

    @functools.cached_property
    def file_scope(self) -> tuple[c_ast.Node, ...]:
        """The declarations at the file scope of the user's files (not system headers'), in order: the
        kernel may use their constants (`extract`)."""
        return tuple(n for n in self.ast.ext if isinstance(n, (c_ast.Decl, c_ast.Typedef))
                     and self.markers.is_user_file(getattr(getattr(n, "coord", None), "file", None)))

    @functools.cached_property
    def markers(self) -> MarkerSummary:
        """Which files of the translation unit are the user's and which are system headers."""
        return scan_line_markers(self.preprocessed)


# ---------------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TokenPos:
    """Where a token was read: the file named by the line markers, line and column."""

    value: str
    file: str
    line: int
    col: int


class _Trail:
    """The furthest token the lexer handed to the parser, and whether it then reached the end.

    pycparser locates most syntax errors itself ("file:line:col: before: x"), but some messages
    carry only the file name ("Invalid expression", "At end of input"), and its own invariants may
    fail on malformed input.  The parser reads tokens one at a time and looks ahead only a few, so
    the furthest token read is where it stopped: that token locates the error.  It is recorded by a
    lexer subclass passed through `CParser`'s public `lexer` argument, overriding only the public
    `token()` method, so nothing private of pycparser is used and the same code works with
    pycparser 2.x (PLY tokens) and 3.x (recursive descent).  The position is worked out only when
    an error needs it: the parser reads every token of the system headers too.
    """

    def __init__(self) -> None:
        self.token: object | None = None
        self.file = ""  # the lexer's current file when it read `token` (2.x tokens do not carry it)
        self.lexer: c_lexer.CLexer | None = None
        self.at_end = False

    @property
    def last(self) -> _TokenPos | None:
        tok = self.token
        if tok is None:
            return None
        file = getattr(tok, "filename", None) or self.file
        col = getattr(tok, "column", None)
        if col is None:  # pycparser 2.x: PLY tokens carry the offset in the text, not the column
            col = self.lexer.find_tok_column(tok) if self.lexer is not None else 0
        return _TokenPos(str(getattr(tok, "value", "")), str(file), int(getattr(tok, "lineno", 0)), int(col))


def _ignore_unmatched(callback: Callable[[], object]) -> None:
    try:
        callback()
    except (AssertionError, c_parser.ParseError):
        pass


def _recording_lexer(trail: _Trail) -> type[c_lexer.CLexer]:
    """A `CLexer` subclass that records each token it returns into `trail`."""

    class _RecordingLexer(c_lexer.CLexer):
        def __init__(self, *args: object, **kwargs: object) -> None:
            # pycparser 2.x to 3.11 close a scope on every '}' the lexer reads, and fail (an assertion,
            # or a ParseError without position in 3.11) when it would close the file scope: before the
            # parser sees the brace, so before this lexer records it.  Ignoring the failed pop lets the
            # parser report the stray '}' at its position.  3.12 has no such callback.
            on_rbrace = kwargs.get("on_rbrace_func")
            if callable(on_rbrace):
                kwargs["on_rbrace_func"] = lambda: _ignore_unmatched(on_rbrace)
            super().__init__(*args, **kwargs)
            trail.lexer = self

        def token(self):  # type: ignore[no-untyped-def]
            tok = super().token()
            if tok is None:
                trail.at_end = True
            else:
                trail.token, trail.file, trail.at_end = tok, self.filename, False
            return tok

    return _RecordingLexer


_PARSE_ERROR_RE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.*)$", re.DOTALL)


def _clean_message(msg: str) -> str:
    """pycparser's terse messages in the style of a C compiler's."""
    msg = msg.strip()
    m = re.match(r"^(.*?)\s*before: (.*)$", msg, re.DOTALL)
    if m is not None:
        what, tok = m.group(1).strip(), m.group(2).strip()
        what = what[0].lower() + what[1:] if what else "syntax error"
        return f"{what} before '{tok}'" if what != "syntax error" else f"syntax error before '{tok}'"
    if msg and msg[0].isupper() and not msg[:2].isupper():
        msg = msg[0].lower() + msg[1:]
    if msg.startswith("unmatched '"):
        return "missing terminating ' character"
    m = re.match(r"^illegal character (.*)$", msg)
    if m is not None:
        char = m.group(1)
        if char in ("'\"'", '"\'"'):
            return "missing terminating \" character"
        if char == "'\\\\'":
            return "stray '\\' in program (non-ASCII identifiers are not supported)"
        return f"stray {char} in program"
    return msg


def _split_message(text: str, trail: _Trail, path: str) -> tuple[SourceLoc | None, str]:
    """pycparser's `ParseError` text, "file:line:col: msg" or "file: msg" when it has no position,
    as (location or None, msg)."""
    m = _PARSE_ERROR_RE.match(text)
    if m is not None:
        return SourceLoc(m.group("file") or path, int(m.group("line")), int(m.group("col") or 0)), m.group("msg")
    last = trail.last
    for prefix in (last.file if last is not None else None, path):
        if prefix and text.startswith(f"{prefix}: "):
            return None, text[len(prefix) + 2:]
    _, sep, rest = text.partition(": ")  # another file name, or "None" (no coordinate at all)
    return None, rest if sep else text


def _at_trail(msg: str, trail: _Trail, path: str) -> tuple[SourceLoc, str]:
    """A message pycparser located only by file name, placed at the furthest token read."""
    tok = trail.last
    if tok is None:
        return SourceLoc(path), msg
    loc = SourceLoc(tok.file or path, tok.line, tok.col)
    if trail.at_end:
        return loc, "unexpected end of input" if msg == "At end of input" else f"{msg} at end of input"
    if msg.startswith("before"):
        return loc, msg
    return loc, f"{msg} before: {tok.value}"


def _syntax_error(exc: Exception, path: str, markers: MarkerSummary, trail: _Trail) -> CompileError:
    loc, msg = _split_message(str(exc), trail, path)
    if loc is None:
        loc, msg = _at_trail(msg, trail, path)
    msg = _clean_message(msg)
    if not msg.startswith("syntax error") and not msg.startswith("missing terminating"):
        msg = f"syntax error: {msg}"
    if loc.file in markers.system_files or loc.file == PRELUDE_FILE:
        msg += " (in a system header: the construct or header is not supported by dpn-synth's C parser)"
    return CompileError(loc, msg)


def _parser_failure(exc: Exception, path: str, trail: _Trail) -> CompileError:
    """pycparser's own invariants failing on malformed input: still a problem of the input, located
    at the token the parser had reached."""
    why = f"the C parser cannot handle this input ({type(exc).__name__}: {exc})"
    tok = trail.last
    if tok is None:
        return CompileError(SourceLoc(path), f"syntax error: {why}")
    return CompileError(SourceLoc(tok.file or path, tok.line, tok.col), f"syntax error near '{tok.value}': {why}")


def parse_source(text: str, path: str) -> c_ast.FileAST:
    """Parse preprocessed text; syntax errors become `CompileError`s at the user's file:line:col."""
    trail = _Trail()
    try:
        return c_parser.CParser(lexer=_recording_lexer(trail)).parse(text, filename=path)
    except c_parser.ParseError as exc:
        raise _syntax_error(exc, path, scan_line_markers(text), trail) from None
    except RecursionError:
        raise CompileError(SourceLoc(path), "program nested too deeply to parse") from None
    except (AssertionError, AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise _parser_failure(exc, path, trail) from None


# ---------------------------------------------------------------------------------------------------
# Kernel discovery
# ---------------------------------------------------------------------------------------------------


def _loc(node: c_ast.Node | None, path: str) -> SourceLoc:
    return SourceLoc.from_coord(getattr(node, "coord", None), path)


def _pragma_word(p: c_ast.Pragma) -> str:
    words = (p.string or "").split()
    return words[0] if words else ""


def _scop_pragmas(func: c_ast.FuncDef) -> list[tuple[c_ast.Pragma, c_ast.Node, int]]:
    """`scop`/`endscop` pragmas in `func`, in source order, each with its parent and index there."""
    found: list[tuple[c_ast.Pragma, c_ast.Node, int]] = []

    def walk(node: c_ast.Node) -> None:
        if isinstance(node, c_ast.Compound):
            for index, item in enumerate(node.block_items or ()):
                if isinstance(item, c_ast.Pragma):
                    if _pragma_word(item) in ("scop", "endscop"):
                        found.append((item, node, index))
                else:
                    walk(item)
            return
        for _, child in node.children():
            if isinstance(child, c_ast.Pragma):
                if _pragma_word(child) in ("scop", "endscop"):
                    found.append((child, node, -1))
            else:
                walk(child)

    walk(func.body)
    return found


def find_scop(func: c_ast.FuncDef, path: str) -> tuple[c_ast.Compound, int, int] | None:
    """Locate the scop of `func`: (block, index after `#pragma scop`, index of `#pragma endscop`).

    None if `func` has no scop pragmas.  Exactly one pair is allowed, both pragmas in the same block,
    `scop` first; anything else is a `CompileError` at the offending pragma.
    """
    pragmas = _scop_pragmas(func)
    if not pragmas:
        return None
    for pragma, parent, index in pragmas:
        if index < 0:
            raise CompileError(
                _loc(pragma, path), f"'#pragma {_pragma_word(pragma)}' must stand between statements of a block"
            )
    open_: tuple[c_ast.Pragma, c_ast.Compound, int] | None = None
    result: tuple[c_ast.Compound, int, int] | None = None
    for pragma, parent, index in pragmas:
        assert isinstance(parent, c_ast.Compound)
        if _pragma_word(pragma) == "scop":
            if open_ is not None:
                raise CompileError(
                    _loc(pragma, path),
                    f"'#pragma scop' inside the scop opened at {_loc(open_[0], path)}: missing '#pragma endscop'",
                )
            if result is not None:
                raise CompileError(
                    _loc(pragma, path),
                    f"second '#pragma scop' in function '{func.decl.name}': only one scop per kernel is supported",
                )
            open_ = (pragma, parent, index)
        else:
            if open_ is None:
                raise CompileError(_loc(pragma, path), "'#pragma endscop' without a preceding '#pragma scop'")
            if parent is not open_[1]:
                raise CompileError(
                    _loc(pragma, path),
                    f"'#pragma endscop' is not in the same block as the '#pragma scop' at {_loc(open_[0], path)}",
                )
            result = (parent, open_[2] + 1, index)
            open_ = None
    if open_ is not None:
        raise CompileError(_loc(open_[0], path), "'#pragma scop' without a matching '#pragma endscop'")
    return result


def check_gnu_placeholders(node: c_ast.Node, path: str) -> None:
    """Reject GNU constructs that preprocessing replaced by placeholders (see `GNU_PLACEHOLDERS`).

    Only code that is going to be compiled is checked (the kernel, the helpers the reference needs):
    the same constructs elsewhere in the file, such as glibc's `assert` in `main`, are harmless.
    """
    stack = [node]
    while stack:
        n = stack.pop()
        name: str | None = None
        if isinstance(n, c_ast.ID):
            name = n.name
        elif isinstance(n, c_ast.IdentifierType):
            name = next((w for w in n.names if w in GNU_PLACEHOLDERS), None)
        if name is not None and name in GNU_PLACEHOLDERS:
            raise CompileError(_loc(n, path), GNU_PLACEHOLDERS[name])
        stack.extend(child for _, child in reversed(n.children()))


def _collect_typedefs(ast: c_ast.FileAST, func: c_ast.FuncDef) -> dict[str, c_ast.Typedef]:
    """File-scope typedefs, plus typedefs local to the kernel whose names are not taken at file scope
    (the kernel's own declarations may use them)."""
    typedefs: dict[str, c_ast.Typedef] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef) and ext.name:
            typedefs[ext.name] = ext
    stack: list[c_ast.Node] = [func.body]
    while stack:
        node = stack.pop()
        if isinstance(node, c_ast.Typedef) and node.name and node.name not in typedefs:
            typedefs[node.name] = node
        stack.extend(child for _, child in node.children())
    return typedefs


def _is_function_decl(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl)


def _select_kernel(ast: c_ast.FileAST, path: str, function: str | None, markers: MarkerSummary) -> c_ast.FuncDef:
    funcs = [ext for ext in ast.ext if isinstance(ext, c_ast.FuncDef)]
    user_funcs = [f for f in funcs if markers.is_user_file(getattr(f.decl.coord, "file", None))]
    names = [str(f.decl.name) for f in user_funcs]
    listing = ", ".join(names) if names else "(none)"

    if function is not None:
        matches = [f for f in funcs if f.decl.name == function]
        if not matches:
            declared = [ext for ext in ast.ext if _is_function_decl(ext) and ext.name == function]
            if declared:
                raise CompileError(
                    _loc(declared[0], path),
                    f"function '{function}' is only declared here, not defined in this file; "
                    f"functions defined: {listing}",
                )
            raise CompileError(SourceLoc(path), f"no function named '{function}'; functions defined: {listing}")
        if len(matches) > 1:
            raise CompileError(_loc(matches[1].decl, path), f"function '{function}' is defined more than once")
        return matches[0]

    candidates = [f for f in user_funcs if _scop_pragmas(f)]
    if not candidates:
        if not names:
            raise CompileError(SourceLoc(path), "no function definitions found: nothing to compile")
        implicit = _implicit_kernel(user_funcs)
        if implicit is not None:
            return implicit
        raise CompileError(
            SourceLoc(path),
            "no kernel found: no function contains '#pragma scop'; functions defined: "
            f"{listing}; mark the kernel's loops with '#pragma scop' ... '#pragma endscop' "
            "or choose it with --function NAME",
        )
    if len(candidates) > 1:
        where = ", ".join(f"'{f.decl.name}' ({_loc(f.decl, path)})" for f in candidates)
        raise CompileError(
            _loc(candidates[1].decl, path),
            f"several functions contain '#pragma scop': {where}; choose one with --function NAME",
        )
    return candidates[0]


def _nodes(func: c_ast.FuncDef):  # type: ignore[no-untyped-def]
    """Every node of the function's body."""
    stack: list[c_ast.Node] = [func.body]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for _, child in node.children())


def _has_loop(func: c_ast.FuncDef) -> bool:
    return any(isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)) for node in _nodes(func))


def _implicit_kernel(user_funcs: Sequence[c_ast.FuncDef]) -> c_ast.FuncDef | None:
    """The kernel of a file without `#pragma scop`, when there is no doubt which function it is: the
    only function with loops, or the only function besides `main` (a test driver).  Its whole body
    is then the scop, as with `--function`.  None when several functions qualify."""
    with_loops = [f for f in user_funcs if _has_loop(f)]
    if len(with_loops) == 1:
        return with_loops[0]
    not_main = [f for f in user_funcs if f.decl.name != "main"]
    if len(not_main) == 1:
        return not_main[0]
    # a top function calling the others (a dataflow of stages, `inline`): the only one with loops, or
    # calling a function with loops, that no function but `main` calls
    callers = {str(f.decl.name): _called(f) for f in not_main}
    tops = [f for f in not_main if (_has_loop(f) or callers[str(f.decl.name)] & {str(g.decl.name) for g in with_loops})
            and not any(str(f.decl.name) in called for name, called in callers.items() if name != f.decl.name)]
    if len(tops) == 1:
        return tops[0]
    return None


def _called(func: c_ast.FuncDef) -> set[str]:
    return {node.name.name for node in _nodes(func)
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)}


def _check_file_scope_pragmas(ast: c_ast.FileAST, path: str, markers: MarkerSummary) -> None:
    for ext in ast.ext:
        if isinstance(ext, c_ast.Pragma) and _pragma_word(ext) in ("scop", "endscop"):
            if markers.is_user_file(getattr(ext.coord, "file", None)):
                raise CompileError(
                    _loc(ext, path), f"'#pragma {_pragma_word(ext)}' must be inside the kernel function's body"
                )


def parse_kernel(
    path: str,
    *,
    include_dirs: Sequence[str] = (),
    defines: Sequence[str] = (),
    function: str | None = None,
    std: str | None = None,
) -> ParsedKernel:
    """Preprocess and parse `path`, and pick the kernel function.

    The kernel is the function named `function` if given, else the only function of the user's files
    containing `#pragma scop`, else (no such pragma anywhere) the only function with loops or the only
    function besides `main`.  All problems are `CompileError`s located in the user's file.
    """
    text = preprocess(path, include_dirs=include_dirs, defines=defines, std=std)
    ast = parse_source(text, path)
    markers = scan_line_markers(text)
    func = _select_kernel(ast, path, function, markers)
    if function is None:
        _check_file_scope_pragmas(ast, path, markers)
    check_gnu_placeholders(func, path)
    check_declared(func, ast, path)
    model = inlined(func, [f for f in ast.ext if isinstance(f, c_ast.FuncDef)
                           and markers.is_user_file(getattr(f.decl.coord, "file", None))], path)
    scop = find_scop(model, path)
    typedefs = types.MappingProxyType(_collect_typedefs(ast, func))
    return ParsedKernel(path=path, func=func, ast=ast, typedefs=typedefs, scop=scop, preprocessed=text, model=model)
