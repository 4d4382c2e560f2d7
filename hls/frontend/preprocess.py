"""Run the C preprocessor and turn its GNU C output into text pycparser can parse.

Why gcc: kernels include real system headers (`<math.h>`, `<stdint.h>`, ...) and use the user's own
`-I`/`-D` options; only the system compiler's preprocessor sees exactly what the user's build sees.

Why the rewriting afterwards: pycparser understands ISO C11 but not the GNU dialect glibc's headers are
written in (`__attribute__`, `__asm__` labels, `__restrict`, `_Float128`, ...).  Every rewrite keeps the
line numbering and, inside the user's own files, the column of every token that is kept: removed
tokens become the same number of spaces (newlines stay) and shorter replacements are padded.
`gcc -E` itself collapses runs of blanks between tokens and splits lines around expansions of system
macros, so the user's lines are also re-joined and re-spaced to their original columns (see
`_realign_user_lines`).  The result:
every coordinate pycparser reports names the user's file, line and column exactly as an editor shows
them (columns count characters, a tab is one column, like gcc with `-fdiagnostics-column-unit=byte`
on ASCII text).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from hls.diagnostics import CompileError, SourceLoc, UsageError

__all__ = [
    "GNU_PLACEHOLDERS",
    "PRELUDE_FILE",
    "LineMarker",
    "MarkerSummary",
    "preprocess",
    "sanitize",
    "scan_line_markers",
]

#: Pseudo file name of the typedef prelude put in front of the preprocessed text.
PRELUDE_FILE = "<dpn-synth-prelude>"

# Types gcc knows without a declaration, given to pycparser as typedefs (glibc never combines this one
# with another specifier, so a typedef name is good enough).  The prelude also declares the
# placeholder types of `GNU_PLACEHOLDERS`.
_PRELUDE_TYPEDEFS = "typedef char *__builtin_va_list;"

_PSEUDO_FILES = frozenset({"<built-in>", "<command-line>", PRELUDE_FILE})

_GCC_TIMEOUT_S = 120

# ---------------------------------------------------------------------------------------------------
# Line markers
# ---------------------------------------------------------------------------------------------------

_MARKER_RE = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')


@dataclass(frozen=True)
class LineMarker:
    """One `# LINE "FILE" FLAGS` line of gcc's output.

    `file` is spelled as in the marker (gcc escapes `\\` and `"`), which is also what pycparser puts in
    `Coord.file`.  Flags: 1 = entering an include, 2 = returning to the includer, 3 = system header.
    """

    line: int
    file: str
    flags: frozenset[int]


def _parse_marker(line: str) -> LineMarker | None:
    m = _MARKER_RE.match(line)
    if m is None:
        return None
    flags = frozenset(int(f) for f in m.group(3).split())
    return LineMarker(int(m.group(1)), m.group(2), flags)


def _unescape_marker_file(name: str) -> str:
    """The real path behind a marker's file name (gcc escapes backslash, quote and non-printables)."""
    if "\\" not in name:
        return name
    return re.sub(
        r"\\([0-7]{1,3}|.)",
        lambda m: chr(int(m.group(1), 8)) if m.group(1)[0] in "01234567" else m.group(1),
        name,
    )


@dataclass(frozen=True)
class MarkerSummary:
    """What the line markers of a preprocessed text say about the files it came from.

    user_files: files of the user's program (the main file and headers found outside system
        directories), spelled as in `Coord.file`.
    system_files: system headers (gcc flag 3) and gcc's pseudo files.
    system_includes: system headers included directly by a user file, in order of first inclusion:
        a unit that re-declares the user's code needs them to see the same system declarations.
    """

    user_files: frozenset[str]
    system_files: frozenset[str]
    system_includes: tuple[str, ...] = field(default=())

    def is_user_file(self, name: str | None) -> bool:
        return name is not None and name in self.user_files


