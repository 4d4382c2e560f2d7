"""Bit-exact tests of the pipelined IEEE-754 operators (hls/rtl/fp_arith.py, hw_templates/fp/).

Per precision, ONE Verilator build holds every operator of that precision behind a streaming
harness (tests/rtl/fp/fp_harness.v.j2): it reads ~113k operand pairs with ``$readmemh``, feeds one
pair per enabled cycle to all operators at once (``en`` drops on a random quarter of the cycles,
with garbage operands, to test stalling), and writes each operator's results with ``$writememh``.
The results are then compared here, bit for bit, with the references:

* add, sub, mul, comparisons: numpy float32/float64 (the same SSE hardware arithmetic: round to
  nearest even, no flush to zero).  A NaN result must be a NaN exactly when numpy's is, and must be
  the x86 one: the first NaN operand quieted, else the default NaN (sign 1, quiet, zero payload);
* fmin/fmax: glibc's fminf/fmin/fmaxf/fmax, called through ctypes with the raw bit patterns;
* fneg/fabs: the sign-bit operations x86 compilers emit (xorps/andps).

The vectors: random sign/exponent/fraction patterns with extra weight on the exponent extremes
(subnormals, inf/NaN, near overflow, near underflow) and on interesting pairs (close exponents,
near-opposite operands, constructed rounding ties for addition and multiplication, products near
the overflow and underflow thresholds), plus every pair of a fixed list of corner values.
`_coverage` checks that the mix really reaches ties, subnormal results, overflow, underflow and
signed exact zeros, so a weakened generator cannot pass silently.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np
import pytest

from hls.rtl.fp_arith import CMP_PREDICATES, FORMATS, OPERATORS, fmul_latency
from hls.rtl.operators import OperatorSpec
from sim.rtl_runner import SimBuild, build_verilator, lint_verilator, run_cocotb

HERE = Path(__file__).resolve().parent
COCOTB_MODULE = "tests.rtl.fp.cocotb_fp"
PRECISIONS = ("f32", "f64")
OPS = ("fadd", "fsub", "fmul", "flt", "fle", "fgt", "fge", "feq", "fne", "fmin", "fmax", "fneg", "fabs")
N_RANDOM = 110_000
ADDR_BITS = 17  # the harness holds up to 2**17 - 1 vectors
STALL = 256  # en = 0 on STALL/1024 of the cycles
SEEDS = {"f32": 0x5EED32, "f64": 0x5EED64}
MAKE_VARS = None  # the default (`DPN_SYNTH_VERILATOR_OPT`, -O0 in the tests: build time dominates)
SIM_TIMEOUT_S = 300.0


# --------------------------------------------------------------------------------------------------
# formats


@dataclass(frozen=True)
class Fmt:
    name: str
    E: int
    F: int
    ftype: type
    utype: type
    wide: type  # a float type in which the tie checks of `_coverage` are (mostly) exact

    @property
    def W(self) -> int:
        return 1 + self.E + self.F

    @property
    def bias(self) -> int:
        return (1 << (self.E - 1)) - 1

    @property
    def emax(self) -> int:  # the all-ones exponent field
        return (1 << self.E) - 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.W - 1)

    @property
    def quiet_bit(self) -> int:
        return 1 << (self.F - 1)

    @property
    def default_nan(self) -> int:
        return self.sign_bit | (self.emax << self.F) | self.quiet_bit

    def pack(self, s, e, f) -> np.ndarray:
        s = np.asarray(s, dtype=np.uint64)
        e = np.asarray(e, dtype=np.int64).astype(np.uint64)
        f = np.asarray(f, dtype=np.uint64)
        return (s << np.uint64(self.W - 1)) | (e << np.uint64(self.F)) | f

    def floats(self, bits: np.ndarray) -> np.ndarray:
        return bits.astype(self.utype).view(self.ftype)

    def bits(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=self.ftype).view(self.utype).astype(np.uint64)


FMTS = {
    "f32": Fmt("f32", 8, 23, np.float32, np.uint32, np.float64),
    "f64": Fmt("f64", 11, 52, np.float64, np.uint64, np.longdouble),
}


def test_formats_match_the_operator_library() -> None:
    for name, fmt in FMTS.items():
        assert (FORMATS[name].exp_bits, FORMATS[name].frac_bits) == (fmt.E, fmt.F)
        assert np.finfo(fmt.ftype).nmant == fmt.F


# --------------------------------------------------------------------------------------------------
# vectors


def corner_values(fmt: Fmt) -> list[int]:
    """Bit patterns of the fixed corner list, closed under negation."""
    F, b, emax = fmt.F, fmt.bias, fmt.emax
    ones = (1 << F) - 1
    q = fmt.quiet_bit

    def v(e: int, f: int) -> int:
        return (e << F) | f

    pos = [
        v(0, 0),  # +0
        v(0, 1), v(0, 2), v(0, 3),  # min subnormal and neighbours
        v(0, 1 << (F - 1)),  # the largest power of two among subnormals
        v(0, ones),  # max subnormal
        v(1, 0), v(1, 1), v(2, 0),  # min normal and neighbours
        v(b, 0), v(b, 1), v(b - 1, ones),  # 1.0, 1 + ulp, 1 - ulp/2
        v(b - 1, 0), v(b - 1, 1 << (F - 1)), v(b, 1 << (F - 1)), v(b + 1, 0), v(b + 1, 1 << (F - 1)),
        v(b - F - 1, 0), v(b - F - 1, 1 << (F - 1)), v(b - F, 0),  # half ulp of 1, 3/2 of it, ulp
        v(b - 2, 0),  # 0.25
        v(emax - 1, ones), v(emax - 1, ones - 1), v(emax - 1, 0),  # max normal and co
        v(b + b // 2, 0), v(b // 2, 0), v(b // 2, ones),  # products overflow / underflow
        v(emax, 0),  # inf
        v(emax, q), v(emax, q | 1), v(emax, q | (ones >> 2)),  # quiet NaNs
        v(emax, 1), v(emax, q - 1), v(emax, 1 << (F - 2)),  # signalling NaNs
    ]
    return pos + [p | fmt.sign_bit for p in pos]


def _rand_exp(fmt: Fmt, rng: np.random.Generator, n: int) -> np.ndarray:
    cat = rng.choice(6, n, p=[0.35, 0.15, 0.08, 0.14, 0.14, 0.14])
    e = rng.integers(0, fmt.emax + 1, n)
    e = np.where(cat == 1, 0, e)
    e = np.where(cat == 2, fmt.emax, e)
    e = np.where(cat == 3, fmt.emax - 1 - rng.integers(0, 4, n), e)  # near overflow
    e = np.where(cat == 4, 1 + rng.integers(0, 4, n), e)  # near the subnormal boundary
    e = np.where(cat == 5, fmt.bias + rng.integers(-4, 5, n), e)  # around 1.0
    return e


def _rand_frac(fmt: Fmt, rng: np.random.Generator, n: int) -> np.ndarray:
    F = fmt.F
    ones = np.uint64((1 << F) - 1)

    def r() -> np.ndarray:
        return rng.integers(0, 1 << F, n, dtype=np.uint64)

    full = r()
    cat = rng.choice(7, n, p=[0.5, 0.08, 0.06, 0.1, 0.1, 0.08, 0.08])
    f = full
    f = np.where(cat == 1, np.uint64(0), f)
    f = np.where(cat == 2, ones, f)
    f = np.where(cat == 3, full & r() & r(), f)  # sparse
    f = np.where(cat == 4, full | r() | r(), f)  # dense
    f = np.where(cat == 5, full & np.uint64(0xF), f)  # tiny (smallest subnormals)
    f = np.where(cat == 6, full & (ones ^ (ones >> np.uint64(3))), f)  # only the top bits
    return f


def random_vectors(fmt: Fmt, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n operand pairs (bit patterns) from the mixture described in the module docstring."""
    F, emax, bias = fmt.F, fmt.emax, fmt.bias
    sa, ea, fa = rng.integers(0, 2, n), _rand_exp(fmt, rng, n), _rand_frac(fmt, rng, n)
    sb, eb, fb = rng.integers(0, 2, n), _rand_exp(fmt, rng, n), _rand_frac(fmt, rng, n)
    cat = rng.choice(9, n, p=[0.25, 0.18, 0.08, 0.1, 0.12, 0.08, 0.08, 0.06, 0.05])

    # 1: close exponents (cancellation in add/sub, carries)
    eb = np.where(cat == 1, np.clip(ea + rng.integers(-2, 3, n), 0, emax), eb)
    # 3: addition ties: b near half an ulp of a (exactly half when fb = 0 and j = 0)
    tie_e = ea - (F + 1) - rng.integers(-1, 2, n)
    eb = np.where(cat == 3, np.clip(tie_e, 0, emax), eb)
    fb = np.where((cat == 3) & (rng.random(n) < 0.6), np.uint64(0), fb)
    # 4: products near the underflow (subnormal) or the overflow threshold
    under = np.clip(bias - ea + rng.integers(-(F + 3), 3, n), 0, emax - 1)
    over = np.clip(emax - 1 + bias - ea + rng.integers(-2, 2, n), 0, emax - 1)
    eb = np.where(cat == 4, np.where(rng.random(n) < 0.6, under, over), eb)
    # 5: multiplication ties: b = +-{1, 1.25, 1.5, 1.75} * 2**k, a often tiny
    ea = np.where((cat == 5) & (rng.random(n) < 0.5), rng.integers(0, 3, n), ea)
    eb = np.where(cat == 5, bias + rng.integers(-3, 2, n), eb)
    fb = np.where(cat == 5, rng.integers(0, 4, n).astype(np.uint64) << np.uint64(F - 2), fb)

    # 7: multiplication near-ties: significands 1 + tiny and {1, 1.25, 1.5, 1.75} + tiny, so the
    #    product is a tie plus a little that only the deepest sticky bits see; in the normal range
    #    or in the subnormal range (where the right shift moves the round bit up)
    near7 = cat == 7
    fa = np.where(near7, rng.integers(0, 8, n).astype(np.uint64), fa)
    fb = np.where(near7, (rng.integers(0, 4, n).astype(np.uint64) << np.uint64(F - 2))
                  | rng.integers(0, 8, n).astype(np.uint64), fb)
    ea = np.where(near7, rng.integers(1, emax, n), ea)
    sub_range = np.clip(bias - ea + rng.integers(-(F + 3), 1, n), 1, emax - 1)
    normal_range = np.clip(bias - ea + rng.integers(1, bias, n), 1, emax - 1)
    eb = np.where(near7, np.where(rng.random(n) < 0.5, sub_range, normal_range), eb)
    # 8: subnormal products a hair above a tie, where only bits lost in the subnormal right shift
    #    (distance r >= 2) are nonzero: (1 + ulp) * (1 + (2**(r-1) - 1) ulp) = 1 + 2**(r-1) ulp
    #    + (2**(r-1) - 1) ulp**2, scaled by 2**(1 - r - bias)
    deep = cat == 8
    r = rng.integers(2, F + 2, n)
    fa = np.where(deep, np.uint64(1), fa)
    fb = np.where(deep, (np.uint64(1) << (r - 1).astype(np.uint64)) - np.uint64(1), fb)
    ea = np.where(deep, 1 + (rng.random(n) * (bias - r)).astype(np.int64), ea)
    eb = np.where(deep, 1 - r + bias - ea, eb)

    a = fmt.pack(sa, ea, fa)
    b = fmt.pack(sb, eb, fb)
    # 2: b = +-a give or take a few ulps (exact zeros, massive cancellation)
    mag_mask = np.uint64(fmt.sign_bit - 1)
    near = (a & mag_mask).astype(np.int64) + rng.integers(-3, 4, n)
    near = np.clip(near, 0, int(mag_mask)).astype(np.uint64)
    b = np.where(cat == 2, near | (sb.astype(np.uint64) << np.uint64(fmt.W - 1)), b)
    # 6: a corner value against a random operand
    corners = np.array(corner_values(fmt), dtype=np.uint64)
    b = np.where(cat == 6, corners[rng.integers(0, len(corners), n)], b)
    # both operand orders for the constructed pairs
    swap = (cat != 0) & (rng.random(n) < 0.5)
    return np.where(swap, b, a), np.where(swap, a, b)


