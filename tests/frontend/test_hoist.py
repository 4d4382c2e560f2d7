"""Parameter-only subexpressions are hoisted: computed once by gcc on the host, fed to the top as inputs.

The frontend must hoist exactly the maximal non-trivial subtrees that read only scalar arguments,
structure parameters and constants; their values must be gcc's own (bit for bit); functions no
datapath implements stay errors where they depend on loop counters or array data."""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from hls.frontend import load_kernel
from hls.poly import expr as E
from hls.poly.interpret import interpret
from sim.gcc_ref import GccReference
from sim.hoisted import host_source, hoisted_values
from sim.inputs import compare, random_inputs
from tests.kernels import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hoisted-exp.c"
EXAMPLE_F = ROOT / "examples" / "hoisted-powf.c"

KERNEL = """\
#include <math.h>
typedef double real;
void k(int n, double alpha, double beta, int s, real A[8], real B[8], real C[8])
{
#pragma scop
  for (int i = 0; i < 8; i++) {
    B[i] = A[i] * exp(-alpha) + alpha + (alpha * beta + 1.0) * (real) i + sqrt(A[i] * beta) + 2.0 * 3.0;
    C[i] = -alpha * B[i] + exp(-alpha) + A[i] / (real) (s * 3 + n);
  }
#pragma endscop
}
"""


def _load(tmp_path: Path, text: str, name: str = "k.c", **kw):
    src = tmp_path / name
    src.write_text(text)
    return load_kernel(str(src), **kw)


def _scalar_refs(e: E.Expr) -> list[str]:
    return [x.name for x in E.walk(e) if isinstance(x, E.ScalarArg)]


def test_exactly_the_maximal_parameter_only_subtrees(tmp_path):
    _, p = _load(tmp_path, KERNEL)
    assert [(h.name, h.text, h.type.name) for h in p.hoisted] == [
        ("h0", "exp(-alpha)", "double"),
        ("h1", "(alpha * beta) + 1.0", "double"),
        ("h2", "-alpha", "double"),
        ("h3", "(real) ((s * 3) + n)", "double"),
    ]
    # casts are spelled with canonical types for the host C; the inputs are what each one reads
    assert p.hoisted[3].c_text == "(double) ((s * 3) + n)"
    assert [h.inputs for h in p.hoisted] == [("alpha",), ("alpha", "beta"), ("alpha",), ("n", "s")]
    s0, s1 = p.statements
    # `alpha` alone, `beta` under sqrt(A[i] * beta), `(real) i` and constant-only `2.0 * 3.0` stay in the datapath
    assert _scalar_refs(s0.expr) == ["h0", "alpha", "h1", "beta"]
    assert any(isinstance(x, E.Binary) and x.op == "*" and x.lhs == E.Const(2.0, x.type) for x in E.walk(s0.expr))
    assert any(isinstance(x, E.Call) and x.func == "sqrt" for x in E.walk(s0.expr))
    assert any(isinstance(x, E.AffineValue) for x in E.walk(s0.expr))  # (real) i
    # deduplicated: the second exp(-alpha) is h0 again
    assert _scalar_refs(s1.expr) == ["h2", "h0", "h3"]
    # hoisted scalars are scalar arguments of the hardware, but not of the C function
    hoisted = [a for a in p.args if a.hoisted]
    assert [(a.name, a.kind) for a in hoisted] == [("h0", "scalar"), ("h1", "scalar"), ("h2", "scalar"),
                                                     ("h3", "scalar")]
    assert [a.name for a in p.c_args] == ["n", "alpha", "beta", "s", "A", "B", "C"]
    assert any("`exp(-alpha)`" in n and "arg_h0" in n and "on the host" in n for n in p.notes)


def test_names_are_deterministic_and_avoid_kernel_names(tmp_path):
    text = KERNEL.replace("real C[8])", "real C[8], double h0)").replace("+ alpha +", "+ h0 +")
    _, a = _load(tmp_path, text, "a.c")
    _, b = _load(tmp_path, text, "b.c")
    assert [(h.name, h.c_text) for h in a.hoisted] == [(h.name, h.c_text) for h in b.hoisted]
    assert a.hoisted[0].name != "h0" and "h0" not in [h.name for h in a.hoisted]
    assert host_source(a) == host_source(b).replace("b.c", "a.c")


def test_no_hoisting_without_parameter_only_subtrees(tmp_path):
    _, p = _load(tmp_path, "void k(double alpha, double A[8], double B[8]) {\n#pragma scop\n"
                           " for (int i = 0; i < 8; i++)\n  B[i] = alpha * A[i] + 1.0 * 2.0;\n#pragma endscop\n}\n")
    assert p.hoisted == () and all(not a.hoisted for a in p.args) and p.notes == ()


def test_host_values_are_gccs(tmp_path):
    """exp/pow by gcc and libm: the hoisted values equal a direct C evaluation, and differ from a
    slightly wrong value (so the comparisons below can fail)."""
    _, p = _load(tmp_path, KERNEL)
    v = hoisted_values(p, {"alpha": 0.3, "beta": -1.25, "s": 5, "n": 8})
    assert struct.pack("<d", v["h0"]) == struct.pack("<d", math.exp(-0.3))  # CPython's math.exp is libm's
    assert v["h1"] == 0.3 * -1.25 + 1.0 and v["h2"] == -0.3 and v["h3"] == 23.0