def scan_line_markers(text: str) -> MarkerSummary:
    """Classify the files named by the line markers of `text` (output of `preprocess` or `gcc -E`)."""
    markers: list[LineMarker] = []
    for line in text.splitlines():
        if line.startswith("#"):
            marker = _parse_marker(line)
            if marker is not None:
                markers.append(marker)
    user: set[str] = set()
    everything: set[str] = set()
    for marker in markers:
        everything.add(marker.file)
        # A macro from a system header expanded in user code gets a `3` marker naming the user's file;
        # a file is the user's as soon as one marker names it without the system flag.
        if 3 not in marker.flags and marker.file not in _PSEUDO_FILES:
            user.add(marker.file)
    system = frozenset(everything - user)
    includes: list[str] = []
    stack: list[str] = []
    for marker in markers:
        if 1 in marker.flags:
            if stack and stack[-1] in user and marker.file in system and marker.file not in _PSEUDO_FILES:
                if marker.file not in includes:
                    includes.append(marker.file)
            stack.append(marker.file)
        elif 2 in marker.flags:
            if stack:
                stack.pop()
            if stack:
                stack[-1] = marker.file
            else:
                stack.append(marker.file)
        elif not stack:
            stack.append(marker.file)
        else:
            stack[-1] = marker.file
    return MarkerSummary(frozenset(user), system, tuple(includes))


