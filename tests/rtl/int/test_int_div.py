"""Bit-exact tests of the pipelined integer divider (hls/rtl/int_arith.py, hw_templates/int/divide.v.j2).

Per width, ONE Verilator build holds the four dividers of that width (signed and unsigned, quotient
and remainder) behind the streaming harness of the floating-point tests
(tests/rtl/fp/fp_harness.v.j2): it reads the operand pairs with ``$readmemh``, feeds one pair per
enabled cycle to all four at once (``en`` drops on a random quarter of the cycles, with garbage
operands, to test stalling), and writes each operator's results with ``$writememh``.  The same bit
patterns are read as signed operands by the signed dividers and as unsigned ones by the others.

The reference is numpy's integer arithmetic, independent of the hardware's algorithm and of
`int_arith.c_divide`: for signed types ``np.fmod`` is C's ``%`` (the remainder has the dividend's
sign) and the truncated quotient is ``(a - a % b) / b``, an exact division; unsigned types use
``//`` and ``%``.  Division by zero and INT_MIN / -1, which C leaves undefined (x86 traps), are
counted apart and checked against the documented results instead (RISC-V's: all ones and the
dividend for a zero divisor, INT_MIN and 0 for INT_MIN / -1).

The vectors: every pair of a fixed corner list (0, +-1, +-2, INT_MIN, INT_MAX, all ones, ...) and
random pairs from a mixture (uniform bits; operands of random bit length and sign, so quotients of
every size appear; divisor larger than the dividend; exact multiples give or take 1; a corner
against a random operand).  `test_vector_mix_reaches_the_corners` checks the mix really hits them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from hls.rtl.int_arith import OPERATORS, WIDTHS, c_divide, divide_latency
from hls.rtl.operators import OperatorSpec
from sim.rtl_runner import SimBuild, build_verilator, lint_verilator, run_cocotb
from tests.rtl.fp.test_fp_arith import MAKE_VARS, _harness_env, _read_memh  # the shared streaming harness

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
COCOTB_MODULE = "tests.rtl.int.cocotb_int_div"
N_RANDOM = 24_000
MIN_DEFINED = 20_000  # C-defined vectors per (width, signedness), the floor
ADDR_BITS = 15  # the harness holds up to 2**15 - 1 vectors
STALL = 256  # en = 0 on STALL/1024 of the cycles
SEEDS = {8: 0xD1F8, 16: 0xD1F16, 32: 0xD1F32, 64: 0xD1F64}
SIM_TIMEOUT_S = 300.0
# (tag in the harness, registry key prefix, signed)
OPS = (("sdiv", "div.i", True), ("srem", "rem.i", True), ("udiv", "div.u", False), ("urem", "rem.u", False))


# --------------------------------------------------------------------------------------------------
# vectors (W-bit patterns in uint64 arrays)


def _mask(w: int) -> np.uint64:
    return np.uint64((1 << w) - 1)


def corner_values(w: int) -> list[int]:
    """Bit patterns of the fixed corner list, closed under (W-bit) negation."""
    m = (1 << w) - 1
    pos = [0, 1, 2, 3, 5, 7, 10, (1 << (w - 1)) - 1, (1 << (w - 1)) - 2, 1 << (w - 1), (1 << (w - 1)) + 1,
           1 << (w // 2), (1 << (w // 2)) - 1, (1 << (w // 2)) + 1, m // 3, (m // 3) * 2]  # 0x55.., 0xaa..
    return sorted({v & m for v in pos} | {(-v) & m for v in pos})


def _rand_bits(rng: np.random.Generator, w: int, n: int) -> np.ndarray:
    return rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False) & _mask(w)


def _rand_len(rng: np.random.Generator, w: int, n: int, lo: int = 0) -> np.ndarray:
    """Uniform bits cut to a random bit length in lo..W (so every magnitude scale is as likely)."""
    length = rng.integers(lo, w + 1, n)
    shift = np.minimum(w - length, w - 1).astype(np.uint64)  # numpy's uint64 >> 64 is not 0
    return np.where(length == 0, np.uint64(0), _rand_bits(rng, w, n) >> shift)


def _neg(x: np.ndarray, w: int) -> np.ndarray:
    return (~x + np.uint64(1)) & _mask(w)


def _rand_sign(rng: np.random.Generator, x: np.ndarray, w: int) -> np.ndarray:
    return np.where(rng.random(x.size) < 0.5, _neg(x, w), x)


def random_vectors(w: int, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = _rand_bits(rng, w, n), _rand_bits(rng, w, n)
    cat = rng.choice(6, n, p=[0.25, 0.25, 0.15, 0.15, 0.1, 0.1])
    la, lb = _rand_sign(rng, _rand_len(rng, w, n), w), _rand_sign(rng, _rand_len(rng, w, n, 1), w)
    # 1: random lengths and signs for both operands (quotients of every size, all sign mixes)
    a, b = np.where(cat == 1, la, a), np.where(cat == 1, lb, b)
    # 2: divisor magnitude above the dividend's (quotient 0, remainder = dividend)
    small = _rand_len(rng, w - 1, n)
    big = small + np.uint64(1) + (_rand_len(rng, w - 1, n) >> np.uint64(1))
    a = np.where(cat == 2, _rand_sign(rng, small, w), a)
    b = np.where(cat == 2, _rand_sign(rng, big & _mask(w - 1), w), b)
    # 3: exact multiples give or take one: a = q * b + {-1, 0, 1}
    q = _rand_len(rng, w, n)
    d = _rand_len(rng, w, n, 1)
    prod = (q.astype(object) * d.astype(object) + rng.integers(-1, 2, n).astype(object))
    exact = np.array([int(p) & ((1 << w) - 1) for p in prod], dtype=np.uint64)
    a = np.where(cat == 3, _rand_sign(rng, exact, w), a)
    b = np.where(cat == 3, _rand_sign(rng, d, w), b)
    # 4, 5: a corner value as the divisor or the dividend, against a random-length operand
    corners = np.array(corner_values(w), dtype=np.uint64)
    pick = corners[rng.integers(0, corners.size, n)]
    a = np.where(cat == 4, la, np.where(cat == 5, pick, a))
    b = np.where(cat == 4, pick, np.where(cat == 5, lb, b))
    return a, b


def all_vectors(w: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = random_vectors(w, rng, N_RANDOM)
    corners = np.array(corner_values(w), dtype=np.uint64)
    ca, cb = np.meshgrid(corners, corners, indexing="ij")
    return np.concatenate([ca.ravel(), a]), np.concatenate([cb.ravel(), b])


# --------------------------------------------------------------------------------------------------
# reference


def _as(x: np.ndarray, w: int, signed: bool) -> np.ndarray:
    return x.astype(np.dtype(f"u{w // 8}")).view(np.dtype(f"{'i' if signed else 'u'}{w // 8}"))


def undefined(a: np.ndarray, b: np.ndarray, w: int, signed: bool) -> np.ndarray:
    """Where C leaves a / b undefined: a zero divisor, and INT_MIN / -1 for signed operands."""
    und = b == 0
    if signed:
        und |= (a == np.uint64(1 << (w - 1))) & (b == _mask(w))
    return und


def reference(a: np.ndarray, b: np.ndarray, w: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(quotient, remainder) bit patterns: C semantics where defined, the documented results elsewhere."""
    und = undefined(a, b, w, signed)
    x, y = _as(a, w, signed), _as(np.where(und, np.uint64(1), b), w, signed)
    if signed:
        r = np.fmod(x, y)  # C's %: the sign of the dividend
        q = (x - r) // y  # an exact division, so flooring does not matter
    else:
        q, r = x // y, x % y
    q = q.view(np.dtype(f"u{w // 8}")).astype(np.uint64)
    r = r.view(np.dtype(f"u{w // 8}")).astype(np.uint64)
    zero = b == 0
    q = np.where(zero, _mask(w), np.where(und, np.uint64(1 << (w - 1)), q))  # RISC-V: all ones; INT_MIN
    r = np.where(zero, a, np.where(und, np.uint64(0), r))  # the dividend; 0
    return q, r