@pytest.mark.parametrize("path", [EXAMPLE, EXAMPLE_F], ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [0, 3])
def test_interpreter_matches_gcc_and_detects_a_wrong_hoisted_value(path, seed):
    kernel, p = load_kernel(str(path), params={})
    assert p.hoisted
    inputs = random_inputs(p, seed)
    assert set(inputs) == {a.name for a in p.c_args}  # what the C function takes
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(kernel).run({**inputs, **expected})
    got = interpret(p, inputs)
    assert not compare(expected, got)
    assert any(not np.array_equal(inputs[k], got[k]) for k in got)
    # a few ulps off in the first hoisted value (one ulp may round away): the outputs are no longer gcc's
    h0 = p.hoisted[0]
    wrong = dict(inputs)
    wrong[h0.name] = h0.type.dtype.type(inputs[h0.name]) * h0.type.dtype.type(1 + 2.0 ** -20)
    assert compare(expected, interpret(p, wrong))


def test_integer_hoisting_matches_gcc(tmp_path):
    kernel, p = _load(tmp_path, "#include <stdint.h>\nvoid k(int s, uint8_t t, int32_t A[16], int32_t B[16]) {\n"
                                "#pragma scop\n for (int i = 0; i < 16; i++)\n"
                                "  B[i] = A[i] * (s * 3 + 1) + (t << 2) + (s > 0 ? A[i] : -A[i]);\n#pragma endscop\n}\n")
    assert [h.text for h in p.hoisted] == ["(s * 3) + 1", "t << 2", "s > 0"]
    assert [h.type.name for h in p.hoisted] == ["int32_t", "int32_t", "int32_t"]
    for seed in range(3):
        inputs = random_inputs(p, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(kernel).run({**inputs, **expected})
        assert not compare(expected, interpret(p, dict(inputs)))  # a plain dict: values computed on demand


def test_analyze_prints_hoisted_scalars(capsys):
    rc, out, err = run_cli(["analyze", str(EXAMPLE)], capsys)
    assert rc == 0, err
    assert "hoisted scalars (computed once on the host before start, top inputs):" in out
    assert re.search(r"double h0 = exp\(-alpha\)\s+// .*hoisted-exp.c:13:19, port arg_h0", out)
    assert re.search(r"double h1 = \(alpha \* beta\) \+ 1\.0\s+// .*hoisted-exp.c:15:32, port arg_h1", out)
    assert "value:    (x[i] * h0)" in out
    assert "is computed once on the host before start: top input arg_h0" in out
    rc, out, _ = run_cli(["analyze", "--json", str(EXAMPLE_F)], capsys)
    data = json.loads(out)
    assert [h["text"] for h in data["hoisted"]] == ["expf(-alpha)", "sqrtf(2.0f)", "powf(fabsf(alpha), 2.5f)",
                                                    "(real) (k + 1)", "(alpha > 0.0f) ? (alpha) : (-alpha)"]
    assert "h0" not in [s["name"] for s in data["scalars"]]


@pytest.mark.parametrize("path", [EXAMPLE, EXAMPLE_F], ids=lambda p: p.stem)
def test_dpn_sim_is_bit_exact(path, capsys):
    rc, out, err = run_cli(["sim", str(path), "--dpn-only", "--seed", "1"], capsys)
    assert rc == 0, out + err
    assert "PASS" in out and " 0 mismatches" in out


BAD = [
    ("array", "C[i] = 2.0 * exp(A[i]);", "exp(A[i])", "A[i]"),
    ("counter", "C[i] = A[i] * exp(alpha * i);", "exp(alpha * i)", "i"),
    ("local", "{ double t = A[i]; C[i] = powf(t, 2.0f); }", "powf(t, 2.0f)", "t"),
]


@pytest.mark.parametrize("what,stmt,at,dep", BAD, ids=[b[0] for b in BAD])
def test_host_only_call_on_non_parameters_is_an_error(what, stmt, at, dep, tmp_path, capsys):
    src = tmp_path / f"{what}.c"
    src.write_text("#include <math.h>\nvoid k(double alpha, double A[10], double C[10])\n{\n#pragma scop\n"
                   f"  for (int i = 0; i < 10; i++)\n    {stmt}\n#pragma endscop\n}}\n")
    rc, out, err = run_cli(["analyze", str(src)], capsys)
    assert rc == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1
    m = re.match(rf"{re.escape(str(src))}:6:(\d+): error: (.*)", lines[0])
    assert m, lines[0]
    assert src.read_text().splitlines()[5][int(m.group(1)) - 1:].startswith(at)
    assert re.search(rf"unknown function `(exp|powf)` in the datapath.*depends on `{re.escape(dep)}`", m.group(2))


def test_bad_input_corpus_exp_of_array(capsys):
    path = ROOT / "tests" / "bad_inputs" / "unknown_call_exp.c"
    rc, _, err = run_cli(["sim", str(path), "--dpn-only"], capsys)
    assert rc == 2
    assert re.fullmatch(rf"{re.escape(str(path))}:9:18: error: call to unknown function `exp`.*\n", err, re.S)
