"""Division by a constant through the reciprocal multiply (`int_arith.reciprocal`): the arithmetic
against C semantics (`int_arith.c_divide`), exhaustively where the range allows, and the generated
datapath under Verilator against gcc."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from hls.rtl.int_arith import c_divide, const_divide

HERE = Path(__file__).resolve().parent


def _divisors(width: int, signed: bool) -> list[int]:
    lo = -(1 << (width - 1)) + 1 if signed else 1
    hi = (1 << (width - 1)) - 1 if signed else (1 << width) - 1
    fixed = [1, 2, 3, 5, 6, 7, 9, 10, 641, hi, hi - 1]
    if signed:
        fixed += [-2, -3, -7, -10, lo, lo + 1]
    rng = random.Random(width * 2 + signed)
    return sorted({d for d in fixed + [rng.randint(lo, hi) for _ in range(12)] if d not in (0, -1) and lo <= d <= hi})


@pytest.mark.parametrize("width", [8, 16])
@pytest.mark.parametrize("signed", [True, False])
def test_reciprocal_is_exact_on_every_dividend(width, signed):
    xs = range(1 << width)
    for d in _divisors(width, signed):
        for x in xs:
            assert const_divide(x, d, width, signed) == c_divide(x, d & ((1 << width) - 1), width, signed), (x, d)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("signed", [True, False])
def test_reciprocal_on_random_and_extreme_dividends(width, signed):
    rng = random.Random(width + signed)
    mask = (1 << width) - 1
    edges = [0, 1, 2, mask, mask - 1, 1 << (width - 1), (1 << (width - 1)) - 1, (1 << (width - 1)) + 1]
    for d in _divisors(width, signed):
        for x in edges + [rng.getrandbits(width) for _ in range(3000)]:
            if signed and d == -1 and x == 1 << (width - 1):
                continue
            assert const_divide(x, d, width, signed) == c_divide(x, d & mask, width, signed), (x, d)


@pytest.mark.parametrize("seed", [1, 2])
def test_constant_divisors_in_rtl_match_gcc(seed):
    out = subprocess.run([sys.executable, "-m", "hls.cli", "sim", str(HERE / "const_divisors.c"), "--seed", str(seed),
                          "--stall", "0.3", "--json"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["ok"] and res["mismatches"] == 0