def check(tag: str, w: int, a: np.ndarray, b: np.ndarray, got: np.ndarray, exp: np.ndarray) -> list[str]:
    """Mismatch descriptions (first few, plus a count); empty when all agree bit for bit."""
    if got.shape != exp.shape:
        return [f"{tag}{w}: {got.shape[0]} results, expected {exp.shape[0]}"]
    bad = np.nonzero(got != exp)[0]
    if bad.size == 0:
        return []
    digits = w // 4
    lines = [f"{tag}{w}: {bad.size} of {exp.size} results differ"]
    for i in bad[:8]:
        lines.append(f"  #{i}: a={int(a[i]):0{digits}x} b={int(b[i]):0{digits}x} "
                     f"got={int(got[i]):0{digits}x} expected={int(exp[i]):0{digits}x}")
    return lines


def test_reference_rules() -> None:
    """The reference on hand-checked C99 cases (as W-bit patterns), and on the undefined ones."""
    def pat(v: int, w: int) -> int:
        return v & ((1 << w) - 1)

    cases = [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (0, -5, 0, 0), (5, 7, 0, 5),
             (-5, 7, 0, -5), (-128, 1, -128, 0), (-128, -128, 1, 0), (127, -128, 0, 127), (100, 0, -1, 100),
             (-100, 0, -1, -100), (-128, -1, -128, 0)]
    a = np.array([pat(c[0], 8) for c in cases], dtype=np.uint64)
    b = np.array([pat(c[1], 8) for c in cases], dtype=np.uint64)
    q, r = reference(a, b, 8, True)
    assert q.tolist() == [pat(c[2], 8) for c in cases]
    assert r.tolist() == [pat(c[3], 8) for c in cases]
    q, r = reference(np.array([200, 7, 9], dtype=np.uint64), np.array([7, 200, 0], dtype=np.uint64), 8, False)
    assert q.tolist() == [28, 0, 255] and r.tolist() == [4, 7, 9]


