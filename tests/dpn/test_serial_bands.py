"""Loop nests that the scheduler fuses along a shared outer loop only (the stages of a network of
layers, each over channels) get one band per nest as another `--tile auto` candidate
(`pipeline._fused_shallow`, `tiling` fusion `nests`), and the cycle model takes it where it is faster."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import hls.pipeline as pipeline
from hls.pipeline import Options, run
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs

STAGES = """\
#ifndef H
#define H 10
#endif
#define C 3
static void conv(const float in[H][H], const float w[C][3][3], float out[C][H - 2][H - 2])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H - 2; i++)
      for (int j = 0; j < H - 2; j++) {
        float acc = 0.0f;
        for (int u = 0; u < 3; u++)
          for (int v = 0; v < 3; v++)
            acc += w[c][u][v] * in[i + u][j + v];
        out[c][i][j] = acc;
      }
}
static void relu(float x[C][H - 2][H - 2])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H - 2; i++)
      for (int j = 0; j < H - 2; j++)
        if (x[c][i][j] < 0.0f)
          x[c][i][j] = 0.0f;
}
static void pool(const float x[C][H - 2][H - 2], float y[C][(H - 2) / 2][(H - 2) / 2])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < (H - 2) / 2; i++)
      for (int j = 0; j < (H - 2) / 2; j++) {
        float m = x[c][2 * i][2 * j];
        for (int u = 0; u < 2; u++)
          for (int v = 0; v < 2; v++)
            if (x[c][2 * i + u][2 * j + v] > m)
              m = x[c][2 * i + u][2 * j + v];
        y[c][i][j] = m;
      }
}
float net(const float in[H][H], const float w[C][3][3], float y[C][(H - 2) / 2][(H - 2) / 2])
{
  float t[C][H - 2][H - 2];
  conv(in, w, t);
  relu(t);
  pool(t, y);
  float best = y[0][0][0];
  for (int c = 0; c < C; c++)
    for (int i = 0; i < (H - 2) / 2; i++)
      for (int j = 0; j < (H - 2) / 2; j++)
        best = best > y[c][i][j] ? best : y[c][i][j];
  return best;
}
"""


def _compiled(path: Path, defines: tuple[str, ...] = ()):
    return run(Options(path=str(path), tile="auto", defines=list(defines)), until="size-channels", emit=lambda s: None)


def test_stages_fused_along_their_channel_loop_get_a_band_each(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "net.c"
    src.write_text(STAGES)
    res = _compiled(src)
    assert "one source loop nest after another" in res.network.tiling.reason
    serial = res.timing["estimated_cycles"]
    inputs = random_inputs(res.program, 1)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel).run({**inputs, **expected})
    from hls.dpn.simulate import simulate

    out = simulate(res.network, inputs)
    assert out.completed and not compare({k: expected[k] for k in out.outputs}, out.outputs)
    monkeypatch.setattr(pipeline, "_fused_shallow", lambda program, plain: False)
    fused = _compiled(src)
    assert "one source loop nest after another" not in fused.network.tiling.reason
    assert serial * 2 < fused.timing["estimated_cycles"]  # the reduction interleaved, not one sum at a time


def test_the_per_nest_bands_are_chosen_on_a_corner(tmp_path: Path) -> None:
    """Above `reduced.REDUCE_ABOVE` instances the choice is made on a corner of the per-nest bands (the
    shallow fused band is one tile: no corner).  The corner keeps the statement reading the maximum's
    final value, from the corner's own last update (`reduced._closed_under_locals`)."""
    from hls.dpn.reduced import REDUCE_ABOVE
    from hls.dpn.restrict import instance_count

    src = tmp_path / "net.c"
    src.write_text(STAGES)
    res = _compiled(src, ("H=30",))
    assert instance_count(res.program) > REDUCE_ABOVE
    corner = res.timing["reduced_instance"]
    assert 0 < corner["instances"] < instance_count(res.program) // 4
    assert "one source loop nest after another" in res.network.tiling.reason
