"""C constructs that pet and Clan accept in a static control part, checked against gcc.

Each file of `tests/frontend/constructs/` uses one construct; its model must be the expected one, and
the process network (DPN simulator) must compute exactly what gcc computes from the same file.  Two
of them also run as Verilog under Verilator.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hls.frontend import load_kernel
from hls.poly.interpret import interpret
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import run_cli

CONSTRUCTS = Path(__file__).resolve().parent / "constructs"
FILES = sorted(CONSTRUCTS.glob("*.c"))


def _sim(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    rc, out, err = run_cli(argv, capsys)
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["ok"] and rep["mismatches"] == 0, rep
    return rep


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_construct_network_matches_gcc(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(path), "--dpn-only", "--seed", "1", "--json"], capsys)  # a compile each: one seed


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_construct_interpreter_matches_gcc(path: Path) -> None:
    """The model in original order too, and the kernel must change something (no vacuous pass)."""
    kernel, program = load_kernel(str(path))
    inputs = random_inputs(program, 5)
    got = interpret(program, inputs)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(kernel).run({**inputs, **expected})
    assert not compare(expected, got)
    assert any(not np.array_equal(inputs[k], got[k]) for k in got)


@pytest.mark.slow  # 46 s; the constructs run bit-exact in the DPN simulator: test_construct_network_matches_gcc
@pytest.mark.parametrize("name", ["chained_assign", "const_locals", "const_tables"])
def test_construct_rtl_matches_gcc(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(CONSTRUCTS / f"{name}.c"), "--seed", "1", "--json"], capsys)


# --------------------------------------------------------------------- the models


def _texts(path: Path) -> list[str]:
    _, program = load_kernel(str(path))
    return [s.text for s in program.statements]


def test_chained_assignment_is_one_statement_per_target() -> None:
    """Right to left, each later target reading back the one just written (its converted value)."""
    texts = _texts(CONSTRUCTS / "chained_assign.c")
    assert texts[:3] == ["B[i] = A[i] * 37.5", "k = B[i]", "C[i] = k"]
    assert "D[i] += s" in texts and "u = s" in texts
    assert texts[-2:] == ["E[j][i] = A[i] - D[j]", "E[i][j] = E[j][i]"]


def test_chained_assignment_value_is_converted_to_the_middle_type(tmp_path: Path) -> None:
    """`d = f = x`: d gets x rounded to float, not x."""
    src = tmp_path / "k.c"
    src.write_text("void k(double X[4], float F[4], double D[4]) {\n#pragma scop\n"
                   "  for (int i = 0; i < 4; i++)\n    D[i] = F[i] = X[i] / 3.0;\n#pragma endscop\n}\n")
    _, program = load_kernel(str(src))
    inputs = random_inputs(program, 0)
    out = interpret(program, inputs)
    assert out["D"].tolist() == (inputs["X"] / 3.0).astype(np.float32).astype(np.float64).tolist()


def test_const_locals_are_numbers() -> None:
    """No statement, array or input for a constant; an integer one is a number in bounds and subscripts."""
    _, program = load_kernel(str(CONSTRUCTS / "const_locals.c"))
    assert set(program.arrays) == {"A", "B", "C", "tmp"}
    assert program.arrays["tmp"].shape == ("L",) and str(program.arrays["tmp"].extent) == "{ tmp[d0] : 0 <= d0 <= 6 }"
    assert [a.name for a in program.args] == ["A", "B", "C"]
    assert not program.params
    s0, s1, s2, s3 = program.statements
    assert str(s0.domain) == "{ S0[i] : 3 <= i <= 11 }"
    assert "A[-3 + i]" in str(s0.reads[0].relation)
    assert str(s1.expr) == "((C[i] * 7) + 3)"
    assert str(s2.expr) == "(A[j] / 1.5)"
    assert str(s3.domain) == "{ S3[i, j] : 0 <= i <= 2 and 0 <= j <= 6 }"
    assert "tmp[6 - j]" in str(s3.reads[0].relation)


def test_constant_initialized_before_scop_is_converted_to_its_type() -> None:
    """`float eps = 0.1f` reads as the float value; `int m = M - 2` bounds a loop; the host function of a
    hoisted expression spells `eps` as its exact value (it is not in scope there)."""
    _, program = load_kernel(str(CONSTRUCTS / "init_before_scop.c"))
    assert set(program.arrays) == {"A", "B"}
    assert str(program.statements[0].domain) == "{ S0[i] : 0 <= i <= 7 }"
    assert "0.10000000149011612f" in str(program.statements[0].expr)
    (h,) = program.hoisted
    assert h.text == "exp(alpha * eps)" and "eps" not in h.c_text and "0x1.99999a" in h.c_text


def test_kernel_without_pragmas_is_the_whole_function() -> None:
    kernel, program = load_kernel(str(CONSTRUCTS / "no_pragma.c"))
    assert kernel.name == "saxpy" and kernel.scop is None
    (stmt,) = program.statements
    assert stmt.text.startswith("Y[i] = ")


@pytest.mark.parametrize(
    "decl, read, what",
    [
        ("int n = 4;", "A[i] = n;", "a read of an int local"),
        ("const int n = 2 * 2;", "A[i] = A[i + n - 4];", "a const in a subscript"),
        ("double c = sqrt(2.0) * -1.5;", "A[i] = c;", "math on constants"),
        ("const long big = 1L << 40;", "A[i] = big % 1000;", "a 64-bit constant"),
        ("unsigned u = -1;", "A[i] = u / 2;", "wraparound at the conversion"),
    ],
)
def test_constant_local_values_match_gcc(tmp_path: Path, decl: str, read: str, what: str) -> None:
    src = tmp_path / "k.c"
    src.write_text(f"#include <math.h>\nvoid k(double A[8]) {{\n  {decl}\n#pragma scop\n"
                   f"  for (int i = 0; i < 4; i++)\n    {read}\n#pragma endscop\n}}\n")
    kernel, program = load_kernel(str(src))
    assert len(program.arrays) == 1, what
    inputs = random_inputs(program, 3)
    got = interpret(program, inputs)
    expected = {"A": np.array(inputs["A"], copy=True)}
    GccReference(kernel).run({**inputs, **expected})
    assert not compare(expected, got), what


def test_local_written_in_scop_is_not_a_constant(tmp_path: Path) -> None:
    """Initialized before the scop but written inside: still rejected, as before."""
    from hls.diagnostics import CompileError

    src = tmp_path / "k.c"
    src.write_text("void k(double A[8]) {\n  double s = 0.0;\n#pragma scop\n  for (int i = 0; i < 8; i++) {\n"
                   "    s += A[i];\n    A[i] = s;\n  }\n#pragma endscop\n}\n")
    with pytest.raises(CompileError, match=r"initialize `s` inside the `#pragma scop` region"):
        load_kernel(str(src))


def test_constant_tables_are_selections_not_arrays() -> None:
    """No array, statement or input for a table; a read at a varying index selects among the table's
    distinct values (the most frequent one without a comparison), at a constant index it is the
    number."""
    from hls.poly import expr as E

    _, program = load_kernel(str(CONSTRUCTS / "const_tables.c"))
    assert set(program.arrays) == {"in", "out", "code", "mapped", "signs"}
    assert len(program.statements) == 4
    filt = program.statements[1].expr
    assert isinstance(filt, E.Binary) and "k[" not in " ".join(a.array for a in program.statements[1].reads)
    assert sorted(a.array for a in program.statements[1].reads) == ["in", "out"]
    text = str(program.statements[2].expr)
    assert text.endswith("+ 12)")  # lut[3]
    assert text.count("?") == 4 + 3  # lut: 5 distinct values (7 most frequent); pad: 4 (0 most frequent)
    signs = str(program.statements[3].expr)
    assert signs.count("?") == 2 and "-0.0" in signs  # 0.0, -0.0 and 2.0 are three values


@pytest.mark.parametrize(
    "decl, use, message",
    [
        ("int t[3] = {1, 2, 3};", "t[i % 3] = A[i];", r"also assigned in the kernel"),
        ("const int t[70] = {1};", "A[i] = t[i];", r"70 elements, more than 64: pass it as an array argument"),
        ("const double t[4] = {1, 2, 3, 4};", "A[i] = t[i + 1];",
         r"index `i \+ 1` of constant table `t` leaves 0 .. 3"),
        ("const double t[2] = {1, B[0]};", "A[i] = t[i % 2];", r"`B\[0\]` is not a constant"),
        ("const double t[2][2] = {{1, 2}, {3, 4}};", "A[i] = t[i % 2];", r"has 2 dimension\(s\), indexed with 1"),
    ],
)
def test_bad_constant_tables_are_clear_errors(tmp_path: Path, capsys, decl: str, use: str, message: str) -> None:
    src = tmp_path / "k.c"
    src.write_text(f"void k(double A[4], double B[4]) {{\n  int i;\n  {decl}\n#pragma scop\n"
                   f"  for (i = 0; i < 4; i++)\n    {use}\n#pragma endscop\n}}\n")
    rc, _out, err = run_cli(["analyze", str(src)], capsys)
    assert rc == 2
    assert f"{src}:" in err and "error:" in err and "Traceback" not in err
    import re
    assert re.search(message, err), err


def test_expression_functions_are_inlined() -> None:
    """No call is left: each becomes its body over the converted arguments (`half(i + 1)` an integer
    division of a loop counter, `mix`'s float parameter a rounding of its double argument)."""
    _, program = load_kernel(str(CONSTRUCTS / "inline_helpers.c"))
    assert len(program.statements) == 3
    values = [str(s.expr) for s in program.statements]
    assert not any(name in v for v in values for name in ("sq", "clampf", "half", "mix"))
    assert "fmin" in values[2]  # a math call inside an inlined body stays a call


@pytest.mark.parametrize(
    "helpers, use, message",
    [
        ("static int f(int n) { return n < 1 ? 0 : f(n - 1); }", "A[i] = f(i);", r"`f` calls itself"),
        ("static double g(double x) { double y = x * 2; return y; }", "A[i] = g(A[i]);",
         r"only functions whose body is `return <expression>;`"),
        ("static double h(double x, double y) { return x + y; }", "A[i] = h(A[i]);",
         r"`h` takes 2 argument\(s\), called with 1"),
        ("static double s(const double *p) { return p[0]; }", "A[i] = s(A);", r"over scalar parameters"),
    ],
)
def test_functions_that_cannot_be_inlined_are_clear_errors(tmp_path: Path, capsys, helpers: str, use: str,
                                                          message: str) -> None:
    import re

    src = tmp_path / "k.c"
    src.write_text(f"{helpers}\nvoid k(double A[4]) {{\n  int i;\n#pragma scop\n"
                   f"  for (i = 0; i < 4; i++)\n    {use}\n#pragma endscop\n}}\n")
    rc, _out, err = run_cli(["analyze", str(src)], capsys)
    assert rc == 2 and "Traceback" not in err
    assert f"{src}:" in err and re.search(message, err), err


# --------------------------------------------------------------------- pointer parameters

_ROWS = """\
void rows(int n, int m, int q, const float *A, const float *T, float *B, float *S)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      for (int l = 0; l < q; l++)
        B[(i * m + j) * q + l] = A[i * m * q + j * q + l] * T[l * n + i];
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      S[i * m + j] = B[((i - 1) * m + j) * q] + B[((i + 1) * m + j + 1) * q - 1] - S[(i - 1) * m + j];
}
"""


def test_pointer_subscripts_are_delinearized(tmp_path: Path) -> None:
    """Strides that are products of parameters are the dimensions of row-major arrays: `A` is n x m x q,
    `T` read transposed is q x n, and `S`'s rows run to the last one the kernel touches."""
    src = tmp_path / "rows.c"
    src.write_text(_ROWS)
    _, program = load_kernel(str(src), bind=False)
    shapes = {name: program.arrays[name].shape for name in ("A", "T", "B", "S")}
    assert shapes == {"A": ("n", "m", "q"), "T": ("q", "n"), "B": ("n", "m", "q"), "S": ("n - 1", "m")}
    reads = {str(r.relation) for r in program.statements[0].reads}
    assert any("A[i, j, l]" in r for r in reads) and any("T[l, i]" in r for r in reads)
    stencil = " ".join(str(r.relation) for r in program.statements[1].reads)
    assert "B[-1 + i, j, 0]" in stencil and "B[1 + i, j, -1 + q]" in stencil  # `(.. + j + 1) * q - 1`


@pytest.mark.parametrize("sizes", [("4", "5", "3"), ("6", "3", "2")])
def test_pointer_kernel_matches_gcc(tmp_path: Path, capsys: pytest.CaptureFixture[str], sizes) -> None:
    src = tmp_path / "rows.c"
    src.write_text(_ROWS)
    params = [f"--param={k}={v}" for k, v in zip("nmq", sizes)]
    _sim(["sim", str(src), *params, "--dpn-only", "--seed", "2", "--json"], capsys)


def test_pointer_kernel_rtl_matches_gcc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Verilator's memories are the pointers' flat memory, as gcc's."""
    src = tmp_path / "rows.c"
    src.write_text(_ROWS)
    _sim(["sim", str(src), "--param", "n=5", "--param", "m=4", "--param", "q=3", "--seed", "3", "--json"], capsys)


def test_delinearization_past_a_row_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`A[i * m + j]` with j up to n - 1 > m - 1 leaves the row: C reads the next one, the model cannot."""
    src = tmp_path / "k.c"
    src.write_text("void k(int n, int m, float *A, float *B) {\n  for (int i = 0; i < n; i++)\n"
                   "    for (int j = 0; j < n; j++)\n      B[i * n + j] = A[i * m + j];\n}\n")
    rc, _out, err = run_cli(["analyze", str(src), "--param", "n=4", "--param", "m=3"], capsys)
    assert rc == 2 and f"{src}:4:" in err
    assert "reads outside `A[n][m]`: at i=0, j=3 it accesses [0, 3]" in err, err


def test_stride_chains() -> None:
    from hls.frontend.pointers import dimension_sizes, stride_chain

    assert stride_chain({("m",), ("m", "q")}) == [(), ("m",), ("m", "q")]
    assert stride_chain({("m", "q")}) == [(), ("m",), ("m", "q")]  # one dimension per parameter
    assert stride_chain({("m",), ("n",)}) is None
    assert stride_chain({("m", "m")}) == [(), ("m",), ("m", "m")]
    assert dimension_sizes([(), ("q",), ("m", "q")]) == ["m", "q"]


# --------------------------------------------------------------------- conditions on data


def test_conditions_on_data_are_selects() -> None:
    """Each test is evaluated once into a flag before its branches; a branch's assignments select between
    the new and the old value on the flag; a local declared in a branch is assigned plainly."""
    from hls.poly import expr as E

    _, program = load_kernel(str(CONSTRUCTS / "data_conditions.c"))
    by_text = {s.text: s for s in program.statements}
    flag = by_text["cond_1 = A[i] > m"]
    assert flag.write.array == "cond_1" and flag.expr.type.name == "int32_t"
    for text in ("m = A[i]", "at = i"):  # both read the flag, not `A[i] > m` after `m` changed
        st = by_text[text]
        assert isinstance(st.expr, E.Select), text
        assert "cond_1" in {r.array for r in st.reads} and "A" not in str(st.expr.cond), text
    clamp = by_text["B[i] = 2.0f"]  # nested: the outer flag and the inner one
    assert {"cond_2", "cond_3"} <= {r.array for r in clamp.reads}
    assert not isinstance(by_text["w = A[i] * 0.5f"].expr, E.Select)
    # the affine conjunct `i > 0` restricts the domain; the data one is the flag
    assert str(by_text["cond_4 = A[i] < A[i - 1]"].domain) == "{ S14[i] : 0 < i <= 15 }"


def test_conditions_on_data_in_verilator(capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(CONSTRUCTS / "data_conditions.c"), "--seed", "2", "--stall", "0.3", "--json"], capsys)


def test_a_parameter_hides_a_file_scope_constant(tmp_path: Path) -> None:
    src = tmp_path / "k.c"
    src.write_text("static const int n = 4;\nvoid k(int n, float A[16], float B[16]) {\n"
                   "  for (int i = 0; i < n; i++)\n    B[i] = A[i] + 1.0f;\n}\n")
    _, program = load_kernel(str(src), params={"n": 12})
    assert str(program.statements[0].domain) == "[n] -> { S0[i] : n = 12 and 0 <= i <= 11 }"


# --------------------------------------------------------------------- a returned value


def test_returned_value_is_an_output_of_one_element() -> None:
    """`return e;` is the last statement, writing `return_value[0]` at the function's result type; the
    gcc reference stores the function's result in the same array."""
    kernel, program = load_kernel(str(CONSTRUCTS / "returned_value.c"))
    arr = program.arrays["return_value"]
    assert arr.is_arg and arr.type.name == "float" and arr.bound_shape == (1,)
    assert [a.name for a in program.c_args][-1] == "return_value"
    last = program.statements[-1]
    assert last.text == "return_value[0] = s / 20" and last.write.array == "return_value"
    inputs = random_inputs(program, 7)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(kernel).run({**inputs, **expected})
    s = 0.0  # C's evaluation: the difference and its square in float, the sum in double
    for x, y in zip(inputs["a"], inputs["b"]):
        d = np.float32(x - y)
        s += float(np.float32(d * d))
    assert expected["return_value"].tolist() == [float(np.float32(s / 20))]


def test_returned_value_in_verilator(capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(CONSTRUCTS / "returned_value.c"), "--seed", "5", "--json"], capsys)