@pytest.mark.parametrize("w", WIDTHS)
def test_c_divide_matches_the_reference(w: int) -> None:
    """int_arith.c_divide (the model documented beside the hardware) agrees with numpy here."""
    a, b = all_vectors(w, SEEDS[w])
    a, b = a[:4000], b[:4000]
    for signed in (True, False):
        q, r = reference(a, b, w, signed)
        got = [c_divide(int(x), int(y), w, signed) for x, y in zip(a.tolist(), b.tolist())]
        assert [g[0] for g in got] == q.tolist()
        assert [g[1] for g in got] == r.tolist()


def test_check_reports_mismatches() -> None:
    a = np.array([7, 9, 11], dtype=np.uint64)
    b = np.array([2, 2, 2], dtype=np.uint64)
    q, _ = reference(a, b, 8, False)
    wrong = q.copy()
    wrong[1] ^= np.uint64(1)
    assert check("udiv", 8, a, b, q, q) == []
    problems = check("udiv", 8, a, b, wrong, q)
    assert problems and problems[0] == "udiv8: 1 of 3 results differ", problems


@pytest.mark.parametrize("w", WIDTHS)
def test_vector_mix_reaches_the_corners(w: int) -> None:
    """The generator (not the hardware): enough of every case the divider could get wrong."""
    a, b = all_vectors(w, SEEDS[w])
    sa, sb = _as(a, w, True), _as(b, w, True)
    int_min = np.uint64(1 << (w - 1))
    for signed in (True, False):
        assert int(np.sum(~undefined(a, b, w, signed))) >= MIN_DEFINED
    q, r = reference(a, b, w, True)
    uq, _ = reference(a, b, w, False)
    cov = {
        "neg/pos": int(np.sum((sa < 0) & (sb > 0))), "pos/neg": int(np.sum((sa > 0) & (sb < 0))),
        "neg/neg": int(np.sum((sa < 0) & (sb < 0))), "zero dividend": int(np.sum(a == 0)),
        "divisor +-1": int(np.sum((b == 1) | (b == _mask(w)))), "INT_MIN / x": int(np.sum(a == int_min)),
        "x / INT_MIN": int(np.sum(b == int_min)), "div by 0": int(np.sum(b == 0)),
        "INT_MIN / -1": int(np.sum((a == int_min) & (b == _mask(w)))),
        "|b| > |a|": int(np.sum((np.abs(sa.astype(object)) < np.abs(sb.astype(object))) & (a != 0))),
        "exact, nonzero": int(np.sum((r == 0) & (b > 1) & (q > 1))),
        "big unsigned quotient": int(np.sum(uq >> np.uint64(w - 2) != 0)),
        "negative remainder": int(np.sum(_as(r, w, True) < 0)),
    }
    low = {k: v for k, v in cov.items() if v < (1 if k == "INT_MIN / -1" else 20)}  # that one is a single pair
    assert not low, (w, cov)


# --------------------------------------------------------------------------------------------------
# the operator registry


def test_registry() -> None:
    assert len(OPERATORS) == 2 * 2 * len(WIDTHS)
    for w in WIDTHS:
        for op in ("div", "rem"):
            for sign in "iu":
                spec = OPERATORS[f"{op}.{sign}{w}"]
                assert spec.module == f"dpn_{op}_{sign}{w}" and spec.template == "int/divide.v.j2"
                assert spec.inputs == (("a", w), ("b", w)) and spec.output_width == w
                assert spec.latency == divide_latency(w) == w + 2
                src = spec.render()
                assert f"module {spec.module} (" in src and f"latency {w + 2}" in src


