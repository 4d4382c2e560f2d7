"""Preprocessing, GNU C clean-up, parsing and kernel discovery on real system headers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycparser import c_ast

from hls.diagnostics import CompileError, UsageError
from hls.frontend.parse import ParsedKernel, parse_kernel
from hls.frontend.preprocess import preprocess, sanitize, scan_line_markers

GEMM = """\
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static void init_array(int n, double A[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = (double) (i * j % n) / n;
}

void kernel_gemm(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) {
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++)
        C[i][j] += alpha * A[i][k] * B[k][j];
#pragma endscop
}

int main(void) {
  double (*A)[10] = malloc(sizeof(double[10][10]));
  init_array(10, A);
  printf("%f\\n", sqrt(A[1][1]));
  return 0;
}
"""


def write(tmp_path: Path, text: str, name: str = "k.c") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def find_nodes(node: c_ast.Node, cls: type) -> list[c_ast.Node]:
    found = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cls):
            found.append(n)
        stack.extend(child for _, child in n.children())
    return found


def line_col(text: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the `occurrence`-th `needle` in `text`."""
    pos = -1
    for _ in range(occurrence + 1):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def error_of(path: str, **kwargs: object) -> CompileError:
    with pytest.raises(CompileError) as info:
        parse_kernel(path, **kwargs)  # type: ignore[arg-type]
    return info.value


# --- kernel discovery -----------------------------------------------------------------------------


def test_gemm_with_system_headers_finds_scop(tmp_path: Path) -> None:
    path = write(tmp_path, GEMM)
    k = parse_kernel(path)
    assert isinstance(k, ParsedKernel)
    assert k.path == path
    assert k.func.decl.name == "kernel_gemm"
    assert k.scop is not None
    block, first, end = k.scop
    assert block is k.func.body
    items = block.block_items[first:end]
    assert len(items) == 1 and isinstance(items[0], c_ast.For)
    assert isinstance(block.block_items[first - 1], c_ast.Pragma) and block.block_items[first - 1].string == "scop"
    assert block.block_items[end].string == "endscop"
    # typedefs of the whole unit, system ones included
    assert "size_t" in k.typedefs and "int32_t" in k.typedefs and "FILE" in k.typedefs
    assert isinstance(k.typedefs["int32_t"], c_ast.Typedef)
    # coordinates name the user's file and its exact lines
    assert k.func.decl.coord.file == path
    assert k.func.decl.coord.line == line_col(GEMM, "kernel_gemm")[0]
    assert "# 1 \"" in k.preprocessed


def test_scop_in_nested_block(tmp_path: Path) -> None:
    src = """\
void k(int n, int A[n]) {
  int t = 0;
  if (n > 0) {
    t = 1;
    #pragma scop
    for (int i = 0; i < n; i++) A[i] = i;
    for (int i = 0; i < n; i++) A[i] += t;
    #pragma endscop
  }
}
"""
    k = parse_kernel(write(tmp_path, src))
    assert k.scop is not None
    block, first, end = k.scop
    assert block is not k.func.body
    assert isinstance(k.func.body.block_items[1], c_ast.If)
    assert block is k.func.body.block_items[1].iftrue
    assert (first, end) == (2, 4)
    assert all(isinstance(s, c_ast.For) for s in block.block_items[first:end])


def test_function_option_selects_kernel_without_pragmas(tmp_path: Path) -> None:
    src = """\
void scale(int n, float x[n]) { for (int i = 0; i < n; i++) x[i] *= 2.0f; }
void other(int n, float x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) x[i] = 0;
#pragma endscop
}
"""
    path = write(tmp_path, src)
    k = parse_kernel(path, function="scale")
    assert k.func.decl.name == "scale"
    assert k.scop is None
    assert parse_kernel(path).func.decl.name == "other"
    assert parse_kernel(path, function="other").scop is not None


def test_other_functions_do_not_matter(tmp_path: Path) -> None:
    src = """\
#include <stdio.h>
extern void polybench_timer_start(void);
static void print_array(int n, double *x) { for (int i = 0; i < n; i++) fprintf(stderr, "%f", x[i]); }
static void kernel_x(int n, double x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) x[i] = x[i] + 1;
#pragma endscop
}
int main(int argc, char **argv) { polybench_timer_start(); undefined_function(argc); return 0; }
"""
    k = parse_kernel(write(tmp_path, src))
    assert k.func.decl.name == "kernel_x"
    assert k.func.decl.storage == ["static"]


