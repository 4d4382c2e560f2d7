"""Bit-exact tests of the pipelined integer multiplier (hls/rtl/int_arith.py `multiplier`,
hw_templates/int/multiply.v.j2): DSP-sized partial products, registered, then an adder tree.

Per width, one Verilator build streams random operand pairs (and corner values) through the W x W
-> W multiplier of that width, at two clock targets (a slow one gives fewer adder stages than a fast
one), behind the streaming harness of the divider and floating-point tests, with `en` low on a
random quarter of the cycles.  The reference is Python's exact product mod 2**W, which is C's
wrapping multiplication of signed or unsigned W-bit integers.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from hls.rtl.clock import target_clock
from hls.rtl.int_arith import multiplier
from sim.rtl_runner import build_verilator, lint_verilator, run_cocotb
from tests.rtl.fp.test_fp_arith import MAKE_VARS, _harness_env, _read_memh

COCOTB_MODULE = "tests.rtl.int.cocotb_int_div"  # the harness's generic driver (clock, done, bookkeeping)
ADDR_BITS = 13
STALL = 256
CLOCKS = (60.0, 200.0)


def _vectors(w: int, n: int, seed: int) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    m = (1 << w) - 1
    corners = [0, 1, 2, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << 17) - 1, 1 << 17, (1 << 18) - 1, 1 << 18,
               (1 << 36) & m, ((1 << 36) - 1) & m]
    a = [x for x in corners for _ in corners]
    b = [y for _ in corners for y in corners]
    while len(a) < n:
        bits_a, bits_b = rng.randint(1, w), rng.randint(1, w)
        a.append(rng.getrandbits(bits_a))
        b.append(rng.getrandbits(bits_b))
    return a[:n], b[:n]


def test_structure_follows_the_clock_target() -> None:
    with target_clock(60.0):
        slow = multiplier(32, 32, 32)
    with target_clock(200.0):
        fast = multiplier(32, 32, 32)
    assert slow.latency <= fast.latency
    for spec in (slow, fast):
        src = spec.render()
        assert f"module {spec.module} (" in src and f"latency {spec.latency}" in src
        assert spec.context["products"] == 3  # 18-bit chunks, the product above 2**32 dropped
    with target_clock(150.0):
        assert multiplier(64, 64, 64).context["products"] == 10
        assert multiplier(16, 16, 32).latency == 2  # one DSP product: its operands, then it, registered
    with target_clock(90.0):
        assert multiplier(16, 16, 32).latency == 1  # the DSP straight from the operands


@pytest.mark.parametrize("w", (32, 64))
def test_multiplier_bit_exact(w: int, rtl_cache: Path, tmp_path: Path) -> None:
    specs = []
    for mhz in CLOCKS:
        with target_clock(mhz):
            specs.append(multiplier(w, w, w))
    specs = list({s.module: s for s in specs}.values())
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    sources: list[Path] = []
    for spec in specs:
        paths = [src_dir / name for name in spec.files()]
        for path, text in zip(paths, spec.files().values()):
            path.write_text(text)
        assert lint_verilator(paths, spec.module) == []
        sources += [p for p in paths if p not in sources]
    ops = [{"tag": f"m{k}", "module": s.module, "latency": s.latency, "n_inputs": 2, "out_width": w,
            "enables": s.enables}
           for k, s in enumerate(specs)]
    top = f"mul_harness_{w}"
    harness = src_dir / f"{top}.v"
    harness.write_text(_harness_env().get_template("fp_harness.v.j2").render(
        module_name=top, width=w, addr_bits=ADDR_BITS, ops=ops, flush=max(s.latency for s in specs) + 2))
    build = build_verilator([*sources, harness], top, cache_root=rtl_cache, make_vars=MAKE_VARS)
    a, b = _vectors(w, 4000, w)
    digits = w // 4
    vec = tmp_path / "vectors.hex"
    vec.write_text("".join(f"{x:0{digits}x}{y:0{digits}x}\n" for x, y in zip(a, b)))
    outs = {op["tag"]: tmp_path / f"out_{op['tag']}.hex" for op in ops}
    plusargs = [f"+vectors={vec}", f"+n={len(a)}", f"+stall={STALL}", "+seed=7"]
    plusargs += [f"+out_{t}={p}" for t, p in outs.items()]
    result = run_cocotb(build, COCOTB_MODULE, test_dir=tmp_path / "sim", plusargs=plusargs, timeout_s=300.0,
                        extra_env={"DIV_N": str(len(a)), "DIV_NOPS": str(len(ops)),
                                   "DIV_MAX_CYCLES": str(3 * len(a) + 1000)})
    assert result.ok, result.summary()
    mask = (1 << w) - 1
    expected = np.array([(x * y) & mask for x, y in zip(a, b)], dtype=object)
    for tag, path in outs.items():
        got = [int(v) for v in _read_memh(path).tolist()]
        bad = [k for k, (g, e) in enumerate(zip(got, expected)) if g != e]
        assert len(got) == len(a) and not bad, (tag, len(got), bad[:5])
