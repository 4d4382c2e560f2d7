"""Bit-exact tests of the pipelined fp division, square root and conversions (hls/rtl/fp_convert.py).

Every operator gets `N_RANDOM` random operands from distributions that reach the exponent
extremes (subnormals, infinities and NaNs, results near overflow and underflow, rounding ties,
integers near the representable boundaries), plus a fixed list of corner cases, and its results
must equal x86-64's bit for bit (any quiet NaN where a NaN is due):

* division and square root against numpy float32/float64 arithmetic (SSE/AVX on this host);
* integer to float and float to float against numpy's ``astype``, itself cross-checked against
  the C casts compiled by gcc;
* float to integer against the C casts compiled by ``gcc -O0`` (cvttss2si/cvttsd2si, and gcc's
  sequences for unsigned destinations), called through ctypes.

Speed: the vectors never pass through Python one by one.  One Verilog harness
(`harness_convert.v.j2`) instantiates all the operators; the operator is chosen by plusarg, the
operands are read with $readmemh and streamed one per cycle with pseudo-random enable gaps, and the
results are written with $writememh.  cocotb only runs the clock.  That is a single Verilator build
(most of its cost is Verilator's runtime library, the same for any model), shared by the xdist
workers through `rtl_cache`.
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import jinja2
import numpy as np
import pytest

from hls.rtl.fp_convert import FORMATS, INTEGERS, OPERATORS
from sim.rtl_runner import SimBuild, build_verilator, lint_verilator, run_cocotb

HERE = Path(__file__).resolve().parent
COCOTB_MODULE = "tests.rtl.fp.cocotb_fp_convert"
MAKE_VARS = None  # the default (`DPN_SYNTH_VERILATOR_OPT`, -O0 in the tests: build time dominates)
N_RANDOM = 100_000
DEPTH = 1 << 17  # words of the harness's vector memories
SIM_TIMEOUT_S = 300.0

U64 = np.uint64
FLOAT_DTYPES = {"f32": (np.float32, np.uint32), "f64": (np.float64, np.uint64)}
INT_DTYPES = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
C_TYPES = {"f32": "float", "f64": "double", "i32": "int32_t", "u32": "uint32_t", "i64": "int64_t", "u64": "uint64_t"}


HARNESS_KEYS = sorted(OPERATORS)  # operator index in the harness = position here
HARNESS_TOP = "fp_convert_harness"
# The slow operators first, so that xdist workers do not end the run with them.
ORDERED_KEYS = sorted(OPERATORS, key=lambda k: (not k.startswith(("fdiv", "fsqrt")), k))


# --------------------------------------------------------------------------------------------------
# the gcc oracle for casts

_C_HEADER = "#include <stddef.h>\n#include <stdint.h>\n"


def _c_source() -> str:
    lines = [_C_HEADER]
    for key in OPERATORS:
        if key.startswith("cvt."):
            src, dst = key.split(".")[1:]
            lines.append(
                f"void cvt_{src}_{dst}(const {C_TYPES[src]} *x, {C_TYPES[dst]} *y, size_t n)"
                f" {{ for (size_t i = 0; i < n; i++) y[i] = ({C_TYPES[dst]})x[i]; }}\n"
            )
    return "".join(lines)


@pytest.fixture(scope="session")
def gcc_cast(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str, np.ndarray], np.ndarray]:
    """``gcc_cast(src, dst, values)``: the C cast ``(dst)value`` of every element, as gcc -O0 compiles it."""
    d = tmp_path_factory.mktemp("gcc_cast")
    (d / "casts.c").write_text(_c_source())
    proc = subprocess.run(
        ["gcc", "-std=gnu11", "-O0", "-ffp-contract=off", "-fPIC", "-shared", "-o", str(d / "casts.so"),
         str(d / "casts.c")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(str(d / "casts.so"))

    def cast(src: str, dst: str, values: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(values, dtype=_dtype(src))
        y = np.zeros(x.shape, dtype=_dtype(dst))
        fn = getattr(lib, f"cvt_{src}_{dst}")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        fn(x.ctypes.data, y.ctypes.data, x.size)
        return y

    return cast


def _dtype(kind: str) -> type:
    return FLOAT_DTYPES[kind][0] if kind in FLOAT_DTYPES else INT_DTYPES[kind]


def _width(kind: str) -> int:
    if kind in FORMATS:
        e, f = FORMATS[kind]
        return 1 + e + f
    return INTEGERS[kind][0]


def _from_bits(bits: np.ndarray, kind: str) -> np.ndarray:
    """Operand bit patterns (uint64, low bits) as values of `kind`."""
    unsigned = np.uint32 if _width(kind) == 32 else np.uint64
    return bits.astype(unsigned).view(_dtype(kind))


def _to_bits(values: np.ndarray, kind: str) -> np.ndarray:
    unsigned = np.uint32 if _width(kind) == 32 else np.uint64
    return np.ascontiguousarray(values).view(unsigned).astype(U64)


def _is_nan(bits: np.ndarray, fmt: str) -> np.ndarray:
    e, f = FORMATS[fmt]
    exp = (bits >> U64(f)) & U64((1 << e) - 1)
    return (exp == U64((1 << e) - 1)) & ((bits & U64((1 << f) - 1)) != 0)


# --------------------------------------------------------------------------------------------------
# the reference


def reference(key: str, a: np.ndarray, b: np.ndarray, gcc_cast: Callable) -> np.ndarray:
    """x86-64's result bits for operand bits `a` (and `b`)."""
    op, *kinds = key.split(".")
    with np.errstate(all="ignore"):
        if op == "fdiv":
            (fmt,) = kinds
            return _to_bits(_from_bits(a, fmt) / _from_bits(b, fmt), fmt)
        if op == "fsqrt":
            (fmt,) = kinds
            return _to_bits(np.sqrt(_from_bits(a, fmt)), fmt)
        src, dst = kinds
        x = _from_bits(a, src)
        by_gcc = gcc_cast(src, dst, x)
        if dst in INTEGERS:
            return _to_bits(by_gcc, dst)  # only gcc knows its sequences for out-of-range values
        by_numpy = _to_bits(x.astype(_dtype(dst)), dst)
        _assert_same(key, a, b, _to_bits(by_gcc, dst), by_numpy, what="gcc (the oracle)", against="numpy astype")
        return by_numpy