# ---------------------------------------------------------------------------------------------------
# Tokens (enough of C's lexical grammar to align and rewrite preprocessed text)
# ---------------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"""
      (?P<ws>[ \t\r\f\v]+)
    | (?P<str>(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"?)
    | (?P<chr>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?)
    | (?P<num>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
    | (?P<id>[A-Za-z_$][0-9A-Za-z_$]*)
    | (?P<punct>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|\#\#|.)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # 'str', 'chr', 'num', 'id' or 'punct'
    text: str
    start: int  # offset in the line (0-based)
    end: int
    space_before: bool


def _line_tokens(line: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    space = False
    while pos < len(line):
        m = _TOKEN_RE.match(line, pos)
        assert m is not None  # the last alternative matches any character
        kind = m.lastgroup or "punct"
        if kind == "ws":
            space = True
        else:
            toks.append(_Tok(kind, m.group(), pos, m.end(), space))
            space = False
        pos = m.end()
    return toks


def _strip_comments(text: str) -> str:
    """Replace C and C++ comments by spaces (keeping newlines) so token columns stay put."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _source_line_tokens(text: str) -> dict[int, list[_Tok]]:
    """Tokens of each physical line of an original source file that gcc prints as ordinary text.

    Directive lines and lines joined by backslash-newline are left out: gcc does not print the former
    and spreads the latter unpredictably, so those lines keep gcc's own spacing.
    """
    result: dict[int, list[_Tok]] = {}
    lines = _strip_comments(text).split("\n")
    continued = False
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        joined = line.endswith("\\")
        if not continued and not joined and not line.lstrip().startswith("#"):
            result[number] = _line_tokens(line)
        continued = joined
    return result


# ---------------------------------------------------------------------------------------------------
# Column realignment of the user's lines
# ---------------------------------------------------------------------------------------------------


def _place_tokens(out_toks: list[_Tok], orig_toks: list[_Tok]) -> str:
    """Lay out gcc's tokens for one source line at the original columns wherever they match.

    A macro expansion starts at the column of the macro's name and its other tokens follow; a later
    original token that no longer fits at its column is pushed right.  Blanks that
    gcc put between tokens are kept (at least one) so tokens never paste together.
    """
    a = [t.text for t in out_toks]
    b = [t.text for t in orig_toks]
    target: dict[int, int] = {}
    if a == b:
        target = {i: orig_toks[i].start for i in range(len(a))}
    else:
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                for k in range(i2 - i1):
                    target[i1 + k] = orig_toks[j1 + k].start
            elif op == "replace":
                # A macro expansion starts where the macro's name was written.
                target[i1] = orig_toks[j1].start
    parts: list[str] = []
    pos = 0
    for i, tok in enumerate(out_toks):
        gap = 1 if (tok.space_before and i > 0) else 0
        col = max(target.get(i, pos + gap), pos + gap)
        parts.append(" " * (col - pos))
        parts.append(tok.text)
        pos = col + len(tok.text)
    return "".join(parts)


def _realign_user_lines(text: str, user_files: frozenset[str]) -> str:
    """Give the tokens of the user's lines back the columns they have in the user's files.

    `gcc -E` keeps the column of the first token of a line but squeezes all other blanks to one, and it
    splits a line around macro expansions from system headers (`x + M_PI;` becomes three output lines
    separated by markers that point back to the same source line).  Such split lines are joined again,
    the markers in between dropped, then every token is placed at its original column (see
    `_place_tokens`).  Lines are never added or removed, except that the joined pieces and their
    markers collapse into one line, which keeps the numbering since all pieces belong to one line.
    """
    lines = text.split("\n")
    sources: dict[str, dict[int, list[_Tok]] | None] = {}

    def source_tokens(name: str) -> dict[int, list[_Tok]] | None:
        if name not in sources:
            try:
                with open(_unescape_marker_file(name), "rb") as fh:
                    data = fh.read()
                sources[name] = _source_line_tokens(data.decode("utf-8", errors="replace"))
            except OSError:
                sources[name] = None
        return sources[name]

    out: list[str] = []
    cur_file: str | None = None
    cur_line = 0
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("#"):
            marker = _parse_marker(line)
            if marker is not None:
                cur_file, cur_line = marker.file, marker.line
            else:
                cur_line += 1  # a #pragma or other directive gcc passes through
            out.append(line)
            i += 1
            continue
        if cur_file is None or cur_file not in user_files:
            out.append(line)
            cur_line += 1
            i += 1
            continue
        # Join the pieces `text / # L "F" ... / text` that all belong to source line cur_line.
        pieces = [line]
        j = i + 1
        while j + 1 < n:
            marker = _parse_marker(lines[j]) if lines[j].startswith("#") else None
            if marker is None or marker.file != cur_file or marker.line != cur_line:
                break
            if lines[j + 1].startswith("#"):
                break
            pieces.append(lines[j + 1])
            j += 2
        toks: list[_Tok] = []
        for k, piece in enumerate(pieces):
            for m, tok in enumerate(_line_tokens(piece)):
                # the pieces were separate lines: keep them apart by at least a blank
                toks.append(dataclasses.replace(tok, space_before=True) if k > 0 and m == 0 else tok)
        orig = source_tokens(cur_file)
        if orig is not None and cur_line in orig and toks:
            out.append(_place_tokens(toks, orig[cur_line]))
        else:
            out.extend(lines[i:j])
        cur_line += 1
        i = j
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------
# GNU C → ISO C rewriting
# ---------------------------------------------------------------------------------------------------

# Keywords replaced by an ISO spelling ('' = removed).  A replacement longer than the original
# (`_Float128` → `long double`) only shifts the rest of its own line; none of these is plausible in a
# kernel's own lines.
_REPLACE: dict[str, str] = {
    "__extension__": "",
    "__inline": "inline",
    "__inline__": "inline",
    "__restrict": "restrict",
    "__restrict__": "restrict",
    "__volatile": "volatile",
    "__volatile__": "volatile",
    "__const": "const",
    "__const__": "const",
    "__signed": "signed",
    "__signed__": "signed",
    "__complex": "_Complex",
    "__complex__": "_Complex",
    "__alignof": "_Alignof",
    "__alignof__": "_Alignof",
    "__builtin_offsetof": "offsetof",
    "__thread": "",
    "__int128_t": "__int128",
    "__uint128_t": "unsigned __int128",
    "_Float32": "float",
    "_Float64": "double",
    "_Float32x": "double",
    "_Float64x": "long double",
    "_Float128": "long double",
    "_Float128x": "long double",
    "__float128": "long double",
    "__float80": "long double",
}

# Removed together with the parenthesised group that follows them.
_WITH_PARENS = frozenset({"__attribute__", "__attribute", "__declspec", "__asm__", "__asm", "asm"})
_ASM = frozenset({"__asm__", "__asm", "asm"})
_ASM_QUALIFIERS = frozenset({"volatile", "__volatile__", "__volatile", "inline", "__inline__", "goto"})

# GNU constructs that have no ISO C equivalent.  They may well occur in code that does not matter
# (glibc's `assert` expands to a statement expression in GNU mode, a logging helper may use `va_arg`),
# so they are not errors here: each is replaced by a placeholder name that parses, and whoever needs
# the code (the kernel, the helpers the reference compiles) rejects the placeholder with the message
# below, at the construct's own position.
GNU_PLACEHOLDERS: dict[str, str] = {
    "__SE": "GNU statement expressions '({ ... })' are not supported",
    "__TO": "GNU '__typeof__' is not supported",
    "__AT": "GNU '__auto_type' is not supported",
    "__LB": "GNU local labels ('__label__') are not supported",
    "__RE": "GNU '__real__' is not supported",
    "__IM": "GNU '__imag__' is not supported",
    "__VA": "variadic arguments ('va_arg') are not supported",
    "__TC": "'__builtin_types_compatible_p' is not supported",
    "__F16": "half-precision type '_Float16' is not supported",
}
# keyword -> (placeholder, whether the parenthesised group after it goes too)
_PLACEHOLDER_FOR: dict[str, tuple[str, bool]] = {
    "__typeof__": ("__TO", True),
    "__typeof": ("__TO", True),
    "__auto_type": ("__AT", False),
    "__label__": ("__LB", False),
    "__real__": ("__RE+", False),  # a unary operator: `__real__ z` -> `__RE+ z` still parses
    "__imag__": ("__IM+", False),
    "__builtin_va_arg": ("__VA", True),
    "__builtin_types_compatible_p": ("__TC", True),
    "_Float16": ("__F16", False),
}
# Placeholders used as types are typedefs of the prelude; the others are plain identifiers.
_PLACEHOLDER_TYPEDEFS = "typedef int __TO; typedef int __AT; typedef int __LB; typedef float __F16;"

# Attributes that change a type: dropping them would silently change the program.
_TYPE_CHANGING_ATTRIBUTES = re.compile(r"\b(?:__)?(vector_size|mode|ext_vector_type)(?:__)?\s*\(")


@dataclass(frozen=True)
class _STok:
    """A token of the whole preprocessed text, with where it comes from."""

    text: str
    kind: str
    start: int  # absolute offset in the text
    end: int
    file: str | None
    line: int
    col: int


def _scan(text: str) -> Iterator[_STok]:
    """Tokens of a preprocessed text outside directive lines, with their source coordinates."""
    offset = 0
    cur_file: str | None = None
    cur_line = 1
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            marker = _parse_marker(line.lstrip())
            if marker is not None:
                cur_file, cur_line = marker.file, marker.line
            else:
                cur_line += 1
        else:
            for tok in _line_tokens(line):
                yield _STok(tok.text, tok.kind, offset + tok.start, offset + tok.end, cur_file, cur_line, tok.start + 1)
            cur_line += 1
        offset += len(line) + 1


def _blank(segment: str) -> str:
    """Spaces for every character of `segment` except newlines and whole directive lines in it."""
    pieces = segment.split("\n")
    out = [re.sub(r"[^\n]", " ", pieces[0])]
    for piece in pieces[1:]:
        out.append(piece if piece.lstrip().startswith("#") else " " * len(piece))
    return "\n".join(out)


def _placeholder(segment: str, name: str) -> str:
    """`segment` blanked, with `name` written over the start of its first line that is long enough."""
    pieces = _blank(segment).split("\n")
    originals = segment.split("\n")
    for k, piece in enumerate(pieces):
        if len(piece) >= len(name) and not originals[k].lstrip().startswith("#"):
            pieces[k] = name + piece[len(name) :]
            return "\n".join(pieces)
    return name + " " + "\n".join(pieces)  # cannot happen for real constructs; shifts one line only


def _statement_expression_end(toks: list[_STok], open_index: int) -> int | None:
    """Index of the `)` closing the GNU statement expression `({ ... })` starting at `open_index`."""
    depth = 0
    for k in range(open_index + 1, len(toks)):
        t = toks[k].text
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return k + 1 if k + 1 < len(toks) and toks[k + 1].text == ")" else None
    return None


def _replacement(original: str, new: str) -> str:
    return new + " " * (len(original) - len(new)) if len(new) <= len(original) else new


def sanitize(text: str, user_files: frozenset[str] | None = None) -> str:
    """Rewrite gcc's GNU C output into ISO C that pycparser parses, keeping lines and columns.

    GNU constructs without an ISO equivalent become placeholders (`GNU_PLACEHOLDERS`).  Attributes
    that change a type (`vector_size`, `mode`) are errors in `user_files` (default: the user files
    found in the line markers), since dropping them would silently change the user's program.
    """
    if user_files is None:
        user_files = scan_line_markers(text).user_files
    toks = list(_scan(text))
    edits: list[tuple[int, int, str | None]] = []  # (start, end, replacement or None = blank)
    i = 0
    n = len(toks)
    while i < n:
        tok = toks[i]
        if tok.kind != "id":
            if tok.text == "(" and i + 1 < n and toks[i + 1].text == "{":
                close = _statement_expression_end(toks, i)
                if close is not None:
                    edits.append((tok.start, toks[close].end, _placeholder(text[tok.start : toks[close].end], "__SE")))
                    i = close + 1
                    continue
            i += 1
            continue
        word = tok.text
        if word in _WITH_PARENS:
            j = i + 1
            if word in _ASM:
                while j < n and toks[j].text in _ASM_QUALIFIERS:
                    j += 1
            if j < n and toks[j].text == "(":
                close = _matching_paren(toks, j)
                if close is None:
                    raise CompileError(_loc(tok), f"unbalanced parentheses after '{word}'")
                if word not in _ASM and tok.file in user_files:
                    inner = text[toks[j].end : toks[close].start]
                    bad = _TYPE_CHANGING_ATTRIBUTES.search(inner)
                    if bad is not None:
                        raise CompileError(_loc(tok), f"attribute '{bad.group(1)}' changes the type and is not supported")
                edits.append((tok.start, toks[close].end, None))
                i = close + 1
                continue
            if word in _ASM:  # `asm` used as an ordinary identifier (ISO modes)
                i += 1
                continue
            raise CompileError(_loc(tok), f"expected '(' after '{word}'")
        if word in _REPLACE:
            new = _REPLACE[word]
            edits.append((tok.start, tok.end, _replacement(word, new) if new else None))
        elif word in _PLACEHOLDER_FOR:
            name, with_parens = _PLACEHOLDER_FOR[word]
            end = i
            if with_parens and i + 1 < n and toks[i + 1].text == "(":
                end = _matching_paren(toks, i + 1) or i
            edits.append((tok.start, toks[end].end, _placeholder(text[tok.start : toks[end].end], name)))
            i = end + 1
            continue
        i += 1
    if not edits:
        return text
    out: list[str] = []
    pos = 0
    for start, end, new in edits:
        out.append(text[pos:start])
        out.append(_blank(text[start:end]) if new is None else new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _loc(tok: _STok) -> SourceLoc:
    return SourceLoc(_unescape_marker_file(tok.file) if tok.file else "<input>", tok.line, tok.col)


def _matching_paren(toks: list[_STok], open_index: int) -> int | None:
    depth = 0
    for k in range(open_index, len(toks)):
        t = toks[k].text
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth == 0:
                return k
    return None


# ---------------------------------------------------------------------------------------------------
# Running gcc -E
# ---------------------------------------------------------------------------------------------------

_DEFINE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_,\s.]*\))?(=.*)?$", re.DOTALL)
_STD_RE = re.compile(r"^(?:c|gnu|iso9899:)[0-9a-z:]+$")
_DIAG_RE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$")


def _read_user_source(path: str) -> str:
    """Check that `path` is a readable C source text before handing it to gcc."""
    if not os.path.exists(path):
        raise CompileError(SourceLoc(path), "no such file")
    if os.path.isdir(path):
        raise CompileError(SourceLoc(path), "is a directory, not a C source file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise CompileError(SourceLoc(path), f"cannot read file: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise CompileError(SourceLoc(path, 1, 1), "not a C source file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CompileError(SourceLoc(path, line, col), f"not a C source file (invalid UTF-8 at byte {exc.start})") from None
    if not text.strip():
        raise CompileError(SourceLoc(path, 1, 1), "empty source file")
    return text


def _gcc_error(stderr: str, path: str, arg_map: dict[str, str]) -> CompileError:
    """The first error gcc printed, as a CompileError at gcc's location."""
    for line in stderr.splitlines():
        m = _DIAG_RE.match(line)
        if m is not None:
            file = arg_map.get(m.group("file"), m.group("file"))
            col = int(m.group("col") or 0)
            msg = m.group("msg").strip()
            return CompileError(SourceLoc(file, int(m.group("line")), col), msg)
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    detail = lines[-1] if lines else "gcc -E failed"
    detail = re.sub(r"^(gcc|cc1|cpp): (fatal )?error: ", "", detail)
    return CompileError(SourceLoc(path), f"preprocessing failed: {detail}")


def preprocess(
    path: str,
    *,
    include_dirs: Sequence[str] = (),
    defines: Sequence[str] = (),
    std: str | None = None,
) -> str:
    """Preprocess `path` with `gcc -E` and return ISO C text with line markers that pycparser parses.

    `defines` are `NAME` or `NAME=VALUE` (as for `-D`), `include_dirs` are `-I` directories, `std` an
    optional `-std=` value.  Coordinates in the result point into the user's files exactly (see the
    module docstring).  Every problem with the input is a `CompileError`.
    """
    _read_user_source(path)
    args = ["gcc", "-E", "-fdiagnostics-plain-output", "-fdiagnostics-column-unit=byte"]
    if std is not None:
        if not _STD_RE.match(std):
            raise UsageError(f"invalid C standard {std!r}")
        args.append(f"-std={std}")
    for d in include_dirs:
        args.append(f"-I{d}")
    for d in defines:
        if not isinstance(d, str) or not _DEFINE_RE.match(d):
            raise UsageError(f"invalid macro definition {d!r}: expected NAME or NAME=VALUE")
        args.append(f"-D{d}")
    # A path starting with '-' would read as an option.
    gcc_path = path if not path.startswith("-") else os.path.join(".", path)
    args.append(gcc_path)
    arg_map = {gcc_path: path}
    env = dict(os.environ, LC_ALL="C", LANG="C")
    env.pop("GCC_COLORS", None)
    try:
        proc = subprocess.run(args, capture_output=True, env=env, timeout=_GCC_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise CompileError(None, "gcc not found: dpn-synth needs gcc on PATH to preprocess C sources") from None
    except subprocess.TimeoutExpired:
        raise CompileError(SourceLoc(path), f"preprocessing took longer than {_GCC_TIMEOUT_S} s") from None
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        raise _gcc_error(stderr, path, arg_map)
    text = proc.stdout.decode("utf-8", errors="replace")
    if gcc_path != path:
        text = text.replace(f'"{gcc_path}"', f'"{path}"')
    summary = scan_line_markers(text)
    text = _realign_user_lines(text, summary.user_files)
    text = sanitize(text, summary.user_files)
    # The prelude sits before gcc's first line marker, under its own file name, so it shifts nothing.
    return f'# 1 "{PRELUDE_FILE}"\n{_PRELUDE_TYPEDEFS} {_PLACEHOLDER_TYPEDEFS}\n{text}'
