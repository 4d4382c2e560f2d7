"""Throughput: the cycle model against Verilator, parallel sub-bands against one process per statement,
and float kernels under --tile auto (point order, deepened channels) bit-exact with back-pressure."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.network import ProcessKind
from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT, STORED_READS, example_params


def _rtl(res, tmp_path, rtl_cache, seed=0, stall=0.0):
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(generate(res.network), inputs, tmp_path / f"s{seed}", stall=stall, seed=seed, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)
    return out.cycles


@pytest.mark.parametrize("name,parallel", [("gemm-int", 1),
                                           # 48 s; parallel RTL: the read-channel test below
                                           pytest.param("gemm-int", 2, marks=pytest.mark.slow),
                                           pytest.param("jacobi-1d", 1, marks=pytest.mark.slow),
                                           pytest.param("2mm", 1, marks=pytest.mark.slow)])
def test_cycle_model_predicts_rtl(name, parallel, tmp_path, rtl_cache):
    path = ROOT / "examples" / f"{name}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto", parallel=parallel))
    cycles = _rtl(res, tmp_path, rtl_cache)
    est = res.timing["estimated_cycles"]
    assert abs(est - cycles) <= 0.15 * cycles, (est, cycles)


@pytest.mark.slow  # 100 s; parallel RTL speed-up is covered by the read-channel test below
def test_parallel_divides_compute_bound_cycles(tmp_path, rtl_cache):
    path = ROOT / "examples" / "gemm.c"
    cycles = {}
    for p in (1, 4):
        res = run(Options(str(path), params=example_params(path), tile="auto", parallel=p))
        cycles[p] = _rtl(res, tmp_path / f"p{p}", rtl_cache, seed=p, stall=0.0)
    assert cycles[4] < 0.45 * cycles[1], cycles


@pytest.mark.slow  # 70-100 s: three Verilator runs at --parallel 4 (read channels per part: test_axi's gemm-int-read-ports)
def test_read_ports_per_part_speed_up_a_memory_bound_kernel(tmp_path, rtl_cache):
    """gemv: four slabs reading A through one port run at the port's pace, one word per cycle; with a
    read channel per slab (the default at --parallel 4) each slab's load unit feeds its processes.
    y, read and written, gets one too: its loads read only its initial values, each row's in one slab."""
    path = ROOT / "examples" / "gemv-float.c"
    nets, cycles = {}, {}
    for ports in ("shared", "per-part"):
        res = run(Options(str(path), params=example_params(path), tile="auto", parallel=4, read_ports=ports))
        nets[ports] = res.network
        cycles[ports] = _rtl(res, tmp_path / ports, rtl_cache, seed=1)
    loads = {ports: sorted((p.array, p.port) for p in net.processes if p.kind == ProcessKind.LOAD)
             for ports, net in nets.items()}
    assert loads["shared"] == [("A", 0), ("x", 0), ("y", 0)]
    assert loads["per-part"] == [(a, k) for a in ("A", "x", "y") for k in range(4)]
    assert cycles["per-part"] < 0.75 * cycles["shared"], cycles
    # bit for bit under back-pressure on every channel, the four read channels of A stalling too
    _rtl(run(Options(str(path), params=example_params(path), tile="auto", parallel=4)), tmp_path / "stall",
         rtl_cache, seed=2, stall=0.3)


def test_memory_channels_per_slab_of_stored_arrays_under_back_pressure(tmp_path, rtl_cache):
    """`u` is loaded and stored, each element in one slab: a read and a write channel per slab, each
    load unit owing its slab's store unit its elements' write-after-read tokens; `w`, loaded for both
    slabs then overwritten, keeps one read channel, whose unit owes both store units; `v` (32 local
    words) goes through memory between the nests, its one load unit waiting for both slabs' store
    units, one memory behind all write channels (tests/dpn/test_read_ports.py and test_write_ports.py
    check which arrays get channels)."""
    path = tmp_path / "stored_reads.c"
    path.write_text(STORED_READS.format(n=12))
    res = run(Options(str(path), tile="auto", parallel=2, local_words=32))
    ports = {(p.kind, p.array): [] for p in res.network.processes if p.array}
    for p in res.network.processes:
        if p.array:
            ports[(p.kind, p.array)].append(p.port)
    assert sorted(ports[(ProcessKind.LOAD, "u")]) == [0, 1] and ports[(ProcessKind.LOAD, "v")] == [0]
    assert all(sorted(ports[(ProcessKind.STORE, a)]) == [0, 1] for a in "uvw")
    _rtl(res, tmp_path, rtl_cache, seed=3, stall=0.3)


FLOAT = ["cholesky", "seidel-2d", "conv2d", "lu", "trisolv", "atax", "fdtd-2d", "symm"]
FLOAT_DEFAULT = {"atax"}  # the others under `-m slow` (each 20-90 s)


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FLOAT_DEFAULT else pytest.mark.slow)
                                  for n in FLOAT])
def test_float_kernel_tiled_auto_with_back_pressure(name, tmp_path, rtl_cache):
    path = ROOT / "examples" / f"{name}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    for seed in (0, 1):
        _rtl(res, tmp_path, rtl_cache, seed=seed, stall=0.3)


def test_band_start_loads_under_back_pressure(tmp_path, rtl_cache):
    """jacobi-2d on 2 x 3 skewed tiles (256 local words) with `--load-order band-start`: its load
    units walk each tile's elements in row-major order into buffers, ahead of the wavefront that
    reads them; bit for bit with every channel stalling, and within the cycle model's reach."""
    path = ROOT / "examples" / "jacobi-2d.c"
    res = run(Options(str(path), tile="auto", local_words=256, load_order="band-start"))
    loads = [p for p in res.network.processes if p.kind == ProcessKind.LOAD]
    assert loads and all(p.domain.dim_max_val(2).to_python() > 0 for p in loads)  # several tile rows
    _rtl(res, tmp_path / "stall", rtl_cache, seed=4, stall=0.3)
    cycles = _rtl(res, tmp_path, rtl_cache, seed=5)
    est = res.timing["estimated_cycles"]
    assert abs(est - cycles) <= 0.15 * cycles, (est, cycles)
