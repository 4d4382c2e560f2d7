"""A value register (a slot or an address) that is one affine function on the whole domain gets its
next value per successor piece from the function alone (`control.affine_of`), without the
preimage of its domain: the same Verilog as the general route, which is its oracle."""

from __future__ import annotations

import pytest

from hls.pipeline import Options, run
from hls.rtl import control
from hls.rtl.generate import generate
from tests.kernels import ROOT, example_params


@pytest.mark.parametrize("stem", ["jacobi-1d-int", "tiled-transpose", "lu"])
def test_affine_values_take_the_general_routes_answer(stem, monkeypatch):
    path = ROOT / "examples" / f"{stem}.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    asked: list[bool] = []
    affine_of = control.affine_of

    def counted(pa):
        aff = affine_of(pa)
        asked.append(aff is not None)
        return aff

    monkeypatch.setattr(control, "affine_of", counted)
    shortcut = generate(res.network)
    assert any(asked)  # the shortcut was taken
    monkeypatch.setattr(control, "affine_of", lambda pa: None)
    assert generate(res.network).rtl == shortcut.rtl