# --------------------------------------------------------------------- stage functions


def test_stage_functions_are_inlined_apart_from_the_caller() -> None:
    kernel, program = load_kernel(str(CONSTRUCTS / "stage_functions.c"))
    assert kernel.name == "top"
    iterators = [s.iterators for s in program.statements]
    assert ("i_blur1", "j_blur1") in iterators and ("i", "j") in iterators and ("i_rowsum3", "j_rowsum3") in iterators
    copy = next(s for s in program.statements if s.write.array == "k_scale2")
    assert copy.text == "k_scale2 = (float) (k * 2.0f)"  # assigned by `scale`: a local copy
    scaled = next(s for s in program.statements if s.iterators == ("i_scale2", "j_scale2"))
    assert str(scaled.domain) == "{ S4[i_scale2, j_scale2] : 0 <= i_scale2 <= 9 and 0 <= j_scale2 <= 9 }"  # n = H - 2


def test_stage_functions_in_verilator(capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(CONSTRUCTS / "stage_functions.c"), "--seed", "3", "--stall", "0.2", "--json"], capsys)


@pytest.mark.parametrize(
    "helpers, use, message",
    [
        ("static void f(double r[4]) { for (int j = 0; j < 4; j++) r[j] = 0; }", "f(A[0]);",
         r"pass a whole array by its name"),
        ("static void g(double r[4][4], int n) { if (n > 0) g(r, n - 1); }", "g(A, 2);", r"`g` calls itself"),
        ("static int h(double r[4][4]) { for (int j = 0; j < 4; j++) r[0][j] = 1; return 1; }", "h(A);",
         r"`void` functions called as statements"),
    ],
)
def test_stage_functions_that_cannot_be_inlined(tmp_path: Path, capsys, helpers: str, use: str, message: str) -> None:
    import re

    src = tmp_path / "k.c"
    src.write_text(f"{helpers}\nvoid k(double A[4][4]) {{\n#pragma scop\n  {use}\n#pragma endscop\n}}\n")
    rc, _out, err = run_cli(["analyze", str(src)], capsys)
    assert rc == 2 and "Traceback" not in err
    assert f"{src}:" in err and re.search(message, err), err


def test_break_sets_a_flag_that_guards_the_loop() -> None:
    """The flag is cleared before its loop (per row for the inner search), set by the break's branch,
    and read by every statement of the loop body."""
    from hls.poly import expr as E

    _, program = load_kernel(str(CONSTRUCTS / "break_search.c"))
    by_text = {s.text: s for s in program.statements}
    clear = [s for s in program.statements if s.text.endswith(" = 0") and s.write.array.startswith("done")]
    assert [s.iterators for s in clear] == [(), ("i",)]  # one flag for the search, one per row
    inner_flag = clear[1].write.array
    counted = by_text["count[i] += K[i][j] & 1"]
    assert by_text["done_1 = 1"].write.array == inner_flag
    assert isinstance(counted.expr, E.Select) and inner_flag in {r.array for r in counted.reads}


def test_break_search_in_verilator(capsys: pytest.CaptureFixture[str]) -> None:
    _sim(["sim", str(CONSTRUCTS / "break_search.c"), "--seed", "2", "--stall", "0.3", "--json"], capsys)