def test_no_kernel_lists_functions(tmp_path: Path) -> None:
    src = "int helper(int x) { return x + 1; }\nint other(int x) { return x; }\nint main(void) { return helper(1); }\n"
    path = write(tmp_path, src)
    err = error_of(path)
    assert err.loc is not None and err.loc.file == path
    assert "helper" in err.message and "other" in err.message and "main" in err.message
    assert "--function" in err.message
    assert "#pragma scop" in err.message


LOOP_KERNEL = "void k(int n, double x[n]) {\n  for (int i = 0; i < n; i++)\n    x[i] = 2 * x[i];\n}\n"
INIT = "void init(int n, double x[n]) {\n  for (int i = 0; i < n; i++)\n    x[i] = i;\n}\n"
MAIN_LOOP = "int main(void) {\n  double x[4];\n  for (int i = 0; i < 4; i++) x[i] = i;\n  k(4, x);\n  return 0;\n}\n"


@pytest.mark.parametrize(
    "src",
    [
        LOOP_KERNEL,  # the only function
        LOOP_KERNEL + "int main(void) { double x[4] = {0}; k(4, x); return 0; }\n",  # the only one with loops
        LOOP_KERNEL + MAIN_LOOP,  # both have loops: the only one besides main
        "void k(double x[2]) {\n  x[0] = x[1];\n}\nint main(void) { return 0; }\n",  # straight-line kernel
    ],
    ids=["alone", "only-loops", "only-non-main", "no-loops"],
)
def test_single_kernel_found_without_pragmas(tmp_path: Path, src: str) -> None:
    """No `#pragma scop` and no --function: an unambiguous kernel is taken whole, as with --function."""
    k = parse_kernel(write(tmp_path, src))
    assert k.func.decl.name == "k"
    assert k.scop is None


def test_several_candidates_without_pragmas_are_listed(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, INIT + LOOP_KERNEL + MAIN_LOOP))
    assert "no kernel found" in err.message
    assert "init, k, main" in err.message and "--function" in err.message


def test_no_function_at_all(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "int x;\n/* nothing */\n"))
    assert "no function" in err.message


def test_two_scop_functions_are_ambiguous(tmp_path: Path) -> None:
    src = """\
void a(int n, int x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) x[i] = 1;
#pragma endscop
}
void b(int n, int x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) x[i] = 2;
#pragma endscop
}
"""
    path = write(tmp_path, src)
    err = error_of(path)
    assert "'a'" in err.message and "'b'" in err.message and "--function" in err.message
    assert err.loc is not None and (err.loc.line, err.loc.col) == (6, 6)
    assert parse_kernel(path, function="b").func.decl.name == "b"


def test_unknown_function_option(tmp_path: Path) -> None:
    path = write(tmp_path, "void proto(int n);\nvoid k(int n) { (void) n; }\n")
    err = error_of(path, function="nope")
    assert "nope" in err.message and "k" in err.message
    err = error_of(path, function="proto")
    assert "only declared" in err.message
    assert err.loc is not None and (err.loc.file, err.loc.line) == (path, 1)


@pytest.mark.parametrize(
    "body, line, col, needle",
    [
        ("#pragma scop\n  x[0] = 1;\n", 2, 9, "without a matching"),
        ("  x[0] = 1;\n#pragma endscop\n", 3, 9, "without a preceding"),
        ("#pragma endscop\n  x[0] = 1;\n#pragma scop\n", 2, 9, "without a preceding"),
        ("#pragma scop\n  x[0] = 1;\n#pragma endscop\n#pragma scop\n  x[0] = 2;\n#pragma endscop\n", 5, 9, "second"),
        ("#pragma scop\n  x[0] = 1;\n#pragma scop\n  x[0] = 2;\n#pragma endscop\n", 4, 9, "inside the scop"),
        ("  {\n#pragma scop\n  x[0] = 1;\n  }\n#pragma endscop\n", 6, 9, "same block"),
    ],
)
def test_unbalanced_pragmas(tmp_path: Path, body: str, line: int, col: int, needle: str) -> None:
    path = write(tmp_path, "void k(int x[1]) {\n" + body + "}\n")
    err = error_of(path)
    assert needle in err.message
    assert err.loc is not None and err.loc.file == path and err.loc.line == line


