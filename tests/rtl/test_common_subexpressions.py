"""Equal subexpressions of a statement are built once (`datapath.expression_key`): a helper inlined
three times, or `(a - b) * (a - b)`, gets one operator per distinct computation, with the same
pipeline depth, and stays bit-exact."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hls.poly import expr as E
from hls.poly.types import FLOAT
from hls.rtl import datapath
from hls.rtl.generate import operator_library
from tests.kernels import run_cli


def _modules(e: E.Expr, ports: dict[str, str]) -> tuple[Counter, int]:
    dp, res = datapath.build(e, ports, {}, lambda v: "0", None, operator_library())
    dp.use(res, dp.depth)
    return Counter(spec.module for spec in dp.operators), dp.depth


def test_equal_subexpressions_share_one_operator() -> None:
    lib = operator_library()
    a, b = E.ArrayRead("a", FLOAT), E.ArrayRead("b", FLOAT)
    d1, d2 = E.Binary("-", a, b, FLOAT), E.Binary("-", a, b, FLOAT)  # equal, distinct objects
    sq = E.Binary("*", d1, d2, FLOAT)
    mods, depth = _modules(E.Binary("+", sq, E.Binary("-", a, b, FLOAT), FLOAT), {"a": "pa", "b": "pb"})
    assert mods == Counter({lib["fsub.f32"].module: 1, lib["fmul.f32"].module: 1, lib["fadd.f32"].module: 1})
    # the depth of one subtraction, one product and one sum, as without sharing
    alone, alone_depth = _modules(E.Binary("+", E.Binary("*", d1, d2, FLOAT), E.Const(1.0, FLOAT), FLOAT),
                                  {"a": "pa", "b": "pb"})
    assert depth == alone_depth


def test_constants_equal_as_numbers_but_not_as_values_stay_apart() -> None:
    """-0.0 == 0.0 in Python; as IEEE operands they differ (x + -0.0 keeps x = -0.0, x + 0.0 does not)."""
    a = E.ArrayRead("a", FLOAT)
    e = E.Binary("*", E.Binary("+", a, E.Const(-0.0, FLOAT), FLOAT), E.Binary("+", a, E.Const(0.0, FLOAT), FLOAT),
                 FLOAT)
    mods, _ = _modules(e, {"a": "pa"})
    assert mods[operator_library()["fadd.f32"].module] == 2


_KERNEL = """\
static inline float sq(float x) { return x * x; }
void dist(float A[24], float C[24], float B[24], float D[24])
{
  for (int i = 0; i < 24; i++) {
    B[i] = sq(A[i] - C[i]) + (A[i] - C[i]) * 0.5f;
    D[i] = sq(A[i] - C[i]) > 1.0f ? sq(A[i] - C[i]) - 1.0f : -0.0f + sq(A[i] - C[i]);
  }
}
"""


def test_shared_subexpressions_are_bit_exact_in_verilator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "dist.c"
    src.write_text(_KERNEL)
    rc, out, err = run_cli(["sim", str(src), "--seed", "4", "--stall", "0.3", "--json"], capsys)
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["ok"] and rep["mismatches"] == 0
    rc, _out, err = run_cli(["compile", str(src), "-o", str(tmp_path / "out")], capsys)
    assert rc == 0, err
    lib = operator_library()
    rtl = tmp_path / "out" / "rtl"

    def count(process: str, op: str) -> int:
        text = (rtl / f"dist_{process}.v").read_text()
        if op == "fmul.f32":  # by a variable, or by a power of two (`fmul.f32.k`: the half)
            return text.count(f"{lib[op].module} u_") + text.count(f"{lib[op + '.k'].module} u_")
        return text.count(f"{lib[op].module} u_")

    # B: one A[i] - C[i], its square and its half; D: one A[i] - C[i], one square (written three
    # times), the comparison, and `sq - 1` and `-0.0 + sq`
    assert (count("s0", "fsub.f32"), count("s0", "fmul.f32"), count("s0", "fadd.f32")) == (1, 2, 1)
    assert (count("s1", "fsub.f32"), count("s1", "fmul.f32"), count("s1", "fadd.f32")) == (2, 1, 1)
    # `* 0.5f`: a significand of 1.0, on the multiplier that synthesis folds (`library.MULT18_CONST_MODULE`)
    assert (rtl / "dist_s0.v").read_text().count(f"{lib['fmul.f32.k'].module} u_") == 1
