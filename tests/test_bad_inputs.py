"""Hostile inputs: every user error is one clean `file:line:col: error: why` line and exit status 2.

Each case of `CASES` names a small C file of `tests/bad_inputs/` holding exactly one problem (or an
input built on the fly, or a bad command line), the command that must reject it, and where a good
compiler would point: the offending subscript, call, statement keyword or parameter declaration.
The cases run in-process through `hls.cli.main` (fast); `test_entry_point_subprocess` checks one
of them through the real `dpn-synth` executable.

Cases that dpn-synth gets wrong today (traceback, exit 3, wrong or missing location, unhelpful
message, accepting what it must reject) are `xfail(strict=True)` with the observed behaviour as the
reason: the expectation stays the right one, and the test turns red when the bug is fixed so the
mark can be removed.

Three kinds of location:
  "source"  `<file>:<line>:<col>: error: <why>`     (a construct in the user's file)
  "file"    `<file>: error: <why>`                  (no construct to point at: unreadable, no kernel)
  "option"  `dpn-synth: error: <why>` or `<path from the command line>: error: <why>`
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from hls.cli import main

BAD = Path(__file__).resolve().parent / "bad_inputs"


@dataclass(frozen=True)
class Case:
    id: str
    file: Optional[str]  # under tests/bad_inputs/; None when `make` builds the input in tmp_path
    cmd: tuple[str, ...] = ("analyze",)
    args: tuple[str, ...] = ()  # "{tmp}" is replaced by the test's tmp_path
    line: Optional[int] = None
    col: Optional[int] = None
    at: Optional[str] = None  # the source text starting at line:col (checks this table itself)
    msg: str = ".+"  # regex the message must match (re.search)
    where: str = "source"  # "source" | "file" | "option"
    err_file: Optional[str] = None  # file named by the location when it is not the input (a header)
    alt: tuple[tuple[int, int], ...] = ()  # other acceptable (line, col) where the choice is debatable
    make: Optional[Callable[[Path], Path]] = field(default=None, compare=False)
    xfail: Optional[str] = None


def _binary_garbage(tmp: Path) -> Path:
    data = bytearray(random.Random(20240613).randbytes(2048))
    data[100] = 0  # at least one NUL
    path = tmp / "garbage.c"
    path.write_bytes(bytes(data))
    return path


def _deep_nest_1000(tmp: Path) -> Path:
    depth = 1000
    lines = ["void kernel(double A[2])", "{", "#pragma scop"]
    lines += [f"for (int i{k} = 0; i{k} < 2; i{k}++)" for k in range(depth)]
    lines += ["A[0] = 1.0;", "#pragma endscop", "}"]
    path = tmp / "deep_nest_1000.c"
    path.write_text("\n".join(lines) + "\n")
    return path


def _missing(tmp: Path) -> Path:
    return tmp / "does_not_exist.c"


def _directory(tmp: Path) -> Path:
    d = tmp / "a_directory.c"
    d.mkdir()
    return d


SIM = ("sim", "--dpn-only")

CASES: list[Case] = [
    # ---------------------------------------------------------------- non-affine code
    Case("indirect_index", "indirect_index.c", line=7, col=14, at="B[i]", msg=r"not affine.*array data"),
    Case("nonaffine_index", "nonaffine_index.c", line=8, col=19, at="i * j", msg=r"not affine.*product"),
    Case("quadratic_bound", "quadratic_bound.c", line=7, col=21, at="i * i", msg=r"not affine.*product"),
    Case("sizeof_parameter", "sizeof_parameter.c", line=7, col=12, at="sizeof(A)",
         msg=r"an array parameter is a pointer"),
    Case("global_variable", "global_variable.c", line=8, col=19, at="n;", msg=r"`n` is a global variable"),
    Case("div_by_zero_condition", "div_by_zero_condition.c", line=7, col=9, at="i / 0", msg=r"division by zero"),
    Case("data_dependent_bound", "data_dependent_bound.c", line=7, col=21, at="K[i]",
         msg=r"not affine.*array data"),
    Case("div_by_zero_index", "div_by_zero_index.c", line=7, col=14, at="i / 0", msg=r"(?i)zero"),
    Case("increment_in_index", "increment_in_index.c", line=8, col=14, at="j++", msg=r"not affine|increment"),
    Case("undefined_size_macro", "undefined_size_macro.c", line=2, col=22, at="N]",
         msg=r"^`N` is undeclared \(hint: define it with -DN=VALUE\)$"),
    Case("undeclared_bound", "undeclared_bound.c", line=6, col=19, at="M;",
         msg=r"^`M` is undeclared \(hint: define it with -DM=VALUE\)$"),
    # ---------------------------------------------------------------- control flow
    Case("while_loop", "while_loop.c", line=7, col=3, at="while", msg=r"`while`"),
    Case("do_while", "do_while.c", line=7, col=5, at="do {", msg=r"while"),
    Case("goto", "goto.c", line=8, col=7, at="goto", msg=r"`goto`"),
    Case("break_nested", "break_nested.c", line=9, col=9, at="break",
         msg=r"`break` is supported only ending an `if` directly in the loop body"),
    Case("continue_nested", "continue_nested.c", line=10, col=9, at="continue",
         msg=r"`continue` is supported only ending an `if` directly in the loop body"),
    Case("return_in_scop", "return_in_scop.c", line=9, col=7, at="return", msg=r"`return`"),
    Case("switch", "switch.c", line=7, col=5, at="switch", msg=r"`switch`"),
    Case("no_loop_condition", "no_loop_condition.c", line=6, col=3, at="for", msg=r"condition"),
    Case("param_step", "param_step.c", line=6, col=23, at="i += s", msg=r"step"),
    Case("float_counter", "float_counter.c", line=5, col=15, at="x = 0.0", msg=r"integer"),
    Case("nonmonotone_and", "nonmonotone_and.c", line=6, col=15, at="i * 1 < n", msg=r"monoton"),
    Case("nonmonotone_ne", "nonmonotone_ne.c", line=6, col=15, at="i != 7",
         msg=r"(?i)monoton|unbounded|terminat|never|infinite"),
    Case("unsigned_wrap", "unsigned_wrap.c", line=6, col=15, at="i >= 0",
         msg=r"(?i)unsigned|always|never|terminat|infinite|wrap"),
    Case("char_counter_overflow", "char_counter_overflow.c", line=6, col=15, at="c < 200",
         msg=r"(?i)char|range|never|always|overflow|wrap|terminat|infinite"),
    Case("assign_counter", "assign_counter.c", line=8, col=5, at="i = i + 1", msg=r"loop counter `i`"),
    Case("missing_return", "missing_return.c", line=2, col=5, at="kernel(", msg=r"returns a value: end its scop with"),
    Case("return_value_outside", "return_value_outside.c", line=9, col=3, at="return i", msg=r"outside"),
    # ---------------------------------------------------------------- pointers, calls, types
    Case("pointer_arith", "pointer_arith.c", line=7, col=12, at="*(A + i)", msg=r"(?i)pointer|dereference",
         xfail="location 7:14 is the operand `A`, not the `*` of `*(A + i)` (pycparser puts a unary "
               "operator at its operand)"),
    Case("pointer_to_pointer", "pointer_to_pointer.c", line=2, col=21, at="*A",
         msg=r"only an array parameter may be a pointer", alt=((2, 22),)),
    Case("local_pointer", "local_pointer.c", line=4, col=10, at="*p",
         msg=r"local `p`: a pointer here is not supported"),
    Case("pointer_strides", "pointer_strides.c", line=8, col=24, at="i * m + j * n",
         msg=r"strides of pointer `A` do not nest"),
    Case("pointer_subscripts", "pointer_subscripts.c", line=7, col=12, at="A[i][1]",
         msg=r"`A` is a pointer: index it with one"),
    Case("unknown_call", "unknown_call.c", line=9, col=12, at="foo(i)", msg=r"unknown function `foo`"),
    Case("unknown_call_exp", "unknown_call_exp.c", line=9, col=18, at="exp(A[i])", msg=r"unknown function `exp`"),
    Case("struct_param", "struct_param.c", line=6, col=27, at="k,", msg=r"struct"),
    Case("long_double", "long_double.c", line=2, col=25, at="alpha", msg=r"long double"),
    Case("complex_type", "complex_type.c", line=2, col=29, at="z,", msg=r"(?i)complex"),
    Case("array_decay", "array_decay.c", line=7, col=12, at="A[i]", msg=r"2 dimension.*1 subscript"),
    Case("too_many_subscripts", "too_many_subscripts.c", line=7, col=12, at="A[i][0]", msg=r"1 dimension.*2 subscript"),
    Case("unsized_inner", "unsized_inner.c", line=2, col=20, at="A[][]",
         msg=r"size on every dimension after the first"),
    Case("negative_size", "negative_size.c", line=2, col=20, at="A[-4]", msg=r"(?i)negative|size",
         alt=((2, 23),)),
    Case("knr_definition", "knr_definition.c", line=2, col=13, at="A)",
         msg=r"(?i)old.style|K&R|identifier list|prototype|parameter"),
    Case("global_var", "global_var.c", line=9, col=19, at="scale", msg=r"`scale`"),
    Case("undeclared_var", "undeclared_var.c", line=7, col=12, at="x;", msg=r"^`x` is undeclared$"),
    Case("statement_expr", "statement_expr.c", line=7, col=12, at="({", msg=r"statement expression"),
    # ---------------------------------------------------------------- bounds and data
    Case("oob_constant", "oob_constant.c", line=9, col=12, at="A[i + 1]", msg=r"reads outside `A\[10\]`.*\[10\]"),
    Case("oob_vla", "oob_vla.c", line=7, col=12, at="A[i + 1]", msg=r"reads outside `A\[n\]`"),
    Case("param_oob", "param_oob.c", cmd=SIM, args=("--param", "n=20"), line=7, col=5, at="A[i]",
         msg=r"writes outside `A\[10\]`.*n=20"),
    Case("uninit_local", "uninit_local.c", line=8, col=19, at="s;", msg=r"before it is written"),
    Case("uninit_local_array", "uninit_local_array.c", line=8, col=12, at="t[9 - i]", msg=r"before it is written"),
    Case("write_scalar_param", "write_scalar_param.c", line=7, col=5, at="alpha =", msg=r"read-only"),
    Case("write_int_param", "write_int_param.c", line=6, col=3, at="n = 5", msg=r"read-only"),
    Case("init_nonconstant", "init_nonconstant.c", line=4, col=10, at="first = A[0]",
         msg=r"initialize `first` inside the `#pragma scop` region"),
    Case("init_written_in_scop", "init_written_in_scop.c", line=4, col=10, at="sum = 0.0",
         msg=r"initialize `sum` inside the `#pragma scop` region"),
    Case("assign_in_expression", "assign_in_expression.c", line=7, col=13, at="B[i] = 1.0",
         msg=r"assignments inside expressions"),
    Case("const_div_by_zero", "const_div_by_zero.c", line=4, col=20, at="10 / (5 - 5)",
         msg=r"division by zero in the initializer"),
    # ---------------------------------------------------------------- parameters needing values
    Case("param_needed_sim", "param_needed.c", cmd=SIM, line=2, col=17, at="n,", msg=r"--param n="),
    Case("param_needed_compile", "param_needed.c", cmd=("compile",), args=("-o", "{tmp}/out"), line=2, col=17,
         at="n,", msg=r"--param n="),
    Case("param_too_big", "kernel_ok.c", cmd=SIM, args=("--param", "n=99999999999"), line=2, col=17, at="n,",
         msg=r"does not fit"),
    Case("param_negative", "kernel_ok.c", cmd=SIM, args=("--param", "n=-5"), line=2, col=17, at="n,",
         msg=r"(?i)-5|negative", alt=((2, 27),)),
    # ---------------------------------------------------------------- files, preprocessing, syntax
    Case("syntax_error", "syntax_error.c", line=7, col=19, at=";", msg=r"syntax error"),
    Case("header_syntax_error", "include_bad_header.c", line=3, col=23, at="real_t2", msg=r"syntax error",
         err_file="bad_header.h"),
    Case("unterminated_comment", "unterminated_comment.c", line=7, col=17, at="/*", msg=r"unterminated comment"),
    Case("error_directive", "error_directive.c", line=3, col=2, at="error", msg=r"#error"),
    Case("missing_header", "missing_header.c", line=2, col=10, at='"no_such_header.h"',
         msg=r"no_such_header\.h.*No such file"),
    Case("empty_file", "empty.c", line=1, col=1, msg=r"empty"),
    Case("invalid_utf8", "invalid_utf8.c", line=5, col=9, at="\xe9", msg=r"(?i)utf-?8"),
    Case("binary_garbage", None, make=_binary_garbage, line=1, col=1, msg=r"NUL|not a C source"),
    Case("deep_nest_1000", None, make=_deep_nest_1000, line=68, col=1, at="for (int i64", msg=r"nested more than 64"),
    Case("no_kernel", "no_kernel.c", where="file", msg=r"no kernel found.*scale, shift"),
    Case("two_kernels", "two_kernels.c", line=11, col=6, at="shift", msg=r"several functions"),
    Case("scop_without_endscop", "scop_without_endscop.c", line=5, col=9, at="scop", msg=r"endscop"),
    Case("function_not_found", "kernel_ok.c", args=("--function", "nosuch"), where="file",
         msg=r"no function named 'nosuch'"),
    Case("function_only_declared", "unknown_call.c", args=("--function", "foo"), line=2, col=8, at="foo(int)",
         msg=r"only declared"),
    Case("nonexistent_file", None, make=_missing, where="file", msg=r"no such file"),
    Case("directory", None, make=_directory, where="file", msg=r"directory"),
    # ---------------------------------------------------------------- command-line options
    Case("param_twice", "kernel_ok.c", cmd=SIM, args=("--param", "n=3", "--param", "n=4"), where="option",
         msg=r"twice"),
    Case("param_unknown_sim", "kernel_ok.c", cmd=SIM, args=("--param", "q=3"), where="option", msg=r"`?q`?"),
    Case("param_unknown_analyze", "kernel_ok.c", args=("--param", "q=3"), where="option", msg=r"`?q`?"),
    Case("param_malformed", "kernel_ok.c", cmd=SIM, args=("--param", "n"), where="option", msg=r"NAME=VALUE"),
    Case("param_not_int", "kernel_ok.c", cmd=SIM, args=("--param", "n=abc"), where="option", msg=r"not an integer"),
    Case("stall_out_of_range", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--stall", "2"), where="option",
         msg=r"--stall"),
    Case("stall_not_a_number", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--stall", "abc"), where="option",
         msg=r"--stall"),
    Case("dump_after_unknown", "kernel_ok.c", args=("--dump-after", "bogus"), where="option", msg=r"unknown pass"),
    Case("tile_malformed", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--tile", "4,x"), where="option",
         msg=r"--tile"),
    Case("tile_zero", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--tile", "0"), where="option",
         msg=r"positive"),
    Case("parallel_unsupported", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--tile", "none", "--parallel", "2"), where="option",
         msg=r"--parallel"),
    Case("bad_define", "kernel_ok.c", args=("-D", "=3"), where="option", msg=r"macro"),
    Case("directives_missing", "kernel_ok.c", cmd=SIM, args=("--param", "n=4", "--directives", "{tmp}/none.txt"),
         where="option", msg=r"(?i)directives|no such file|not implemented"),
    Case("output_under_a_file", "kernel_ok.c", cmd=("compile",), args=("--param", "n=4", "-o", "{tmp}/plain/out"),
         where="option", msg=r"(?i)output|directory|exists|cannot"),
]


def _params() -> list:
    out = []
    for c in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def _input_path(case: Case, tmp: Path) -> Path:
    if case.make is not None:
        return case.make(tmp)
    return BAD / case.file


def _argv(case: Case, path: Path, tmp: Path) -> list[str]:
    if case.id == "output_under_a_file":
        (tmp / "plain").write_text("not a directory\n")
    args = [a.replace("{tmp}", str(tmp)) for a in case.args]
    return [case.cmd[0], str(path), *case.cmd[1:], *args]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse errors
        rc = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return rc, out, err


def check_error(case: Case, argv: list[str], path: Path, rc: int, out: str, err: str) -> None:
    """The contract: exit 2, exactly one stderr line `<where>: error: <why>`, no traceback."""
    assert "Traceback" not in out + err, f"traceback printed:\n{err}"
    assert "internal error" not in err, f"internal error instead of a user error:\n{err}"
    assert rc == 2, f"exit status {rc}, expected 2; stderr:\n{err}\nstdout:\n{out[:2000]}"
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), f"expected exactly one stderr line, got {len(lines)}:\n{err}"
    line = lines[0]
    if case.where == "source":
        loc_file = str(BAD / case.err_file) if case.err_file else str(path)
        m = re.fullmatch(re.escape(loc_file) + r":(\d+):(\d+): error: (.+)", line)
        assert m, f"expected `{loc_file}:LINE:COL: error: ...`, got:\n{line}"
        got = (int(m.group(1)), int(m.group(2)))
        want = [(case.line, case.col), *case.alt]
        assert got in want, f"location {got[0]}:{got[1]}, expected {case.line}:{case.col}: {line}"
        message = m.group(3)
    elif case.where == "file":
        m = re.fullmatch(re.escape(str(path)) + r": error: (.+)", line)
        assert m, f"expected `{path}: error: ...`, got:\n{line}"
        message = m.group(1)
    else:
        prefixes = ["dpn-synth"] + [a for a in argv[1:] if "/" in a]
        m = re.fullmatch("(?:" + "|".join(map(re.escape, prefixes)) + r"): error: (.+)", line)
        assert m, f"expected `dpn-synth: error: ...` (or `<path>: error: ...`), got:\n{line}"
        message = m.group(1)
    assert re.search(case.msg, message), f"message does not match /{case.msg}/: {message}"


@pytest.mark.parametrize("case", _params())
def test_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _input_path(case, tmp_path)
    argv = _argv(case, path, tmp_path)
    rc, out, err = run_cli(argv, capsys)
    check_error(case, argv, path, rc, out, err)


@pytest.mark.parametrize("case", [c for c in CASES if c.at is not None and c.file is not None], ids=lambda c: c.id)
def test_table_points_at_the_construct(case: Case) -> None:
    """The table itself: the expected line:col of each case is where the quoted construct starts."""
    src = BAD / (case.err_file or case.file)
    lines = src.read_bytes().decode("latin-1").splitlines()  # byte columns, like the compiler's
    text = lines[case.line - 1]
    assert text[case.col - 1:].startswith(case.at), f"{src.name}:{case.line}:{case.col} is at {text[case.col - 1:]!r}"


def test_corpus_is_complete() -> None:
    """Every C file of the corpus is used by a case (or by one of the acceptance tests below)."""
    used = {c.file for c in CASES} | {c.err_file for c in CASES} | {
        "deep_nest_40.c", "deep_nest_40_reduction.c", "long_expression.c"}
    files = {p.name for p in BAD.iterdir() if p.suffix in (".c", ".h")}
    assert files <= used, f"unused corpus files: {sorted(files - used)}"
    assert len({c.file for c in CASES if c.file}) >= 25


# -------------------------------------------------------------------- hostile but legal: must be accepted
def test_deep_nest_40_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    """Decision: a 40-deep affine nest is legal and `analyze` (symbolic) accepts it."""
    rc, out, err = run_cli(["analyze", str(BAD / "deep_nest_40.c")], capsys)
    assert "Traceback" not in out + err
    assert rc == 0, err
    assert err == ""
    assert "S0[i0, i1," in out


@pytest.mark.xfail(strict=True, reason="`analyze` runs for hours (exact dataflow of the 40-deep reduction, "
                                       "exponential in the depth: 1.8 s at depth 16, 7 s at depth 20)")
def test_deep_nest_40_reduction_terminates() -> None:
    """Same decision for a reduction: `analyze` must finish promptly, accepting it (or rejecting it cleanly).

    Run as a subprocess: a hang inside isl cannot be interrupted in-process.
    """
    try:
        proc = subprocess.run([sys.executable, "-m", "hls.cli", "analyze", str(BAD / "deep_nest_40_reduction.c")],
                              capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("`analyze` did not finish within 15 s")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 2), proc.stderr
    if proc.returncode == 2:
        assert re.fullmatch(re.escape(str(BAD / "deep_nest_40_reduction.c")) + r"(:\d+:\d+)?: error: .+\n",
                            proc.stderr), proc.stderr


def test_long_expression_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    """Decision: a 320-term affine sum (an unrolled reduction) is legal C and must be accepted."""
    rc, out, err = run_cli(["analyze", str(BAD / "long_expression.c")], capsys)
    assert "Traceback" not in out + err
    assert rc == 0, err


def test_param_zero_no_crash(capsys: pytest.CaptureFixture[str]) -> None:
    """`--param n=0`: no statement runs.  Accepting it (nothing to do) or one clean error are both fine."""
    path = BAD / "kernel_ok.c"
    rc, out, err = run_cli(["sim", str(path), "--dpn-only", "--param", "n=0"], capsys)
    assert "Traceback" not in out + err
    assert rc in (0, 2), err
    if rc == 2:
        assert re.fullmatch(rf"(?:dpn-synth|{re.escape(str(path))}(:\d+:\d+)?): error: .+\n", err), err


# -------------------------------------------------------------------- the real executable
def _entry_point() -> Optional[str]:
    beside = Path(sys.executable).parent / "dpn-synth"
    return str(beside) if beside.exists() else shutil.which("dpn-synth")


def test_entry_point_subprocess(tmp_path: Path) -> None:
    """One case through the installed `dpn-synth` script: same contract, real exit status."""
    exe = _entry_point()
    if exe is None:
        pytest.skip("dpn-synth is not installed")
    case = next(c for c in CASES if c.id == "indirect_index")
    path = _input_path(case, tmp_path)
    argv = _argv(case, path, tmp_path)
    proc = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=120)
    check_error(case, argv, path, proc.returncode, proc.stdout, proc.stderr)