# --- errors ---------------------------------------------------------------------------------------


def test_syntax_error_location_after_includes(tmp_path: Path) -> None:
    src = """\
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>

void k(int n, double x[n]) {
  for (int i = 0; i < n; i++)
    x[i] =   x[i] +  ;
}
"""
    path = write(tmp_path, src)
    err = error_of(path)
    assert err.loc is not None
    assert err.loc.file == path
    assert (err.loc.line, err.loc.col) == (8, 22)  # the ';' where an operand is missing
    assert "Traceback" not in err.format()
    assert err.format().startswith(f"{path}:8:22: error: ")


def test_syntax_error_missing_semicolon(tmp_path: Path) -> None:
    src = "#include <stdio.h>\nvoid k(void) {\n  int x = 1\n      x = 2;\n}\n"
    err = error_of(write(tmp_path, src))
    assert err.loc is not None and (err.loc.line, err.loc.col) == (4, 7)
    assert "'x'" in err.message


def test_syntax_error_at_end_of_input(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "void k(int n) {\n  n = n + 1;\n"))
    assert "end of input" in err.message
    assert err.loc is not None and err.loc.line == 2


@pytest.mark.parametrize(
    "src, line, col, near",
    [
        ("void k(double x[3]) {\n  x[0] = (x[1] * );\n}\n", 2, 18, "before ')'"),
        ("void k(double x[3]) {\n  x[0] = (double) ;\n}\n", 2, 19, "before ';'"),
        ("void k(double x[3]) {\n  x[] = 1.0;\n}\n", 2, 5, "before ']'"),
        ("void k(double x[3]) {\n  x[0] = x[1] ? : x[2];\n}\n", 2, 17, "before ':'"),
        ("void k(int x[9]) {\n  for (int i = 0; i < 9 i++) x[i] = 0;\n}\n", 2, 25, "before 'i'"),
        ("void k(int n) {\n  n = 1;\n}\n}\n", 4, 1, "before '}'"),
        ("void k(int n) {\n  n = n + 1;\n", 2, 12, "end of input"),
    ],
    ids=["operand", "cast", "subscript", "ternary", "for", "stray-brace", "end"],
)
def test_syntax_error_positions(tmp_path: Path, src: str, line: int, col: int, near: str) -> None:
    """Located at the token where the parser stopped, with pycparser 2.x and 3.x alike (the location
    comes from the ParseError text and the tokens, never from pycparser's private state)."""
    err = error_of(write(tmp_path, src))
    assert err.loc is not None and (err.loc.line, err.loc.col) == (line, col), err.format()
    assert err.message.startswith("syntax error") and near in err.message, err.message


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    err = error_of(path)
    assert err.loc is not None and (err.loc.file, err.loc.line, err.loc.col) == (path, 1, 1)
    assert "empty" in err.message


def test_blank_file(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "\n\n   \n"))
    assert "empty" in err.message


def test_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "bin.c"
    path.write_bytes(bytes(range(256)) * 4)
    err = error_of(str(path))
    assert err.loc is not None and (err.loc.line, err.loc.col) == (1, 1)
    assert "NUL" in err.message


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.c"
    path.write_bytes(b"/* caf\xe9 */\nvoid k(void) {}\n")
    err = error_of(str(path))
    assert err.loc is not None and (err.loc.line, err.loc.col) == (1, 7)  # the offending byte
    assert "UTF-8" in err.message


def test_missing_file(tmp_path: Path) -> None:
    err = error_of(str(tmp_path / "nope.c"))
    assert "no such file" in err.message


def test_missing_header_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, "#include <stdio.h>\n#include \"not_there.h\"\nvoid k(void) {}\n")
    err = error_of(path)
    assert err.loc is not None and (err.loc.file, err.loc.line, err.loc.col) == (path, 2, 10)
    assert "not_there.h" in err.message


def test_hash_error_directive(tmp_path: Path) -> None:
    path = write(tmp_path, "#ifndef N\n#error N must be defined\n#endif\nvoid k(int x[N]) {}\n")
    err = error_of(path)
    assert err.loc is not None and (err.loc.line, err.loc.col) == (2, 2)
    assert "N must be defined" in err.message
    k = parse_kernel(path, defines=["N=16"], function="k")
    dim = k.func.decl.type.args.params[0].type.dim
    assert isinstance(dim, c_ast.Constant) and dim.value == "16"


