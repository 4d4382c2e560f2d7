"""The control's successor taken as its basic maps, uncoalesced (`control.successor_pieces`, the
route of successors of many pieces), with its next-state ORs split into wires (`Control._joined`):
overlapping or not, the pieces give the same iteration order, bit-exact with gcc under Verilator."""

from __future__ import annotations

import re

import islpy as isl
import numpy as np
import pytest

from hls.pipeline import Options, run
from hls.poly.lexorder import lex_successor
from hls.rtl import control
from hls.rtl.generate import generate
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from sim.rtl_sim import run_rtl
from tests.kernels import ROOT, example_params

PIECE_TERM = re.compile(r"\(\{\d+\{i_g\d+\}\} & ")


def test_basic_map_pieces_are_the_successor():
    times = isl.Set("{ [t, i] : 0 <= t < 4 and t <= i < t + 6 and (i mod 2 = 0 or t = 1) }")
    succ = lex_successor(times)
    pieces = control.successor_pieces(succ)
    back = isl.Map.empty(succ.get_space())
    for s, ma in pieces:
        back = back.union(isl.Map.from_multi_aff(ma).intersect_domain(s))
    assert back.is_equal(succ)


def _as_map(pieces, space) -> isl.Map:
    back = isl.Map.empty(space)
    for s, ma in pieces:
        back = back.union(isl.Map.from_multi_aff(ma).intersect_domain(s))
    return back


def test_pieces_are_the_successor_where_isls_lexmin_drops_iterations():
    """isl's lexmin of the coalesced successor of this load unit left two iterations out of every
    piece (their next state was all zeros: the Verilog livelocked) where islpy-barvinok chose the
    network; the pieces are checked and taken another way."""
    from hls.poly.lexorder import schedule_successor

    net = run(Options(str(ROOT / "examples" / "jacobi-2d.c"), defines=("T=12", "N=76"), tile="auto")).network
    for p in net.processes:
        succ = schedule_successor(p.schedule)
        assert _as_map(control.successor_pieces(succ), succ.get_space()).is_equal(succ), p.name


def test_a_route_that_drops_iterations_is_not_taken(monkeypatch):
    times = isl.Set("{ [t, i] : 0 <= t < 4 and t <= i < t + 6 and (i mod 2 = 0 or t = 1) }")
    succ = lex_successor(times)

    def dropping(m: isl.Map) -> isl.PwMultiAff:  # isl's answer of the issue: an iteration in no piece
        return isl.PwMultiAff.from_map(m.subtract_domain(isl.Set("{ [1, 3] }")))

    monkeypatch.setattr(control, "SUCCESSOR_ROUTES", (dropping, isl.PwMultiAff.from_map))
    assert _as_map(control.successor_pieces(succ), succ.get_space()).is_equal(succ)
    monkeypatch.setattr(control, "SUCCESSOR_ROUTES", (dropping,))
    assert _as_map(control.successor_pieces(succ), succ.get_space()).is_equal(succ)  # by basic maps


def _most_piece_terms(design) -> int:
    """The most pieces' next values (`({w{i_g<piece>}} & value)`) that one line of the RTL selects."""
    return max(len(PIECE_TERM.findall(line)) for text in design.rtl.values() for line in text.splitlines())


@pytest.mark.parametrize("stem", ["seidel-int", "jacobi-1d-int"])
def test_uncoalesced_successor_runs_bit_exact(stem, monkeypatch, rtl_cache, tmp_path):
    path = ROOT / "examples" / f"{stem}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    coalesced = generate(res.network)
    monkeypatch.setattr(control, "COALESCE_PIECES", 0)
    assert _most_piece_terms(generate(res.network)) > 2
    monkeypatch.setattr(control, "JOINED_TERMS", 2)  # and every OR of more than 2 terms through wires
    design = generate(res.network)
    assert design.rtl != coalesced.rtl  # the other route was taken
    assert _most_piece_terms(design) == 2
    inputs = random_inputs(res.program, 3)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    out = run_rtl(design, inputs, tmp_path, stall=0.3, seed=3, cache_root=rtl_cache)
    assert out.completed, out.problem or out.log[-2000:]
    assert not compare(expected, out.outputs)
