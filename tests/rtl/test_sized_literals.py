"""Sized literals of the control's next-state logic keep their value in any wider expression.

A signed literal narrower than its value (`5'sd17`) reads back as another number (-15) once Verilog
evaluates the expression around it at more bits.  The control embeds the printed affine forms in
wider sums (a buffer slot's modular reduction), so such a literal gave wrong buffer slots: tiled
jacobi-2d with `--local-words 256` deadlocked in Verilator while the DPN simulator was exact.
"""

from __future__ import annotations

import json
import re

import islpy as isl
import pytest

from hls.cli import main
from hls.rtl.affine import SizedPrinter, signed_width, sized_literal
from tests.kernels import ROOT

LITERAL = re.compile(r"(\d+)'sd(\d+)")


def _misfits(text: str) -> list[str]:
    """The signed literals whose value does not fit their width."""
    return [m.group(0) for m in LITERAL.finditer(text) if int(m.group(2)) >= 1 << (int(m.group(1)) - 1)]


@pytest.mark.parametrize(("value", "width", "text"), [(17, 5, "6'sd17"), (15, 5, "5'sd15"), (-16, 5, "-6'sd16"),
                                                       (-15, 5, "-5'sd15"), (0, 3, "3'sd0"), (3, 8, "8'sd3")])
def test_a_literal_is_as_wide_as_its_value(value, width, text):
    assert sized_literal(value, width) == text


@pytest.mark.parametrize("aff", [
    "{ [x] -> [(2 * floor((-x - 1) / 3) + 17)] }",  # jacobi-2d's slot: a negative div and a large constant
    "{ [x] -> [(floor((-x - 1) / 7))] }",           # a divisor wider than the quotient's range
    "{ [x] -> [(-3 * floor((x + 2) / 5) + 40)] }",
])
def test_printed_forms_have_no_literal_narrower_than_its_value(aff):
    printer = SizedPrinter(["x"], [(0, 18)])
    a = isl.PwAff(aff).as_aff() if hasattr(isl.PwAff, "as_aff") else isl.Aff(aff)
    text = printer.aff(a, 2)
    assert LITERAL.search(text), text
    assert _misfits(text) == [], text


def test_tiled_jacobi_2d_rtl_has_no_literal_narrower_than_its_value(tmp_path):
    out = tmp_path / "out"
    rc = main(["compile", str(ROOT / "examples" / "jacobi-2d.c"), "--tile", "auto", "--local-words", "256",
               "-o", str(out)])
    assert rc == 0
    texts = {p.name: p.read_text() for p in sorted((out / "rtl").glob("*.v"))}
    assert any(LITERAL.search(t) for t in texts.values())
    assert {name: _misfits(t) for name, t in texts.items() if _misfits(t)} == {}


@pytest.mark.slow
def test_tiled_jacobi_2d_with_a_small_local_memory_is_bit_exact(capsys):
    """The design whose buffer slots went out of range: bit-exact, no deadlock."""
    rc = main(["sim", str(ROOT / "examples" / "jacobi-2d.c"), "--tile", "auto", "--local-words", "256", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert (rc, res["ok"], res["mismatches"], res["deadlock"]) == (0, True, 0, None)


def test_a_negative_floor_division_has_room_for_its_rounding_term():
    """floor(num / d) of a negative numerator is printed -((-num + d - 1) / d): at the width of
    the numerator alone, -num + d - 1 wrapped (trisolv's S1 at n=208: floor(-205 / 52) read 4, and
    the Verilog stopped)."""
    printer = SizedPrinter(["x"], [(0, 207)])
    text = printer.aff(isl.Aff("{ [x] -> [(floor((-x - 2) / 52))] }"), 2)
    widths = {int(w) for w, v in LITERAL.findall(text) if v == "52"}
    assert widths and min(widths) >= signed_width(0, 209 + 51), text