def test_invalid_define_is_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, "void k(void) {}\n")
    with pytest.raises(UsageError):
        parse_kernel(path, defines=["1BAD"])


def test_include_dirs_and_user_header_coordinates(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "sizes.h").write_text("typedef float real;\n#define N 32\nreal  scale(real   x);\n")
    src = "#include \"sizes.h\"\nvoid k(real a[N]) {\n#pragma scop\n  a[0] = 1;\n#pragma endscop\n}\n"
    path = write(tmp_path, src)
    with pytest.raises(CompileError):
        parse_kernel(path)
    k = parse_kernel(path, include_dirs=[str(inc)])
    real = k.typedefs["real"]
    assert real.coord.file == str(inc / "sizes.h") and real.coord.line == 1
    scale = [e for e in k.ast.ext if isinstance(e, c_ast.Decl) and e.name == "scale"][0]
    param = scale.type.args.params[0]
    assert (param.coord.line, param.coord.column) == (3, 20)  # columns restored inside headers too
    assert scan_line_markers(k.preprocessed).is_user_file(str(inc / "sizes.h"))


# --- GNU C and column preservation ----------------------------------------------------------------

GNU = """\
#include <stdlib.h>
#include <string.h>

void kernel(int n, double * __restrict a, const double *__restrict__ b) {
  __attribute__((aligned(8))) double tmp = 0.0;
  __extension__ long long q = 1LL;
  double __attribute__ ((unused)) spare;
  __inline__ int dummy;
#pragma scop
  for (int i = 0; i < n; i++)
    a[i]   =   b[i]  * tmp  +   (double) q;
#pragma endscop
}
"""


def test_gnu_extensions_in_user_code(tmp_path: Path) -> None:
    path = write(tmp_path, GNU)
    k = parse_kernel(path)
    params = k.func.decl.type.args.params
    assert params[1].type.quals == ["restrict"] and params[2].type.quals == ["restrict"]
    decls = {d.name: d for d in find_nodes(k.func.body, c_ast.Decl)}
    # the Decl after the blanked attribute keeps its exact column
    assert (decls["tmp"].coord.line, decls["tmp"].coord.column) == line_col(GNU, "tmp =")
    assert (decls["q"].coord.line, decls["q"].coord.column) == line_col(GNU, "q = 1LL")
    assert (decls["spare"].coord.line, decls["spare"].coord.column) == line_col(GNU, "spare")
    assert decls["q"].type.type.names == ["long", "long"]


def test_columns_of_spaced_out_expression(tmp_path: Path) -> None:
    path = write(tmp_path, GNU)
    k = parse_kernel(path)
    assign = find_nodes(k.func.body, c_ast.Assignment)[0]
    ids = {(i.name, i.coord.column) for i in find_nodes(assign, c_ast.ID)}
    line = GNU.splitlines()[10]
    assert assign.coord.line == 11
    assert ("b", line.index("b[i]") + 1) in ids
    assert ("tmp", line.index("tmp") + 1) in ids
    assert ("q", line.rindex("q") + 1) in ids


def test_tabs_count_as_one_column(tmp_path: Path) -> None:
    src = "void k(int n, int x[n]) {\n\tfor (int i = 0; i < n; i++)\n\t\tx[i]\t=\ti;\n}\n"
    k = parse_kernel(write(tmp_path, src), function="k")
    assign = find_nodes(k.func.body, c_ast.Assignment)[0]
    rhs = assign.rvalue
    assert (rhs.coord.line, rhs.coord.column) == (3, 10)


def test_macro_from_system_header_starts_at_macro_column(tmp_path: Path) -> None:
    src = "#include <math.h>\nvoid k(double x[1]) {\n  x[0]    =    M_PI   ;\n}\n"
    k = parse_kernel(write(tmp_path, src), function="k")
    const = find_nodes(k.func.body, c_ast.Constant)
    pi = [c for c in const if c.value.startswith("3.14159")][0]
    assert (pi.coord.line, pi.coord.column) == (3, 16)