def all_vectors(fmt: Fmt, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = random_vectors(fmt, rng, N_RANDOM)
    corners = np.array(corner_values(fmt), dtype=np.uint64)
    ca, cb = np.meshgrid(corners, corners, indexing="ij")
    return np.concatenate([ca.ravel(), a]), np.concatenate([cb.ravel(), b])


# --------------------------------------------------------------------------------------------------
# references


def _x86_nan(fmt: Fmt, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The NaN SSE arithmetic returns: the first NaN operand quieted, else the default NaN."""
    fa, fb = fmt.floats(a), fmt.floats(b)
    q = np.uint64(fmt.quiet_bit)
    return np.where(np.isnan(fa), a | q, np.where(np.isnan(fb), b | q, np.uint64(fmt.default_nan)))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _libm(fmt: Fmt, name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """glibc's function on each pair, arguments passed as raw bits (a Python float would quiet a
    signalling float32 NaN on the way)."""
    ctype = ctypes.c_float if fmt.name == "f32" else ctypes.c_double
    fn = getattr(_LIBM, name + ("f" if fmt.name == "f32" else ""))
    fn.argtypes = [ctype, ctype]
    fn.restype = ctype
    size = ctypes.sizeof(ctype)
    abuf, bbuf = a.astype(fmt.utype).tobytes(), b.astype(fmt.utype).tobytes()
    out = [
        fn(ctype.from_buffer_copy(abuf, size * i), ctype.from_buffer_copy(bbuf, size * i))
        for i in range(len(a))
    ]
    # Results come back as Python floats; float -> double -> float keeps every bit of a float32
    # (a NaN result is quiet, so the round trip does not change it either).
    return fmt.bits(np.array(out, dtype=fmt.ftype))


def reference(fmt: Fmt, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    fa, fb = fmt.floats(a), fmt.floats(b)
    ref: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op, res in (("fadd", fa + fb), ("fsub", fa - fb), ("fmul", fa * fb)):
            ref[op] = np.where(np.isnan(res), _x86_nan(fmt, a, b), fmt.bits(res))
        for op, res in (("flt", fa < fb), ("fle", fa <= fb), ("fgt", fa > fb), ("fge", fa >= fb),
                        ("feq", fa == fb), ("fne", fa != fb)):
            ref[op] = res.astype(np.uint64)
    ref["fmin"] = _libm(fmt, "fmin", a, b)
    ref["fmax"] = _libm(fmt, "fmax", a, b)
    ref["fneg"] = a ^ np.uint64(fmt.sign_bit)
    ref["fabs"] = a & np.uint64(fmt.sign_bit - 1)
    return ref


def check(fmt: Fmt, op: str, a: np.ndarray, b: np.ndarray, got: np.ndarray, exp: np.ndarray) -> list[str]:
    """Mismatch descriptions (first few, plus a count); empty when all agree bit for bit."""
    if got.shape != exp.shape:
        return [f"{op}: {got.shape[0]} results, expected {exp.shape[0]}"]
    bad = np.nonzero(got != exp)[0]
    if bad.size == 0:
        return []
    digits = fmt.W // 4
    lines = [f"{op}.{fmt.name}: {bad.size} of {exp.size} results differ"]
    for i in bad[:8]:
        lines.append(
            f"  #{i}: a={int(a[i]):0{digits}x} b={int(b[i]):0{digits}x} "
            f"got={int(got[i]):0{digits}x} expected={int(exp[i]):0{digits}x}"
        )
    return lines


# --------------------------------------------------------------------------------------------------
# coverage of the vector mix


def _ties(fmt: Fmt, exact: np.ndarray) -> np.ndarray:
    """Where a (wide) exact result lies exactly halfway between two neighbouring values."""
    with np.errstate(all="ignore"):
        r = exact.astype(fmt.ftype)
        other = np.nextafter(r, np.where(exact > r.astype(fmt.wide), np.inf, -np.inf).astype(fmt.ftype))
        mid = (r.astype(fmt.wide) + other.astype(fmt.wide)) / 2
        return np.isfinite(exact) & (exact != r.astype(fmt.wide)) & (mid == exact) & np.isfinite(other)


def _coverage(fmt: Fmt, a: np.ndarray, b: np.ndarray, ref: dict[str, np.ndarray]) -> dict[str, int]:
    fa, fb = fmt.floats(a), fmt.floats(b)
    finite = np.isfinite(fa) & np.isfinite(fb)
    tiny = np.finfo(fmt.ftype).smallest_normal
    cov: dict[str, int] = {}
    with np.errstate(all="ignore"):
        wa, wb = fa.astype(fmt.wide), fb.astype(fmt.wide)
        for op, exact in (("fadd", wa + wb), ("fmul", wa * wb)):
            res = fmt.floats(ref[op])
            cov[f"{op}_ties"] = int(np.sum(_ties(fmt, exact) & finite))
            cov[f"{op}_subnormal_results"] = int(np.sum((res != 0) & (np.abs(res) < tiny)))
            cov[f"{op}_overflows"] = int(np.sum(np.isinf(res) & finite))
            cov[f"{op}_nan_results"] = int(np.sum(np.isnan(res)))
        add = fmt.floats(ref["fadd"])
        cov["fadd_cancel_to_+0"] = int(np.sum((ref["fadd"] == 0) & (fa != 0)))
        cov["fadd_-0"] = int(np.sum(ref["fadd"] == np.uint64(fmt.sign_bit)))
        cov["fadd_massive_cancel"] = int(np.sum(finite & (add != 0)
                                                & (np.abs(add) < np.abs(fa) * 2.0 ** -(fmt.F // 2))))
        mul = fmt.floats(ref["fmul"])
        cov["fmul_underflow_to_0"] = int(np.sum((mul == 0) & (fa != 0) & (fb != 0) & finite))
    cov["subnormal_operands"] = int(np.sum(((a >> np.uint64(fmt.F)) & np.uint64(fmt.emax)) == 0))
    cov["snan_operands"] = int(np.sum(np.isnan(fa) & ((a & np.uint64(fmt.quiet_bit)) == 0)))
    return cov


COVERAGE_MINIMUM = {
    "fadd_ties": 300, "fadd_subnormal_results": 1000, "fadd_overflows": 300, "fadd_nan_results": 1000,
    "fmul_ties": 300, "fmul_subnormal_results": 1000, "fmul_overflows": 1000, "fmul_nan_results": 1000,
    "fadd_cancel_to_+0": 100, "fadd_-0": 20, "fadd_massive_cancel": 1000, "fmul_underflow_to_0": 300,
    "subnormal_operands": 10000, "snan_operands": 1000,
}


@pytest.mark.parametrize("prec", PRECISIONS)
def test_vector_mix_reaches_the_corners(prec: str) -> None:
    """The generator (not the hardware): enough ties, subnormals, overflows, signed zeros, ..."""
    fmt = FMTS[prec]
    a, b = all_vectors(fmt, SEEDS[prec])
    assert a.size >= 100_000 + len(corner_values(fmt)) ** 2 - 1
    with np.errstate(all="ignore"):
        fa, fb = fmt.floats(a), fmt.floats(b)
        ref = {"fadd": fmt.bits(fa + fb), "fmul": fmt.bits(fa * fb)}
    cov = _coverage(fmt, a, b, ref)
    low = {k: (cov[k], m) for k, m in COVERAGE_MINIMUM.items() if cov[k] < m}
    assert not low, f"thin coverage (got, wanted): {low}; all: {cov}"


def test_tie_detection_sees_constructed_ties() -> None:
    """The tie counter of `_coverage` on hand-made cases, so a zero count above means something."""
    for fmt in FMTS.values():
        half_ulp = np.array(2.0 ** -(fmt.F + 1), dtype=fmt.wide)  # of 1.0; sums formed in `wide`
        exact = np.ones(4, dtype=fmt.wide) + half_ulp * np.array([1, 3, 0.5, 0], dtype=fmt.wide)
        assert _ties(fmt, exact).tolist() == [True, True, False, False]


# --------------------------------------------------------------------------------------------------
# the checker itself


def test_check_reports_single_bit_and_nan_differences() -> None:
    fmt = FMTS["f32"]
    a = np.array([0x3F800000, 0x7FC00001, 0x00000001], dtype=np.uint64)
    b = np.array([0x3F800000, 0x3F800000, 0x80000001], dtype=np.uint64)
    exp = reference(fmt, a, b)["fadd"]
    assert exp.tolist() == [0x40000000, 0x7FC00001, 0x00000000]
    assert check(fmt, "fadd", a, b, exp.copy(), exp) == []
    for i, wrong in ((0, 0x40000001), (1, 0x7FC00000), (2, 0x80000000)):
        got = exp.copy()
        got[i] = wrong
        problems = check(fmt, "fadd", a, b, got, exp)
        assert problems and problems[0].startswith("fadd.f32: 1 of 3"), problems


def test_reference_rules() -> None:
    """The reference's own corner rules: x86 NaNs, signed zeros, glibc fmin/fmax on zeros and NaNs."""
    for fmt in FMTS.values():
        s, inf, qnan = fmt.sign_bit, fmt.emax << fmt.F, (fmt.emax << fmt.F) | fmt.quiet_bit
        snan = (fmt.emax << fmt.F) | 5
        one = fmt.bias << fmt.F
        pairs = [(0, s), (s, 0), (s, s), (one, one | s), (inf, inf | s), (0, inf), (snan, one),
                 (one, snan), (qnan | 3, one), (one, qnan | s | 3), (qnan | 3, snan), (snan, qnan | 3)]
        a = np.array([p[0] for p in pairs], dtype=np.uint64)
        b = np.array([p[1] for p in pairs], dtype=np.uint64)
        ref = {k: v.tolist() for k, v in reference(fmt, a, b).items()}
        dn = fmt.default_nan
        q = fmt.quiet_bit
        assert ref["fadd"][:6] == [0, 0, s, 0, dn, inf]
        assert ref["fsub"][:3] == [0, s, 0]
        assert ref["fmul"][5] == dn
        assert ref["fadd"][6:10] == [snan | q, snan | q, qnan | 3, qnan | s | 3]
        assert ref["fsub"][9] == qnan | s | 3  # b's NaN keeps its sign
        # glibc: equal operands give the second one; a quiet NaN is ignored; sNaN -> quiet NaN
        assert ref["fmin"][:3] == [s, 0, s] and ref["fmax"][:3] == [s, 0, s]
        assert ref["fmin"][6:12] == [snan | q, snan | q, one, one, qnan | 3, snan | q]
        assert ref["fmax"][6:12] == ref["fmin"][6:12]
        assert ref["feq"][:3] == [1, 1, 1] and ref["fne"][6:8] == [1, 1] and ref["flt"][6:8] == [0, 0]


# --------------------------------------------------------------------------------------------------
# the operator registry


def test_registry() -> None:
    # every operator per precision, and fmul by a constant of a power-of-two significand (`.k`)
    assert sorted(OPERATORS) == sorted([f"{op}.{prec}" for op in OPS for prec in PRECISIONS]
                                       + [f"fmul.{prec}.k" for prec in PRECISIONS])
    for prec in PRECISIONS:
        plain, folded = OPERATORS[f"fmul.{prec}"], OPERATORS[f"fmul.{prec}.k"]
        assert folded.module == f"dpn_fmul_{prec}_k" and folded.latency == plain.latency
        assert plain.uses == ("dpn_mult18",) and folded.uses == ("dpn_mult18k",) and folded.dsp == 0
    for prec in PRECISIONS:
        w = FMTS[prec].W
        for op in OPS:
            spec = OPERATORS[f"{op}.{prec}"]
            assert spec.name == f"{op}.{prec}" and spec.module == f"dpn_{op}_{prec}"
            assert spec.template.startswith("fp/") and spec.template.endswith(".v.j2")
            n_in = 1 if op in ("fneg", "fabs") else 2
            assert spec.inputs == (("a", w), ("b", w))[:n_in]
            assert spec.output_width == (1 if op[1:] in CMP_PREDICATES else w)
            src = spec.render()
            assert f"module {spec.module} (" in src
            assert f"latency {spec.latency}" in src
        assert OPERATORS[f"fmul.{prec}"].latency == fmul_latency(FORMATS[prec])


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_lint_clean(key: str, tmp_path: Path) -> None:
    spec = OPERATORS[key]
    paths = []
    for name, text in spec.files().items():  # -Wall wants each file named after its module
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    assert lint_verilator(paths, spec.module) == []


# --------------------------------------------------------------------------------------------------
# simulation


def _harness_env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE)), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )


def _specs(prec: str) -> list[OperatorSpec]:
    return [OPERATORS[f"{op}.{prec}"] for op in OPS]


def build_harness(prec: str, src_dir: Path, cache: Path) -> SimBuild:
    specs = _specs(prec)
    src_dir.mkdir(parents=True, exist_ok=True)
    sources: list[Path] = []
    for spec in specs:
        for name, text in spec.files().items():
            path = src_dir / name
            path.write_text(text)
            if path not in sources:
                sources.append(path)
    top = f"fp_harness_{prec}"
    ops = [
        {"tag": s.name.split(".")[0], "module": s.module, "latency": s.latency,
         "n_inputs": len(s.inputs), "out_width": s.output_width, "enables": s.enables}
        for s in specs
    ]
    harness = src_dir / f"{top}.v"
    harness.write_text(_harness_env().get_template("fp_harness.v.j2").render(
        module_name=top, width=FMTS[prec].W, addr_bits=ADDR_BITS, ops=ops,
        flush=max(s.latency for s in specs) + 2,
    ))
    return build_verilator([*sources, harness], top, cache_root=cache, make_vars=MAKE_VARS)


def _read_memh(path: Path) -> np.ndarray:
    words = [t for t in path.read_text().split() if not t.startswith(("@", "//"))]
    return np.array([int(t, 16) for t in words], dtype=np.uint64)


