"""Privatization of locals (hls/frontend/privatize.py): expanded only where dataflow allows, results exact."""

from __future__ import annotations

import numpy as np
import pytest

from hls.dpn.simulate import simulate
from hls.pipeline import Options, run
from hls.poly.interpret import interpret
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import ROOT, example_params

ROW_SCRATCH = """
#define M 6
#define N 8
void k(double A[M][N], double B[M][N])
{
  int i, j;
  double buf[N];
  double s;
#pragma scop
  for (i = 0; i < M; i++) {
    s = 0.0;
    for (j = 0; j < N; j++) {
      buf[j] = A[i][j] * 2.0;
      s = s + buf[j];
    }
    for (j = 0; j < N; j++)
      B[i][j] = buf[j] / (s + 1.0);
  }
#pragma endscop
}
"""

CARRIED = """
#define M 6
#define N 8
void k(int A[M][N], int B[M][N])
{
  int i, j;
  int prev[N];
#pragma scop
  for (j = 0; j < N; j++)
    prev[j] = 0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      B[i][j] = A[i][j] + prev[j];
      prev[j] = A[i][j];
    }
#pragma endscop
}
"""


def _write(tmp_path, text: str):
    path = tmp_path / "k.c"
    path.write_text(text)
    return path


def _check(res, seeds=(0, 1)) -> None:
    for seed in seeds:
        inputs = random_inputs(res.program, seed)
        expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        GccReference(res.kernel).run({**inputs, **expected})
        assert not compare(expected, interpret(res.program, inputs))
        if res.network is not None:
            out = simulate(res.network, inputs, seed=seed, tables=res.tables)
            assert out.deadlock is None, out.deadlock.format()
            assert not compare(expected, out.outputs)


def test_scratch_row_and_accumulator_get_a_copy_per_row(tmp_path):
    res = run(Options(str(_write(tmp_path, ROW_SCRATCH)), tile="auto"))
    buf, s = res.program.arrays["buf"], res.program.arrays["s"]
    assert buf.ndim == 2 and buf.shape[0] == "6" and s.ndim == 1 and s.shape == ("6",)
    for st in res.program.statements:
        for a in st.accesses:
            if a.array == "buf":  # the copy is indexed by the row counter
                assert _first_subscript_is_counter(a.relation)
    assert sum("privatized" in n for n in res.program.notes) == 2
    # no dependence on buf or s crosses rows any more
    for d in res.program.flow.dependences:
        assert _first_subscript_is_counter(d.relation)
    _check(res)


def _first_subscript_is_counter(rel) -> bool:
    import islpy as isl

    return rel.is_subset(rel.equate(isl.dim_type.in_, 0, isl.dim_type.out, 0))


def test_values_carried_across_iterations_are_not_privatized(tmp_path):
    res = run(Options(str(_write(tmp_path, CARRIED)), tile="auto"))
    assert res.program.arrays["prev"].ndim == 1
    assert not any("privatized" in n for n in res.program.notes)
    _check(res)


def test_row_normalize_privatizes_its_scratch_row():
    path = ROOT / "examples" / "row-normalize.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    assert res.program.arrays["buf"].ndim == 2
    # `acc` is declared inside the loop: extract already gave each row its own, nothing more to do
    assert [n for n in res.program.notes if "privatized" in n] == [n for n in res.program.notes if "`buf`" in n]
    _check(res, seeds=(2,))


@pytest.mark.parametrize("tile", ["none", "auto"])
def test_dump_after_privatize(tmp_path, tile, capsys):
    from tests.kernels import run_cli

    rc, out, err = run_cli(["compile", str(_write(tmp_path, ROW_SCRATCH)), "--tile", tile, "--dump-after",
                            "privatize", "-o", str(tmp_path / "out")], capsys)
    assert rc == 0, err
    assert "IR after pass `privatize`" in out and "buf[6][8]" in out


TWO_NESTS = """
#define M 6
#define N 8
void k(float A[M][N], float B[M][N], float C[M][N], float a, float b)
{
  int i, j;
  float acc, last;
#pragma scop
  for (i = 0; i < M; i++) {
    acc = 0.0f;
    for (j = 0; j < N; j++) {
      B[i][j] = a * A[i][j] + b * acc;
      acc = B[i][j];
    }
  }
  for (j = 0; j < N; j++) {
    acc = 0.0f;
    for (i = 0; i < M; i++) {
      C[i][j] = a * B[i][j] + b * acc;
      acc = C[i][j];
    }
  }
  for (i = 0; i < M; i++)
    last = A[i][0];
#pragma endscop
}
"""

FLOWS_ON = """
#define N 8
void k(double A[N], double B[N])
{
  int i;
  double s;
#pragma scop
  s = 0.0;
  for (i = 0; i < N; i++)
    s = s + A[i];
  for (i = 0; i < N; i++)
    B[i] = A[i] / (s + 1.0);
#pragma endscop
}
"""


def test_a_scalar_reused_by_two_nests_is_split_and_each_range_privatized(tmp_path, monkeypatch):
    """`acc` carries a recurrence along the rows of one nest and along the columns of the next: no
    value flows between the nests, so each gets its own `acc`, privatized per row and per column,
    and the rows' (columns') chains overlap.  `last` is only written: it stays one range."""
    from hls.frontend import privatize as pv

    res = run(Options(str(_write(tmp_path, TWO_NESTS)), tile="auto"))
    split = [n for n in res.program.notes if "split" in n]
    assert len(split) == 1 and "`acc`" in split[0] and "`acc_1`" in split[0]
    first, second = res.program.arrays["acc"], res.program.arrays["acc_1"]
    assert first.shape == ("6",) and second.shape == ("8",)  # one copy per row, one per column
    assert "last" in res.program.arrays and "last_1" not in res.program.arrays
    by_stmt = {st.name: {a.array for a in st.accesses} for st in res.program.statements}
    assert not any({"acc", "acc_1"} <= arrays for arrays in by_stmt.values())
    for d in res.program.flow.dependences:
        if res.program.access(d.sink_access).array in ("acc", "acc_1"):
            assert _first_subscript_is_counter(d.relation)
    _check(res)
    monkeypatch.setattr(pv, "split_live_ranges", lambda p: p)
    one = run(Options(str(_write(tmp_path, TWO_NESTS)), tile="auto"))
    assert "acc_1" not in one.program.arrays and one.program.arrays["acc"].ndim == 0
    assert res.timing["estimated_cycles"] * 2 < one.timing["estimated_cycles"]


def test_a_value_that_flows_from_one_nest_to_the_next_keeps_one_range(tmp_path):
    res = run(Options(str(_write(tmp_path, FLOWS_ON)), tile="auto"))
    assert not any("split" in n for n in res.program.notes)
    assert [a for a in res.program.arrays if a.startswith("s")] == ["s"]
    _check(res)
