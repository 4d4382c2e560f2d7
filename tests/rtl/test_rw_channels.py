"""Separate read and write channels per array (docs/rtl-interface.md, "Memory channels"), under Verilator.

* A load and a store of one array move a word each in the same cycle: an in-place update of n
  elements takes about n cycles, not 2n, and the cycle model says so too.  Ports exist only for the
  channels an array uses.
* Read after write through memory: a tiled network whose later tile bands read back what earlier ones
  stored is bit-exact against a memory whose writes take 200 cycles to be answered (the simulation
  memory applies a write only when it answers it, so the read waits for the store's memory-order
  token, which the write's response releases).  The same network with its tokens released at the
  write's request instead, as when one port served both directions in order, reads stale values
  there: the test would catch a store unit that stopped waiting for its responses.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT

INPLACE = """
void kernel_axpy_inplace(int n, int A[n], int B[n], int C[n])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    A[i] = 3 * A[i] + B[i];
#pragma endscop
}
"""


def _simulate(res, design, tmp_path, seed: int, **kw):
    inputs = random_inputs(res.program, seed)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path / f"run{seed}", seed=seed, **kw)
    assert out.completed, out.problem or out.log[-2000:]
    return out, compare(expected, out.outputs)


def test_a_load_and_a_store_of_one_array_share_no_port(tmp_path, rtl_cache):
    src = tmp_path / "axpy.c"
    src.write_text(INPLACE)
    n = 256
    res = run(Options(str(src), params={"n": n}, tile="none"))
    design = generate(res.network)
    top = design.rtl[f"{design.top}.v"]
    ports = set(re.findall(r"^\s*(?:input|output)\s+(?:reg\s+)?(?:\[[^\]]+\]\s*)?(\w+)", top, re.M))
    assert {"A_rd_req_valid", "A_rd_rsp_rdata", "A_wr_req_wdata", "A_wr_rsp_valid", "B_rd_req_addr"} <= ports
    assert not any(p.startswith(("B_wr_", "C_")) for p in ports), sorted(ports)  # B only read, C untouched
    out, mismatches = _simulate(res, design, tmp_path, seed=0, cache_root=rtl_cache)
    assert not mismatches
    # one read of A and one write of A per cycle: n cycles plus the pipeline's start and end
    assert n < out.cycles < n + 40, out.cycles
    est = res.timing["estimated_cycles"]
    assert abs(est - out.cycles) <= 0.05 * out.cycles, (est, out.cycles)


def _tokens_at_request(text: str) -> str:
    """A store unit that sends its memory-order tokens when the write is requested, not answered."""
    for old, new in (("assign wr_rsp_ready = (wq_count != 0) && !ob_full;", "assign wr_rsp_ready = wq_count != 0;"),
                     ("(wq_count != TAGS);", "(wq_count != TAGS) && !ob_full;"),
                     ("if (rsp_take != ob_pop) begin", "if (fire != ob_pop) begin"),
                     ("ob_full <= rsp_take && !ob_empty;", "ob_full <= fire && !ob_empty;"),
                     ("if (rsp_take) ob_tp <= !ob_tp;", "if (fire) ob_tp <= !ob_tp;"),
                     ("ob0_route <= head;", "ob0_route <= new_tag;"), ("ob1_route <= head;", "ob1_route <= new_tag;")):
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.mark.slow  # 85 s; a read-back released by the write response (B):
# test_axi.py's jacobi-1d-read-back
def test_reads_back_a_store_only_after_its_write_response(tmp_path, rtl_cache):
    path = ROOT / "examples" / "jacobi-1d.c"
    res = run(Options(str(path), tile="4,4"))
    net = res.network
    raw = [c for c in net.channels if c.sink_port == "order" and c.producer.startswith("STORE_")]
    assert raw, "the tiled network should read back stored elements"
    design = generate(net)
    slow_writes = {"latency": 2, "write_latency": 200}
    _, mismatches = _simulate(res, design, tmp_path / "ok", seed=1, stall=0.3, cache_root=rtl_cache, **slow_writes)
    assert not mismatches
    early = generate(net)
    stores = {f for f, text in early.rtl.items() if "module" in text and "wr_rsp_ready = (wq_count" in text
              and "ob_full" in text}
    assert len(stores) == len({c.producer for c in raw}), sorted(stores)
    for f in stores:
        early.rtl[f] = _tokens_at_request(early.rtl[f])
    _, mismatches = _simulate(res, early, tmp_path / "early", seed=1, cache_root=rtl_cache, **slow_writes)
    assert mismatches, "tokens sent at the write's request went unnoticed"
