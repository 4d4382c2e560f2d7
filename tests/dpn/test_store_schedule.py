"""A store unit's schedule keeps each statement's time stamps explicit: coalescing two statements'
last writes into one basic map may hide min(i, j) and max(i, j) among its unknowns, and the store's
successor over that form took seconds and dozens of pieces (covariance's mirrored `cov`)."""

from __future__ import annotations

import islpy as isl

from hls.pipeline import Options, run
from hls.poly import isl_utils as iu
from hls.rtl.control import successor_pieces
from hls.poly.lexorder import schedule_successor

MIRRORED = """
void kernel_mirrored(double data[10][12], double cov[12][12])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < 12; i++)
    for (j = i; j < 12; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < 10; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= 9.0;
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}
"""


def test_implicit_outputs_counts_what_equalities_leave_open():
    assert iu.implicit_outputs(isl.Map("{ S[i, j] -> [i + j, j, 0] : 0 <= i, j < 9 }")) == 0
    assert iu.implicit_outputs(isl.Map("{ S[i] -> [o, i] : 4o <= i < 4o + 4 and 0 <= i < 20 }")) == 1
    # o = min(i, j) and p = max(i, j), each pinned only by inequalities and a disjunction
    mm = isl.Map("{ S[i, j] -> [o, p] : o <= i and o <= j and p >= i and p >= j and o + p = i + j }")
    assert iu.implicit_outputs(mm) == 1  # p is o's complement; o is open


def test_a_mirrored_store_keeps_its_time_stamps_explicit(tmp_path):
    src = tmp_path / "mirrored.c"
    src.write_text(MIRRORED)
    net = run(Options(str(src), tile="auto")).network
    store = net.process("STORE_cov")
    assert iu.implicit_outputs(store.schedule) == 0
    merged = store.schedule.coalesce()  # what the store used to get
    assert merged.is_equal(store.schedule)
    assert iu.coalesced_function(store.schedule).is_equal(store.schedule)
    pieces = successor_pieces(schedule_successor(store.schedule))
    if iu.implicit_outputs(merged) > 0:  # the form isl's coalescing gives: more pieces
        assert len(pieces) <= len(successor_pieces(schedule_successor(merged)))