@pytest.mark.parametrize(
    "stmt, col, needle",
    [
        ("__typeof__(n) m = n; (void) m;", 3, "__typeof__"),
        ("int m = ({ int t = n; t; });", 11, "statement expressions"),
        ("__auto_type m = n; (void) m;", 3, "__auto_type"),
        ("_Float16 h = n; (void) h;", 3, "_Float16"),
    ],
)
def test_unsupported_gnu_construct_in_kernel_is_located(tmp_path: Path, stmt: str, col: int, needle: str) -> None:
    src = f"void k(int n) {{\n  {stmt}\n}}\n"
    err = error_of(write(tmp_path, src), function="k")
    assert err.loc is not None and (err.loc.line, err.loc.col) == (2, col)
    assert needle in err.message


ASSERT_IN_MAIN = """\
#include <assert.h>
#include <stdio.h>
void k(int n, int x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) x[i] = i;
#pragma endscop
}
int main(void) {
  int x[4];
  k(4, x);
  assert(x[3] == 3);
  return 0;
}
"""


def test_gnu_assert_outside_kernel_is_harmless(tmp_path: Path) -> None:
    path = write(tmp_path, ASSERT_IN_MAIN)
    k = parse_kernel(path)
    assert k.func.decl.name == "k"
    # the same assert inside the kernel is rejected at the assert's position
    bad = ASSERT_IN_MAIN.replace("  for (int i", "  assert(n > 0);\n  for (int i")
    err = error_of(write(tmp_path, bad, "bad.c"))
    assert "statement expressions" in err.message
    assert err.loc is not None and err.loc.line == 5


def test_sanitize_blanks_keep_lines_and_columns() -> None:
    text = (
        '# 1 "u.c"\n'
        'extern int f(int) __attribute__((__nothrow__,\n'
        '  __leaf__)) __asm__ ("" "f64");\n'
        'int __restrict x; _Float64 y; __extension__ typedef __int128_t big;\n'
    )
    out = sanitize(text, frozenset({"u.c"}))
    assert out.count("\n") == text.count("\n")
    lines = out.split("\n")
    assert lines[1].rstrip() == "extern int f(int)"
    assert lines[2].strip() == ";"
    assert lines[3].index("x;") == text.split("\n")[3].index("x;")
    assert lines[3].index("y;") == text.split("\n")[3].index("y;")
    assert "restrict" in lines[3] and "double" in lines[3] and "__int128 " in lines[3]
    assert "__extension__" not in lines[3]


HEADERS = [
    "stdio.h", "stdlib.h", "string.h", "math.h", "stdint.h", "inttypes.h", "unistd.h",
    "limits.h", "float.h", "stdbool.h", "complex.h",
]


@pytest.mark.parametrize("mode", ["default", "c99", "gnu_source"])
def test_real_headers_parse(tmp_path: Path, mode: str) -> None:
    src = "".join(f"#include <{h}>\n" for h in HEADERS) + (
        "void k(int n, int32_t a[n], bool flag) {\n"
        "#pragma scop\n"
        "  for (int i = 0; i < n; i++) a[i] = (int32_t) (flag ? sqrt((double) i) : INT32_MAX);\n"
        "#pragma endscop\n"
        "}\n"
    )
    path = write(tmp_path, src)
    kwargs: dict[str, object] = {}
    if mode == "c99":
        kwargs["std"] = "c99"
    elif mode == "gnu_source":
        kwargs["defines"] = ["_GNU_SOURCE"]
    k = parse_kernel(path, **kwargs)  # type: ignore[arg-type]
    assert k.func.decl.name == "k"
    assert k.func.decl.coord.line == len(HEADERS) + 1
    assert k.scop is not None
    assert {"uint64_t", "size_t", "FILE", "int32_t"} <= set(k.typedefs)


@pytest.mark.parametrize("header", HEADERS)
def test_each_header_alone(tmp_path: Path, header: str) -> None:
    path = write(tmp_path, f"#include <{header}>\nvoid k(int n, float a[n]) {{\n#pragma scop\n  a[0] = n;\n#pragma endscop\n}}\n")
    k = parse_kernel(path)
    assert k.func.decl.coord.line == 2


def test_preprocess_keeps_user_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "#include <stdio.h>\n\n\nint   answer   =   42;\n")
    text = preprocess(path)
    assert "__attribute__" not in text and "__asm__" not in text and "__restrict" not in text
    assert "int   answer   =   42;" in text
    summary = scan_line_markers(text)
    assert path in summary.user_files
    assert "/usr/include/stdio.h" in summary.system_files
    assert summary.system_includes[0].endswith("stdio.h")
