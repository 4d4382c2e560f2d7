"""Wide read ports in Verilator (`--mem-width`, hls/dpn/memports.py): a line reader shares one port
of W words per beat between an array's load units, bit for bit against gcc, at the cycle count the
model gives."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.memports import words_per_beat
from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT, example_params

GEMV = ROOT / "examples" / "gemv-float.c"


def _rtl(res, tmp_path, rtl_cache, seed=0, stall=0.0, latency=4):
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(generate(res.network), inputs, tmp_path / f"s{seed}", stall=stall, seed=seed, cache_root=rtl_cache,
                  latency=latency)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)
    return out.cycles


@pytest.mark.slow  # 200 s; the line reader stays covered by test_narrow_elements_pack_many_to_a_line
def test_four_slabs_share_one_wide_port_at_the_pace_of_four_narrow_ones(tmp_path, rtl_cache):
    """gemv at --parallel 4: A and x are read through one 512-bit port each, by four load units that
    walk their slab's columns; each unit keeps its rows' lines, so the port fetches a line per 16
    words and keeps up with the four units as four one-word ports do."""
    wide = run(Options(str(GEMV), params=example_params(GEMV), tile="auto", parallel=4, mem_width=512))
    narrow = run(Options(str(GEMV), params=example_params(GEMV), tile="auto", parallel=4))
    shared = run(Options(str(GEMV), params=example_params(GEMV), tile="auto", parallel=4, read_ports="shared"))
    assert words_per_beat(wide.network) == {"A": 16, "x": 16}
    cycles = {name: _rtl(res, tmp_path / name, rtl_cache, seed=3)
              for name, res in (("wide", wide), ("narrow", narrow), ("shared", shared))}
    assert cycles["wide"] <= 1.1 * cycles["narrow"] < cycles["shared"], cycles
    est = wide.timing["estimated_cycles"]
    assert abs(est - cycles["wide"]) <= 0.03 * cycles["wide"], (est, cycles)
    # bit for bit when memory withholds lines and the units' channels stall
    _rtl(wide, tmp_path / "stall", rtl_cache, seed=4, stall=0.3)


@pytest.mark.slow  # 60 s: two designs, three runs; the default suite keeps the p4 and narrow-element cases
def test_a_column_longer_than_the_kept_lines_behind_a_slow_memory(tmp_path, rtl_cache):
    """gemv at --parallel 1 walks A's columns over 40 rows, more than a unit keeps: lines are fetched
    again, and a 128-bit port (4 floats) has lines of another size than the array's rows (n = 10).
    Memory answers after 20 cycles (`--mem-latency 20`): the units keep enough requests in flight
    that the run takes about as many cycles as at 4, and the model follows."""
    cycles = {}
    for latency in (4, 20):
        res = run(Options(str(GEMV), params={"m": 40, "n": 10}, tile="auto", mem_width=128, mem_latency=latency))
        assert words_per_beat(res.network) == {"A": 4, "x": 4} and res.network.mem_latency == latency
        cycles[latency] = _rtl(res, tmp_path / str(latency), rtl_cache, seed=5, latency=latency)
        est = res.timing["estimated_cycles"]
        assert abs(est - cycles[latency]) <= 0.03 * cycles[latency], (latency, est, cycles)
    assert cycles[20] <= cycles[4] + 40, cycles
    _rtl(res, tmp_path / "stall", rtl_cache, seed=5, stall=0.2, latency=20)


def test_narrow_elements_pack_many_to_a_line(tmp_path, rtl_cache):
    """8- and 16-bit arrays: 64 and 32 words to a 512-bit line, an array smaller than one line."""
    path = ROOT / "examples" / "mixed-width.c"
    res = run(Options(str(path), params=example_params(path), tile="auto", mem_width=512))
    assert max(words_per_beat(res.network).values()) >= 32
    cycles = _rtl(res, tmp_path, rtl_cache, seed=6)
    est = res.timing["estimated_cycles"]
    assert abs(est - cycles) <= 0.03 * cycles, (est, cycles)


@pytest.mark.slow  # 100 s of Verilator build and run
def test_sixteen_slabs_on_one_wide_port(tmp_path, rtl_cache):
    res = run(Options(str(GEMV), params={"m": 68, "n": 84}, tile="auto", parallel=16, mem_width=512))
    cycles = _rtl(res, tmp_path, rtl_cache, seed=7, stall=0.3)
    assert cycles > 0