def _is_quiet_nan(bits: np.ndarray, fmt: str) -> np.ndarray:
    return _is_nan(bits, fmt) & (((bits >> U64(FORMATS[fmt][1] - 1)) & U64(1)) == 1)


def _mismatches(key: str, got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Indices where `got` is not `expected`: bit for bit, except that where a NaN is expected any
    quiet NaN matches (IEEE 754 operations deliver quiet NaNs; payloads and signs are free)."""
    same = got == expected
    dst = key.split(".")[-1]
    if dst in FORMATS:
        same |= _is_nan(expected, dst) & _is_quiet_nan(got, dst)
    return np.flatnonzero(~same)


def _assert_same(key: str, a: np.ndarray, b: np.ndarray, got: np.ndarray, expected: np.ndarray, *,
                 what: str = "RTL", against: str = "x86-64") -> None:
    bad = _mismatches(key, got, expected)
    if bad.size:
        unary = len(OPERATORS[key].inputs) == 1
        rows = [
            f"  a={int(a[i]):#x}" + ("" if unary else f" b={int(b[i]):#x}")
            + f": expected {int(expected[i]):#x}, got {int(got[i]):#x}"
            for i in bad[:12]
        ]
        pytest.fail(f"{key}: {what} differs from {against} on {bad.size} of {len(a)} vectors:\n" + "\n".join(rows))


# --------------------------------------------------------------------------------------------------
# operand distributions (bit patterns in uint64 arrays)


def _fmt(fmt: str) -> tuple[int, int, int, int]:
    e, f = FORMATS[fmt]
    return e, f, (1 << e) - 1, (1 << (e - 1)) - 1


def _enc(fmt: str, sign: object, exp: object, frac: object) -> np.ndarray:
    e, f = FORMATS[fmt]
    s, x, m = (np.asarray(v).astype(np.int64).astype(U64) for v in (sign, exp, frac))
    return (s << U64(e + f)) | (x << U64(f)) | (m & U64((1 << f) - 1))


def _pick(rng: np.random.Generator, n: int, *choices: tuple[float, np.ndarray], default: np.ndarray) -> np.ndarray:
    """Per element, the first choice whose cumulative probability covers a uniform draw."""
    u = rng.random(n)
    conds, vals, acc = [], [], 0.0
    for p, v in choices:
        conds.append((u >= acc) & (u < acc + p))
        vals.append(v)
        acc += p
    assert acc <= 1.0
    return np.select(conds, vals, default)


def random_fractions(rng: np.random.Generator, n: int, f: int) -> np.ndarray:
    full = rng.integers(0, 1 << f, n, dtype=U64)
    k = rng.integers(0, f, n).astype(U64)
    ones = U64((1 << f) - 1)
    return _pick(
        rng, n,
        (0.08, np.zeros(n, U64)),
        (0.08, np.full(n, ones)),
        (0.08, U64(1) << k),  # one bit
        (0.14, full >> k),  # leading zeros: subnormals of every size
        (0.14, (full >> k) << k),  # trailing zeros: exact results, rounding ties
        (0.06, ones ^ (U64(1) << k)),
        default=full,
    )


def random_exponents(rng: np.random.Generator, n: int, fmt: str) -> np.ndarray:
    e, f, emax, bias = _fmt(fmt)
    return _pick(
        rng, n,
        (0.15, np.zeros(n, np.int64)),  # zero and subnormals
        (0.05, np.full(n, emax)),  # infinities and NaNs
        (0.12, rng.integers(1, 5, n)),  # smallest normals
        (0.12, emax - rng.integers(1, 5, n)),  # largest finite numbers
        (0.12, bias + rng.integers(-4, 5, n)),  # around 1
        default=rng.integers(0, emax + 1, n),
    )


def random_floats(rng: np.random.Generator, n: int, fmt: str, *, neg: float = 0.5,
                  exps: np.ndarray | None = None) -> np.ndarray:
    e, f, _, _ = _fmt(fmt)
    if exps is None:
        exps = random_exponents(rng, n, fmt)
    return _enc(fmt, rng.random(n) < neg, exps, random_fractions(rng, n, f))


def float_corners(fmt: str) -> list[int]:
    """Zeros, infinities, NaNs (quiet, signalling, full payload), subnormal and normal extremes, small
    integers and halves, values one ulp from 1 and 2; both signs."""
    e, f, emax, bias = _fmt(fmt)
    ones, half = (1 << f) - 1, 1 << (f - 1)
    pos = [
        (0, 0), (0, 1), (0, 2), (0, 3), (0, half), (0, ones),  # 0, subnormals
        (1, 0), (1, 1), (1, ones), (2, 0),  # smallest normals
        (bias - 1, 0), (bias - 1, ones), (bias, 0), (bias, 1), (bias, half), (bias, ones),  # 0.5 .. 2-ulp
        (bias + 1, 0), (bias + 1, half), (bias + 2, 1 << (f - 2)),  # 2, 3, 5
        (emax - 2, ones), (emax - 1, 0), (emax - 1, ones),  # largest finite
        (emax, 0), (emax, half), (emax, 1), (emax, ones), (emax, half | 5),  # inf, NaNs
    ]
    vals = [(x << f) | m for x, m in pos]
    return vals + [v | (1 << (e + f)) for v in vals]


def _floats_to_bits(values: list[float], fmt: str) -> list[int]:
    arr = np.array(values, dtype=np.float64).astype(FLOAT_DTYPES[fmt][0])
    return [int(v) for v in _to_bits(arr, fmt)]


def _vectors_fdiv(rng: np.random.Generator, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    n = N_RANDOM
    e, f, emax, bias = _fmt(fmt)
    a = random_floats(rng, n, fmt)
    b = random_floats(rng, n, fmt)
    # Targeted half: b's exponent puts the quotient's exponent t near the bottom of the subnormal
    # range (underflow, subnormal results, ties when b is a power of two) or near overflow.
    t = np.where(rng.random(n) < 0.7, rng.integers(-f - 3, 4, n), rng.integers(emax - 4, emax + 2, n))
    lo = np.maximum(1, t - bias)
    hi = np.minimum(emax - 1, emax - 1 + t - bias)
    ea = lo + (rng.random(n) * (hi - lo + 1)).astype(np.int64)
    eb = np.clip(ea + bias - t, 0, emax - 1)
    fb = np.where(rng.random(n) < 0.3, 0, random_fractions(rng, n, f).astype(np.int64))
    ta = _enc(fmt, rng.random(n) < 0.5, ea, random_fractions(rng, n, f))
    tb = _enc(fmt, rng.random(n) < 0.5, eb, fb)
    targeted = rng.random(n) < 0.5
    a, b = np.where(targeted, ta, a), np.where(targeted, tb, b)

    corners = float_corners(fmt)
    ca = [x for x in corners for _ in corners]
    cb = [y for _ in corners for y in corners]
    two, four, three = _floats_to_bits([2.0, 4.0, 3.0], fmt)
    for m in range(1, 40):  # subnormal quotients with ties and near-ties
        for d in (two, four, three):
            ca += [m, m | (1 << (e + f))]
            cb += [d, d]
    return _join(ca, a), _join(cb, b)


def _vectors_fsqrt(rng: np.random.Generator, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    n = N_RANDOM
    e, f, emax, bias = _fmt(fmt)
    a = random_floats(rng, n, fmt, neg=0.1)
    # Exact squares (a zero final remainder) and their neighbours one ulp away.
    half_bits = (f + 1) // 2 - 1  # a significand of (f+1)//2 bits squares exactly
    ry = _enc(fmt, 0, bias + rng.integers(-bias // 2, bias // 2, n),
              rng.integers(0, 1 << half_bits, n, dtype=U64) << U64(f - half_bits))
    ftype, _ = FLOAT_DTYPES[fmt]
    y = _from_bits(ry, fmt)
    sq = _to_bits(y * y, fmt)
    sq = sq + rng.integers(-1, 2, n).astype(U64)  # wraps for -1, as intended
    a = np.where(rng.random(n) < 0.2, sq, a)
    corners = float_corners(fmt)
    corners += _floats_to_bits([float(k * k) for k in range(1, 200)] + [2.0, 0.25, -1.0, -4.0], fmt)
    corners += [(1 << (e + f)) | k for k in (1, 2, 3)]  # negative subnormals
    return _join(corners, a), np.zeros(len(corners) + n, U64)


def _vectors_f2i(rng: np.random.Generator, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    n = N_RANDOM
    e, f, emax, bias = _fmt(fmt)
    # Most exponents where the integer part has 0..66 bits: every boundary of every integer type.
    exps = np.where(rng.random(n) < 0.6, bias + rng.integers(-2, 67, n), random_exponents(rng, n, fmt))
    a = random_floats(rng, n, fmt, exps=exps)
    ftype, _ = FLOAT_DTYPES[fmt]
    around: list[float] = [0.5, 0.75, 0.99, 1.0, 1.5, 2.5, 3.0, 1e10, 1e19, 1e30]
    for k in (1, 15, 16, 30, 31, 32, 33, 52, 53, 62, 63, 64, 65):
        x = ftype(2.0**k)
        around += [float(x), float(np.nextafter(x, ftype(np.inf))), float(np.nextafter(x, ftype(0))),
                   float(np.nextafter(np.nextafter(x, ftype(0)), ftype(0))), 2.0**k - 0.5, 2.0**k + 0.5, 2.0**k - 1]
    corners = float_corners(fmt) + _floats_to_bits(around + [-v for v in around], fmt)
    return _join(corners, a), np.zeros(len(corners) + n, U64)


def _vectors_i2f(rng: np.random.Generator, src: str, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    n = N_RANDOM
    bits, signed = INTEGERS[src]
    e, f, emax, bias = _fmt(fmt)
    mask = U64((1 << bits) - 1)
    full = rng.integers(0, np.iinfo(np.uint64).max, n, dtype=U64, endpoint=True)
    length = rng.integers(1, bits + 1, n).astype(U64)
    x = full >> (U64(64) - length)  # random bit length
    k = rng.integers(0, bits, n).astype(U64)
    near_pow2 = (U64(1) << k) + rng.integers(-3, 4, n).astype(U64)  # wraps for negative offsets
    choices = [(0.15, near_pow2)]
    if bits > f + 1:  # rounding ties: an (f+1)-bit significand, then 100..0 (+-1)
        s = rng.integers(1, bits - f, n).astype(U64)
        m = (full >> U64(64 - f - 1)) | (U64(1) << U64(f))
        ties = (m << s) | (U64(1) << (s - U64(1)))
        choices.append((0.4, ties + rng.integers(-1, 2, n).astype(U64)))
    x = _pick(rng, n, *choices, default=x) & mask
    if signed:
        x = np.where(rng.random(n) < 0.5, (~x + U64(1)) & mask, x)
    corners = {0, 1, 2, 3, 5, 7, int(mask), int(mask) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1}
    for j in range(bits):
        corners |= {((1 << j) + d) & int(mask) for d in (-2, -1, 0, 1, 2)}
        corners |= {(-(1 << j) + d) & int(mask) for d in (-1, 0, 1)}
    if bits > f + 1:
        for s in range(1, bits - f):
            for m in (1 << f, (1 << f) + 1, (1 << (f + 1)) - 1):
                corners |= {(((m << s) | (1 << (s - 1))) + d) & int(mask) for d in (-1, 0, 1)}
    return _join(sorted(corners), x), np.zeros(len(corners) + n, U64)


def _vectors_widen(rng: np.random.Generator, src: str) -> tuple[np.ndarray, np.ndarray]:
    a = random_floats(rng, N_RANDOM, src)
    corners = float_corners(src)
    return _join(corners, a), np.zeros(len(corners) + N_RANDOM, U64)


def _vectors_narrow(rng: np.random.Generator, src: str, dst: str) -> tuple[np.ndarray, np.ndarray]:
    n = N_RANDOM
    e1, f1, emax1, bias1 = _fmt(src)
    e2, f2, emax2, bias2 = _fmt(dst)
    rebias = bias1 - bias2
    exps = _pick(
        rng, n,
        (0.35, rebias + rng.integers(-f2 - 3, 3, n)),  # subnormal destination, underflow
        (0.15, rebias + rng.integers(emax2 - 3, emax2 + 3, n)),  # overflow edge
        (0.2, rebias + rng.integers(1, emax2, n)),  # destination normals
        default=random_exponents(rng, n, src),
    )
    frac = random_fractions(rng, n, f1)
    # Ties at the rounding position p (f1 - f2 - 1 for normal results, higher for subnormal ones).
    p = np.where(rng.random(n) < 0.5, f1 - f2 - 1, rng.integers(f1 - f2 - 1, f1, n)).astype(U64)
    tie = (((frac >> (p + U64(1))) << (p + U64(1))) | (U64(1) << p)) + rng.integers(-1, 2, n).astype(U64)
    frac = np.where(rng.random(n) < 0.4, tie & U64((1 << f1) - 1), frac)
    a = _enc(src, rng.random(n) < 0.5, exps, frac)
    tiny = 2.0 ** (1 - bias2 - f2)  # smallest destination subnormal
    big = float(np.finfo(FLOAT_DTYPES[dst][0]).max)
    ulp_big = 2.0 ** (emax2 - 1 - bias2 - f2)
    special = [tiny, tiny / 2, tiny / 2 * (1 + 2.0**-40), tiny * 1.5, tiny * 2.5, tiny * 0.75, tiny * 0.25,
               2.0 ** (1 - bias2), 2.0 ** (1 - bias2) * (1 - 2.0 ** -(f2 + 1)), 2.0 ** (1 - bias2) - tiny / 2,
               big, big + ulp_big / 2, big + ulp_big / 2 * (1 - 2.0**-40), big + ulp_big, 1 + 2.0 ** -(f2 + 1),
               1 + 3 * 2.0 ** -(f2 + 1), 1 + 2.0 ** -(f2 + 1) * (1 + 2.0**-40), 1e300, 1e-300]
    corners = float_corners(src) + _floats_to_bits(special + [-v for v in special], src)
    return _join(corners, a), np.zeros(len(corners) + n, U64)


def _join(corners: list[int], random: np.ndarray) -> np.ndarray:
    return np.concatenate([np.array(corners, dtype=U64), random.astype(U64)])


@functools.cache
def vectors(key: str) -> tuple[np.ndarray, np.ndarray]:
    """Operand bits (a, b) for `key`: the corner list, then the random vectors (deterministic)."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    op, *kinds = key.split(".")
    if op == "fdiv":
        a, b = _vectors_fdiv(rng, kinds[0])
    elif op == "fsqrt":
        a, b = _vectors_fsqrt(rng, kinds[0])
    else:
        src, dst = kinds
        if src in INTEGERS:
            a, b = _vectors_i2f(rng, src, dst)
        elif dst in INTEGERS:
            a, b = _vectors_f2i(rng, src)
        elif _width(dst) > _width(src):
            a, b = _vectors_widen(rng, src)
        else:
            a, b = _vectors_narrow(rng, src, dst)
    width = OPERATORS[key].inputs[0][1]
    mask = U64((1 << width) - 1)
    assert len(a) == len(b) <= DEPTH
    return a & mask, b & mask


# --------------------------------------------------------------------------------------------------
# coverage: the distributions must actually reach the interesting regions


def _fields(bits: np.ndarray, fmt: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(exponent field, fraction field, magnitude bits) of float bit patterns."""
    e, f, emax, _ = _fmt(fmt)
    return (bits >> U64(f)) & U64(emax), bits & U64((1 << f) - 1), bits & U64((1 << (e + f)) - 1)


def coverage(key: str, a: np.ndarray, b: np.ndarray, expected: np.ndarray) -> dict[str, int]:
    """How many vectors reach each region that matters for `key` (every count must be large)."""
    op, *kinds = key.split(".")
    src, dst = (kinds[0], kinds[0]) if op != "cvt" else kinds
    cov: dict[str, int] = {}
    if src in FORMATS:
        ea, fa, ma = _fields(a, src)
        emax_s = (1 << FORMATS[src][0]) - 1
        finite_nonzero = (ea != U64(emax_s)) & (ma != 0)
        cov["subnormal operands"] = int(np.sum((ea == 0) & (fa != 0)))
        cov["NaN operands"] = int(np.sum(_is_nan(a, src)))
    if dst in FORMATS:
        ey, fy, my = _fields(expected, dst)
        emax_d = (1 << FORMATS[dst][0]) - 1
        if src in FORMATS:
            cov["NaN results"] = int(np.sum(_is_nan(expected, dst)))
    if op == "fdiv":
        eb, _, mb = _fields(b, dst)
        both = finite_nonzero & (eb != U64(emax_d)) & (mb != 0)
        cov["subnormal results"] = int(np.sum((ey == 0) & (fy != 0)))
        cov["overflow to inf"] = int(np.sum(both & (ey == U64(emax_d))))
        cov["underflow to zero"] = int(np.sum(both & (my == 0)))
    elif op == "fsqrt":
        with np.errstate(all="ignore"):
            root = _from_bits(expected, dst)
            cov["exact roots"] = int(np.sum(finite_nonzero & (root * root == _from_bits(a, src))))
    elif src in FORMATS and dst in FORMATS and _width(dst) < _width(src):
        cov["subnormal results"] = int(np.sum((ey == 0) & (fy != 0)))
        cov["overflow to inf"] = int(np.sum(finite_nonzero & (ey == U64(emax_d))))
        cov["underflow to zero"] = int(np.sum(finite_nonzero & (my == 0)))
    elif src in INTEGERS:
        bits = INTEGERS[src][0]
        x = _from_bits(a, src)
        if bits > FORMATS[dst][1] + 1:
            back = _from_bits(expected, dst).tolist()
            cov["rounded"] = sum(int(v) != int(w) for v, w in zip(x.tolist(), back))
        cov["top bit set"] = int(np.sum((a >> U64(bits - 1)) & U64(1)))  # negative, or gcc's other uint64 path
    elif dst in INTEGERS:
        unbiased = ea.astype(np.int64) - _fmt(src)[3]
        cov["|a| < 1"] = int(np.sum(unbiased < 0))
        cov["exponent 31..33"] = int(np.sum((unbiased >= 31) & (unbiased <= 33)))
        cov["exponent 62..64"] = int(np.sum((unbiased >= 62) & (unbiased <= 64)))
    return cov


MIN_COVERAGE = 500  # of every region above


# --------------------------------------------------------------------------------------------------
# the harness


class Harness:
    """The harness model, rendered and built on first use (cached across workers)."""

    def __init__(self, root: Path, cache: Path) -> None:
        self.root = root
        self.cache = cache
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(HERE)), undefined=jinja2.StrictUndefined,
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False,
        )

    @functools.cached_property
    def build(self) -> SimBuild:
        d = self.root
        sources, ops = [], []
        for index, key in enumerate(HARNESS_KEYS):
            spec = OPERATORS[key]
            path = d / f"{spec.module}.v"  # named after the module, as Verilator -Wall wants
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(spec.render())
            sources.append(path)
            ops.append({
                "index": index, "module": spec.module, "latency": spec.latency,
                "a_width": spec.inputs[0][1], "b_width": spec.inputs[1][1] if len(spec.inputs) > 1 else 0,
                "y_width": spec.output_width, "enables": spec.enables,
            })
        harness = d / f"{HARNESS_TOP}.v"
        harness.write_text(self.env.get_template("harness_convert.v.j2").render(
            module_name=HARNESS_TOP, depth=DEPTH, ops=ops))
        return build_verilator([*sources, harness], HARNESS_TOP, cache_root=self.cache, make_vars=MAKE_VARS)

    def simulate(self, key: str, a: np.ndarray, b: np.ndarray, workdir: Path, *, skew: int = 0) -> np.ndarray:
        workdir.mkdir(parents=True, exist_ok=True)
        infile, outfile = workdir / "vectors.hex", workdir / "results.hex"
        infile.write_text("".join(f"{x:016x}{y:016x}\n" for x, y in zip(a.tolist(), b.tolist())))
        result = run_cocotb(
            self.build, COCOTB_MODULE, test_dir=workdir / "sim", timeout_s=SIM_TIMEOUT_S,
            plusargs=[f"+OP={HARNESS_KEYS.index(key)}", f"+N={len(a)}", f"+IN={infile}", f"+OUT={outfile}",
                      f"+SEED={zlib.crc32(key.encode()) & 0x7FFFFFFF}", f"+SKEW={skew}"],
        )
        assert result.ok, result.summary()
        words = [ln for ln in outfile.read_text().split() if not ln.startswith(("//", "@"))]
        assert len(words) == len(a), f"{outfile}: {len(words)} results for {len(a)} vectors"
        return np.array([int(w, 16) for w in words], dtype=U64)


@pytest.fixture(scope="session")
def harness(tmp_path_factory: pytest.TempPathFactory, rtl_cache: Path) -> Harness:
    return Harness(tmp_path_factory.mktemp("fp_convert_rtl"), rtl_cache)


# --------------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("key", ORDERED_KEYS)
def test_convert_bit_exact(key: str, harness: Harness, gcc_cast: Callable, tmp_path: Path) -> None:
    """The operator's results equal x86-64's for the corner list and N_RANDOM random vectors."""
    a, b = vectors(key)
    assert len(a) >= N_RANDOM
    expected = reference(key, a, b, gcc_cast)
    cov = coverage(key, a, b, expected)
    thin = {k: v for k, v in cov.items() if v < MIN_COVERAGE}
    assert not thin, f"{key}: the vectors barely reach {thin} (coverage {cov})"
    got = harness.simulate(key, a, b, tmp_path)
    _assert_same(key, a, b, got, expected)


def test_convert_wrong_latency_is_caught(harness: Harness, gcc_cast: Callable, tmp_path: Path) -> None:
    """Pairing results with the operands one enabled cycle off must fail the comparison, or the
    tests above could not notice a latency that differs from the declared one."""
    key = "cvt.f32.f64"
    a, b = (v[:3000] for v in vectors(key))
    expected = reference(key, a, b, gcc_cast)
    got = harness.simulate(key, a, b, tmp_path, skew=1)
    assert _mismatches(key, got, expected).size > len(a) // 2


def test_convert_checker_catches_a_flipped_bit(gcc_cast: Callable) -> None:
    for key in ("fdiv.f64", "cvt.f64.u64", "cvt.i64.f32"):
        a, b = (v[:5000] for v in vectors(key))
        expected = reference(key, a, b, gcc_cast)
        bad = expected.copy()
        bad[4321] ^= U64(1)
        assert list(_mismatches(key, bad, expected)) == [4321]
        with pytest.raises(pytest.fail.Exception):
            _assert_same(key, a, b, bad, expected)
    # where a NaN is due, any quiet NaN is right and a signalling NaN is wrong
    expected = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000000], dtype=U64)
    got = np.array([0xFFF8000000000123, 0x7FFC000000000001, 0x7FF4000000000000], dtype=U64)
    assert list(_mismatches("cvt.f32.f64", got, expected)) == [2]


def test_convert_gcc_oracle(gcc_cast: Callable) -> None:
    """The reference itself: gcc -O0's casts on x86-64, as documented in hls/rtl/fp_convert.py."""
    nan, inf = float("nan"), float("inf")
    xs = np.array([nan, inf, -inf, -1.0, -1.5, 0.5, 2.0**31, 2.0**32, 3e9, 2.0**63, 2.0**64, -(2.0**63), 1e30, -1e30])
    cases = {
        ("f64", "i32"): [0x80000000, 0x80000000, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0x80000000, 0x80000000,
                         0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000],
        ("f64", "u32"): [0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0x80000000, 0, 3000000000, 0, 0, 0, 0, 0],
        ("f64", "i64"): [1 << 63, 1 << 63, 1 << 63, (1 << 64) - 1, (1 << 64) - 1, 0, 1 << 31, 1 << 32, 3000000000,
                         1 << 63, 1 << 63, 1 << 63, 1 << 63, 1 << 63],
        ("f64", "u64"): [1 << 63, 0, 1 << 63, (1 << 64) - 1, (1 << 64) - 1, 0, 1 << 31, 1 << 32, 3000000000,
                         1 << 63, 0, 1 << 63, 0, 1 << 63],
    }
    for (src, dst), want in cases.items():
        got = _to_bits(gcc_cast(src, dst, xs), dst)
        assert [int(v) for v in got] == want, (src, dst)
        got32 = _to_bits(gcc_cast("f32", dst, xs.astype(np.float32)), dst)
        assert [int(v) for v in got32] == want, ("f32", dst)
    # uint64 -> float rounds once (gcc halves with a sticky bit, converts, doubles)
    u = np.array([(1 << 64) - 1, (1 << 63) + (1 << 39) + 1, (1 << 63) + (1 << 39)], dtype=np.uint64)
    assert [float(v) for v in gcc_cast("u64", "f32", u)] == [2.0**64, 2.0**63 + 2.0**40, 2.0**63]


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_convert_lint_clean(key: str, tmp_path: Path) -> None:
    spec = OPERATORS[key]
    src = tmp_path / f"{spec.module}.v"
    src.write_text(spec.render())
    assert f"module {spec.module} " in src.read_text()
    assert lint_verilator([src], spec.module) == []


def test_convert_registry() -> None:
    """Keys, module names and ports as the datapath generator expects them (cvt.<from>.<to>)."""
    expected = {f"{op}.{fmt}" for op in ("fdiv", "fsqrt") for fmt in FORMATS}
    expected |= {f"cvt.{i}.{fmt}" for i in INTEGERS for fmt in FORMATS}
    expected |= {f"cvt.{fmt}.{i}" for i in INTEGERS for fmt in FORMATS}
    expected |= {"cvt.f32.f64", "cvt.f64.f32"}
    assert set(OPERATORS) == expected
    for key, spec in OPERATORS.items():
        assert spec.name == key
        assert spec.module == "dpn_" + key.replace(".", "_")
        assert spec.latency >= 1
        src = key.split(".")[1]
        assert [p for p, _ in spec.inputs] == (["a", "b"] if key.startswith("fdiv") else ["a"])
        assert spec.inputs[0][1] == _width(src)
        assert spec.output_width == _width(key.split(".")[-1])