@pytest.mark.parametrize("prec", PRECISIONS)
def test_operators_bit_exact(prec: str, rtl_cache: Path, tmp_path: Path) -> None:
    fmt = FMTS[prec]
    seed = int(os.environ.get("FP_SEED", SEEDS[prec]))
    t0 = time.monotonic()
    build = build_harness(prec, tmp_path / "src", rtl_cache)
    t_build = time.monotonic() - t0

    a, b = all_vectors(fmt, seed)
    n = int(a.size)
    assert n < 1 << ADDR_BITS
    digits = fmt.W // 4
    vec_file = tmp_path / "vectors.hex"
    vec_file.write_text("".join(f"{x:0{digits}x}{y:0{digits}x}\n" for x, y in zip(a.tolist(), b.tolist())))
    out_files = {op: tmp_path / f"out_{op}.hex" for op in OPS}
    plusargs = [f"+vectors={vec_file}", f"+n={n}", f"+stall={STALL}", f"+seed={seed}"]
    plusargs += [f"+out_{op}={path}" for op, path in out_files.items()]
    t1 = time.monotonic()
    result = run_cocotb(
        build, COCOTB_MODULE, test_dir=tmp_path / "sim", plusargs=plusargs, timeout_s=SIM_TIMEOUT_S,
        extra_env={"FP_N": str(n), "FP_NOPS": str(len(OPS)), "FP_MAX_CYCLES": str(3 * n + 1000)},
    )
    t_sim = time.monotonic() - t1
    assert result.ok, result.summary()

    ref = reference(fmt, a, b)
    problems: list[str] = []
    for op in OPS:
        problems += check(fmt, op, a, b, _read_memh(out_files[op]), ref[op])
    cov = _coverage(fmt, a, b, ref)
    print(f"{prec}: {n} vectors; build {t_build:.1f} s, simulation {t_sim:.1f} s; coverage {cov}")
    assert not problems, "\n".join(problems)