def test_templates_ship_with_the_package() -> None:
    """pyproject's package-data globs must pick up hw_templates/int/ (a new folder)."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["hw_templates"]
    assert any(fnmatch.fnmatch("int/divide.v.j2", g) for g in globs), globs


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_lint_clean(key: str, tmp_path: Path) -> None:
    spec = OPERATORS[key]
    src = tmp_path / f"{spec.module}.v"  # -Wall wants the file named after the module
    src.write_text(spec.render())
    assert lint_verilator([src], spec.module) == []


def test_cycle_model_uses_the_divider_latency() -> None:
    """The datapath instantiates the divider (no combinational `/`), and process_latencies sees its
    latency: a statement dividing int64 values takes at least the 64-bit divider's stages."""
    from hls.pipeline import Options, run
    from hls.poly import expr as E
    from hls.rtl.generate import process_latencies

    res = run(Options(str(ROOT / "examples" / "int-divmod.c")))
    lat = process_latencies(res.network)
    checked = 0
    for proc in res.network.iter_compute():
        ops = [(e.op, e.type) for e in E.walk(res.network.program.statement(proc.statements[0]).expr)
               if isinstance(e, E.Binary) and e.op in ("/", "%")]
        if any(t.bits == 64 for _, t in ops):
            assert lat[proc.name] >= divide_latency(64), (proc.name, lat[proc.name])
            checked += 1
    assert checked >= 2, lat


# --------------------------------------------------------------------------------------------------
# simulation


def _specs(w: int) -> list[tuple[str, OperatorSpec]]:
    return [(tag, OPERATORS[f"{prefix}{w}"]) for tag, prefix, _ in OPS]


def build_harness(w: int, src_dir: Path, cache: Path) -> SimBuild:
    specs = _specs(w)
    src_dir.mkdir(parents=True, exist_ok=True)
    sources = []
    for _, spec in specs:
        path = src_dir / f"{spec.module}.v"
        path.write_text(spec.render())
        sources.append(path)
    top = f"div_harness_{w}"
    ops = [{"tag": tag, "module": s.module, "latency": s.latency, "n_inputs": 2, "out_width": s.output_width,
            "enables": s.enables} for tag, s in specs]
    harness = src_dir / f"{top}.v"
    harness.write_text(_harness_env().get_template("fp_harness.v.j2").render(
        module_name=top, width=w, addr_bits=ADDR_BITS, ops=ops, flush=max(s.latency for _, s in specs) + 2,
    ))
    return build_verilator([*sources, harness], top, cache_root=cache, make_vars=MAKE_VARS)


@pytest.mark.parametrize("w", [pytest.param(w, marks=pytest.mark.slow) if w == 16 else w for w in WIDTHS])
def test_dividers_bit_exact(w: int, rtl_cache: Path, tmp_path: Path) -> None:
    seed = int(os.environ.get("DIV_SEED", SEEDS[w]))
    t0 = time.monotonic()
    build = build_harness(w, tmp_path / "src", rtl_cache)
    t_build = time.monotonic() - t0

    a, b = all_vectors(w, seed)
    n = int(a.size)
    assert n < 1 << ADDR_BITS
    digits = w // 4
    vec_file = tmp_path / "vectors.hex"
    vec_file.write_text("".join(f"{x:0{digits}x}{y:0{digits}x}\n" for x, y in zip(a.tolist(), b.tolist())))
    out_files = {tag: tmp_path / f"out_{tag}.hex" for tag, _, _ in OPS}
    plusargs = [f"+vectors={vec_file}", f"+n={n}", f"+stall={STALL}", f"+seed={seed}"]
    plusargs += [f"+out_{tag}={path}" for tag, path in out_files.items()]
    t1 = time.monotonic()
    result = run_cocotb(
        build, COCOTB_MODULE, test_dir=tmp_path / "sim", plusargs=plusargs, timeout_s=SIM_TIMEOUT_S,
        extra_env={"DIV_N": str(n), "DIV_NOPS": str(len(OPS)), "DIV_MAX_CYCLES": str(3 * n + 1000)},
    )
    t_sim = time.monotonic() - t1
    assert result.ok, result.summary()

    problems: list[str] = []
    counts = {}
    for tag, prefix, signed in OPS:
        q, r = reference(a, b, w, signed)
        exp = q if prefix.startswith("div") else r
        got = _read_memh(out_files[tag])
        und = undefined(a, b, w, signed)
        # C-defined vectors first (the bit-exact comparison), then the documented undefined cases
        problems += check(tag, w, a[~und], b[~und], got[~und] if got.shape == exp.shape else got, exp[~und])
        if got.shape == exp.shape:
            problems += check(f"{tag} (undefined in C) ", w, a[und], b[und], got[und], exp[und])
        counts[tag] = (int(np.sum(~und)), int(np.sum(und)))
    print(f"int{w}: {n} vectors (defined, undefined per operator: {counts}); "
          f"build {t_build:.1f} s, simulation {t_sim:.1f} s")
    assert all(defined >= MIN_DEFINED for defined, _ in counts.values()), counts
    assert not problems, "\n".join(problems)
